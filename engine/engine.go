// Package engine joins kraftwatch's stages: it takes the observer's metadata updates and
// the groups reader's __consumer_offsets records, keeps the hash cache and the group
// state, decides which groups' hashes changed and hands their events to the publisher.
//
// One goroutine, Run's, owns the image, the cache, the group state and the last hash of
// every group; OnMetadata and OnGroupRecords only queue their input for it, in order, and
// block while it is busy (back-pressure, nothing dropped).
//
// Start-up: nothing is decided until the observer has loaded the metadata log and the
// reader has caught up with __consumer_offsets. Then each group's hash is compared with
// the last hash published for it (read back from JetStream): a group whose hash differs,
// or that was never announced, gets one event. Its reasons come from comparing the
// topics the last event covered (Event.Topics) with those the hash covers now, each
// stamped with the metadata record that made the change (downtimeReasons), so a restart
// words a change made while kraftwatch was down as a live run would have. From then on
// every change is decided as it arrives.
//
// Every event lists the topics its hash covers (Event.Topics, cut at
// publish.MaxTopicsBytes) and stamps each reason with the offset and time of its
// record (image.Stamp).
//
// Every group epoch the coordinator writes is also followed (groups.Rebalances) and, with
// Config.Rebalanced, announced as a rebalanced event linked to the rebalance-needed
// event that predicted it (rebalanced.go). Both event types land in the group's History.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// ErrStopped is returned by OnGroupRecords once Run has returned.
var ErrStopped = errors.New("engine: stopped")

// Publisher is what the engine needs of publish.Publisher.
type Publisher interface {
	Enqueue(ctx context.Context, ev events.RebalanceNeeded) error
	EnqueueRebalanced(ctx context.Context, ev events.GroupRebalanced) error
	Ready() bool
	LoadLastPublished(ctx context.Context) (map[events.GroupKey]publish.Last, error)
	// Superseded and TakeSuperseded hand over the stored events that were later, in
	// either log, than events of the engine (publish.Publisher.Superseded).
	Superseded() <-chan struct{}
	TakeSuperseded() map[events.GroupKey]publish.Last
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
	// MismatchAfter is how long the kafka-scheme hash of a group the coordinator keeps
	// refreshing may differ from its stored MetadataHash before it counts in
	// Stats.CoordinatorMismatches; 0 means DefaultMismatchAfter.
	MismatchAfter time.Duration
	// Rebalanced makes every group epoch bump a rebalanced event (EnqueueRebalanced),
	// recorded in the group's History like rebalance-needed events.
	Rebalanced bool
	// OnRebalanced, when set, is called from Run's goroutine with every bump's
	// rebalanced event, published or not (metrics); it must not block.
	OnRebalanced func(events.GroupRebalanced)
	Logger       *slog.Logger
	// HistorySize is the number of events kept per group for Query (History);
	// 0 means DefaultHistorySize.
	HistorySize int
}

// Stats are the engine's counters, safe to read from any goroutine.
type Stats struct {
	Groups    int
	Decisions uint64
	// DecisionReasons counts the decisions by the kinds of their reasons: a decision
	// counts once under each distinct kind it gives.
	DecisionReasons [events.NumReasonKinds]uint64
	DecodeErrors    uint64
	// UnknownTags counts the tagged fields of __consumer_offsets records skipped as
	// unknown (a newer Kafka's; the rest of each record is used).
	UnknownTags uint64
	// InvalidEvents counts the events the publisher refused as invalid (never
	// published; each logged with its group).
	InvalidEvents uint64
	Cache         hashcache.Stats
	// CoordinatorChecked is how many groups the last coordinator check compared;
	// CoordinatorMismatches how many of them had disagreed for MismatchAfter or longer.
	CoordinatorChecked, CoordinatorMismatches int
}

