// Package engine joins kraftwatch's stages: it takes the observer's metadata updates and
// the groups reader's __consumer_offsets records, keeps the hash cache and the group
// state, decides which groups' hashes changed and hands their events to the publisher.
//
// One goroutine, Run's, owns the image, the cache, the group state and the last hash of
// every group; OnMetadata and OnGroupRecord only queue their input for it, in order, and
// block while it is busy (back-pressure, nothing dropped).
//
// Start-up: nothing is decided until the observer has loaded the metadata log and the
// reader has caught up with __consumer_offsets. Then each group's hash is compared with
// the last hash published for it (read back from JetStream): a group whose hash differs,
// or that was never announced, gets one event. From then on every change is decided as
// it arrives.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// ErrStopped is returned by OnGroupRecord once Run has returned.
var ErrStopped = errors.New("engine: stopped")

// Publisher is what the engine needs of publish.Publisher.
type Publisher interface {
	Enqueue(ctx context.Context, ev publish.Event) error
	Ready() bool
	LoadLastPublished(ctx context.Context) (map[publish.GroupKey]publish.Last, error)
}

// Config configures an Engine.
type Config struct {
	ClusterID string
	// Scheme is the published hash scheme: "murmur3" or "kafka".
	Scheme string
	// Include and Exclude filter group ids (full matches); nil Include means all.
	Include, Exclude *regexp.Regexp
	// GroupsCaughtUp is closed when the groups reader has caught up (groups.Reader.CaughtUp).
	GroupsCaughtUp <-chan struct{}
	Publisher      Publisher
	Logger         *slog.Logger
}

// Stats are the engine's counters, safe to read from any goroutine.
type Stats struct {
	Groups       int
	Decisions    uint64
	DecodeErrors uint64
	Cache        hashcache.Stats
}

// Engine decides rebalance-needed events. Create it with New, feed it with
// OnMetadata and OnGroupRecord, and run it with Run.
type Engine struct {
	cfg     Config
	log     *slog.Logger
	meta    chan observer.Update
	records chan groups.Message
	done    chan struct{}
	synced  atomic.Bool
	stats   atomic.Pointer[Stats]

	// Owned by Run's goroutine.
	img      *image.Image
	loaded   bool
	cache    *hashcache.Cache
	state    *groups.State
	last     map[groups.GroupKey]int64          // last hash announced (or found announced)
	position map[groups.GroupKey]groupsPosition // last __consumer_offsets record applied per group
	coordEp  map[groups.GroupKey]int32
	decided  uint64
	decodeEr uint64
}

type groupsPosition struct {
	partition int32
	offset    int64
}

// New returns an Engine; it does nothing before Run.
func New(cfg Config) (*Engine, error) {
	if cfg.ClusterID == "" {
		return nil, errors.New("engine: no cluster id")
	}
	if cfg.Publisher == nil || cfg.GroupsCaughtUp == nil {
		return nil, errors.New("engine: Publisher and GroupsCaughtUp are required")
	}
	cache, err := hashcache.New(hashcache.Config{Scheme: cfg.Scheme})
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{
		cfg:      cfg,
		log:      cfg.Logger,
		meta:     make(chan observer.Update, 64),
		records:  make(chan groups.Message, 1024),
		done:     make(chan struct{}),
		cache:    cache,
		state:    groups.NewState(),
		last:     map[groups.GroupKey]int64{},
		position: map[groups.GroupKey]groupsPosition{},
		coordEp:  map[groups.GroupKey]int32{},
		img:      image.Empty,
	}
	e.stats.Store(&Stats{})
	return e, nil
}

// OnMetadata queues an observer update; it is the observer's Handler.
func (e *Engine) OnMetadata(u observer.Update) {
	select {
	case e.meta <- u:
	case <-e.done:
	}
}

// OnGroupRecord queues a __consumer_offsets record; it is the groups reader's handler.
func (e *Engine) OnGroupRecord(m groups.Message) error {
	select {
	case e.records <- m:
		return nil
	case <-e.done:
		return ErrStopped
	}
}

// Ready reports why the engine is not ready, or nil: the metadata log is loaded,
// __consumer_offsets is caught up, the start-up comparison is done and the publisher
// is connected.
func (e *Engine) Ready() error {
	switch {
	case !e.synced.Load():
		return errors.New("replaying the metadata log and __consumer_offsets")
	case !e.cfg.Publisher.Ready():
		return errors.New("NATS is not reachable")
	}
	return nil
}

// Stats returns the counters.
func (e *Engine) Stats() Stats { return *e.stats.Load() }

