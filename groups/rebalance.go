package groups

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kraftwatch/kraftwatch/events"
)

// RebalanceCause is one thing the coordinator wrote that explains a bump. Which
// fields are set depends on Kind (see the kinds).
type RebalanceCause struct {
	Kind events.CauseKind
	// MemberID is set for member_joined, member_left, subscription_changed and a
	// member's assignor_changed.
	MemberID string
	// InstanceID, ClientID, ClientHost and RackID describe a joining member, as far as
	// its record carries them (share members have no instance id; classic members'
	// rack is their subscription's).
	InstanceID, ClientID, ClientHost, RackID string
	// Topics and Regex are a joining or leaving member's subscription, or the
	// subscription after a change; Regex is also the resolved regex of
	// regex_resolution_changed.
	Topics []string
	Regex  string
	// OldTopics and OldRegex are the subscription before a change.
	OldTopics []string
	OldRegex  string
	// TopicsAdded and TopicsRemoved are set for regex_resolution_changed,
	// topology_changed and share_partitions_initialized.
	TopicsAdded, TopicsRemoved []string
	// OldHash and NewHash are the stored MetadataHash before and after, for metadata.
	OldHash, NewHash int64
	// OldValue and NewValue are the assignor (or a config, "key=value" sorted and
	// comma-joined) before and after.
	OldValue, NewValue string
	// Epoch is, in a Rebalance with an Assignment, the group epoch of the bump the
	// cause came with; 0 otherwise.
	Epoch int32

	// instance is a leaving member's group.instance.id, kept to recognise a static
	// member's replacement (never published).
	instance string
	// tentative marks a cause Kafka may write without a bump: it is dropped at the
	// group's next member record unless an epoch record came first (Rebalances.Apply).
	tentative bool
}

// Rebalance is one group epoch bump the coordinator wrote.
type Rebalance struct {
	Group events.GroupKey
	// OldEpoch is the epoch before the bump; HasOldEpoch is false when the group's
	// metadata record was not seen before (a new group, or one whose earlier records
	// were compacted away).
	OldEpoch    int32
	HasOldEpoch bool
	NewEpoch    int32
	// MetadataHash is the coordinator's stored hash after the bump (0 for classic
	// groups and for groups Kafka stored none for).
	MetadataHash int64
	// Causes are in the order the coordinator wrote them; never empty (UnknownCause
	// when nothing explains the bump).
	Causes []RebalanceCause
	// Assignment is set when the coordinator batches assignments (Kafka 4.3+,
	// KIP-1263): the Rebalance is then one new target assignment, with every group
	// epoch bump folded into it since the previous one; OldEpoch is the epoch before
	// the first of them and NewEpoch the assignment's epoch.
	Assignment *Assignment
}

// Assignment is one new target assignment of a group that batches its bumps.
type Assignment struct {
	// Epoch is the target assignment record's AssignmentEpoch, or, when the last bump
	// left the group without members (no assignment record follows on 4.3) or was
	// held beyond maxHeld, that bump's epoch (Timestamp 0).
	Epoch int32
	// Timestamp is the record's AssignmentTimestamp in ms; 0 when there is none.
	Timestamp int64
	// Epochs are the group epochs of the bumps folded in, in order.
	Epochs []int32
	// Moved are the partitions the assignment gives a member whose previous target
	// did not hold them (moved to it, or assigned for the first time), by topic id,
	// sorted: what the target assignment records (types 7 and 13) written since the
	// previous assignment add. Nil for streams groups (tasks, not partitions).
	Moved []TopicIDPartitions
}