// Engine decides rebalance-needed events. Create it with New, feed it with
// OnMetadata and OnGroupRecord, and run it with Run.
type Engine struct {
	cfg     Config
	log     *slog.Logger
	meta    chan observer.Update
	records chan []groups.Message // batches of one partition's records
	queries chan query
	done    chan struct{}
	synced  atomic.Bool
	stats   atomic.Pointer[Stats]

	// Owned by Run's goroutine.
	img      *image.Image
	loaded   bool
	cache    *hashcache.Cache
	state    *groups.State
	tracker  *groups.Tracker
	position map[events.GroupKey]groupsPosition // last __consumer_offsets record applied per group
	// announced is the hash of each group's last event (published, or read back from
	// JetStream at start-up). It outlives the group's records: a group deleted by the
	// coordinator and created again chains its next event to the one before.
	announced map[events.GroupKey]int64
	// behind holds the stored events that superseded one of ours (another replica was
	// ahead in a log), per group, until the engine is at or past them in both logs:
	// the group is then looked at again (recheck).
	behind  map[events.GroupKey]publish.Last
	history *History
	// sinceQuery counts the records applied since the last Query was served.
	sinceQuery int
	decided    uint64
	byReason   [events.NumReasonKinds]uint64
	decodeEr   uint64
	unknownTag uint64
	// unknownKinds are the record types and versions skipped as unknown so far, each
	// logged once.
	unknownKinds map[[2]int16]bool
	invalid      uint64
	coord        coordinatorCheck
	rebal        rebalances
}

type groupsPosition struct {
	partition int32
	offset    int64
	time      time.Time // the record's timestamp
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
	state := groups.NewState()
	e := &Engine{
		cfg:       cfg,
		log:       cfg.Logger,
		meta:      make(chan observer.Update, 64),
		records:   make(chan []groups.Message, 8), // a batch is up to one fetch (8 MiB) of group records
		queries:   make(chan query),
		done:      make(chan struct{}),
		cache:     cache,
		state:     state,
		tracker:   groups.NewTracker(state, cache),
		position:  map[events.GroupKey]groupsPosition{},
		announced: map[events.GroupKey]int64{},
		behind:    map[events.GroupKey]publish.Last{},
		img:       image.Empty,
		history:   NewHistory(cfg.HistorySize),
	}
	e.rebal = newRebalances()
	e.coord = coordinatorCheck{grace: cmp.Or(cfg.MismatchAfter, DefaultMismatchAfter), since: map[events.GroupKey]mismatch{}}
	if cfg.Scheme != hashcache.SchemeKafka {
		e.coord.kafka, _ = hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
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

// OnGroupRecords queues __consumer_offsets records, in order, and keeps the slice; it
// is the groups reader's handler (one fetch of one partition at a time).
func (e *Engine) OnGroupRecords(batch []groups.Message) error {
	select {
	case e.records <- batch:
		return nil
	case <-e.done:
		return ErrStopped
	}
}

// OnGroupRecord queues one __consumer_offsets record.
func (e *Engine) OnGroupRecord(m groups.Message) error {
	return e.OnGroupRecords([]groups.Message{m})
}

// Ready reports why the engine is not ready, or nil: the metadata log is loaded,
// __consumer_offsets is caught up, the start-up comparison is done and the publisher
// is connected.
func (e *Engine) Ready() error {
	switch {
	case !e.synced.Load():
		return errors.New("replaying the metadata log and __consumer_offsets")
	case !e.cfg.Publisher.Ready():
		return errors.New("waiting for the publisher to reach NATS")
	}
	return nil
}

// Stats returns the counters.
func (e *Engine) Stats() Stats { return *e.stats.Load() }

// Run processes input until ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	defer close(e.done)
	// Replay both inputs without deciding until both are loaded.
	caughtUp := e.cfg.GroupsCaughtUp
	for !e.loaded || caughtUp != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u := <-e.meta:
			e.img, e.loaded = u.Image, true
		case batch := <-e.records:
			for _, m := range batch {
				e.applyRecord(m)
			}
		case q := <-e.queryable():
			e.serve(q)
		case <-caughtUp:
			// The reader queued every record up to its start-time end offsets
			// before closing caughtUp: apply those still queued.
			for n := len(e.records); n > 0; n-- {
				for _, m := range <-e.records {
					e.applyRecord(m)
				}
			}
			caughtUp = nil
		}
	}
	if err := e.startup(ctx); err != nil {
		return err
	}
	if err := e.flushReplayed(ctx); err != nil {
		return err
	}
	e.synced.Store(true)
	e.log.Info("in sync: deciding live", "groups", e.state.Len(), "topics", e.img.NumTopics(),
		"metadata_offset", e.img.Provenance().Offset)
	check := time.NewTicker(e.coord.checkInterval())
	defer check.Stop()
	for {
		var ds []groups.Decision
		var at time.Time // when the cause happened; zero: the image's append time
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u := <-e.meta:
			e.img = u.Image
			ds = e.tracker.Metadata(u.Image, u.Changes)
		case batch := <-e.records:
			// Each record is decided on as if it came alone: the next one is applied
			// once the events of the one before are handed over.
			for i, m := range batch {
				if i > 0 {
					if err := e.settle(ctx, ds, at); err != nil {
						return err
					}
					ds, at = ds[:0], time.Time{}
				}
				if ch, ok := e.applyRecord(m); ok {
					if d, ok := e.tracker.Group(ch); ok {
						ds, at = append(ds, d), m.Time
					}
				}
			}
		case now := <-check.C:
			e.checkCoordinator(now)
		case <-e.cfg.Publisher.Superseded():
			e.takeSuperseded()
		case q := <-e.queryable():
			e.serve(q)
			continue
		}
		if err := e.settle(ctx, ds, at); err != nil {
			return err
		}
	}
}

