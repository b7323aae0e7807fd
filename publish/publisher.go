package publish

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher publishes rebalance-needed events. Enqueue, Ready, Stats, LastPublished and
// LoadLastPublished are safe for concurrent use; Run is called once and owns the worker
// goroutines.
type Publisher struct {
	cfg  Config
	log  *slog.Logger
	nc   *nats.Conn
	js   jetstream.JetStream // nil in ModeCore
	root string              // "<prefix>.<cluster token>"
	// inbox is the prefix of the reply subjects of the workers' publishes (ModeJetStream;
	// see ack.go), replies its subscription, made by Run.
	inbox       string
	replies     *nats.Subscription
	workersDone chan struct{} // closed when Run's workers have returned
	seed        maphash.Seed

	shards []*worker

	// enqMu orders Enqueue's sends before Run closes the shard channels: Enqueue holds
	// it for reading while it sends, Run takes it for writing after closing stopping.
	enqMu    sync.RWMutex
	stopping chan struct{}
	started  atomic.Bool
	running  atomic.Bool

	streamMu   sync.Mutex
	stream     jetstream.Stream // guarded by streamMu; nil until ensured
	streamName atomic.Pointer[string]
	// eventsStream is the stream subscribers read (ensureEvents), once known.
	eventsStream  atomic.Pointer[string]
	eventsChecked atomic.Bool // ensureEvents succeeded since the stream was last ensured

	// mu guards last and loaded: what this publisher knows of each subject's last
	// message. last holds entries for subjects read or published; when loaded is true
	// (after LoadLastPublished), a subject without an entry had no message at load time.
	mu     sync.Mutex
	last   map[string]lastState
	loaded bool
	// behind holds, per group, the stored rebalance-needed event that made one of ours
	// superseded, until TakeSuperseded; superseded is signalled when one is added.
	behindMu   sync.Mutex
	behind     map[events.GroupKey]Last
	superseded chan struct{}

	failing atomic.Int32 // workers whose current event's last attempt failed
	// streamErr is why the stream is not ensured yet (Run), lastErr the last failed
	// attempt's error; failLog rate-limits the lines about failing attempts.
	streamErr atomic.Pointer[error]
	lastErr   atomic.Pointer[error]
	failLog   failLog
	queued    atomic.Int64
	stats     counters
}

// eventKind tells the two event types apart in the workers and the last-event cache.
type eventKind uint8

const (
	kindNeeded     eventKind = iota // rebalance-needed (Enqueue)
	kindRebalanced                  // rebalanced (EnqueueRebalanced)
)

// pending is an event encoded by Enqueue, waiting for a worker or in flight. Its
// attempt fields belong to the worker that holds it.
type pending struct {
	kind    eventKind
	key     events.GroupKey
	subject string // the group's public subject
	target  string // the subject published to: subject, or in ModeJetStream the internal one
	id      string
	body    []byte
	hash    int64
	scheme  string
	cause   events.Cause
	time    time.Time
	// ev is the rebalance-needed event body was encoded from, kept to encode it again
	// when its previous_hash must chain to another stored event (chain); nil for
	// rebalanced events.
	ev *events.RebalanceNeeded

	token     uint64    // the attempt in flight, 0 when none (ModeJetStream; see ack.go)
	failures  int       // attempts that failed in a row
	conflicts int       // publishes refused for a wrong last sequence
	refresh   bool      // read the subject's last message before the next attempt
	due       time.Time // when the next attempt is due, while it waits for a retry
}

// lastState is what is known of a subject's last message.
type lastState struct {
	seq   uint64     // stream sequence, 0 when the subject has none (or in ModeCore)
	ev    *lastEvent // nil when there is no message or it could not be decoded
	stale bool       // must be read again before use
}

type lastEvent struct {
	kind   eventKind
	key    events.GroupKey
	id     string
	hash   int64
	scheme string
	cause  events.Cause
	time   time.Time
	// topics and truncated are the stored event's, read by LoadLastPublished and
	// dropped once it has returned them (the engine needs them only at start-up).
	topics    []events.CoveredTopic
	truncated bool
}

