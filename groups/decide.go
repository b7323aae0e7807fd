package groups

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
)

// Reason is one topic's part in a change of a group's hash.
type Reason struct {
	Kind  events.ReasonKind
	Topic string
	// TopicID is the topic's id: the new one, or the old one for TopicDeleted. It
	// is zero for a SubscriptionChanged reason about a topic that no longer exists.
	TopicID image.UUID
	// OldTopicID is the previous id of a TopicRecreated topic.
	OldTopicID image.UUID
	// OldPartitions and NewPartitions are the partition counts before and after,
	// 0 when the topic did not exist (or was not read) on that side.
	OldPartitions, NewPartitions int32
	// Regex is the group's regex that matched the topic, for RegexMatched.
	Regex string
}

// String gives a one-line form: kind, quoted topic, then the fields that are set.
func (r Reason) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", r.Kind, r.Topic)
	if r.TopicID != (image.UUID{}) {
		fmt.Fprintf(&b, " id=%s", r.TopicID)
	}
	if r.OldTopicID != (image.UUID{}) {
		fmt.Fprintf(&b, " old_id=%s", r.OldTopicID)
	}
	if r.OldPartitions != 0 || r.NewPartitions != 0 {
		fmt.Fprintf(&b, " partitions=%d->%d", r.OldPartitions, r.NewPartitions)
	}
	if r.Regex != "" {
		fmt.Fprintf(&b, " regex=%q", r.Regex)
	}
	return b.String()
}

func compareReasons(a, b Reason) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Kind) - int(b.Kind)
}

// Decision is a group whose hash changed: kraftwatch's call that the group needs a
// rebalance.
type Decision struct {
	Group events.GroupKey
	// PreviousHash is the hash the Tracker last computed (or was given by Seed) for
	// the group; HasPrevious is false when it had none, and PreviousHash is then 0.
	PreviousHash int64
	HasPrevious  bool
	// Hash is the group's new hash.
	Hash int64
	// Reasons lists, sorted by topic then kind, the topics whose change moved the
	// hash. It is empty for decisions of Sync, which compares hashes without
	// knowing what happened in between. It may share its array with other
	// decisions of the same call: do not modify it.
	Reasons []Reason
}