// settle announces the decisions of one input (at: when their cause happened), then
// the groups whose stored events the engine has now caught up with, and hands the
// events over.
func (e *Engine) settle(ctx context.Context, ds []groups.Decision, at time.Time) error {
	var st *stamper
	for _, d := range ds {
		if st == nil {
			st = newStamper(e.img)
		}
		if err := e.announce(ctx, d, at, e.liveReasons(st, d, at)); err != nil {
			return err
		}
	}
	if err := e.recheck(ctx); err != nil {
		return err
	}
	if err := e.flushLive(ctx); err != nil {
		return err
	}
	e.publishStats()
	return nil
}

// takeSuperseded takes the stored events that superseded events of the engine as their
// groups' last announced state: the Tracker compares with their hashes from now on, and
// each group is looked at again once the engine has caught up with the event (recheck).
func (e *Engine) takeSuperseded() {
	for k, l := range e.cfg.Publisher.TakeSuperseded() {
		if l.HashScheme != e.cfg.Scheme {
			continue
		}
		e.tracker.Seed(k, l.Hash)
		e.announced[k] = l.Hash
		e.behind[k] = l
	}
}

// recheck announces each group of behind whose stored event the engine is now at or past
// in both logs (its image's offset, the group's last record), when the group's hash
// differs from that event's: what the other replica has not announced yet, worded as
// after downtime (the event's topics against the group's now).
func (e *Engine) recheck(ctx context.Context) error {
	if len(e.behind) == 0 {
		return nil
	}
	var st *stamper
	for _, k := range slices.SortedFunc(maps.Keys(e.behind), events.GroupKey.Compare) {
		l := e.behind[k]
		cur := events.Cause{MetadataOffset: e.img.Provenance().Offset}
		p, ok := e.position[k]
		if ok {
			cur.ConsumerOffsets = &events.OffsetsPosition{Partition: p.partition, Offset: p.offset}
		}
		if !cur.Dominates(l.Cause) {
			continue
		}
		delete(e.behind, k)
		d, changed := e.tracker.Recheck(k)
		if !changed {
			continue
		}
		if st == nil {
			st = newStamper(e.img)
		}
		reasons := downtimeReasons(st, l, e.coveredTopics(k), p.time, e.regexOf(k))
		if err := e.announce(ctx, d, latest(reasons), reasons); err != nil {
			return err
		}
	}
	return nil
}