func (l *lastEvent) export(seq uint64) Last {
	return Last{Hash: l.hash, HashScheme: l.scheme, Cause: l.cause, MsgID: l.id, Seq: seq, Time: l.time,
		Topics: l.topics, TopicsTruncated: l.truncated}
}

// Last is the last event stored for a group.
type Last struct {
	Hash       int64
	HashScheme string
	Cause      events.Cause
	MsgID      string
	Seq        uint64 // stream sequence; 0 in ModeCore
	Time       time.Time
	// Topics and TopicsTruncated are the event's (Event.Topics): what Hash covered.
	// Nil for an event of a kraftwatch that did not list them, and in ModeCore.
	Topics          []events.CoveredTopic
	TopicsTruncated bool
}

// Stats are counters since New. Events counts each event once, by how it ended;
// Failed and Retried count attempts.
type Stats struct {
	Enqueued uint64 // events accepted by Enqueue
	// Published: events this publisher stored (JetStream) or sent (core).
	Published uint64
	// AlreadyPublished: events found already stored (same id, or the group's last event
	// already announces the same hash), e.g. by another replica; not published again.
	AlreadyPublished uint64
	// Superseded: events older than the group's last stored event in either log (their
	// Cause does not dominate its Cause); dropped on purpose so a lagging replica never
	// rolls a group back (see Superseded for the stored events).
	Superseded uint64
	// Conflicts: publishes refused because another publisher had written the subject
	// since it was read (wrong last sequence); the subject is read again.
	Conflicts uint64
	// Failed: attempts that failed (NATS unreachable, timeout, server error).
	Failed uint64
	// Retried: attempts made again after a failure (a conflict is counted in Conflicts
	// only).
	Retried uint64
	// Dropped: events given up, each with an error log line: a permanent error (payload
	// above the server's max_payload) or the drain timeout.
	Dropped uint64
	// Queued: events accepted and not yet finished.
	Queued int64
}

type counters struct {
	enqueued, published, already, superseded, conflicts, failed, retried, dropped atomic.Uint64
}

// New returns a Publisher for cfg; it does no I/O. Run must be called for events to be
// published.
func New(cfg Config) (*Publisher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Publisher{
		cfg:         cfg,
		log:         cfg.Logger,
		nc:          cfg.Conn,
		root:        cfg.subjectRoot(),
		seed:        maphash.MakeSeed(),
		stopping:    make(chan struct{}),
		workersDone: make(chan struct{}),
		last:        make(map[string]lastState),
		behind:      make(map[events.GroupKey]Last),
		superseded:  make(chan struct{}, 1),
	}
	n := min(cfg.Workers, maxShards)
	window := (cfg.Workers + n - 1) / n
	per := max(cfg.BufferSize/n, 1)
	p.shards = make([]*worker, n)
	for i := range p.shards {
		p.shards[i] = &worker{p: p, index: i, window: window, in: make(chan *pending, per),
			acks: make(chan *nats.Msg, window), inflight: make(map[uint64]*pending), held: make(map[string]*pending), queued: make(map[string][]*pending)}
	}
	if cfg.Mode == ModeJetStream {
		js, err := jetstream.New(cfg.Conn)
		if err != nil {
			return nil, fmt.Errorf("publish: jetstream: %w", err)
		}
		p.js = js
		p.inbox = cfg.Conn.NewInbox()
	}
	return p, nil
}

// maxShards bounds the worker goroutines; Config.Workers beyond it is more events in
// flight per worker.
const maxShards = 16

// shard returns the worker of a target subject: all events of a group go to one worker.
func (p *Publisher) shard(target string) *worker {
	return p.shards[maphash.String(p.seed, target)%uint64(len(p.shards))]
}

// Subject returns the subject of a group's events.
func (p *Publisher) Subject(t events.GroupType, groupID string) string {
	return p.root + ".group." + t.String() + "." + events.EscapeToken(groupID)
}

// Subjects returns the filter of every public subject of this cluster,
// "<prefix>.<cluster token>.>", which subscribers use.
func (p *Publisher) Subjects() string { return p.root + ".>" }