// Run processes input until ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	defer close(e.done)
	caughtUp := e.cfg.GroupsCaughtUp
	for !e.loaded || caughtUp != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u := <-e.meta:
			e.applyMetadata(u)
			e.loaded = true
		case m := <-e.records:
			e.applyRecord(m)
		case <-caughtUp:
			caughtUp = nil
		}
	}
	if err := e.startup(ctx); err != nil {
		return err
	}
	e.synced.Store(true)
	e.log.Info("in sync: deciding live", "groups", e.state.Len(), "topics", e.img.NumTopics(),
		"metadata_offset", e.img.Provenance().Offset)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u := <-e.meta:
			for _, d := range e.applyMetadata(u) {
				if err := e.announce(ctx, d); err != nil {
					return err
				}
			}
		case m := <-e.records:
			if d, ok := e.applyRecord(m); ok {
				if err := e.announce(ctx, d); err != nil {
					return err
				}
			}
		}
		e.publishStats()
	}
}

// startup compares every group's hash with the last one published and announces the
// differences; it retries reading the stream until it succeeds or ctx ends.
func (e *Engine) startup(ctx context.Context) error {
	var last map[publish.GroupKey]publish.Last
	for backoff := 250 * time.Millisecond; ; backoff = min(2*backoff, 10*time.Second) {
		var err error
		if last, err = e.cfg.Publisher.LoadLastPublished(ctx); err == nil {
			break
		}
		e.log.Warn("reading the last published events; retrying", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	for k, l := range last {
		if l.HashScheme == e.cfg.Scheme {
			e.last[groups.GroupKey{Type: groups.GroupType(k.Type), ID: k.ID}] = l.Hash
		}
	}
	for _, k := range e.state.Keys() {
		if !e.wanted(k) {
			continue
		}
		d := e.decision(k, nil)
		if prev, ok := e.last[k]; ok && prev == d.hash {
			continue
		}
		d.reasons = e.subscriptionReasons(k)
		if err := e.announce(ctx, d); err != nil {
			return err
		}
	}
	e.publishStats()
	return nil
}

// decision is one group whose hash may have changed.
type decision struct {
	group   groups.GroupKey
	hash    int64
	reasons []publish.Reason
}

func (e *Engine) wanted(k groups.GroupKey) bool {
	return (e.cfg.Include == nil || e.cfg.Include.MatchString(k.ID)) &&
		(e.cfg.Exclude == nil || !e.cfg.Exclude.MatchString(k.ID))
}

// decision computes group k's hash now.
func (e *Engine) decision(k groups.GroupKey, reasons []publish.Reason) decision {
	topics := e.state.SubscribedTopics(k, imageNames{e.img})
	return decision{group: k, hash: e.cache.GroupHash(hashcache.ImageCluster{Image: e.img}, topics), reasons: reasons}
}

// announce publishes d when its hash differs from the last one announced.
func (e *Engine) announce(ctx context.Context, d decision) error {
	prev, had := e.last[d.group]
	if had && prev == d.hash {
		return nil
	}
	ev := publish.Event{
		GroupID:          d.group.ID,
		GroupType:        publish.GroupType(d.group.Type),
		NewHash:          publish.Hash(d.hash),
		Reasons:          d.reasons,
		CoordinatorEpoch: -1,
	}
	if had {
		ev.PreviousHash = publish.SomeHash(prev)
	}
	if ep, ok := e.coordEp[d.group]; ok {
		ev.CoordinatorEpoch = ep
	}
	prov := e.img.Provenance()
	ev.MetadataOffset, ev.MetadataEpoch = prov.Offset, prov.Epoch
	if prov.Timestamp > 0 {
		ev.Time = time.UnixMilli(prov.Timestamp)
	}
	if p, ok := e.position[d.group]; ok {
		ev.ConsumerOffsets = &publish.OffsetsPosition{Partition: p.partition, Offset: p.offset}
	}
	if ev.Reasons == nil {
		ev.Reasons = []publish.Reason{}
	}
	if err := e.cfg.Publisher.Enqueue(ctx, ev); err != nil {
		return fmt.Errorf("engine: enqueue event of %s: %w", d.group, err)
	}
	e.last[d.group] = d.hash
	e.decided++
	e.log.Info("rebalance needed", "group", d.group.ID, "group_type", d.group.Type.String(),
		"previous_hash", prev, "new_hash", d.hash, "reasons", len(d.reasons), "metadata_offset", prov.Offset)
	return nil
}

func (e *Engine) publishStats() {
	e.stats.Store(&Stats{Groups: e.state.Len(), Decisions: e.decided, DecodeErrors: e.decodeEr, Cache: e.cache.Stats()})
}
