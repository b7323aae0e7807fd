package observer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Update is what the observer publishes for each unit of the log, for each run of units
// of a catch-up, and for each rebuild from a snapshot.
type Update struct {
	// Image is the new image; Changes how it differs from the previous one.
	Image   *image.Image
	Changes *image.Changes
	// Provenance is the image's position in the log (Image.Provenance()).
	Provenance Provenance
	// Unit is the batch or transaction applied; nil for a reset. In a catch-up's
	// update it is a Unit with Coalesced set and no Entries.
	Unit *Unit
	// Units is how many units the update applies: 1 for a unit's update, 0 for a
	// reset, and for a catch-up's (a long backlog read at once: see the package
	// documentation) the number of consecutive units replayed into its image.
	Units int
	// Reset marks an image rebuilt from a snapshot and the log after it: the initial
	// load (Changes then lists everything as created), or a rebuild after the log was
	// truncated under what the observer had read (Changes is the difference from the
	// image published before). Reason says which.
	Reset  bool
	Reason string
}

// Observer follows one metadata log directory. Create it with New and start it with
// Run; see the package documentation.
type Observer struct {
	cfg     Config
	f       *follower // the disk source; nil for the network source
	q       *quorum   // the network source; nil for the disk source
	delta   *image.Delta
	img     atomic.Pointer[image.Image]
	lastErr atomic.Pointer[error]
	failing atomic.Int64 // when the current run of failed reads began, unix nanoseconds; 0 when the last read succeeded
	ready   chan struct{}
	once    sync.Once
	running atomic.Bool
	// build is the rebuild in progress (itemRebuild to itemRebuilt), nil between.
	build *build
	// held counts the units of a catch-up replayed into delta and not yet published
	// (hold); heldProv is the last one's provenance.
	held     int
	heldProv Provenance
}

// New returns an Observer of cfg.Dir, or of the controller quorum at cfg.Controllers.
// It does not touch the directory or the network: Run does, and waits for them.
func New(cfg Config) (*Observer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.withDefaults()
	o := &Observer{cfg: cfg, ready: make(chan struct{})}
	if len(cfg.Controllers) > 0 {
		o.q = newQuorum(&o.cfg)
		return o, nil
	}
	o.f = newFollower(filepath.Clean(cfg.Dir), cfg.Logger, cfg.Metrics)
	o.f.oneShot, o.f.loadGC, o.f.stream = true, cfg.LoadGC, true
	return o, nil
}

// Image returns the newest published image, nil before the initial load.
func (o *Observer) Image() *image.Image { return o.img.Load() }

// Ready is closed once the initial snapshot and the log after it have been replayed
// and the first image published.
func (o *Observer) Ready() <-chan struct{} { return o.ready }

// Metrics returns the observer's counters.
func (o *Observer) Metrics() *Metrics { return o.cfg.Metrics }