// startup seeds every group with the hash last published for it (read back from
// JetStream, retried until it succeeds or ctx ends) and announces the groups whose
// hash differs now, or that were never announced.
func (e *Engine) startup(ctx context.Context) error {
	var last map[events.GroupKey]publish.Last
	for backoff := 250 * time.Millisecond; ; backoff = min(2*backoff, 10*time.Second) {
		var err error
		if last, err = e.cfg.Publisher.LoadLastPublished(ctx); err == nil {
			break
		}
		e.log.Warn("reading the last published events; retrying", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	for k, l := range last {
		if l.HashScheme == e.cfg.Scheme {
			e.tracker.Seed(k, l.Hash)
			e.announced[k] = l.Hash
		}
	}
	st := newStamper(e.img)
	for _, d := range e.tracker.Sync(e.img) {
		var subscribed time.Time
		if p, ok := e.position[d.Group]; ok {
			subscribed = p.time
		}
		var reasons []events.Reason
		l, ok := last[d.Group]
		if ok && l.HashScheme == e.cfg.Scheme {
			reasons = downtimeReasons(st, l, e.coveredTopics(d.Group), subscribed, e.regexOf(d.Group))
		}
		if len(reasons) == 0 {
			// The group's first event, or nothing in the last one explains the move.
			reasons = e.subscriptionReasons(d.Group, subscribed)
		}
		if err := e.announce(ctx, d, latest(reasons), reasons); err != nil {
			return err
		}
	}
	e.publishStats()
	return nil
}

// applyRecord applies one __consumer_offsets record to the group state.
func (e *Engine) applyRecord(m groups.Message) (groups.Change, bool) {
	e.sinceQuery++
	ch, rb, err := e.rebal.rb.Replay(e.state, m.Key, m.Value)
	if n, fresh := e.state.UnknownTags(); n != e.unknownTag {
		e.unknownTag = n
		for _, k := range fresh {
			e.log.Warn("skipping unknown tagged fields of __consumer_offsets records (logged once per record type, version and tag)",
				"record_type", k.Type.String(), "version", k.Version, "tag", k.Tag, "partition", m.Partition, "offset", m.Offset)
		}
	}
	if err != nil {
		e.decodeEr++
		var de *groups.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, groups.ErrUnknownRecordType) && !errors.Is(err, groups.ErrUnknownVersion) {
			e.log.Warn("skipping a __consumer_offsets record", "partition", m.Partition, "offset", m.Offset, "error", err)
			return groups.Change{}, false
		}
		if k := [2]int16{int16(de.RecordType), de.Version}; !e.unknownKinds[k] {
			if e.unknownKinds == nil {
				e.unknownKinds = map[[2]int16]bool{}
			}
			e.unknownKinds[k] = true
			e.log.Warn("skipping __consumer_offsets records of unknown type or version (logged once per type and version)",
				"record_type", de.RecordType.String(), "version", de.Version, "partition", m.Partition, "offset", m.Offset, "error", err)
		}
		return groups.Change{}, false
	}
	if ch.Metadata {
		e.rebal.epochAt[ch.Group] = bump{partition: int32(m.Partition), offset: m.Offset, time: m.Time}
	}
	if rb != nil {
		e.noteBump(rb, m)
	}
	if !ch.Changed() {
		return ch, false
	}
	if ch.Removed {
		delete(e.position, ch.Group)
		e.history.forget(ch.Group)
		delete(e.rebal.predictions, ch.Group)
		delete(e.rebal.epochAt, ch.Group)
	} else {
		e.position[ch.Group] = groupsPosition{partition: int32(m.Partition), offset: m.Offset, time: m.Time}
	}
	return ch, true
}

// subscriptionReasons lists the topics a group reads, for an event whose cause is not
// known: the group's first event, or one whose last event does not explain the move.
// at is the time of the group's last record, zero when not known.
func (e *Engine) subscriptionReasons(k events.GroupKey, at time.Time) []events.Reason {
	var rs []events.Reason
	for _, name := range e.tracker.Topics(k) {
		r := events.Reason{Kind: events.SubscriptionChanged, Topic: name, Time: at}
		if t, ok := e.img.TopicByName(name); ok {
			r.TopicID, r.NewPartitions = t.ID().String(), int32(t.NumPartitions())
		}
		rs = append(rs, r)
	}
	return rs
}

// regexOf returns, for downtimeReasons, the regex by which group k reads a topic it
// does not name.
func (e *Engine) regexOf(k events.GroupKey) func(topic string) string {
	return func(topic string) string {
		if g, ok := e.state.Group(k); ok && !g.SubscribesToName(topic) {
			re, _ := e.state.MatchingRegex(k, topic)
			return re
		}
		return ""
	}
}

// liveReasons turns a live decision's reasons into the event's, each stamped with its
// metadata record (a subscription change with at, its record's time).
func (e *Engine) liveReasons(st *stamper, d groups.Decision, at time.Time) []events.Reason {
	out := make([]events.Reason, 0, len(d.Reasons))
	for _, r := range d.Reasons {
		pr := events.Reason{Kind: r.Kind, Topic: r.Topic,
			OldPartitions: r.OldPartitions, NewPartitions: r.NewPartitions, Regex: r.Regex}
		if r.TopicID != (image.UUID{}) {
			pr.TopicID = r.TopicID.String()
		}
		if r.OldTopicID != (image.UUID{}) {
			pr.OldTopicID = r.OldTopicID.String()
		}
		if pr.Kind == events.SubscriptionChanged {
			pr.Time = at
		} else {
			st.stampReason(&pr)
		}
		out = append(out, pr)
	}
	return out
}

// coveredTopics lists the existing topics the group's hash covers, with their
// topic hashes, sorted by name; empty, not nil, when none.
func (e *Engine) coveredTopics(k events.GroupKey) []events.CoveredTopic {
	names := e.tracker.Topics(k)
	out := make([]events.CoveredTopic, 0, len(names))
	cl := hashcache.ImageCluster{Image: e.img}
	for _, name := range names {
		t, ok := e.img.TopicByName(name)
		if !ok {
			continue
		}
		h, ok := e.cache.TopicHash(cl, name)
		if !ok {
			continue
		}
		out = append(out, events.CoveredTopic{Name: name, TopicID: t.ID().String(), Partitions: int32(t.NumPartitions()), Hash: events.Hash(h)})
	}
	return out
}

func (e *Engine) wanted(k events.GroupKey) bool {
	return (e.cfg.Include == nil || e.cfg.Include.MatchString(k.ID)) &&
		(e.cfg.Exclude == nil || !e.cfg.Exclude.MatchString(k.ID))
}

// announce hands a decision to the publisher as an event with reasons. at is when its
// cause was written (a __consumer_offsets record's timestamp, or at start-up the latest
// of the reasons' times); zero means the append time of the metadata batch the image
// is at. All come from the logs, so replicas agree on them.
func (e *Engine) announce(ctx context.Context, d groups.Decision, at time.Time, reasons []events.Reason) error {
	if !e.wanted(d.Group) {
		return nil
	}
	ev := events.RebalanceNeeded{
		GroupID:          d.Group.ID,
		GroupType:        d.Group.Type,
		NewHash:          events.Hash(d.Hash),
		Reasons:          reasons,
		CoordinatorEpoch: -1,
	}
	ev.Topics, ev.TopicsTruncated = events.FitTopics(e.coveredTopics(d.Group), events.MaxTopicsBytes)
	// previous_hash is the hash of the group's last event, not the Tracker's last
	// computed one: a group first seen reading no existing topic (hash 0, not announced)
	// has none.
	if h, ok := e.announced[d.Group]; ok {
		ev.PreviousHash = events.SomeHash(h)
	}
	if g, ok := e.state.Group(d.Group); ok && g.HasMetadata {
		ev.CoordinatorEpoch = g.Epoch
	}
	prov := e.img.Provenance()
	ev.MetadataOffset, ev.MetadataEpoch = prov.Offset, prov.Epoch
	switch {
	case !at.IsZero():
		ev.Time = at
	case prov.Timestamp > 0:
		ev.Time = time.UnixMilli(prov.Timestamp)
	}
	if p, ok := e.position[d.Group]; ok {
		ev.ConsumerOffsets = &events.OffsetsPosition{Partition: p.partition, Offset: p.offset}
	}
	if err := e.cfg.Publisher.Enqueue(ctx, ev); errors.Is(err, events.ErrInvalidEvent) {
		// What the logs hold never ends the process: the event is dropped, said, and
		// counted (Stats.InvalidEvents).
		e.invalid++
		e.log.Error("event refused as invalid; not published", "group", d.Group.ID, "group_type", d.Group.Type.String(),
			"new_hash", strconv.FormatInt(d.Hash, 10), "metadata_offset", prov.Offset, "error", err)
		return nil
	} else if err != nil {
		return fmt.Errorf("engine: enqueue event of %s: %w", d.Group, err)
	}
	e.announced[d.Group] = d.Hash
	e.decided++
	var kinds [events.NumReasonKinds]bool
	for _, r := range reasons {
		if int(r.Kind) < events.NumReasonKinds && !kinds[r.Kind] {
			kinds[r.Kind] = true
			e.byReason[r.Kind]++
		}
	}
	e.predicted(d.Group, e.recordAnnounced(ev), d.Hash, ev.Time)
	e.log.Info("rebalance needed", "group", d.Group.ID, "group_type", d.Group.Type.String(),
		"previous_hash", logHash(ev.PreviousHash), "new_hash", strconv.FormatInt(d.Hash, 10), "reasons", len(reasons),
		"metadata_offset", prov.Offset)
	return nil
}

// logHash is how log lines give a hash: the decimal string the events' JSON carries,
// "none" for a null one.
func logHash(h events.NullHash) string {
	if !h.Valid {
		return "none"
	}
	return strconv.FormatInt(int64(h.Hash), 10)
}

func (e *Engine) publishStats() {
	e.stats.Store(&Stats{Groups: e.state.Len(), Decisions: e.decided, DecisionReasons: e.byReason, DecodeErrors: e.decodeEr, UnknownTags: e.unknownTag, InvalidEvents: e.invalid, Cache: e.cache.Stats(),
		CoordinatorChecked: e.coord.checked, CoordinatorMismatches: e.coord.mismatches})
}

// recordAnnounced adds a rebalance-needed event to its group's history and returns its id.
func (e *Engine) recordAnnounced(ev events.RebalanceNeeded) string {
	ev.ClusterID, ev.HashScheme = e.cfg.ClusterID, e.cfg.Scheme // as Enqueue fills them
	h := HistoryEvent{Type: events.TypeRebalanceNeeded, ID: ev.MsgID(), Time: ev.Time, CoordinatorEpoch: ev.CoordinatorEpoch,
		HasPreviousHash: ev.PreviousHash.Valid, PreviousHash: int64(ev.PreviousHash.Hash), HasNewHash: true, NewHash: int64(ev.NewHash)}
	var b strings.Builder
	for i, r := range ev.Reasons {
		if i == 3 {
			fmt.Fprintf(&b, "; +%d more", len(ev.Reasons)-3)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Kind.String())
		if r.Topic != "" {
			b.WriteString(" " + r.Topic)
		}
		if r.Kind == events.PartitionsAdded {
			fmt.Fprintf(&b, " %d->%d", r.OldPartitions, r.NewPartitions)
		}
		if r.Regex != "" {
			fmt.Fprintf(&b, " regex %q", r.Regex)
		}
	}
	h.Summary = b.String()
	e.history.Record(events.GroupKey{Type: ev.GroupType, ID: ev.GroupID}, h)
	return h.ID
}