// StreamSubjects returns the subject filter the stream captures (ModeJetStream):
// "_kraftwatch.<prefix>.<cluster token>.>", the subjects the publisher publishes to.
func (p *Publisher) StreamSubjects() string { return events.InternalPrefix + "." + p.root + ".>" }

// StreamName returns the name of the stream kraftwatch publishes into (ModeJetStream),
// once the publisher has found or created it, else "".
func (p *Publisher) StreamName() string {
	if n := p.streamName.Load(); n != nil {
		return *n
	}
	return ""
}

// EventsStream returns the name of the stream subscribers read, which captures the
// public subjects and sources StreamName's (ModeJetStream), once Run has found or
// created it; "" before, in ModeCore, when another stream that does not source
// kraftwatch's captures the public subjects (Run logs a warning saying what to change),
// or with Config.NoEventsStream unless such a stream exists (it is left alone).
func (p *Publisher) EventsStream() string {
	if n := p.eventsStream.Load(); n != nil {
		return *n
	}
	return ""
}

// internal returns the internal subject of a public one.
func internal(subject string) string { return events.InternalPrefix + "." + subject }

// Enqueue validates ev, encodes it and queues it for publishing. It blocks while the
// buffer is full (nothing is dropped) until there is room, ctx ends (ctx.Err()) or Run
// shuts down (ErrClosed). Events of one group are published in Enqueue order. An invalid
// event gives an error wrapping ErrInvalidEvent and is not queued. Empty ClusterID and
// HashScheme are filled from the Config; other values are an error.
func (p *Publisher) Enqueue(ctx context.Context, ev events.RebalanceNeeded) error {
	if ev.ClusterID == "" {
		ev.ClusterID = p.cfg.ClusterID
	} else if ev.ClusterID != p.cfg.ClusterID {
		return fmt.Errorf("%w: group %q: cluster id %q, publisher's is %q", events.ErrInvalidEvent, ev.GroupID, ev.ClusterID, p.cfg.ClusterID)
	}
	if ev.HashScheme == "" {
		ev.HashScheme = p.cfg.HashScheme
	} else if ev.HashScheme != p.cfg.HashScheme {
		return fmt.Errorf("%w: group %q: hash scheme %q, publisher's is %q", events.ErrInvalidEvent, ev.GroupID, ev.HashScheme, p.cfg.HashScheme)
	}
	t := ev.Time
	if t.IsZero() {
		t = p.cfg.Now()
	}
	t = t.UTC()
	id, body, err := ev.Marshal(t)
	if err != nil {
		return err
	}
	pm := &pending{
		key:    ev.Key(),
		id:     id,
		body:   body,
		hash:   int64(ev.NewHash),
		scheme: ev.HashScheme,
		cause:  ev.Cause,
		time:   t,
		ev:     &ev,
	}
	pm.setGroupSubject(p, ev.GroupType, ev.GroupID)
	return p.enqueue(ctx, pm)
}

// setSubject sets pm's subject (public) and target (the subject published to: the
// internal one in ModeJetStream).
func (pm *pending) setSubject(p *Publisher, subject string) {
	pm.subject, pm.target = subject, subject
	if p.js != nil {
		pm.target = internal(subject)
	}
}

// setGroupSubject is setSubject for a rebalance-needed event, with one allocation for
// both: the public subject is the tail of the internal one.
func (pm *pending) setGroupSubject(p *Publisher, t events.GroupType, groupID string) {
	if p.js == nil {
		pm.setSubject(p, p.Subject(t, groupID))
		return
	}
	pm.target = events.InternalPrefix + "." + p.root + ".group." + t.String() + "." + events.EscapeToken(groupID)
	pm.subject = pm.target[len(events.InternalPrefix)+1:]
}

// enqueue hands an encoded event to its subject's worker (Enqueue's blocking and errors).
func (p *Publisher) enqueue(ctx context.Context, pm *pending) error {
	ch := p.shard(pm.target).in

	p.enqMu.RLock()
	defer p.enqMu.RUnlock()
	select {
	case <-p.stopping:
		return ErrClosed
	default:
	}
	p.queued.Add(1)
	select {
	case ch <- pm:
		p.stats.enqueued.Add(1)
		return nil
	case <-p.stopping:
		p.queued.Add(-1)
		return ErrClosed
	case <-ctx.Done():
		p.queued.Add(-1)
		return ctx.Err()
	}
}