// String gives a one-line form for logs and golden files.
func (d Decision) String() string {
	var b strings.Builder
	b.WriteString(d.Group.String())
	if d.HasPrevious {
		fmt.Fprintf(&b, " %016x", uint64(d.PreviousHash))
	} else {
		b.WriteString(" (none)")
	}
	fmt.Fprintf(&b, " -> %016x", uint64(d.Hash))
	for i, r := range d.Reasons {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// Tracker decides which groups need a rebalance. It keeps, per group of a State,
// the hash it last computed and the existing topics that hash covers, and turns
// metadata updates (Metadata) and group record changes (Group) into Decisions: the
// groups whose hash moved, with the previous and the new hash and the reasons.
//
// The group hash is the scheme's combination (hashcache.Cache.GroupHash) of the
// topic hashes of every existing topic the group reads: the names its members (or
// its streams topology) subscribe to, and every topic name one of its members'
// valid regexes matches in full, evaluated against the current image (not the
// coordinator's resolution, which lags; see State.SubscribedTopics). With the
// "kafka" scheme it is the MetadataHash Kafka's coordinator computes for consumer,
// share and streams groups.
//
// Cost: Metadata is proportional to what the update changed and to the groups that
// read a changed topic: subscribers by name come from the State's index, and each
// changed topic name is matched once against each distinct regex in use. A
// leader, ISR, epoch or config change costs next to nothing. Group recomputes one
// group, scanning the image's topic names only when the group's set of regexes
// changed. BenchmarkDecide measures one topic change read by 10k groups.
//
// Invariant: every existing topic that a tracked group reads has an entry in the
// cache, since the group's hash was computed after the last update that dropped
// one; broker changes (rack changed, registered, unregistered) therefore find the
// topics they touch from the cache (hashcache.Cache.Invalidate) without scanning
// the image. This holds as long as the Tracker is the only user of its cache and
// is told of every metadata update and every group Change.
//
// A Tracker is pure (no I/O, goroutines, clock or logging) and not safe for
// concurrent use: the goroutine that owns its State and its cache calls it. The
// State and the cache must not be changed by anything else between calls, except
// by State.Replay/Apply whose Changes are then passed to Group.
type Tracker struct {
	state *State
	cache *hashcache.Cache
	image *image.Image
	hs    map[events.GroupKey]*tracked
	// ranked is true while every entry of hs has its rank: its position in key order
	// among the entries when they were ranked (rerank). Adding an entry clears it;
	// removing one keeps the others in order.
	ranked bool
	ranks  int    // the number of entries ranked: every rank is below it
	calls  uint64 // Metadata calls that collected affected groups

	// Scratch of one call, empty between calls: Metadata empties all three
	// (endCall), Sync and Group the memo, the only one they use.
	events   topicEvents    // Metadata: what the update did to each topic
	affected affectedGroups // Metadata: the groups it affects, with their reasons
	memo     memo           // every call: what it read from the cache and the image
}

// memo is what one call of the Tracker has read, so that thousands of groups that
// read one topic hash it once and each regex scans the image once: the cache
// checks the topic id of every read, which costs more than the hash itself.
type memo struct {
	topicHashes map[string]int64      // topic hashes read during the call
	matches     map[string][]string   // topics each regex matched during the call
	hashes      []hashcache.NamedHash // scratch of groupHash
}

// reset empties m, keeping its storage.
func (m *memo) reset() {
	clear(m.topicHashes)
	clear(m.matches)
}

// tracked is what a Tracker knows of one group.
type tracked struct {
	owner   *Tracker // nil once the entry is dropped (Tracker.forget)
	hash    int64
	hasHash bool
	// known is true when topics, regexes and matched are up to date with the
	// tracker's image and the group's subscription (false after Seed).
	known  bool
	topics []string // existing topics the hash covers, sorted
	// hashes holds the topic hash of each of topics when the hash was last
	// computed; shorter than topics when it does not (see groupHash).
	hashes  []int64
	regexes []string // the group's valid regexes that matched was computed for, sorted
	matched []string // existing topics one of regexes matches in full, sorted
	rank    uint32   // the group's place in key order, while Tracker.ranked
	// call and affected: the group is affected.list[affected] in Metadata call number
	// call (Tracker.calls).
	call     uint64
	affected int32
}

// NewTracker returns a Tracker of the groups in s, hashing topics with c. It starts
// with the empty image and no hashes; call Sync once the image and the State are
// loaded. The Tracker is the only user of c from then on.
func NewTracker(s *State, c *hashcache.Cache) *Tracker {
	return &Tracker{
		state: s,
		cache: c,
		image: image.Empty,
		hs:    make(map[events.GroupKey]*tracked),
		memo:  memo{topicHashes: make(map[string]int64), matches: make(map[string][]string)},
	}
}

// Image returns the image the Tracker's hashes are computed against.
func (t *Tracker) Image() *image.Image { return t.image }

// Hash returns the hash last computed (or seeded) for group k.
func (t *Tracker) Hash(k events.GroupKey) (int64, bool) {
	tr := t.hs[k]
	if tr == nil || !tr.hasHash {
		return 0, false
	}
	return tr.hash, true
}

// Topics returns the existing topics the last computed hash of group k covers,
// sorted; nil when the group has not been computed. Do not modify the slice.
func (t *Tracker) Topics(k events.GroupKey) []string {
	if tr := t.hs[k]; tr != nil && tr.known {
		return tr.topics
	}
	return nil
}

// Len returns the number of groups the Tracker has a hash for.
func (t *Tracker) Len() int { return len(t.hs) }

// Seed sets the previous hash of group k, for example the hash of the last event
// published for it, so that the next decision about the group compares with it.
// The group is recomputed in full the next time it is looked at.
func (t *Tracker) Seed(k events.GroupKey, hash int64) {
	tr := t.entry(k)
	*tr = tracked{owner: t, hash: hash, hasHash: true, rank: tr.rank}
}

// Sync makes cur the Tracker's image and recomputes every group of the State in
// full, returning a Decision for each whose hash differs from its previous one
// (computed or seeded); a group without a previous hash gets one when its hash is
// not 0, the hash of no topics. Decisions of Sync have no reasons. Groups no longer
// in the State are forgotten. The cost is that of hashing every group, plus one
// scan of the image's topic names per distinct regex: call it once, after the
// initial load, or after losing track (a metadata update that was not passed to
// Metadata).
func (t *Tracker) Sync(cur *image.Image) []Decision {
	if cur != t.image {
		t.cache.Clear()
		t.image = cur
	}
	defer t.memo.reset()
	for k := range t.hs {
		if _, ok := t.state.Group(k); !ok {
			t.forget(k)
		}
	}
	var out []Decision
	for _, k := range t.state.Keys() {
		g, _ := t.state.Group(k)
		tr := t.entry(k)
		tr.known = false
		t.refresh(g, tr, nil)
		if d, ok := t.rehash(k, tr, nil, nil); ok {
			out = append(out, d)
		}
	}
	return out
}

// Recheck recomputes group k in full against the Tracker's image and returns a
// decision, without reasons, when its hash differs from its previous one (computed or
// seeded), as Sync does for every group.
func (t *Tracker) Recheck(k events.GroupKey) (Decision, bool) {
	g, ok := t.state.Group(k)
	if !ok {
		return Decision{}, false
	}
	defer t.memo.reset()
	tr := t.entryOf(g)
	tr.known = false
	t.refresh(g, tr, nil)
	return t.rehash(k, tr, nil, nil)
}

// Group updates the Tracker for one Change returned by State.Replay or State.Apply,
// against the Tracker's image, and returns the decision for the group if its hash
// moved. A removed group is forgotten, without a decision. The reasons are
// SubscriptionChanged, one per existing topic the group started or stopped reading.
func (t *Tracker) Group(ch Change) (Decision, bool) {
	if ch.Removed {
		t.forget(ch.Group)
		return Decision{}, false
	}
	if !ch.Created && !ch.Subscription {
		return Decision{}, false
	}
	g, ok := t.state.Group(ch.Group)
	if !ok {
		t.forget(ch.Group)
		return Decision{}, false
	}
	defer t.memo.reset()
	tr := t.entry(ch.Group)
	var before []string
	if tr.known {
		before = tr.topics
	}
	t.refresh(g, tr, nil)
	return t.rehash(ch.Group, tr, t.subscriptionReasons(before, tr.topics), nil)
}

// subscriptionReasons returns a SubscriptionChanged reason for each topic in one of
// before and after (sorted) but not the other.
func (t *Tracker) subscriptionReasons(before, after []string) []Reason {
	var reasons []Reason
	for len(before) > 0 || len(after) > 0 {
		switch {
		case len(after) == 0 || len(before) > 0 && before[0] < after[0]:
			// The topic exists: a deleted one would have left before via Metadata.
			r := Reason{Kind: events.SubscriptionChanged, Topic: before[0]}
			if tp, ok := t.image.TopicByName(before[0]); ok {
				r.TopicID, r.OldPartitions = tp.ID(), int32(tp.NumPartitions())
			}
			reasons = append(reasons, r)
			before = before[1:]
		case len(before) == 0 || after[0] < before[0]:
			r := Reason{Kind: events.SubscriptionChanged, Topic: after[0]}
			if tp, ok := t.image.TopicByName(after[0]); ok {
				r.TopicID, r.NewPartitions = tp.ID(), int32(tp.NumPartitions())
			}
			reasons = append(reasons, r)
			after = after[1:]
		default:
			before, after = before[1:], after[1:]
		}
	}
	return reasons
}

// entry returns the tracked entry of k, adding an empty one.
func (t *Tracker) entry(k events.GroupKey) *tracked {
	tr := t.hs[k]
	if tr == nil {
		tr = &tracked{owner: t}
		t.hs[k] = tr
		t.ranked = false
	}
	return tr
}

// entryOf is entry(g.Key) through the pointer g keeps to it (Group.tracked), which
// spares a lookup by key for each group an update affects.
func (t *Tracker) entryOf(g *Group) *tracked {
	if tr := g.tracked; tr != nil && tr.owner == t {
		return tr
	}
	tr := t.entry(g.Key)
	g.tracked = tr
	return tr
}

// forget drops the entry of k; a Group that still points to it no longer finds it.
func (t *Tracker) forget(k events.GroupKey) {
	if tr := t.hs[k]; tr != nil {
		tr.owner = nil
		delete(t.hs, k)
	}
}

// rerank gives every entry its rank (tracked.rank): one sort of all the groups' keys,
// which spares sorting the affected groups by key in each Metadata call.
func (t *Tracker) rerank() {
	keys := make([]events.GroupKey, 0, len(t.hs))
	for k := range t.hs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, events.GroupKey.Compare)
	for i, k := range keys {
		t.hs[k].rank = uint32(i)
	}
	t.ranked, t.ranks = true, len(keys)
}

// rehash computes the group hash of tr.topics and returns a decision when it moved.
// ev, when not nil, is the only change since the hash was last computed: one topic
// of tr.topics whose hash moved (see groupHash).
func (t *Tracker) rehash(k events.GroupKey, tr *tracked, reasons []Reason, ev *topicEvent) (Decision, bool) {
	h := t.groupHash(tr, ev)
	d := Decision{Group: k, PreviousHash: tr.hash, HasPrevious: tr.hasHash, Hash: h, Reasons: reasons}
	tr.hash, tr.hasHash = h, true
	if d.HasPrevious && d.PreviousHash == h || !d.HasPrevious && h == 0 {
		return Decision{}, false
	}
	return d, true
}

// groupHash returns the group hash of tr.topics (sorted, distinct, existing) and
// keeps the topic hashes in tr.hashes. When ev is not nil and tr.hashes is
// complete, only ev's topic changed hash: tr.hashes gives the others. Otherwise
// topic hashes come from the cache once per call, then from t.memo.
func (t *Tracker) groupHash(tr *tracked, ev *topicEvent) int64 {
	hs := t.memo.hashes[:0]
	if ev != nil && ev.newOK && len(tr.hashes) == len(tr.topics) {
		if i, found := slices.BinarySearch(tr.topics, ev.name); found {
			tr.hashes[i] = ev.newHash
			for i, name := range tr.topics {
				hs = append(hs, hashcache.NamedHash{Name: name, Hash: tr.hashes[i]})
			}
			return t.combine(hs)
		}
	}
	cl := hashcache.ImageCluster{Image: t.image}
	tr.hashes = tr.hashes[:0]
	for _, name := range tr.topics {
		h, ok := t.memo.topicHashes[name]
		if !ok {
			if h, ok = t.cache.TopicHash(cl, name); !ok {
				continue // tr.hashes stays short
			}
			t.memo.topicHashes[name] = h
		}
		hs = append(hs, hashcache.NamedHash{Name: name, Hash: h})
		tr.hashes = append(tr.hashes, h)
	}
	return t.combine(hs)
}

// combine returns the scheme's group hash of hs, the scratch t.memo.hashes.
func (t *Tracker) combine(hs []hashcache.NamedHash) int64 {
	g := t.cache.Scheme().GroupHash(hs)
	clear(hs)
	t.memo.hashes = hs[:0]
	return g
}

// refresh brings tr.topics up to date with g's subscription and the image. The
// regex matches are recomputed from the image's topic names when the group's regexes
// changed or tr is not known; otherwise only the names in touched (created or
// deleted by the update being applied) are checked against them.
func (t *Tracker) refresh(g *Group, tr *tracked, touched []string) {
	res := t.state.validRegexes(g)
	if !tr.known || !slices.Equal(res, tr.regexes) {
		tr.regexes, tr.matched = res, t.scan(res)
	} else if len(res) > 0 {
		for _, name := range touched {
			i, found := slices.BinarySearch(tr.matched, name)
			_, exists := t.image.TopicByName(name)
			switch {
			case exists && !found && t.state.matchesAny(res, name):
				tr.matched = slices.Insert(tr.matched, i, name)
			case !exists && found:
				tr.matched = slices.Delete(tr.matched, i, i+1)
			}
		}
	}
	topics := make([]string, 0, g.numNames()+len(tr.matched))
	for name := range g.subscribedNames() {
		if _, ok := t.image.TopicByName(name); ok {
			topics = append(topics, name)
		}
	}
	if len(tr.matched) > 0 {
		topics = append(topics, tr.matched...)
		slices.Sort(topics)
		topics = slices.Compact(topics)
	} else {
		slices.Sort(topics)
	}
	tr.topics, tr.known, tr.hashes = topics, true, tr.hashes[:0]
}

// scan returns the image's topic names that one of res matches in full, sorted, in
// a new slice. Each regex scans the image once per call (t.memo), however many
// groups use it.
func (t *Tracker) scan(res []string) []string {
	if len(res) == 0 {
		return nil
	}
	var out []string
	for _, re := range res {
		names, ok := t.memo.matches[re]
		if !ok {
			if cre := t.state.compiled(re); cre != nil {
				for tp := range t.image.Topics() {
					if cre.MatchString(tp.Name()) {
						names = append(names, tp.Name())
					}
				}
			}
			t.memo.matches[re] = names
		}
		out = append(out, names...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// topicEvent is what one metadata update did to one topic name.
type topicEvent struct {
	name    string
	created *image.TopicRef
	deleted *image.TopicRef
	changed *image.TopicChange
	brokers bool // a broker of one of its replicas changed rack or registration
	oldHash int64
	oldOK   bool
	// newHash is the topic's hash in the new image, when newOK (a topic that kept
	// its id and whose hash moved).
	newHash int64
	newOK   bool
	// reasons for the groups that name the topic (for a created topic, groups
	// that only match it by a regex get RegexMatched instead).
	reasons []Reason
	// membership is true when the topic appeared or disappeared.
	membership bool
}

// recreated reports whether the topic was deleted and created again in the update.
func (ev *topicEvent) recreated() bool {
	return ev.created != nil && (ev.deleted != nil || ev.created.PreviousID != (image.UUID{}))
}

// topicEvents is what one metadata update did, one event per topic name in the
// order the names were first seen. It is scratch of one Metadata call.
type topicEvents struct {
	list   []topicEvent
	byName map[string]int // name -> index in list
	// touched lists the names that appeared or disappeared, for refresh.
	touched []string
	// names is scratch for hashcache.Cache.Invalidate.
	names []string
}

// get returns the event of topic name, adding it.
func (e *topicEvents) get(name string) *topicEvent {
	if i, ok := e.byName[name]; ok {
		return &e.list[i]
	}
	if e.byName == nil {
		e.byName = make(map[string]int)
	}
	e.byName[name] = len(e.list)
	e.list = append(e.list, topicEvent{name: name})
	return &e.list[len(e.list)-1]
}

// reset empties e, keeping its storage.
func (e *topicEvents) reset() {
	clear(e.list)
	e.list = e.list[:0]
	clear(e.byName)
	clear(e.touched)
	e.touched = e.touched[:0]
}

// sortKey orders the pending groups without chasing their pointers.
type sortKey struct {
	key events.GroupKey
	i   int32
}

// pending collects one affected group's reasons during Metadata.
type pending struct {
	g          *Group
	tr         *tracked // the Tracker's entry of g
	reasons    []Reason
	shared     bool // reasons is an event's slice, to be copied before appending
	membership bool
	last       int  // index of the last event that added reasons
	several    bool // more than one event added reasons
}

// affectedGroups collects the groups one metadata update affects, with their
// reasons. It is scratch of one Metadata call. A group's index in list is in its
// Tracker entry (tracked.affected).
type affectedGroups struct {
	list   []pending
	order  []sortKey
	sorted []uint64 // sort: the index in list of each group in key order (low 32 bits)
	byRank []int32  // sort: 1 + the index in list of the group of each rank, or 0
}

// add records reasons rs of event i for group g. A group reached again for the
// same event (through a second regex) keeps the reasons it has, with the smaller
// regex for a RegexMatched one, so the result does not depend on map order.
func (a *affectedGroups) add(t *Tracker, g *Group, i int, ev *topicEvent, rs []Reason) {
	tr := t.entryOf(g)
	if tr.call != t.calls {
		tr.call, tr.affected = t.calls, int32(len(a.list))
		a.list = append(a.list, pending{g: g, tr: tr, reasons: rs, shared: true, membership: ev.membership, last: i})
		return
	}
	p := &a.list[tr.affected]
	if p.last == i {
		if r := &p.reasons[len(p.reasons)-1]; r.Kind == events.RegexMatched && rs[0].Regex < r.Regex {
			if p.shared {
				p.reasons, p.shared = slices.Clone(p.reasons), false
				r = &p.reasons[len(p.reasons)-1]
			}
			r.Regex = rs[0].Regex
		}
		return
	}
	if p.shared {
		p.reasons = append(slices.Clip(p.reasons), rs...) // copies
		p.shared = false
	} else {
		p.reasons = append(p.reasons, rs...)
	}
	p.membership = p.membership || ev.membership
	p.last, p.several = i, true
}

// sort fills a.sorted with the groups' indices in list, in key order. When t's
// entries are ranked, or a quarter of them or more are affected (ranking all costs
// about as much as sorting these by key), the groups are sorted by rank: integers,
// or, when a sixteenth of the ranks or more are affected, placed at their ranks
// and read back in rank order, without comparing.
func (a *affectedGroups) sort(t *Tracker) {
	if !t.ranked && 4*len(a.list) >= len(t.hs) {
		t.rerank()
	}
	a.sorted = a.sorted[:0]
	if t.ranked && 16*len(a.list) >= t.ranks {
		// Many groups: place each at its rank, then read the ranks in order.
		if len(a.byRank) < t.ranks {
			a.byRank = make([]int32, t.ranks)
		}
		for i := range a.list {
			a.byRank[a.list[i].tr.rank] = int32(i) + 1
		}
		for r, i := range a.byRank[:t.ranks] {
			if i != 0 {
				a.sorted = append(a.sorted, uint64(i-1))
				a.byRank[r] = 0
			}
		}
		return
	}
	if t.ranked {
		for i := range a.list {
			a.sorted = append(a.sorted, uint64(a.list[i].tr.rank)<<32|uint64(i))
		}
		slices.Sort(a.sorted)
		return
	}
	a.sortByKey()
	for _, o := range a.order {
		a.sorted = append(a.sorted, uint64(o.i))
	}
}

// sortByKey fills a.order with the groups' keys, sorted.
func (a *affectedGroups) sortByKey() {
	a.order = a.order[:0]
	for i := range a.list {
		a.order = append(a.order, sortKey{a.list[i].g.Key, int32(i)})
	}
	slices.SortFunc(a.order, func(x, y sortKey) int { return x.key.Compare(y.key) })
}

// reset empties a, keeping its storage.
func (a *affectedGroups) reset() {
	clear(a.list)
	a.list = a.list[:0]
	clear(a.order)
	a.order = a.order[:0]
	a.sorted = a.sorted[:0]
}

// Metadata applies one metadata update: cur is the new image and ch how it differs
// from the Tracker's image (image.Delta.Apply's Changes, or an observer update's).
// It drops the cache entries the update made stale, recomputes the hash of every
// group that reads a topic whose hash changed or that appeared or disappeared, and
// returns a Decision for each group whose hash moved, sorted by group.
//
// Reasons per topic: TopicCreated (or RegexMatched for a group that only matches
// the name by regex), TopicDeleted, TopicRecreated (deleted and created again in
// this update), PartitionsAdded, RacksChanged. A topic whose hash did not change
// (leader, ISR or epoch changes, a reassignment within the same racks) gives no
// reason, and groups reading only such topics no decision.
func (t *Tracker) Metadata(cur *image.Image, ch *image.Changes) []Decision {
	old := t.image
	t.image = cur
	if ch == nil || cur == old {
		return nil
	}
	defer t.endCall()
	t.collectTopicEvents(ch)
	t.invalidateTopics(old)
	t.invalidateBrokers(old, ch.Brokers)
	t.collectAffectedGroups(old, cur)
	return t.decide()
}

// endCall empties the scratch of a Metadata call.
func (t *Tracker) endCall() {
	t.events.reset()
	t.affected.reset()
	t.memo.reset()
}

// collectTopicEvents turns ch into t.events: one per topic name created, deleted,
// or whose replicas or partition count changed. Leader, ISR and epoch changes are
// left out: no hash reads them.
func (t *Tracker) collectTopicEvents(ch *image.Changes) {
	for i := range ch.Deleted {
		t.events.get(ch.Deleted[i].Name).deleted = &ch.Deleted[i]
	}
	for i := range ch.Created {
		t.events.get(ch.Created[i].Name).created = &ch.Created[i]
	}
	for i := range ch.Changed {
		tc := &ch.Changed[i]
		if tc.ReplicasChanged || tc.Partitions != tc.OldPartitions {
			t.events.get(tc.Name).changed = tc
		}
	}
}

// invalidateTopics notes the old hash of every changed topic that some group
// reads, then drops the cache entries of the topics the events name.
func (t *Tracker) invalidateTopics(old *image.Image) {
	oldCl := hashcache.ImageCluster{Image: old}
	inv := hashcache.Invalidation{}
	for i := range t.events.list {
		ev := &t.events.list[i]
		if ev.changed != nil && t.state.subscribed(ev.name) {
			ev.oldHash, ev.oldOK = t.cache.TopicHash(oldCl, ev.name)
		}
		if ev.deleted != nil {
			inv.Deleted = append(inv.Deleted, ev.name)
		}
		if ev.created != nil || ev.changed != nil {
			inv.Changed = append(inv.Changed, ev.name)
		}
	}
	t.cache.Invalidate(inv, nil)
}

// invalidateBrokers drops the cache entries of the topics with a replica on a
// broker that changed rack or registration, and adds an event, with its old hash
// from the old image, for each of them that some group reads.
func (t *Tracker) invalidateBrokers(old *image.Image, changes []image.BrokerChange) {
	brokers := hashedBrokerChanges(changes)
	if len(brokers) == 0 {
		return
	}
	oldCl := hashcache.ImageCluster{Image: old}
	names := t.cache.Invalidate(hashcache.Invalidation{Brokers: brokers}, t.events.names[:0])
	scheme := t.cache.Scheme()
	for _, name := range names {
		if !t.state.subscribed(name) {
			continue
		}
		ev := t.events.get(name)
		ev.brokers = true
		if ev.created == nil && ev.deleted == nil && ev.changed == nil {
			if tp, ok := oldCl.Topic(name); ok {
				ev.oldHash, ev.oldOK = scheme.TopicHash(tp, oldCl), true
			}
		}
	}
	clear(names)
	t.events.names = names[:0]
}

// hashedBrokerChanges returns the ids of the brokers whose change can move a topic
// hash: their rack changed, or they were registered or unregistered.
func hashedBrokerChanges(changes []image.BrokerChange) []int32 {
	var ids []int32
	for _, b := range changes {
		if b.RackChanged || b.Registered || b.Unregistered {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// collectAffectedGroups gives each event that moves a topic hash its reasons, and
// adds the groups that read its topic, by name or by regex, to t.affected.
func (t *Tracker) collectAffectedGroups(old, cur *image.Image) {
	t.calls++
	for i := range t.events.list {
		ev := &t.events.list[i]
		if !t.eventReasons(ev, old, cur) {
			continue
		}
		if ev.membership {
			t.events.touched = append(t.events.touched, ev.name)
		}
		for g := range t.state.groupsNaming(ev.name) {
			t.affected.add(t, g, i, ev, ev.reasons)
		}
		for re, g := range t.state.groupsMatching(ev.name) {
			if g.SubscribesToName(ev.name) {
				continue // added by name
			}
			rs := ev.reasons
			if ev.created != nil && !ev.recreated() {
				r := rs[0]
				r.Kind, r.Regex = events.RegexMatched, re
				rs = []Reason{r}
			}
			t.affected.add(t, g, i, ev, rs)
		}
	}
}

// decide recomputes, in group order, the hash of every affected group (its topics
// too when the update created or deleted one it may read) and returns a Decision
// for each whose hash moved.
func (t *Tracker) decide() []Decision {
	if len(t.affected.list) == 0 {
		return nil
	}
	out := make([]Decision, 0, len(t.affected.list))
	t.affected.sort(t)
	for _, i := range t.affected.sorted {
		p := &t.affected.list[uint32(i)]
		tr := p.tr
		if !tr.known || p.membership {
			t.refresh(p.g, tr, t.events.touched)
		}
		if !p.shared {
			slices.SortFunc(p.reasons, compareReasons)
		}
		var ev *topicEvent
		if !p.membership && !p.several {
			ev = &t.events.list[p.last]
		}
		if d, ok := t.rehash(p.g.Key, tr, p.reasons, ev); ok {
			out = append(out, d)
		}
	}
	return out
}

// eventReasons fills ev.reasons and reports whether the topic moves the hash of
// the groups that read it. Topics nobody reads are not hashed.
func (t *Tracker) eventReasons(ev *topicEvent, old, cur *image.Image) bool {
	switch {
	case ev.recreated():
		ev.reasons = []Reason{recreatedReason(ev, old, cur)}
		return true
	case ev.created != nil:
		r := Reason{Kind: events.TopicCreated, Topic: ev.name, TopicID: ev.created.ID}
		if tp, ok := cur.Topic(r.TopicID); ok {
			r.NewPartitions = int32(tp.NumPartitions())
		}
		ev.reasons, ev.membership = []Reason{r}, true
		return true
	case ev.deleted != nil:
		r := Reason{Kind: events.TopicDeleted, Topic: ev.name, TopicID: ev.deleted.ID}
		if tp, ok := old.Topic(r.TopicID); ok {
			r.OldPartitions = int32(tp.NumPartitions())
		}
		ev.reasons, ev.membership = []Reason{r}, true
		return true
	}
	if !ev.oldOK {
		return false // nobody reads it (or it is new to the image, which created covers)
	}
	newHash, ok := t.cache.TopicHash(hashcache.ImageCluster{Image: cur}, ev.name)
	if !ok || newHash == ev.oldHash {
		return false
	}
	ev.newHash, ev.newOK = newHash, true
	ev.reasons = changedReasons(ev, old, cur)
	return true
}

// recreatedReason is the TopicRecreated reason of an event whose topic was
// deleted and created again.
func recreatedReason(ev *topicEvent, old, cur *image.Image) Reason {
	r := Reason{Kind: events.TopicRecreated, Topic: ev.name, TopicID: ev.created.ID, OldTopicID: ev.created.PreviousID}
	if ev.deleted != nil {
		r.OldTopicID = ev.deleted.ID
	}
	if tp, ok := old.Topic(r.OldTopicID); ok {
		r.OldPartitions = int32(tp.NumPartitions())
	}
	if tp, ok := cur.Topic(r.TopicID); ok {
		r.NewPartitions = int32(tp.NumPartitions())
	}
	return r
}

// changedReasons are the reasons of an event whose topic kept its id and whose
// hash moved: RacksChanged when the partition count stayed, else PartitionsAdded
// (UnknownReason for a shrink), with RacksChanged too when a partition that
// existed before now has replicas in other racks.
func changedReasons(ev *topicEvent, old, cur *image.Image) []Reason {
	tp, _ := cur.TopicByName(ev.name)
	n := int32(tp.NumPartitions())
	r := Reason{Topic: ev.name, TopicID: tp.ID(), OldPartitions: n, NewPartitions: n}
	tc := ev.changed
	if tc == nil || tc.Partitions == tc.OldPartitions {
		// Same id, name and partition count: only racks can have moved the hash.
		r.Kind = events.RacksChanged
		return []Reason{r}
	}
	r.OldPartitions = int32(tc.OldPartitions)
	if tc.Partitions > tc.OldPartitions {
		r.Kind = events.PartitionsAdded
	} // else UnknownReason: Kafka never shrinks a topic
	rs := []Reason{r}
	parts := tc.Changed
	if ev.brokers {
		parts = nil // every partition that existed before
	}
	if racksMoved(old, cur, tc, parts) {
		r.Kind = events.RacksChanged
		rs = append(rs, r)
	}
	return rs
}

// racksMoved reports whether one of the partitions parts (nil: all) that existed
// before the change now has another multiset of replica racks.
func racksMoved(old, cur *image.Image, tc *image.TopicChange, parts []int32) bool {
	ot, ok1 := old.Topic(tc.ID)
	nt, ok2 := cur.Topic(tc.ID)
	if !ok1 || !ok2 {
		return false
	}
	moved := func(id int32) bool {
		op, ok1 := ot.Partition(id)
		np, ok2 := nt.Partition(id)
		return ok1 && ok2 && !slices.Equal(racks(old, op.Replicas()), racks(cur, np.Replicas()))
	}
	if parts == nil {
		for id := range int32(tc.OldPartitions) {
			if moved(id) {
				return true
			}
		}
		return false
	}
	for _, id := range parts {
		if int(id) < tc.OldPartitions && moved(id) {
			return true
		}
	}
	return false
}

// racks returns the sorted racks of replicas, duplicates kept.
func racks(im *image.Image, replicas []int32) []string {
	var out []string
	for _, id := range replicas {
		if b, ok := im.Broker(id); ok && b.HasRack {
			out = append(out, b.Rack)
		}
	}
	slices.Sort(out)
	return out
}