// LastError returns the error of the last attempt to read the log, nil when it
// succeeded. Errors are retried with backoff; the last good image stays published.
func (o *Observer) LastError() error {
	if p := o.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// setErr records the outcome of a read of the log: err, or nil for a success.
func (o *Observer) setErr(err error) {
	if err == nil {
		o.lastErr.Store(nil)
		o.failing.Store(0)
		return
	}
	o.lastErr.Store(&err)
	o.failing.CompareAndSwap(0, time.Now().UnixNano())
}

// Health is nil while the metadata log is read, else why not: it is not loaded yet,
// the controllers refuse it (ErrNotAuthorized, at once), or its reads have failed
// without a success for longer than stallAfter (a short run of other errors, retried,
// is healthy).
func (o *Observer) Health(stallAfter time.Duration) error {
	select {
	case <-o.ready:
	default:
		if err := o.LastError(); err != nil {
			return fmt.Errorf("loading the metadata log: %w", err)
		}
		return errors.New("loading the metadata log")
	}
	if f := o.failing.Load(); f != 0 {
		// A refusal is a state, not a passing error: not ready at once, as before the
		// first load, until a grant makes a Fetch succeed again.
		if err := o.LastError(); errors.Is(err, ErrNotAuthorized) {
			return fmt.Errorf("the controllers refuse to serve the metadata log: %w", err)
		}
		if d := time.Since(time.Unix(0, f)); d > stallAfter {
			return fmt.Errorf("metadata log unreadable for %v: %w", d.Round(time.Second), o.LastError())
		}
	}
	return nil
}

// Run follows the log until ctx ends, then returns nil. Errors reading the log are
// logged, counted and retried with backoff; they do not end Run. Run may be called
// once.
func (o *Observer) Run(ctx context.Context) error {
	if !o.running.CompareAndSwap(false, true) {
		return errors.New("observer: Run called twice")
	}
	if o.q != nil {
		return o.runQuorum(ctx, false)
	}
	return o.runDisk(ctx)
}

// runDisk polls the metadata log dir until ctx ends: after a success once a file
// notification or the poll timer says to look again (dirWatch), after an error with
// backoff.
func (o *Observer) runDisk(ctx context.Context) error {
	defer o.f.close()
	log := o.cfg.Logger
	dw := &dirWatch{dir: o.f.dir, off: o.cfg.NoNotify, log: log, pollInterval: o.cfg.PollInterval}
	defer dw.close()
	ticker := time.NewTicker(o.cfg.PollInterval)
	defer ticker.Stop()
	var backoff time.Duration
	for {
		dw.watch()
		err := o.poll()
		if err != nil {
			o.cfg.Metrics.Errors.Add(1)
			o.setErr(err)
			backoff = min(max(2*backoff, o.cfg.MinBackoff), o.cfg.MaxBackoff)
			if errors.Is(err, ErrNoLog) || errors.Is(err, fs.ErrNotExist) {
				log.Warn("waiting for the metadata log", "dir", o.f.dir, "retry_in", backoff, "error", err)
			} else {
				log.Error("reading the metadata log failed; retrying", "dir", o.f.dir, "retry_in", backoff, "error", err)
			}
			if !sleep(ctx, backoff) {
				return nil
			}
			continue
		}
		if backoff > 0 {
			log.Info("reading the metadata log again", "dir", o.f.dir, "offset", o.f.next-1)
		}
		backoff = 0
		o.setErr(nil)
		if !dw.wait(ctx, ticker.C) {
			return nil
		}
	}
}

// runQuorum fetches until ctx ends (nil), or with once until the first image is
// published (nil) or a request fails (the error). Each step's items are consumed as
// they come.
func (o *Observer) runQuorum(ctx context.Context, once bool) error {
	q := o.q
	defer q.conns.close()
	var backoff time.Duration
	failures := 0
	for ctx.Err() == nil {
		if once && q.build == nil {
			return nil
		}
		err := o.consume(q.step(ctx))
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			if backoff > 0 {
				q.cfg.Logger.Info("fetching the metadata log again", "leader", q.leader, "leader_addr", q.leaderAddr,
					"epoch", q.epoch, "offset", q.next)
			}
			backoff, failures = 0, 0
			o.setErr(nil)
			continue
		}
		q.cfg.Metrics.Errors.Add(1)
		o.setErr(err)
		failures++
		// Once (the command line) gives up at a refusal, or when every bootstrap server
		// failed a few times in a row.
		if once && (errors.Is(err, ErrNotAuthorized) || failures >= 3*len(q.cfg.Controllers)) {
			return err
		}
		backoff = q.retryIn(err, backoff)
		if !q.sleep(ctx, backoff) {
			return nil
		}
	}
	return nil
}

// sleep waits d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// dirWatch says when the metadata log dir may hold something new: a file
// notification (fsnotify) that is relevant, or the poll timer, the fallback and the
// only source without notifications (off, or when they cannot be had or failed).
type dirWatch struct {
	dir          string
	off          bool
	log          *slog.Logger
	pollInterval time.Duration
	w            *fsnotify.Watcher // nil while there are no notifications
}

