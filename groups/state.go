package groups

import (
	"fmt"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/kraftwatch/kraftwatch/events"
)

// Member is one member of a group as the State knows it.
type Member struct {
	ID string
	// SubscribedTopicNames is sorted and without duplicates. For classic members it
	// is the Topics of their ConsumerProtocolSubscription; streams members have none
	// (a streams group's topics come from its topology).
	SubscribedTopicNames []string
	// SubscribedTopicRegex is the member's regex (consumer groups), "" if none.
	SubscribedTopicRegex string
	// RegexErr is non-nil when SubscribedTopicRegex does not compile; the regex is
	// then ignored, as Kafka rejects it.
	RegexErr error
	// SubscriptionErr is set for a classic member whose subscription bytes did not
	// parse; the group's topics are then unknown (Group.TopicsUnknown).
	SubscriptionErr error

	// Who the member is, from its member record (classic: its GroupMetadata entry;
	// RackID from its subscription). "" when not written.
	InstanceID, RackID, ClientID, ClientHost string

	// Assignment is the member's current and target assignment (consumer and share
	// groups), nil until one of its assignment records is seen.
	Assignment *MemberAssignment
}

// Group is the State's view of one group. Read it; do not modify it or keep it
// across the next Apply.
type Group struct {
	Key events.GroupKey

	// HasMetadata reports that the group's metadata record (type 2, 3, 11 or 17) is
	// present; Epoch and MetadataHash come from it.
	HasMetadata bool
	// Epoch is the coordinator's group epoch (a classic group's generation).
	Epoch int32
	// MetadataHash is the hash the coordinator stored (0 when not stored, and always
	// 0 for classic groups).
	MetadataHash int64

	// ProtocolType and Protocol are set for classic groups.
	ProtocolType string
	Protocol     string
	// TopicsUnknown is true for a classic group some of whose members' subscriptions
	// did not parse; Kafka then treats its subscription as unknown.
	TopicsUnknown bool

	// Topology is a streams group's topology, nil until its record is seen.
	Topology *StreamsGroupTopologyValue
	// PartitionMetadata is the Kafka 4.0 subscription metadata record (type 4 or 9),
	// nil when absent or deleted.
	PartitionMetadata []TopicMetadata
	// TargetAssignmentEpoch is the epoch of the target assignment (type 6, 12 or
	// 20), -1 when none was written.
	TargetAssignmentEpoch int32
	// ValidatedTopologyEpoch is a streams group's (StreamsGroupMetadataValue), -1
	// when absent.
	ValidatedTopologyEpoch int32

	required []string // streams: Topology.RequiredTopics()
	members  map[string]*Member
	resolved map[string]*ConsumerGroupRegularExpressionValue
	names    map[string]int32 // subscribed topic name -> number of contributions
	regexes  map[string]int32 // member regex -> number of members using it
	tracked  *tracked         // a Tracker's entry of the group (Tracker.entryOf)
}

// NumMembers returns the number of members.
func (g *Group) NumMembers() int { return len(g.members) }

// Member returns the member with the given id.
func (g *Group) Member(id string) (*Member, bool) {
	m, ok := g.members[id]
	return m, ok
}

