package api

import (
	"container/heap"
	"encoding/base64"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
)

// Page size bounds of ListQuery.Limit.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// ErrBadQuery is wrapped by the errors of ParseListQuery and ParseGroupKey.
var ErrBadQuery = errors.New("api: bad query")

// ListQuery selects a page of groups: those of Type (UnknownGroup: every type), in
// State (UnknownState: every state), whose id starts with Prefix, after the cursor
// After, at most Limit of them, in (type, id) order.
type ListQuery struct {
	Type   events.GroupType
	State  groups.GroupState
	Prefix string
	After  *events.GroupKey
	Limit  int
}

// Cursor is the opaque form of a key for ListQuery.After.
func Cursor(k events.GroupKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(k.Type.String() + "/" + k.ID))
}

// ParseCursor is the inverse of Cursor.
func ParseCursor(s string) (events.GroupKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return events.GroupKey{}, fmt.Errorf("%w: cursor %q: %v", ErrBadQuery, s, err)
	}
	t, id, _ := strings.Cut(string(b), "/")
	return ParseGroupKey(t, id)
}

// ParseGroupKey reads a group type name ("consumer", ...) and an id.
func ParseGroupKey(typ, id string) (events.GroupKey, error) {
	t, err := ParseGroupType(typ)
	if err != nil || t == events.UnknownGroup {
		return events.GroupKey{}, fmt.Errorf("%w: group type %q (classic, consumer, share or streams)", ErrBadQuery, typ)
	}
	return events.GroupKey{Type: t, ID: id}, nil
}

// ParseGroupType reads a group type name; "" is UnknownGroup (any).
func ParseGroupType(s string) (events.GroupType, error) {
	for _, t := range []events.GroupType{events.UnknownGroup, events.ClassicGroup, events.ConsumerGroup, events.ShareGroup, events.StreamsGroup} {
		if s == t.String() || (s == "" && t == events.UnknownGroup) {
			return t, nil
		}
	}
	return events.UnknownGroup, fmt.Errorf("%w: group type %q (classic, consumer, share or streams)", ErrBadQuery, s)
}

// keyHeap is a max-heap of keys: the page being selected, its greatest key on top.
type keyHeap []*groups.Group

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i].Key.Compare(h[j].Key) > 0 }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(*groups.Group)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// List answers q from v in one pass over the groups, keeping the Limit smallest
// keys after the cursor in a heap: O(groups × log Limit), no sort of every key.
func List(v *engine.View, q ListQuery) GroupList {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	page := make(keyHeap, 0, limit+1)
	matched, after := 0, 0 // matching groups, and those after the cursor
	for g := range v.State.All() {
		if (q.Type != events.UnknownGroup && g.Key.Type != q.Type) || !strings.HasPrefix(g.Key.ID, q.Prefix) {
			continue
		}
		if q.State != groups.UnknownState && g.State() != q.State {
			continue
		}
		matched++
		if q.After != nil && g.Key.Compare(*q.After) <= 0 {
			continue
		}
		after++
		if len(page) < limit {
			heap.Push(&page, g)
		} else if g.Key.Compare(page[0].Key) < 0 {
			page[0] = g
			heap.Fix(&page, 0)
		}
	}
	slices.SortFunc(page, func(a, b *groups.Group) int { return a.Key.Compare(b.Key) })
	out := GroupList{Groups: make([]GroupSummary, 0, len(page)), Matched: matched, Synced: v.Synced}
	for _, g := range page {
		out.Groups = append(out.Groups, summary(v, g))
	}
	if after > len(page) { // more match after this page's last key
		out.Next = Cursor(page[len(page)-1].Key)
	}
	return out
}