// watch starts watching the dir, unless it is watched or notifications are off; it
// polls when that fails.
func (d *dirWatch) watch() {
	if d.off || d.w != nil {
		return
	}
	nw, err := fsnotify.NewWatcher()
	if err == nil {
		err = nw.Add(d.dir)
		if err != nil {
			nw.Close()
		}
	}
	if err != nil {
		d.log.Debug("no file notifications for the metadata log dir; polling", "dir", d.dir,
			"poll_interval", d.pollInterval, "error", err)
		return
	}
	d.w = nw
}

func (d *dirWatch) close() {
	if d.w != nil {
		d.w.Close()
	}
}

// wait waits for a relevant notification or a tick (true), or for ctx to end
// (false). Notifications stop (until watch) when the watcher fails or the dir itself
// goes away. The notifications already queued are dropped: one poll reads
// everything.
func (d *dirWatch) wait(ctx context.Context, tick <-chan time.Time) bool {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if d.w != nil {
		events, errs = d.w.Events, d.w.Errors
	}
	stop := func(closeIt bool) {
		if closeIt {
			d.w.Close()
		}
		d.w, events, errs = nil, nil, nil
	}
wait:
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			break wait
		case ev, ok := <-events:
			if !ok {
				stop(false)
				break wait
			}
			if ev.Name == d.dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				stop(true) // the directory itself went away: watch again when it is back
				break wait
			}
			if relevant(ev) {
				break wait
			}
		case err, ok := <-errs:
			if ok {
				d.log.Warn("file notifications failed; polling", "dir", d.dir, "error", err)
			}
			stop(true)
			break wait
		}
	}
	for drained := false; !drained && events != nil; {
		select {
		case _, ok := <-events:
			drained = !ok
		default:
			drained = true
		}
	}
	return true
}

// relevant reports whether a notification can mean new data for the observer: a write
// to a segment, or any file appearing or going (segments, snapshots).
func relevant(ev fsnotify.Event) bool {
	if ev.Has(fsnotify.Create | fsnotify.Remove | fsnotify.Rename) {
		return true
	}
	return ev.Has(fsnotify.Write) && strings.HasSuffix(ev.Name, ".log")
}

// poll reads what the disk source holds now and consumes it. A rebuild that fails is
// dropped: the disk source starts the next one over, from its snapshot.
func (o *Observer) poll() error {
	err := o.consume(o.f.poll())
	if err != nil {
		o.build = nil
	}
	return err
}

// consume ranges over the items of one read of a source (a poll of the disk, a Fetch
// of the quorum) and acts on each. What a catch-up holds is published at the end of
// the read, also when it ends in an error.
func (o *Observer) consume(items iter.Seq2[item, error]) error {
	defer o.release()
	for it, err := range items {
		if err != nil {
			return err
		}
		o.take(&it)
	}
	return nil
}

// take acts on one item of a source: a rebuild's start, unit or end, a unit to
// publish or to hold, the end of what a catch-up read as one commit.
func (o *Observer) take(it *item) {
	switch it.kind {
	case itemRebuild:
		o.release() // what came before is published first
		b := it.build
		if b.delta == nil {
			b.delta = image.NewDelta(image.Empty)
		}
		o.build = b
	case itemUnit:
		u := &it.unit
		switch {
		case o.build != nil:
			o.buildUnit(u)
		case it.catchUp && u.plain():
			o.hold(u)
		default:
			o.release() // what came before is published first
			o.apply(*u)
		}
	case itemFlush:
		o.release()
	case itemRebuilt:
		o.publishBuild()
	}
}

// buildUnit replays a unit into the rebuild in progress.
func (o *Observer) buildUnit(u *Unit) {
	b := o.build
	for _, e := range u.Entries {
		b.delta.At(e.Offset, u.Provenance.Timestamp)
		if err := b.delta.Replay(e.Record); err != nil {
			if b.deferLog {
				b.failed = append(b.failed, failedEntry{offset: e.Offset, typ: e.Record.Type(), err: err})
				continue
			}
			o.replayFailed(e.Offset, e.Record.Type(), err, "")
		}
	}
	b.prov = u.Provenance
}