// Ready reports whether events flow: Health is nil.
func (p *Publisher) Ready() bool { return p.Health() == nil }

// Health is nil when events flow: Run is running, the connection is up, the stream
// exists (JetStream) and no worker's last attempt failed. Otherwise it says why: the
// connection's cause (Config.ConnHealth), the stream's last error, or the last failed
// attempt's error with the number of events waiting for a retry.
func (p *Publisher) Health() error {
	if !p.running.Load() {
		return errors.New("publisher not running")
	}
	if !p.nc.IsConnected() {
		if err := p.connErr(); err != nil {
			return err
		}
		return errNotConnected
	}
	if p.js != nil && p.streamName.Load() == nil {
		if err := p.streamErr.Load(); err != nil {
			if strings.Contains((*err).Error(), p.cfg.Stream) {
				return *err
			}
			return fmt.Errorf("stream %s: %w", p.cfg.Stream, *err)
		}
		return fmt.Errorf("stream %s: not found or created yet", p.cfg.Stream)
	}
	if n := p.failing.Load(); n != 0 {
		err := errors.New("unknown error")
		if e := p.lastErr.Load(); e != nil {
			err = *e
		}
		return fmt.Errorf("publishing fails (%d events waiting for a retry; connected to %s): %w", n, p.nc.ConnectedUrlRedacted(), err)
	}
	return nil
}

// State says what the publisher does while Health is nil: where it publishes and how
// many events wait.
func (p *Publisher) State() string {
	where := "core NATS"
	if p.js != nil {
		where = "stream " + p.StreamName()
	}
	return fmt.Sprintf("publishing to %s on %s, %d events queued", where, p.nc.ConnectedUrlRedacted(), p.queued.Load())
}

// connErr is Config.ConnHealth's answer, or nil without it.
func (p *Publisher) connErr() error {
	if p.cfg.ConnHealth == nil {
		return nil
	}
	return p.cfg.ConnHealth()
}

// Stats returns the counters.
func (p *Publisher) Stats() Stats {
	s := &p.stats
	return Stats{
		Enqueued:         s.enqueued.Load(),
		Published:        s.published.Load(),
		AlreadyPublished: s.already.Load(),
		Superseded:       s.superseded.Load(),
		Conflicts:        s.conflicts.Load(),
		Failed:           s.failed.Load(),
		Retried:          s.retried.Load(),
		Dropped:          s.dropped.Load(),
		Queued:           p.queued.Load(),
	}
}