// Members returns the members sorted by id.
func (g *Group) Members() []*Member {
	out := slices.Collect(maps.Values(g.members))
	slices.SortFunc(out, func(a, b *Member) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// SubscribedTopicNames returns the topic names the group subscribes to by name,
// whether or not they exist, sorted. For streams groups these are the topology's
// RequiredTopics.
func (g *Group) SubscribedTopicNames() []string { return sortedKeys(g.names) }

// SubscribesToName reports whether some member (or the topology) names the topic.
func (g *Group) SubscribesToName(topic string) bool { return g.names[topic] > 0 }

// subscribedNames yields the names of SubscribedTopicNames, in map order.
func (g *Group) subscribedNames() iter.Seq[string] { return maps.Keys(g.names) }

// numNames returns the number of SubscribedTopicNames.
func (g *Group) numNames() int { return len(g.names) }

// SubscribedRegexes returns the distinct regexes of the group's members, sorted,
// including invalid ones (see Member.RegexErr).
func (g *Group) SubscribedRegexes() []string { return sortedKeys(g.regexes) }

// ResolvedRegexes returns the regexes for which the coordinator wrote a resolution
// record (type 16), sorted.
func (g *Group) ResolvedRegexes() []string { return sortedKeys(g.resolved) }

// ResolvedRegex returns the coordinator's resolution of one regex.
func (g *Group) ResolvedRegex(regex string) (*ConsumerGroupRegularExpressionValue, bool) {
	v, ok := g.resolved[regex]
	return v, ok
}

// empty reports whether nothing keeps the group alive.
func (g *Group) empty() bool {
	return !g.HasMetadata && len(g.members) == 0 && len(g.resolved) == 0 &&
		g.Topology == nil && g.PartitionMetadata == nil && g.TargetAssignmentEpoch < 0
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// TopicNames is a set of existing topic names, such as the topics of a metadata image.
type TopicNames interface {
	Contains(name string) bool
	// All yields every name, in any order.
	All() iter.Seq[string]
}

// NameSet is a TopicNames backed by a map.
type NameSet map[string]struct{}

// Contains reports whether name is in the set.
func (s NameSet) Contains(name string) bool { _, ok := s[name]; return ok }

// All yields the names in map order.
func (s NameSet) All() iter.Seq[string] { return maps.Keys(s) }

// Via tells how a group subscribes to a topic.
type Via uint8

const (
	// ViaName: a member (or a streams topology) names the topic.
	ViaName Via = 1 << iota
	// ViaRegex: a member's regex matches the whole topic name.
	ViaRegex
)

// String returns "name", "regex" or "name+regex".
func (v Via) String() string {
	switch v {
	case ViaName:
		return "name"
	case ViaRegex:
		return "regex"
	case ViaName | ViaRegex:
		return "name+regex"
	}
	return "none"
}

// Subscriber is a group that subscribes to a topic, and how.
type Subscriber struct {
	Group events.GroupKey
	Via   Via
}

// Change tells what applying one record did to the State. The zero Change means
// nothing changed.
type Change struct {
	Group        events.GroupKey
	Created      bool // the group was not in the State before
	Removed      bool // the group was removed
	Metadata     bool // Epoch or MetadataHash changed
	Subscription bool // the set of subscribed topic names or regexes changed
}

// Changed reports whether anything changed.
func (c Change) Changed() bool { return c.Created || c.Removed || c.Metadata || c.Subscription }

// regexEntry is one distinct regex in use by some groups.
type regexEntry struct {
	re     *regexp.Regexp // anchored full match; nil when invalid
	err    error
	groups map[*Group]int32 // group -> members using the regex
}

// State is the set of groups replayed from __consumer_offsets, with an index from
// topic name to the groups naming it and the distinct regexes in use.
//
// A State is not safe for concurrent use. Its methods never fail: records are
// applied as Kafka's coordinator replays them, tombstones of things it does not hold
// are ignored.
type State struct {
	groups  map[events.GroupKey]*Group
	byTopic map[string]map[*Group]struct{}
	regexes map[string]*regexEntry
	dec     *Decoder   // interns the strings of Replay
	crossed []crossing // scratch of the Apply in progress
}

// NewState returns an empty State.
func NewState() *State {
	return &State{
		groups:  make(map[events.GroupKey]*Group),
		byTopic: make(map[string]map[*Group]struct{}),
		regexes: make(map[string]*regexEntry),
		dec:     NewDecoder(),
	}
}

// Len returns the number of groups.
func (s *State) Len() int { return len(s.groups) }

// Group returns one group.
func (s *State) Group(k events.GroupKey) (*Group, bool) {
	g, ok := s.groups[k]
	return g, ok
}

// All yields every group, in map order, without copying. Do not Apply while
// ranging over it.
func (s *State) All() iter.Seq[*Group] { return maps.Values(s.groups) }

// Keys returns the keys of every group, sorted.
func (s *State) Keys() []events.GroupKey {
	out := slices.Collect(maps.Keys(s.groups))
	slices.SortFunc(out, events.GroupKey.Compare)
	return out
}

// GroupsByName returns the groups that subscribe to topic by name, sorted. The cost
// is proportional to their number.
func (s *State) GroupsByName(topic string) []events.GroupKey {
	set := s.byTopic[topic]
	if len(set) == 0 {
		return nil
	}
	out := make([]events.GroupKey, 0, len(set))
	for g := range set {
		out = append(out, g.Key)
	}
	slices.SortFunc(out, events.GroupKey.Compare)
	return out
}

// GroupsByRegex returns the groups one of whose members' valid regexes fully matches
// topic, sorted. The cost is one match per distinct regex in the State.
func (s *State) GroupsByRegex(topic string) []events.GroupKey {
	var out []events.GroupKey
	for _, g := range s.groupsMatching(topic) {
		out = append(out, g.Key)
	}
	slices.SortFunc(out, events.GroupKey.Compare)
	return slices.Compact(out)
}

// Subscribers returns every group that subscribes to topic, by name or by regex,
// sorted by group.
func (s *State) Subscribers(topic string) []Subscriber {
	var out []Subscriber
	for g := range s.byTopic[topic] {
		out = append(out, Subscriber{Group: g.Key, Via: ViaName})
	}
	for _, k := range s.GroupsByRegex(topic) {
		if s.groups[k].names[topic] > 0 {
			continue
		}
		out = append(out, Subscriber{Group: k, Via: ViaRegex})
	}
	slices.SortFunc(out, func(a, b Subscriber) int { return a.Group.Compare(b.Group) })
	for i := range out {
		if out[i].Via == ViaName && s.groupMatches(out[i].Group, topic) {
			out[i].Via |= ViaRegex
		}
	}
	return out
}

// groupMatches reports whether a valid regex of group k matches topic.
func (s *State) groupMatches(k events.GroupKey, topic string) bool {
	g := s.groups[k]
	if g == nil {
		return false
	}
	for re := range g.regexes {
		if cre := s.compiled(re); cre != nil && cre.MatchString(topic) {
			return true
		}
	}
	return false
}

// The index queries below are the Tracker's view of the State. They read the
// indexes in place (in map order, without copying), so they cost what they yield;
// do not Apply while ranging over them.

// groupsNaming yields the groups that subscribe to topic by name.
func (s *State) groupsNaming(topic string) iter.Seq[*Group] {
	return maps.Keys(s.byTopic[topic])
}

// groupsMatching yields, for every valid regex in use that fully matches topic,
// the regex with each group one of whose members uses it. A group is yielded once
// per such regex.
func (s *State) groupsMatching(topic string) iter.Seq2[string, *Group] {
	return func(yield func(string, *Group) bool) {
		for re, e := range s.regexes {
			if e.re == nil || !e.re.MatchString(topic) {
				continue
			}
			for g := range e.groups {
				if !yield(re, g) {
					return
				}
			}
		}
	}
}

// subscribed reports whether some group subscribes to topic, by name or by a
// valid regex. The cost is one match per distinct regex when no group names it.
func (s *State) subscribed(topic string) bool {
	if len(s.byTopic[topic]) > 0 {
		return true
	}
	for _, e := range s.regexes {
		if e.re != nil && e.re.MatchString(topic) {
			return true
		}
	}
	return false
}

// compiled returns the compiled form of a regex in use; nil when it is invalid or
// not in use.
func (s *State) compiled(regex string) *regexp.Regexp {
	if e := s.regexes[regex]; e != nil {
		return e.re
	}
	return nil
}

// validRegexes returns g's regexes that compile, sorted; nil when there are none.
func (s *State) validRegexes(g *Group) []string {
	if len(g.regexes) == 0 {
		return nil
	}
	var out []string
	for re := range g.regexes {
		if s.compiled(re) != nil {
			out = append(out, re)
		}
	}
	slices.Sort(out)
	return out
}

// matchesAny reports whether one of the regexes res in use matches topic in full.
func (s *State) matchesAny(res []string, topic string) bool {
	for _, re := range res {
		if cre := s.compiled(re); cre != nil && cre.MatchString(topic) {
			return true
		}
	}
	return false
}

// MatchingRegex returns the smallest of group k's valid regexes that fully matches
// topic, false when none does (or k is unknown): the Regex of a RegexMatched reason.
func (s *State) MatchingRegex(k events.GroupKey, topic string) (string, bool) {
	g := s.groups[k]
	if g == nil {
		return "", false
	}
	for _, re := range s.validRegexes(g) { // sorted
		if s.compiled(re).MatchString(topic) {
			return re, true
		}
	}
	return "", false
}

// SubscribedTopics returns the existing topics group k subscribes to, sorted: the
// names its members (or topology) give that exist, and every existing name that a
// valid member regex fully matches. It returns nil for an unknown group. Names are
// enumerated only when the group has a regex.
//
// Regexes are evaluated here, against existing; the coordinator's own resolutions
// (Group.ResolvedRegex) are kept for comparison only, as they lag: Kafka resolves
// at most every 10 s, from a heartbeat, and only when a topic was created or the
// refresh interval passed (docs/consumer-offsets.md#regex-subscriptions).
func (s *State) SubscribedTopics(k events.GroupKey, existing TopicNames) []string {
	g := s.groups[k]
	if g == nil {
		return nil
	}
	var out []string
	for name := range g.names {
		if existing.Contains(name) {
			out = append(out, name)
		}
	}
	var res []*regexp.Regexp
	for re := range g.regexes {
		if cre := s.compiled(re); cre != nil {
			res = append(res, cre)
		}
	}
	if len(res) > 0 {
		for name := range existing.All() {
			if g.names[name] > 0 {
				continue
			}
			for _, re := range res {
				if re.MatchString(name) {
					out = append(out, name)
					break
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// RegexError returns the compile error of a regex in use, or nil when it is valid
// or not in use.
func (s *State) RegexError(regex string) error {
	if e := s.regexes[regex]; e != nil {
		return e.err
	}
	return nil
}

// NumRegexes returns the number of distinct regexes in use.
func (s *State) NumRegexes() int { return len(s.regexes) }

// CompileRegex compiles a Kafka subscription regex for a full match of a topic name,
// as Kafka's RE2J matches() does. The regex is first compiled alone, so a pattern
// such as "a)|(b" is rejected rather than changing meaning once anchored.
func CompileRegex(regex string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(regex); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + regex + ")$")
}

// Replay decodes one record and applies it. A record that does not decode leaves
// the State unchanged and returns the *DecodeError.
// UnknownTags is the Decoder's UnknownTags for the records s replayed.
func (s *State) UnknownTags() (total uint64, fresh []UnknownTag) { return s.dec.UnknownTags() }

func (s *State) Replay(key, value []byte) (Change, error) {
	rec, err := s.dec.Decode(key, value)
	if err != nil {
		return Change{}, err
	}
	return s.Apply(&rec), nil
}

// Apply applies one decoded record, as Kafka's coordinator replays it:
//   - a group metadata record (types 2, 3, 11, 17) sets the epoch and stored
//     MetadataHash; its tombstone removes the group with everything in it;
//   - a member record (types 5, 10, 19) sets the member's subscription; its
//     tombstone removes the member; a classic group's record (type 2) replaces
//     all its members;
//   - a regex record (16) sets the coordinator's resolution of one regex;
//   - a topology record (23) sets a streams group's topics;
//   - a partition metadata record (4, 9) is kept for reference;
//   - every other record (offset commits, assignments) changes nothing.
//
// Records other than tombstones create their group when it is missing. A group with
// nothing left in it after a tombstone is removed.
func (s *State) Apply(rec *Record) Change {
	if rec.Type.IsOffsetCommit() || !rec.Type.Known() {
		return Change{}
	}
	s.crossed = s.crossed[:0]
	k := rec.GroupKey()
	if rec.Tombstone {
		return s.applyTombstone(rec, k)
	}
	if rec.Value == nil || rec.Value.RecordType() != rec.Type {
		return Change{}
	}
	g, created := s.group(k)
	ch := Change{Group: k, Created: created}
	switch v := rec.Value.(type) {
	case *GroupMetadataValue:
		ch.Metadata = s.setMetadata(g, v.Generation, 0)
		g.ProtocolType, g.Protocol = v.ProtocolType, v.Protocol
		s.setClassicMembers(g, v)
		ch.Subscription = s.subscriptionChanged(g)
	case *ConsumerGroupMetadataValue:
		ch.Metadata = s.setMetadata(g, v.Epoch, v.MetadataHash)
	case *ShareGroupMetadataValue:
		ch.Metadata = s.setMetadata(g, v.Epoch, v.MetadataHash)
	case *StreamsGroupMetadataValue:
		ch.Metadata = s.setMetadata(g, v.Epoch, v.MetadataHash)
		g.ValidatedTopologyEpoch = v.ValidatedTopologyEpoch
	case *ConsumerGroupMemberMetadataValue:
		s.setMember(g, &Member{
			ID:                   rec.MemberID,
			SubscribedTopicNames: sortedSet(v.SubscribedTopicNames),
			SubscribedTopicRegex: v.SubscribedTopicRegex,
			InstanceID:           v.InstanceID, RackID: v.RackID, ClientID: v.ClientID, ClientHost: v.ClientHost,
		})
		ch.Subscription = s.subscriptionChanged(g)
	case *ShareGroupMemberMetadataValue:
		s.setMember(g, &Member{ID: rec.MemberID, SubscribedTopicNames: sortedSet(v.SubscribedTopicNames),
			RackID: v.RackID, ClientID: v.ClientID, ClientHost: v.ClientHost})
		ch.Subscription = s.subscriptionChanged(g)
	case *StreamsGroupMemberMetadataValue:
		s.setMember(g, &Member{ID: rec.MemberID, InstanceID: v.InstanceID, RackID: v.RackID, ClientID: v.ClientID, ClientHost: v.ClientHost})
	case *ConsumerGroupRegularExpressionValue:
		if g.resolved == nil {
			g.resolved = make(map[string]*ConsumerGroupRegularExpressionValue)
		}
		g.resolved[rec.Regex] = v
	case *StreamsGroupTopologyValue:
		s.setTopology(g, v)
		ch.Subscription = s.subscriptionChanged(g)
	case *ConsumerGroupPartitionMetadataValue:
		g.PartitionMetadata = nonNil(v.Topics)
	case *ShareGroupPartitionMetadataValue:
		g.PartitionMetadata = nonNil(v.Topics)
	default:
		s.applyAssignment(g, rec)
	}
	return ch
}

func nonNil(t []TopicMetadata) []TopicMetadata {
	if t == nil {
		return []TopicMetadata{}
	}
	return t
}

func (s *State) applyTombstone(rec *Record, k events.GroupKey) Change {
	g := s.groups[k]
	if g == nil {
		return Change{}
	}
	ch := Change{Group: k}
	switch rec.Type {
	case GroupMetadata, ConsumerGroupMetadata, ShareGroupMetadata, StreamsGroupMetadata:
		s.removeGroup(g)
		ch.Removed = true
		return ch
	case ConsumerGroupMemberMetadata, ShareGroupMemberMetadata, StreamsGroupMemberMetadata:
		if m := g.members[rec.MemberID]; m != nil {
			s.removeMember(g, m)
			ch.Subscription = s.subscriptionChanged(g)
		}
	case ConsumerGroupRegularExpression:
		delete(g.resolved, rec.Regex)
	case StreamsGroupTopology:
		s.setTopology(g, nil)
		ch.Subscription = s.subscriptionChanged(g)
	case ConsumerGroupPartitionMetadata, ShareGroupPartitionMetadata:
		g.PartitionMetadata = nil
	default:
		if !s.deleteAssignment(g, rec) {
			return Change{}
		}
	}
	if g.empty() {
		s.removeGroup(g)
		ch.Removed = true
	}
	return ch
}

func (s *State) group(k events.GroupKey) (*Group, bool) {
	if g := s.groups[k]; g != nil {
		return g, false
	}
	g := &Group{Key: k, members: make(map[string]*Member), names: make(map[string]int32),
		TargetAssignmentEpoch: -1, ValidatedTopologyEpoch: -1}
	s.groups[k] = g
	return g, true
}

func (s *State) setMetadata(g *Group, epoch int32, hash int64) bool {
	changed := !g.HasMetadata || g.Epoch != epoch || g.MetadataHash != hash
	g.HasMetadata, g.Epoch, g.MetadataHash = true, epoch, hash
	return changed
}

// removeGroup drops g and all its contributions to the indexes.
func (s *State) removeGroup(g *Group) {
	for name := range g.names {
		s.unindexName(g, name)
	}
	for re, n := range g.regexes {
		s.unindexRegex(g, re, n)
	}
	delete(s.groups, g.Key)
}

// setMember replaces (or adds) a member.
func (s *State) setMember(g *Group, m *Member) {
	if old := g.members[m.ID]; old != nil {
		m.Assignment = old.Assignment
		if slices.Equal(old.SubscribedTopicNames, m.SubscribedTopicNames) &&
			old.SubscribedTopicRegex == m.SubscribedTopicRegex {
			m.RegexErr = old.RegexErr
			*old = *m
			return
		}
		s.removeMember(g, old)
	}
	g.members[m.ID] = m
	for _, name := range m.SubscribedTopicNames {
		s.addName(g, name)
	}
	if m.SubscribedTopicRegex != "" {
		m.RegexErr = s.addRegex(g, m.SubscribedTopicRegex)
	}
}

// removeMember drops a member and its contributions.
func (s *State) removeMember(g *Group, m *Member) {
	for _, name := range m.SubscribedTopicNames {
		s.dropName(g, name)
	}
	if m.SubscribedTopicRegex != "" {
		s.dropRegex(g, m.SubscribedTopicRegex)
	}
	delete(g.members, m.ID)
}

// setClassicMembers replaces every member of a classic group. Members whose
// subscription did not change are left alone.
func (s *State) setClassicMembers(g *Group, v *GroupMetadataValue) {
	keep := make(map[string]struct{}, len(v.Members))
	g.TopicsUnknown = false
	for i := range v.Members {
		gm := &v.Members[i]
		m := &Member{ID: gm.MemberID, SubscriptionErr: gm.SubscriptionErr,
			InstanceID: gm.GroupInstanceID, ClientID: gm.ClientID, ClientHost: gm.ClientHost}
		if gm.Subscription != nil {
			m.SubscribedTopicNames = sortedSet(gm.Subscription.Topics)
			m.RackID = gm.Subscription.RackID
		}
		if gm.SubscriptionErr != nil {
			g.TopicsUnknown = true
		}
		s.setMember(g, m)
		keep[m.ID] = struct{}{}
	}
	for id, m := range g.members {
		if _, ok := keep[id]; !ok {
			s.removeMember(g, m)
		}
	}
}

// setTopology replaces a streams group's topology (nil deletes it).
func (s *State) setTopology(g *Group, v *StreamsGroupTopologyValue) {
	var after []string
	if v != nil {
		after = v.RequiredTopics()
	}
	if !slices.Equal(g.required, after) {
		for _, name := range g.required {
			s.dropName(g, name)
		}
		for _, name := range after {
			s.addName(g, name)
		}
	}
	g.Topology, g.required = v, after
}

// crossing records a name or regex whose count in a group crossed zero.
type crossing struct {
	name  string
	regex bool
	up    bool // 0 -> 1; else 1 -> 0
}

// subscriptionChanged reports whether the crossings recorded since the last call
// changed g's set of names or regexes (a name that left and came back did not),
// and forgets them.
func (s *State) subscriptionChanged(g *Group) bool {
	defer func() { s.crossed = s.crossed[:0] }()
	for i, c := range s.crossed {
		first := true
		for _, p := range s.crossed[:i] {
			if p.name == c.name && p.regex == c.regex {
				first = false
				break
			}
		}
		if !first {
			continue
		}
		var present bool
		if c.regex {
			present = g.regexes[c.name] > 0
		} else {
			present = g.names[c.name] > 0
		}
		if present == c.up { // was absent and is now present, or the reverse
			return true
		}
	}
	return false
}

// addName counts one more contribution of name to g.
func (s *State) addName(g *Group, name string) {
	n := g.names[name] + 1
	g.names[name] = n
	if n > 1 {
		return
	}
	s.crossed = append(s.crossed, crossing{name: name, up: true})
	set := s.byTopic[name]
	if set == nil {
		set = make(map[*Group]struct{}, 1)
		s.byTopic[name] = set
	}
	set[g] = struct{}{}
}

// dropName removes one contribution of name from g.
func (s *State) dropName(g *Group, name string) {
	n, ok := g.names[name]
	if !ok {
		return
	}
	if n > 1 {
		g.names[name] = n - 1
		return
	}
	delete(g.names, name)
	s.crossed = append(s.crossed, crossing{name: name})
	s.unindexName(g, name)
}

func (s *State) unindexName(g *Group, name string) {
	if set := s.byTopic[name]; set != nil {
		delete(set, g)
		if len(set) == 0 {
			delete(s.byTopic, name)
		}
	}
}

// addRegex counts one more member of g using re and returns its compile error.
func (s *State) addRegex(g *Group, re string) error {
	if g.regexes == nil {
		g.regexes = make(map[string]int32)
	}
	g.regexes[re]++
	e := s.regexes[re]
	if e == nil {
		e = &regexEntry{groups: make(map[*Group]int32, 1)}
		e.re, e.err = CompileRegex(re)
		s.regexes[re] = e
	}
	e.groups[g]++
	if g.regexes[re] == 1 {
		s.crossed = append(s.crossed, crossing{name: re, regex: true, up: true})
	}
	return e.err
}

// dropRegex removes one member of g using re.
func (s *State) dropRegex(g *Group, re string) {
	n, ok := g.regexes[re]
	if !ok {
		return
	}
	if n > 1 {
		g.regexes[re] = n - 1
		s.regexes[re].groups[g]--
		return
	}
	delete(g.regexes, re)
	s.crossed = append(s.crossed, crossing{name: re, regex: true})
	s.unindexRegex(g, re, 1)
}

func (s *State) unindexRegex(g *Group, re string, n int32) {
	e := s.regexes[re]
	if e == nil {
		return
	}
	if e.groups[g] -= n; e.groups[g] <= 0 {
		delete(e.groups, g)
	}
	if len(e.groups) == 0 {
		delete(s.regexes, re)
	}
}

// sortedSet returns names sorted and without duplicates. It returns names itself
// when it already is (Kafka writes subscriptions sorted), else a sorted copy.
func sortedSet(names []string) []string {
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			c := slices.Clone(names)
			slices.Sort(c)
			return slices.Compact(c)
		}
	}
	return names
}

// String describes every group, one block per group in key order, for tests,
// golden files and debugging.
func (s *State) String() string {
	var b strings.Builder
	for _, k := range s.Keys() {
		g := s.groups[k]
		fmt.Fprintf(&b, "%s", k)
		if g.HasMetadata {
			fmt.Fprintf(&b, " epoch=%d metadata_hash=%#016x", g.Epoch, uint64(g.MetadataHash))
		} else {
			b.WriteString(" (no metadata record)")
		}
		if k.Type == events.ClassicGroup {
			fmt.Fprintf(&b, " protocol_type=%q protocol=%q", g.ProtocolType, g.Protocol)
		}
		if g.TopicsUnknown {
			b.WriteString(" topics_unknown")
		}
		fmt.Fprintf(&b, " state=%s", g.State())
		if g.TargetAssignmentEpoch >= 0 {
			fmt.Fprintf(&b, " target_assignment_epoch=%d", g.TargetAssignmentEpoch)
		}
		b.WriteByte('\n')
		fmt.Fprintf(&b, "  topics=%s", list(g.SubscribedTopicNames()))
		if res := g.SubscribedRegexes(); len(res) > 0 {
			fmt.Fprintf(&b, " regexes=%q", res)
		}
		b.WriteByte('\n')
		for _, m := range g.Members() {
			fmt.Fprintf(&b, "  member %q topics=%s", m.ID, list(m.SubscribedTopicNames))
			if m.SubscribedTopicRegex != "" {
				fmt.Fprintf(&b, " regex=%q", m.SubscribedTopicRegex)
			}
			if m.RegexErr != nil {
				b.WriteString(" regex_invalid")
			}
			if m.SubscriptionErr != nil {
				fmt.Fprintf(&b, " subscription_error=%q", m.SubscriptionErr)
			}
			if a := m.Assignment; a != nil {
				if a.HasCurrent {
					fmt.Fprintf(&b, " member_epoch=%d state=%s assigned=%s", a.MemberEpoch, a.State, DescribePartitions(a.Assigned))
				}
				if a.HasTarget {
					fmt.Fprintf(&b, " target=%s", DescribePartitions(a.Target))
				}
			}
			b.WriteByte('\n')
		}
		for _, re := range g.ResolvedRegexes() {
			v := g.resolved[re]
			fmt.Fprintf(&b, "  resolved %q topics=%s version=%d\n", re, list(v.Topics), v.Version)
		}
		if g.Topology != nil {
			fmt.Fprintf(&b, "  topology epoch=%d subtopologies=%d\n", g.Topology.Epoch, len(g.Topology.Subtopologies))
		}
		if g.PartitionMetadata != nil {
			fmt.Fprintf(&b, "  partition_metadata %s\n", describeTopicMetadata(g.PartitionMetadata))
		}
	}
	return b.String()
}