func summary(v *engine.View, g *groups.Group) GroupSummary {
	s := GroupSummary{Type: g.Key.Type.String(), ID: g.Key.ID, State: g.State().String(), Members: g.NumMembers(),
		ReconcilingMembers: g.Reconciling(), HashScheme: v.Scheme}
	if g.HasMetadata {
		s.Epoch = ptr(g.Epoch)
	}
	if g.TargetAssignmentEpoch >= 0 {
		s.TargetAssignmentEpoch = ptr(g.TargetAssignmentEpoch)
	}
	if h, ok := v.Tracker.Hash(g.Key); ok {
		s.Hash = ptr(Hash(h))
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Detail answers GET /v1/groups/{type}/{id} from v; ok is false for an unknown group.
func Detail(v *engine.View, k events.GroupKey) (d GroupDetail, ok bool) {
	g, ok := v.State.Group(k)
	if !ok {
		return d, false
	}
	d = GroupDetail{GroupSummary: summary(v, g), ProtocolType: g.ProtocolType, Protocol: g.Protocol,
		SubscribedTopicNames: nonNil(g.SubscribedTopicNames()), SubscribedTopicRegexes: nonNil(g.SubscribedRegexes()),
		Topics: nonNil(slices.Clone(v.Tracker.Topics(k))), RegexMatches: []RegexMatch{}, Members: []MemberInfo{},
		Events: []Event{}, Synced: v.Synced}
	if len(v.Tracker.Topics(k)) == 0 {
		// The tracker knows a group once it was decided; compute its topics here.
		d.Topics = nonNil(v.State.SubscribedTopics(k, imageNames{v.Image}))
	}
	for _, re := range g.SubscribedRegexes() {
		m := RegexMatch{Regex: re, Matches: []string{}}
		if err := v.State.RegexError(re); err != nil {
			m.Error = err.Error()
		} else if cre, err := groups.CompileRegex(re); err == nil {
			for _, t := range d.Topics {
				if cre.MatchString(t) {
					m.Matches = append(m.Matches, t)
				}
			}
		}
		if r, ok := g.ResolvedRegex(re); ok {
			m.CoordinatorTopics = nonNil(slices.Clone(r.Topics))
		}
		d.RegexMatches = append(d.RegexMatches, m)
	}
	d.Hashes = hashes(v, g, d.Topics)
	for _, m := range g.Members() {
		d.Members = append(d.Members, member(v, g, m))
	}
	if v.History != nil {
		for _, e := range v.History.Events(k) {
			ev := Event{Type: e.Type, ID: e.ID, Time: e.Time, CoordinatorEpoch: e.CoordinatorEpoch, Summary: e.Summary}
			if e.HasPreviousHash {
				ev.PreviousHash = ptr(Hash(e.PreviousHash))
			}
			if e.HasNewHash {
				ev.NewHash = ptr(Hash(e.NewHash))
			}
			d.Events = append(d.Events, ev)
		}
	}
	return d, true
}

// hashes computes the group's hash in both schemes from its topics, with fresh
// caches (a cost proportional to the group's partitions, not the cluster's).
func hashes(v *engine.View, g *groups.Group, topics []string) Hashes {
	cl := hashcache.ImageCluster{Image: v.Image}
	var h Hashes
	for _, scheme := range []string{hashcache.SchemeMurmur3, hashcache.SchemeKafka} {
		c, err := hashcache.New(hashcache.Config{Scheme: scheme})
		if err != nil {
			continue
		}
		if scheme == hashcache.SchemeKafka {
			h.Kafka = Hash(c.GroupHash(cl, topics))
		} else {
			h.Murmur3 = Hash(c.GroupHash(cl, topics))
		}
	}
	if g.HasMetadata && g.Key.Type != events.ClassicGroup && g.MetadataHash != 0 {
		h.CoordinatorMetadataHash = ptr(Hash(g.MetadataHash))
		h.CoordinatorAgrees = ptr(g.MetadataHash == int64(h.Kafka))
	}
	return h
}

func member(v *engine.View, g *groups.Group, m *groups.Member) MemberInfo {
	mi := MemberInfo{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost, RackID: m.RackID,
		SubscribedTopicNames: nonNil(slices.Clone(m.SubscribedTopicNames)), SubscribedTopicRegex: m.SubscribedTopicRegex}
	if g.Key.Type != events.ClassicGroup {
		mi.Reconciled = ptr(m.Assignment.ReconciledTo(max(g.TargetAssignmentEpoch, 0)))
	}
	a := m.Assignment
	if a == nil {
		return mi
	}
	if a.HasCurrent {
		mi.MemberEpoch, mi.MemberState = ptr(a.MemberEpoch), ptr(a.State.String())
	}
	if t := a.Tasks; g.Key.Type == events.StreamsGroup { // tasks, not partitions
		if a.HasCurrent && t != nil {
			mi.AssignedTasks, mi.TasksPendingRevocation = tasks(t.Assigned), tasks(t.PendingRevocation)
		}
		if a.HasTarget && t != nil {
			mi.TargetTasks = tasks(t.Target)
		}
		return mi
	}
	if a.HasCurrent {
		mi.Assigned = partitions(v.Image, a.Assigned)
		if g.Key.Type == events.ConsumerGroup {
			mi.PendingRevocation = partitions(v.Image, a.PendingRevocation)
		}
	}
	if a.HasTarget {
		mi.Target = partitions(v.Image, a.Target)
	}
	return mi
}

func tasks(ts groups.StreamsTasks) *Tasks {
	kind := func(ts []groups.TaskIDs) []SubtopologyTasks {
		out := make([]SubtopologyTasks, len(ts))
		for i, t := range ts {
			out[i] = SubtopologyTasks{SubtopologyID: t.SubtopologyID, Partitions: slices.Clone(t.Partitions)}
		}
		return out
	}
	return &Tasks{Active: kind(ts.Active), Standby: kind(ts.Standby), Warmup: kind(ts.Warmup)}
}

func partitions(im *image.Image, ts []groups.TopicIDPartitions) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(ts))
	for _, t := range ts {
		tp := TopicPartitions{TopicID: t.TopicID.String(), Partitions: slices.Clone(t.Partitions)}
		if it, ok := im.Topic(t.TopicID); ok {
			tp.Topic = it.Name()
		}
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b TopicPartitions) int {
		return strings.Compare(a.Topic+"\x00"+a.TopicID, b.Topic+"\x00"+b.TopicID)
	})
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// imageNames is the topic names of an image, as groups.TopicNames.
type imageNames struct{ im *image.Image }

func (n imageNames) Contains(name string) bool { _, ok := n.im.TopicByName(name); return ok }
func (n imageNames) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		for t := range n.im.Topics() {
			if !yield(t.Name()) {
				return
			}
		}
	}
}