// Run publishes queued events until ctx ends, then stops Enqueue (ErrClosed), publishes
// what is queued within Config.DrainTimeout and returns: nil, or an error wrapping
// ErrDrainTimeout that counts the events left unpublished (each also logged). In
// JetStream mode it first makes sure the stream exists, retrying with backoff. Run may
// be called once.
func (p *Publisher) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: Run called twice", ErrClosed)
	}
	if p.js != nil {
		sub, err := p.nc.Subscribe(p.inbox+".>", p.onReply)
		if err != nil {
			return fmt.Errorf("publish: subscribing to the replies of JetStream: %w", err)
		}
		p.replies = sub
		defer func() { _ = sub.Unsubscribe() }()
	}
	workCtx, stopWork := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopWork(nil)
	var wg sync.WaitGroup
	var drainDropped atomic.Uint64
	for _, w := range p.shards {
		wg.Go(func() { drainDropped.Add(w.run(workCtx)) })
	}
	p.running.Store(true)
	args := []any{"mode", p.cfg.Mode.String(), "subject", p.Subjects(), "workers", len(p.shards), "buffer", p.cfg.BufferSize}
	if p.js != nil {
		args = append(args, "stream_subjects", p.StreamSubjects())
	}
	p.log.Info("publisher started", args...)
	if p.js != nil {
		for failures := 0; ctx.Err() == nil; {
			if _, err := p.ensureStream(ctx); err == nil {
				p.streamErr.Store(nil)
				break
			} else if ctx.Err() == nil {
				if cerr := p.connErr(); cerr != nil && !p.nc.IsConnected() {
					err = cerr // the cause, not the request's timeout
				}
				p.streamErr.Store(&err)
				failures++
				d := jitter(backoff(p.cfg.RetryMin, p.cfg.RetryMax, failures))
				level := slog.LevelWarn
				if errors.Is(err, ErrStreamConfig) {
					level = slog.LevelError // an operator must act
				}
				p.log.Log(ctx, level, "stream not ready; retrying", "stream", p.cfg.Stream, "attempt", failures, "retry_in", d, "error", err)
				sleep(ctx, d)
			}
		}
		for failures := 0; ctx.Err() == nil && !p.eventsChecked.Load(); {
			if err := p.checkEvents(ctx, p.StreamName()); err != nil {
				failures++
				d := jitter(backoff(p.cfg.RetryMin, p.cfg.RetryMax, failures))
				p.log.Warn("events stream not checked; retrying", "stream", p.cfg.EventsStream, "attempt", failures, "retry_in", d, "error", err)
				sleep(ctx, d)
			}
		}
	}
	<-ctx.Done()

	p.running.Store(false)
	close(p.stopping) // Enqueue calls that are blocked return ErrClosed
	p.enqMu.Lock()    // no Enqueue is sending now, and new ones see stopping
	for _, w := range p.shards {
		close(w.in)
	}
	p.enqMu.Unlock()
	p.log.Info("publisher draining", "queued", p.queued.Load(), "timeout", p.cfg.DrainTimeout)
	timer := time.AfterFunc(p.cfg.DrainTimeout, func() { stopWork(ErrDrainTimeout) })
	wg.Wait()
	close(p.workersDone)
	timer.Stop()
	if n := drainDropped.Load(); n > 0 {
		return fmt.Errorf("%w: %d events not published", ErrDrainTimeout, n)
	}
	p.log.Info("publisher stopped")
	return nil
}

// outcome is how one attempt ended.
type outcome uint8

const (
	outPublished outcome = iota
	outAlready
	outSuperseded
	outConflict
)

// errNotConnected is an attempt refused locally: publishing into the client's reconnect
// buffer would hide the failure.
var errNotConnected = errors.New("not connected to NATS")

func (p *Publisher) finish(pm *pending, out outcome, seq uint64) {
	if out == outPublished {
		p.stats.published.Add(1)
		if p.log.Enabled(context.Background(), slog.LevelDebug) { // the arguments cost allocations per event
			p.log.Debug("event published", append(pm.logArgs(), "seq", seq)...)
		}
		return
	}
	args := pm.logArgs()
	switch out {
	case outAlready:
		p.stats.already.Add(1)
		p.log.Info("event already published; skipped", args...)
	case outSuperseded:
		p.stats.superseded.Add(1)
		p.log.Info("event superseded by a later stored event; skipped", args...)
	}
}

func (p *Publisher) drop(pm *pending, attempts int, err error) {
	p.stats.dropped.Add(1)
	p.log.Error("event dropped", append(pm.logArgs(), "attempts", attempts, "error", err)...)
}

// logArgs are the attributes of pm's log lines: its group and id, and what the event
// says in its kind's terms (a rebalance-needed event's new hash, as the decimal string
// the JSON carries, and metadata offset; a rebalanced event's bump record).
func (pm *pending) logArgs() []any {
	args := []any{"group", pm.key.ID, "group_type", pm.key.Type.String(), "subject", pm.subject, "msg_id", pm.id}
	if pm.kind == kindRebalanced {
		if pos := pm.cause.ConsumerOffsets; pos != nil {
			args = append(args, "partition", pos.Partition, "offset", pos.Offset)
		}
		return args
	}
	return append(args, "new_hash", strconv.FormatInt(pm.hash, 10), "metadata_offset", pm.cause.MetadataOffset)
}