// publishBuild publishes the rebuild in progress.
func (o *Observer) publishBuild() {
	b := o.build
	o.build = nil
	o.cfg.Metrics.SnapshotRecords.Add(b.records)
	for _, e := range b.failed {
		o.replayFailed(e.offset, e.typ, e.err, "")
	}
	o.reset(b.delta, b.prov, b.why, b.snapshot)
}

// reset publishes the image of d, a delta on image.Empty holding a whole state (a
// snapshot and the log after it), as one Update with Reset set, and makes d the delta
// later units are replayed into.
func (o *Observer) reset(d *image.Delta, prov Provenance, why, snapshot string) {
	im, ch := d.Apply(prov)
	if old := o.img.Load(); old != nil {
		ch = image.Diff(old, im)
	}
	o.delta = d
	o.cfg.Logger.Info("metadata image rebuilt", "reason", why, "snapshot", snapshot, "offset", prov.Offset,
		"epoch", prov.Epoch, "topics", im.NumTopics(), "partitions", im.NumPartitions(), "brokers", im.NumBrokers())
	o.publish(Update{Image: im, Changes: ch, Provenance: prov, Reset: true, Reason: why})
	o.once.Do(func() { close(o.ready) })
}

// apply publishes one batch or transaction applied to the current image. u is a
// copy: only what is published goes to the heap for the Handler, not every item.
func (o *Observer) apply(u Unit) {
	o.replayUnit(o.delta, &u)
	im, ch := o.delta.Apply(u.Provenance)
	o.publish(Update{Image: im, Changes: ch, Provenance: u.Provenance, Unit: &u, Units: 1})
}

// hold replays a unit of a catch-up into the delta, published by release with the
// units around it. The delta keeps nothing of its records.
func (o *Observer) hold(u *Unit) {
	o.replayUnit(o.delta, u)
	o.held++
	o.heldProv = u.Provenance
}

// release applies the units held since the last release as one update, at the last
// one's provenance, if there are any. Its Changes are those of all of them (the delta
// collects what its records touch until Apply).
func (o *Observer) release() {
	if o.held == 0 {
		return
	}
	n, prov := o.held, o.heldProv
	o.held = 0
	im, ch := o.delta.Apply(prov)
	o.cfg.Metrics.CatchUpUpdates.Add(1)
	o.publish(Update{Image: im, Changes: ch, Provenance: prov, Unit: &Unit{Provenance: prov, Coalesced: true}, Units: n})
}

// replayUnit replays the records of a log unit, each stamped with its offset and the
// unit's time (image.Delta.At), which say when a topic last changed.
func (o *Observer) replayUnit(d *image.Delta, u *Unit) {
	for _, e := range u.Entries {
		d.At(e.Offset, u.Provenance.Timestamp)
		if err := d.Replay(e.Record); err != nil {
			o.replayFailed(e.Offset, e.Record.Type(), err, "")
		}
	}
}

// replayFailed counts and logs a record Replay refused.
func (o *Observer) replayFailed(offset int64, typ metadata.RecordType, err error, file string) {
	replayFailed(o.cfg.Logger, o.cfg.Metrics, offset, typ, err, file)
}

// replayFailed counts and logs a record Replay refused; file names the snapshot it
// is from, "" for the log.
func replayFailed(log *slog.Logger, m *Metrics, offset int64, typ metadata.RecordType, err error, file string) {
	m.ReplayErrors.Add(1)
	args := []any{"offset", offset, "record", typ.String(), "error", err}
	if file != "" {
		args = append(args, "snapshot", file)
	}
	log.Error("metadata record not applied", args...)
}

func (o *Observer) publish(u Update) {
	o.img.Store(u.Image)
	m := o.cfg.Metrics
	m.Offset.Store(u.Provenance.Offset)
	m.Epoch.Store(int64(u.Provenance.Epoch))
	m.Timestamp.Store(u.Provenance.Timestamp)
	if o.cfg.Handler != nil {
		o.cfg.Handler(u)
	}
}