// String gives a one-line form for logs and golden files.
func (r *Rebalance) String() string {
	var b strings.Builder
	b.WriteString(r.Group.String())
	if r.HasOldEpoch {
		fmt.Fprintf(&b, " epoch %d->%d", r.OldEpoch, r.NewEpoch)
	} else {
		fmt.Fprintf(&b, " epoch ?->%d", r.NewEpoch)
	}
	if a := r.Assignment; a != nil {
		fmt.Fprintf(&b, " assignment %d bumps=%v at=%d", a.Epoch, a.Epochs, a.Timestamp)
		if a.Moved != nil {
			b.WriteString(" moved=" + DescribePartitions(a.Moved))
		}
	}
	for _, c := range r.Causes {
		b.WriteString(" | ")
		if c.Epoch != 0 {
			fmt.Fprintf(&b, "@%d ", c.Epoch)
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// String gives a short readable form of a cause.
func (c *RebalanceCause) String() string {
	var b strings.Builder
	b.WriteString(c.Kind.String())
	if c.MemberID != "" {
		fmt.Fprintf(&b, " member=%q", c.MemberID)
	}
	for _, f := range []struct{ k, v string }{{"instance", c.InstanceID}, {"client", c.ClientID},
		{"host", c.ClientHost}, {"rack", c.RackID}} {
		if f.v != "" {
			fmt.Fprintf(&b, " %s=%q", f.k, f.v)
		}
	}
	if c.OldTopics != nil || c.OldRegex != "" {
		fmt.Fprintf(&b, " topics=%s regex=%q ->", list(c.OldTopics), c.OldRegex)
	}
	if c.Topics != nil {
		fmt.Fprintf(&b, " topics=%s", list(c.Topics))
	}
	if c.Regex != "" {
		fmt.Fprintf(&b, " regex=%q", c.Regex)
	}
	if c.TopicsAdded != nil || c.TopicsRemoved != nil {
		fmt.Fprintf(&b, " added=%s removed=%s", list(c.TopicsAdded), list(c.TopicsRemoved))
	}
	if c.Kind == events.CauseMetadata {
		fmt.Fprintf(&b, " hash=%#016x->%#016x", uint64(c.OldHash), uint64(c.NewHash))
	}
	if c.OldValue != "" || c.NewValue != "" {
		fmt.Fprintf(&b, " %q->%q", c.OldValue, c.NewValue)
	}
	return b.String()
}

// Rebalances follows the group epochs of a State and attributes each bump to what the
// coordinator wrote with or before it since the group's previous epoch. Feed it every
// record, in log order, through Replay or Apply (which apply the record to the State
// too): it must see the State as it was before each record.
//
// What the records can tell: Kafka writes, in one batch, a joining member's record (or
// a leaving member's tombstones) and then the group's epoch record, so the causes of a
// bump are the records of the group since its previous epoch record. A member that
// left (LeaveGroup, consumer close) and one the coordinator fenced (session timeout,
// rebalance timeout) get the same tombstones: the records do not say which
// (docs/consumer-offsets.md#rebalances). Records of a compacted part of the log may be
// gone, so causes replayed from it can be missing; the bump is then UnknownCause.
//
// A Rebalances is not safe for concurrent use; it does no I/O.
type Rebalances struct {
	pending map[events.GroupKey][]RebalanceCause
	// assignor is, per group, the non-empty ServerAssignor of each consumer member
	// that has one.
	assignor map[events.GroupKey]map[string]string
	// configs is each streams group's last assignment configs (configString).
	configs map[events.GroupKey]string
	// initialized is, per share group, the topics its last
	// ShareGroupStatePartitionMetadata names as initialized.
	initialized map[events.GroupKey][]string
	// batching says, per consumer, share or streams group, whether its coordinator
	// batches assignments: true once one of its target assignment records carried
	// AssignmentTimestamp (Kafka 4.3+, KIP-1263), false once one without it answered a
	// held bump (before 4.3). Until then the group's bumps are held, so that its first
	// is told the way of its release. Learnt per group, from its own records (one
	// __consumer_offsets partition, in order), so that every replica and restart folds
	// alike; unset only with the group.
	batching map[events.GroupKey]bool
	// held is, per group while batching or not yet known to, the bumps not yet folded
	// into a target assignment, in order.
	held map[events.GroupKey][]*Rebalance
	// process is, per streams group, each member's ProcessId, RackId and ClientTags.
	process map[events.GroupKey]map[string]string
	// moved is, per group while batching or not yet known to, the partitions its
	// target assignment records gave members since its last assignment.
	moved map[events.GroupKey]map[UUID][]int32
}

// NewRebalances returns a Rebalances with nothing pending.
func NewRebalances() *Rebalances {
	return &Rebalances{pending: map[events.GroupKey][]RebalanceCause{}, assignor: map[events.GroupKey]map[string]string{},
		configs: map[events.GroupKey]string{}, initialized: map[events.GroupKey][]string{},
		held: map[events.GroupKey][]*Rebalance{}, moved: map[events.GroupKey]map[UUID][]int32{},
		batching: map[events.GroupKey]bool{},
		process:  map[events.GroupKey]map[string]string{}}
}

// Pending returns the number of groups with causes waiting for a bump.
func (r *Rebalances) Pending() int { return len(r.pending) }

// Replay decodes one record with s's Decoder and applies it (Apply). A record that
// does not decode leaves both unchanged and returns the *DecodeError.
func (r *Rebalances) Replay(s *State, key, value []byte) (Change, *Rebalance, error) {
	rec, err := s.dec.Decode(key, value)
	if err != nil {
		return Change{}, nil, err
	}
	ch, rb := r.Apply(s, &rec)
	return ch, rb, nil
}

// Apply notes what rec changes in its group, applies it to s and returns s's Change
// and, when rec is a group metadata record with another epoch than the group had, the
// Rebalance with the causes noted since the previous epoch.
//
// A consumer, share or streams group's bumps are held until its next target assignment
// record; then, when the record carries AssignmentTimestamp (Kafka 4.3+), they are
// returned folded into one Rebalance with an Assignment at the record of a new epoch (or
// at once at a bump that leaves the group without members, for which no assignment is
// written), a new group's epoch 1 being no rebalance (its assignment is empty,
// KAFKA-20268: its causes wait for the next bump). When the record lacks the timestamp
// (before 4.3, where the assignment record follows each bump in the same write), the
// held bump is returned without Assignment, and the group's later bumps at once: the
// caller tells such a Rebalance at its bump record, the group's last epoch record.
func (r *Rebalances) Apply(s *State, rec *Record) (Change, *Rebalance) {
	if rec.Type.IsOffsetCommit() || !rec.Type.Known() {
		return s.Apply(rec), nil
	}
	k := rec.GroupKey()
	g, _ := s.Group(k)
	if rec.MemberID != "" {
		// A member's record (or tombstone) after a tentative cause: the write that
		// noted it ended without an epoch record.
		r.dropTentative(k)
	}
	batching, known := r.batching[k]
	folds := k.Type != events.ClassicGroup && (batching || !known)
	var rb *Rebalance
	switch {
	case rec.Tombstone:
		r.noteTombstone(g, rec)
	case rec.Type == ShareGroupStatePartitionMetadata:
		v, _ := rec.Value.(*ShareGroupStatePartitionMetadataValue)
		r.noteSharePartitions(k, v)
	case rec.Value != nil && rec.Value.RecordType() == rec.Type:
		if a, ok := targetAssignmentMetadata(rec.Value); ok {
			rb = r.assigned(k, a)
			break
		}
		if folds {
			r.noteTarget(g, rec)
		}
		if rb = r.note(g, rec); rb != nil && folds {
			rb = r.hold(g, rb)
		}
	}
	return s.Apply(rec), rb
}

// targetAssignmentMetadata returns the value of a target assignment metadata record
// (types 6, 12, 20).
func targetAssignmentMetadata(v Value) (*ConsumerGroupTargetAssignmentMetadataValue, bool) {
	switch v := v.(type) {
	case *ConsumerGroupTargetAssignmentMetadataValue:
		return v, true
	case *ShareGroupTargetAssignmentMetadataValue:
		return (*ConsumerGroupTargetAssignmentMetadataValue)(v), true
	case *StreamsGroupTargetAssignmentMetadataValue:
		return (*ConsumerGroupTargetAssignmentMetadataValue)(v), true
	}
	return nil, false
}

// emptyFirst drops a new group's epoch 1, 4.3's empty assignment (KAFKA-20268), from
// the bumps held: its causes but the hash go to the next bump held, or wait for one.
func (r *Rebalances) emptyFirst(k events.GroupKey) {
	h := r.held[k]
	if len(h) == 0 || h[0].HasOldEpoch || h[0].NewEpoch != 1 {
		return
	}
	causes := slices.DeleteFunc(h[0].Causes, func(c RebalanceCause) bool {
		return c.Kind == events.UnknownCause || c.Kind == events.CauseMetadata
	})
	if len(h) == 1 {
		delete(r.held, k)
		if p := append(causes, r.pending[k]...); len(p) > 0 {
			r.pending[k] = p
		}
		return
	}
	next := h[1]
	if len(causes) > 0 && len(next.Causes) == 1 && next.Causes[0].Kind == events.UnknownCause {
		next.Causes = nil
	}
	next.Causes = append(causes, next.Causes...)
	r.held[k] = h[1:]
}

// maxHeld bounds the bumps held for one group: a coordinator that wrote this many
// without an assignment (it writes one every assignment interval) gets them told as one
// assignment without a record, rather than kept without end.
const maxHeld = 1024

// hold keeps a bump until the group's assignment; a bump that leaves the group without
// members is returned at once, with those held, since no assignment follows.
func (r *Rebalances) hold(g *Group, rb *Rebalance) *Rebalance {
	k := rb.Group
	r.held[k] = append(r.held[k], rb)
	if g == nil || len(g.members) == 0 || len(r.held[k]) >= maxHeld {
		if !r.batching[k] {
			return r.fold(k, nil, rb.NewEpoch)
		}
		return r.fold(k, &Assignment{Epoch: rb.NewEpoch}, rb.NewEpoch)
	}
	return nil
}

// noteTarget notes, from a consumer or share member's target assignment record, the
// partitions its previous target did not hold.
func (r *Rebalances) noteTarget(g *Group, rec *Record) {
	var tps []TopicIDPartitions
	switch v := rec.Value.(type) {
	case *ConsumerGroupTargetAssignmentMemberValue:
		tps = v.TopicPartitions
	case *ShareGroupTargetAssignmentMemberValue:
		tps = v.TopicPartitions
	default:
		return
	}
	var before []TopicIDPartitions
	if g != nil {
		if m, ok := g.members[rec.MemberID]; ok && m.Assignment != nil {
			before = m.Assignment.Target
		}
	}
	k := rec.GroupKey()
	for _, t := range tps {
		i := slices.IndexFunc(before, func(b TopicIDPartitions) bool { return b.TopicID == t.TopicID })
		for _, p := range t.Partitions {
			if i >= 0 && slices.Contains(before[i].Partitions, p) {
				continue
			}
			if r.moved[k] == nil {
				r.moved[k] = map[UUID][]int32{}
			}
			r.moved[k][t.TopicID] = append(r.moved[k][t.TopicID], p)
		}
	}
}

// assigned notes a target assignment record: it says whether the coordinator batches,
// and folds the bumps held up to its epoch.
func (r *Rebalances) assigned(k events.GroupKey, v *ConsumerGroupTargetAssignmentMetadataValue) *Rebalance {
	if v.AssignmentTimestamp == 0 {
		if _, known := r.batching[k]; !known && len(r.held[k]) > 0 {
			// The answer to a held bump, without a timestamp: no batching (before 4.3).
			r.batching[k] = false
			return r.fold(k, nil, v.AssignmentEpoch)
		}
	} else {
		r.batching[k] = true
		r.emptyFirst(k)
	}
	if v.AssignmentEpoch <= 1 || !r.batching[k] {
		return nil // a new group's empty assignment (KAFKA-20268), or no batching
	}
	return r.fold(k, &Assignment{Epoch: v.AssignmentEpoch, Timestamp: v.AssignmentTimestamp}, v.AssignmentEpoch)
}

// fold returns the bumps held for k up to epoch upTo as one Rebalance with a (without
// Assignment when a is nil: the group does not batch), and forgets them; nil when none
// is held.
func (r *Rebalances) fold(k events.GroupKey, a *Assignment, upTo int32) *Rebalance {
	h := r.held[k]
	n := 0
	for n < len(h) && h[n].NewEpoch <= upTo {
		n++
	}
	if n == 0 {
		return nil
	}
	take := h[:n]
	if n == len(h) {
		delete(r.held, k)
	} else {
		r.held[k] = slices.Clone(h[n:])
	}
	if a == nil {
		delete(r.moved, k)
		out := take[n-1]
		if n > 1 {
			// Not seen from Kafka (each bump has its assignment record): one
			// Rebalance for all, its causes in order.
			out.OldEpoch, out.HasOldEpoch, out.Causes = take[0].OldEpoch, take[0].HasOldEpoch, nil
			for _, b := range take {
				out.Causes = append(out.Causes, b.Causes...)
			}
		}
		return out
	}
	last := take[n-1]
	if m := r.moved[k]; m != nil {
		for _, id := range slices.SortedFunc(maps.Keys(m), func(a, b UUID) int { return slices.Compare(a[:], b[:]) }) {
			a.Moved = append(a.Moved, TopicIDPartitions{TopicID: id, Partitions: slices.Compact(slices.Sorted(slices.Values(m[id])))})
		}
		delete(r.moved, k)
	}
	out := &Rebalance{Group: k, OldEpoch: take[0].OldEpoch, HasOldEpoch: take[0].HasOldEpoch, NewEpoch: a.Epoch,
		MetadataHash: last.MetadataHash, Assignment: a}
	for _, b := range take {
		a.Epochs = append(a.Epochs, b.NewEpoch)
		for _, c := range b.Causes {
			c.Epoch = b.NewEpoch
			out.Causes = append(out.Causes, c)
		}
	}
	return out
}

// noteSharePartitions notes a ShareGroupStatePartitionMetadata record. Kafka writes one
// when initializing starts and one when it is done, and one when a topic's share
// partitions are deleted: they make one cause per bump, whose TopicsAdded are those
// newly initializing or initialized and whose TopicsRemoved are those the group's
// previous record named as initialized and this one names no longer (deleted). A
// record that changes neither notes nothing.
func (r *Rebalances) noteSharePartitions(k events.GroupKey, v *ShareGroupStatePartitionMetadataValue) {
	if v == nil {
		v = &ShareGroupStatePartitionMetadataValue{}
	}
	var named, initialized []string
	for _, t := range v.InitializingTopics {
		named = append(named, t.TopicName)
	}
	for _, t := range v.InitializedTopics {
		named = append(named, t.TopicName)
		initialized = append(initialized, t.TopicName)
	}
	var added, removed []string
	for _, t := range named {
		if !slices.Contains(r.initialized[k], t) {
			added = append(added, t)
		}
	}
	for _, t := range r.initialized[k] {
		if !slices.Contains(named, t) {
			removed = append(removed, t)
		}
	}
	r.initialized[k] = initialized
	i := slices.IndexFunc(r.pending[k], func(c RebalanceCause) bool { return c.Kind == events.CauseSharePartitionsInitialized })
	if i < 0 {
		if added == nil && removed == nil {
			return
		}
		r.add(k, RebalanceCause{Kind: events.CauseSharePartitionsInitialized})
		i = len(r.pending[k]) - 1
	}
	c := &r.pending[k][i]
	if added != nil {
		c.TopicsAdded = slices.Compact(slices.Sorted(slices.Values(append(c.TopicsAdded, added...))))
	}
	if removed != nil {
		c.TopicsRemoved = slices.Compact(slices.Sorted(slices.Values(append(c.TopicsRemoved, removed...))))
	}
}

func (r *Rebalances) add(k events.GroupKey, c RebalanceCause) {
	r.pending[k] = append(r.pending[k], c)
}

// noteTombstone notes a deleted member, regex or topology; a deleted group forgets
// what was pending.
func (r *Rebalances) noteTombstone(g *Group, rec *Record) {
	if g == nil {
		return
	}
	k := g.Key
	switch rec.Type {
	case GroupMetadata, ConsumerGroupMetadata, ShareGroupMetadata, StreamsGroupMetadata:
		delete(r.pending, k)
		delete(r.configs, k)
		delete(r.assignor, k)
		delete(r.initialized, k)
		delete(r.held, k)
		delete(r.moved, k)
		delete(r.batching, k)
		delete(r.process, k)
	case ShareGroupStatePartitionMetadata:
		delete(r.initialized, k)
	case ConsumerGroupMemberMetadata, ShareGroupMemberMetadata, StreamsGroupMemberMetadata:
		if m, ok := g.Member(rec.MemberID); ok {
			r.add(k, RebalanceCause{Kind: events.CauseMemberLeft, MemberID: m.ID, Topics: m.SubscribedTopicNames,
				Regex: m.SubscribedTopicRegex, instance: m.InstanceID})
		}
		r.setAssignor(k, rec.MemberID, "")
		if rec.Type == StreamsGroupMemberMetadata {
			delete(r.process[k], rec.MemberID)
		}
	case ConsumerGroupRegularExpression:
		if v, ok := g.ResolvedRegex(rec.Regex); ok && len(v.Topics) > 0 {
			r.add(k, RebalanceCause{Kind: events.CauseRegexResolutionChanged, Regex: rec.Regex, TopicsRemoved: v.Topics})
		}
	case StreamsGroupTopology:
		if len(g.required) > 0 {
			r.add(k, RebalanceCause{Kind: events.CauseTopologyChanged, TopicsRemoved: g.required})
		}
	}
}

// note notes what a record with a value changes; for a metadata record with a new
// epoch it returns the Rebalance.
func (r *Rebalances) note(g *Group, rec *Record) *Rebalance {
	k := rec.GroupKey()
	switch v := rec.Value.(type) {
	case *ConsumerGroupMetadataValue:
		return r.bump(g, k, v.Epoch, v.MetadataHash)
	case *ShareGroupMetadataValue:
		return r.bump(g, k, v.Epoch, v.MetadataHash)
	case *StreamsGroupMetadataValue:
		after := configString(v.AssignmentConfigs)
		if before, ok := r.configs[k]; ok && before != after {
			r.add(k, RebalanceCause{Kind: events.CauseConfigChanged, OldValue: before, NewValue: after})
		}
		r.configs[k] = after
		return r.bump(g, k, v.Epoch, v.MetadataHash)
	case *GroupMetadataValue:
		r.noteClassic(g, k, v)
		return r.bump(g, k, v.Generation, 0)
	case *ConsumerGroupMemberMetadataValue:
		r.noteMember(g, k, &RebalanceCause{MemberID: rec.MemberID, InstanceID: v.InstanceID, ClientID: v.ClientID,
			ClientHost: v.ClientHost, RackID: v.RackID, Topics: sortedSet(v.SubscribedTopicNames), Regex: v.SubscribedTopicRegex})
		if old, joined := r.assignor[k][rec.MemberID], g == nil || !g.hasMember(rec.MemberID); !joined && old != v.ServerAssignor {
			// Kafka 4.1 to 4.3 never bump the epoch for a member's assignor alone, 4.4
			// when the group's preferred assignor changes, in the same write
			// (GroupMetadataManager.hasPreferredServerAssignorChanged): the cause is
			// kept only if the epoch record comes before the next member record.
			r.add(k, RebalanceCause{Kind: events.CauseAssignorChanged, MemberID: rec.MemberID, OldValue: old, NewValue: v.ServerAssignor,
				tentative: true})
		}
		r.setAssignor(k, rec.MemberID, v.ServerAssignor)
	case *ShareGroupMemberMetadataValue:
		r.noteMember(g, k, &RebalanceCause{MemberID: rec.MemberID, ClientID: v.ClientID, ClientHost: v.ClientHost,
			RackID: v.RackID, Topics: sortedSet(v.SubscribedTopicNames)})
	case *StreamsGroupMemberMetadataValue:
		placement := v.ProcessID + "\x00" + v.RackID + "\x00" + configString(v.ClientTags)
		before, known := r.process[k][rec.MemberID]
		if r.replaced(k, v.InstanceID) == nil && (g == nil || !g.hasMember(rec.MemberID)) {
			r.add(k, RebalanceCause{Kind: events.CauseMemberJoined, MemberID: rec.MemberID, InstanceID: v.InstanceID,
				ClientID: v.ClientID, ClientHost: v.ClientHost, RackID: v.RackID})
		} else if known && before != placement {
			// The coordinator places tasks by process, rack and client tags: Kafka 4.4
			// bumps the epoch in the same write when a member's change
			// (hasEpochRelevantMemberConfigChanged). A restarted static member's
			// replacement is written with its old ProcessId, then its new one, then
			// the epoch. No v1 cause kind names it: unknown, naming the member.
			r.add(k, RebalanceCause{Kind: events.UnknownCause, MemberID: rec.MemberID, InstanceID: v.InstanceID,
				ClientID: v.ClientID, ClientHost: v.ClientHost, RackID: v.RackID, tentative: true})
		}
		if r.process[k] == nil {
			r.process[k] = map[string]string{}
		}
		r.process[k][rec.MemberID] = placement
	case *ConsumerGroupRegularExpressionValue:
		var before []string
		if g != nil {
			if old, ok := g.ResolvedRegex(rec.Regex); ok {
				before = old.Topics
			}
		}
		if added, removed := diff(before, sortedSet(v.Topics)); added != nil || removed != nil {
			r.add(k, RebalanceCause{Kind: events.CauseRegexResolutionChanged, Regex: rec.Regex, TopicsAdded: added, TopicsRemoved: removed})
		}
	case *StreamsGroupTopologyValue:
		var before []string
		if g != nil {
			before = g.required
		}
		if added, removed := diff(before, v.RequiredTopics()); added != nil || removed != nil {
			r.add(k, RebalanceCause{Kind: events.CauseTopologyChanged, TopicsAdded: added, TopicsRemoved: removed})
		}
	}
	return nil
}

// setAssignor keeps a member's non-empty ServerAssignor ("" forgets it).
func (r *Rebalances) setAssignor(k events.GroupKey, member, assignor string) {
	m := r.assignor[k]
	switch {
	case assignor != "" && m == nil:
		r.assignor[k] = map[string]string{member: assignor}
	case assignor != "":
		m[member] = assignor
	case m != nil:
		delete(m, member)
		if len(m) == 0 {
			delete(r.assignor, k)
		}
	}
}

// noteMember notes a consumer or share member record: joined, or its subscription
// changed. c holds the new record's fields.
func (r *Rebalances) noteMember(g *Group, k events.GroupKey, c *RebalanceCause) {
	var old *Member
	if g != nil {
		old, _ = g.Member(c.MemberID)
	}
	if old == nil {
		if left := r.replaced(k, c.InstanceID); left != nil {
			// A static member's replacement: the same member under a new id.
			if !slices.Equal(left.Topics, c.Topics) || left.Regex != c.Regex {
				r.add(k, RebalanceCause{Kind: events.CauseSubscriptionChanged, MemberID: c.MemberID,
					OldTopics: nonNilStrings(left.Topics), OldRegex: left.Regex, Topics: nonNilStrings(c.Topics), Regex: c.Regex})
			}
			return
		}
		c.Kind, c.Topics = events.CauseMemberJoined, nonNilStrings(c.Topics)
		r.add(k, *c)
		return
	}
	if !slices.Equal(old.SubscribedTopicNames, c.Topics) || old.SubscribedTopicRegex != c.Regex {
		r.add(k, RebalanceCause{Kind: events.CauseSubscriptionChanged, MemberID: c.MemberID,
			OldTopics: nonNilStrings(old.SubscribedTopicNames), OldRegex: old.SubscribedTopicRegex,
			Topics: nonNilStrings(c.Topics), Regex: c.Regex})
	}
}

// noteClassic compares a classic group's new generation record with its members.
//
// A record of the same generation (a static member rejoining a stable group under a
// new member id) is no rebalance: nothing is noted.
func (r *Rebalances) noteClassic(g *Group, k events.GroupKey, v *GroupMetadataValue) {
	if g != nil && g.HasMetadata && g.Epoch == v.Generation {
		return
	}
	if g != nil && g.Protocol != "" && v.Protocol != "" && g.Protocol != v.Protocol {
		r.add(k, RebalanceCause{Kind: events.CauseAssignorChanged, OldValue: g.Protocol, NewValue: v.Protocol})
	}
	seen := make(map[string]bool, len(v.Members))
	// replacedBy is, per instance id, the member id that replaces an earlier member
	// with that instance id (a static member that rejoined under a new id).
	replacedBy := map[string]string{}
	if g != nil {
		for i := range v.Members {
			m := &v.Members[i]
			if m.GroupInstanceID == "" || g.hasMember(m.MemberID) {
				continue
			}
			for _, old := range g.members {
				if old.InstanceID == m.GroupInstanceID {
					replacedBy[m.GroupInstanceID] = m.MemberID
					seen[old.ID] = true
				}
			}
		}
	}
	for i := range v.Members {
		m := &v.Members[i]
		seen[m.MemberID] = true
		var topics []string
		rack := ""
		if m.Subscription != nil {
			topics, rack = sortedSet(m.Subscription.Topics), m.Subscription.RackID
		}
		var old *Member
		if g != nil {
			old, _ = g.Member(m.MemberID)
			if old == nil && replacedBy[m.GroupInstanceID] == m.MemberID {
				old = g.memberByInstance(m.GroupInstanceID)
			}
		}
		switch {
		case old == nil:
			r.add(k, RebalanceCause{Kind: events.CauseMemberJoined, MemberID: m.MemberID, InstanceID: m.GroupInstanceID,
				ClientID: m.ClientID, ClientHost: m.ClientHost, RackID: rack, Topics: nonNilStrings(topics)})
		case !slices.Equal(old.SubscribedTopicNames, topics):
			r.add(k, RebalanceCause{Kind: events.CauseSubscriptionChanged, MemberID: m.MemberID,
				OldTopics: nonNilStrings(old.SubscribedTopicNames), Topics: nonNilStrings(topics)})
		}
	}
	if g == nil {
		return
	}
	for _, m := range g.Members() {
		if !seen[m.ID] {
			r.add(k, RebalanceCause{Kind: events.CauseMemberLeft, MemberID: m.ID, Topics: m.SubscribedTopicNames})
		}
	}
}

// bump returns the Rebalance when epoch differs from the group's, with the causes
// pending and the hash change, and forgets them.
func (r *Rebalances) bump(g *Group, k events.GroupKey, epoch int32, hash int64) *Rebalance {
	has := g != nil && g.HasMetadata
	if !has && epoch == 0 {
		// A classic group's first record, written before any generation: the group
		// exists, nothing was rebalanced. What is pending waits for generation 1.
		return nil
	}
	if has && g.Epoch == epoch {
		if g.MetadataHash != hash {
			// A hash stored without a bump: remembered for the next one.
			r.add(k, RebalanceCause{Kind: events.CauseMetadata, OldHash: g.MetadataHash, NewHash: hash})
		}
		return nil
	}
	rb := &Rebalance{Group: k, NewEpoch: epoch, MetadataHash: hash, Causes: r.pending[k]}
	delete(r.pending, k)
	var oldHash int64
	if has {
		rb.OldEpoch, rb.HasOldEpoch, oldHash = g.Epoch, true, g.MetadataHash
	}
	if hash != oldHash {
		rb.Causes = append(rb.Causes, RebalanceCause{Kind: events.CauseMetadata, OldHash: oldHash, NewHash: hash})
	}
	if len(rb.Causes) == 0 {
		rb.Causes = []RebalanceCause{{Kind: events.UnknownCause}}
	}
	return rb
}

// diff returns what after adds to before and what it removes; both sorted, nil
// when empty.
func diff(before, after []string) (added, removed []string) {
	for _, t := range after {
		if !slices.Contains(before, t) {
			added = append(added, t)
		}
	}
	for _, t := range before {
		if !slices.Contains(after, t) {
			removed = append(removed, t)
		}
	}
	return added, removed
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// configString gives configs as sorted "key=value" pairs joined by commas.
func configString(kvs []KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = kv.Key + "=" + kv.Value
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// replaced returns, when a member with group.instance.id instance left since the
// group's last epoch (its tombstone pending), that member_left cause and removes it:
// the member recorded now replaces it. Kafka writes a static member's rejoin under a
// new member id as the old member's tombstones and then the new member's records,
// without bumping the group epoch unless its subscription changed
// (docs/consumer-offsets.md#rebalances).
func (r *Rebalances) replaced(k events.GroupKey, instance string) *RebalanceCause {
	if instance == "" {
		return nil
	}
	p := r.pending[k]
	i := slices.IndexFunc(p, func(c RebalanceCause) bool { return c.Kind == events.CauseMemberLeft && c.instance == instance })
	if i < 0 {
		return nil
	}
	left := p[i]
	r.pending[k] = slices.Delete(p, i, i+1)
	if len(r.pending[k]) == 0 {
		delete(r.pending, k)
	}
	return &left
}

// dropTentative forgets k's tentative causes: a member record came after them before
// any epoch record, so they were written without a bump.
func (r *Rebalances) dropTentative(k events.GroupKey) {
	p, ok := r.pending[k]
	if !ok || !slices.ContainsFunc(p, func(c RebalanceCause) bool { return c.tentative }) {
		return
	}
	p = slices.DeleteFunc(p, func(c RebalanceCause) bool { return c.tentative })
	if len(p) == 0 {
		delete(r.pending, k)
	} else {
		r.pending[k] = p
	}
}

func (g *Group) memberByInstance(instance string) *Member {
	for _, m := range g.members {
		if m.InstanceID == instance {
			return m
		}
	}
	return nil
}

func (g *Group) hasMember(id string) bool {
	_, ok := g.members[id]
	return ok
}