// judge applies the rules that make an event unnecessary given the subject's last
// stored event l: the same event; one later than pm in either log (pm's Cause does not
// dominate l's: publishing pm would roll the group back); or, for rebalance-needed
// events, one announcing the same hash (same scheme). It returns false when pm must be
// published.
func judge(l *lastEvent, pm *pending) (outcome, bool) {
	switch {
	case l == nil || l.kind != pm.kind:
		return 0, false
	case l.id == pm.id:
		return outAlready, true
	case !pm.cause.Dominates(l.cause):
		return outSuperseded, true
	case pm.kind == kindNeeded && l.scheme == pm.scheme && l.hash == pm.hash:
		return outAlready, true
	}
	return 0, false
}

// judge is judge, then, for a rebalance-needed event: when pm is superseded, keeps the
// stored event l (at stream sequence seq) for TakeSuperseded; when pm is to be
// published after l, makes pm's previous_hash l's hash.
func (p *Publisher) judge(l *lastEvent, seq uint64, pm *pending) (outcome, bool) {
	out, done := judge(l, pm)
	if pm.kind != kindNeeded || l == nil || l.kind != kindNeeded || l.scheme != pm.scheme {
		return out, done
	}
	switch {
	case out == outSuperseded:
		p.behindMu.Lock()
		p.behind[pm.key] = l.export(seq)
		p.behindMu.Unlock()
		select {
		case p.superseded <- struct{}{}:
		default:
		}
	case !done && pm.ev.PreviousHash != events.SomeHash(l.hash):
		ev := *pm.ev
		ev.PreviousHash = events.SomeHash(l.hash)
		_, body, err := ev.Marshal(pm.time)
		if err != nil { // cannot be: only previous_hash changed
			p.log.Error("encoding an event again with the stored previous hash", "group", pm.key.ID, "error", err)
			break
		}
		pm.ev, pm.body = &ev, body
	}
	return out, done
}

// Superseded receives a value after events were found superseded (Stats.Superseded):
// their groups' stored events are older than them in no log, and some are later in one.
// TakeSuperseded returns those stored events, so that the caller can take them as the
// groups' last announced state.
func (p *Publisher) Superseded() <-chan struct{} { return p.superseded }

// TakeSuperseded returns, per group, the stored rebalance-needed event that superseded
// an event of this publisher since the last call (see Superseded).
func (p *Publisher) TakeSuperseded() map[events.GroupKey]Last {
	p.behindMu.Lock()
	defer p.behindMu.Unlock()
	if len(p.behind) == 0 {
		return nil
	}
	out := p.behind
	p.behind = make(map[events.GroupKey]Last)
	return out
}

func (pm *pending) lastEvent() *lastEvent {
	return &lastEvent{kind: pm.kind, key: pm.key, id: pm.id, hash: pm.hash, scheme: pm.scheme, cause: pm.cause, time: pm.time}
}

// tryCore makes one core-NATS attempt: publish, then flush so the server has it.
func (p *Publisher) tryCore(ctx context.Context, pm *pending) (outcome, error) {
	p.mu.Lock()
	l := p.last[pm.subject].ev
	p.mu.Unlock()
	if out, done := p.judge(l, 0, pm); done {
		return out, nil
	}
	if !p.nc.IsConnected() {
		return 0, errNotConnected
	}
	m := nats.NewMsg(pm.target)
	m.Data = pm.body
	m.Header[jetstream.MsgIDHeader] = []string{pm.id}
	m.Header["Content-Type"] = contentType
	if err := p.nc.PublishMsg(m); err != nil {
		return 0, err
	}
	actx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	if err := p.nc.FlushWithContext(actx); err != nil {
		return 0, fmt.Errorf("flush: %w", err)
	}
	p.mu.Lock()
	p.last[pm.subject] = lastState{ev: pm.lastEvent()}
	p.mu.Unlock()
	return outPublished, nil
}

// permanent reports errors that no retry can fix.
func permanent(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrInvalidMsg) ||
		errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum
}

// backoff returns min·2^(failures-1), at most max.
func backoff(min, max time.Duration, failures int) time.Duration {
	d := min
	for i := 1; i < failures && d < max; i++ {
		d *= 2
	}
	return minDur(d, max)
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// jitter returns a duration in (d/2, d] so that workers and replicas spread out.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d - rand.N(d/2)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
