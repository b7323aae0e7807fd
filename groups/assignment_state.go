package groups

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kraftwatch/kraftwatch/events"
)

// MemberAssignment is what a member of a consumer, share or streams group owns and
// should own, from its assignment records. Partitions are sorted by topic id, then
// partition; a streams member's are tasks instead.
type MemberAssignment struct {
	// HasCurrent reports that the member's current-assignment record (type 8, 14 or
	// 22) is present; MemberEpoch, PreviousMemberEpoch, State, Assigned and
	// PendingRevocation (streams: Tasks.Assigned, Tasks.PendingRevocation) come from it.
	HasCurrent          bool
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               MemberState
	Assigned            []TopicIDPartitions
	PendingRevocation   []TopicIDPartitions // consumer groups only
	// HasTarget reports that the member's target-assignment record (type 7, 13 or 21)
	// is present; Target (streams: Tasks.Target) comes from it.
	HasTarget bool
	Target    []TopicIDPartitions

	// Tasks is a streams member's tasks, nil for other members.
	Tasks *MemberTasks
}

// MemberTasks is what tasks a streams member owns, must give up, and should own.
type MemberTasks struct {
	Assigned, PendingRevocation, Target StreamsTasks
}

// StreamsTasks is a streams member's tasks by kind, each sorted by sub-topology, then
// partition, without assignment epochs.
type StreamsTasks struct {
	Active, Standby, Warmup []TaskIDs
}

// streamsTasks returns the tasks of the three kinds, compacted as compactTasks does.
func streamsTasks(active, standby, warmup []TaskIDs) StreamsTasks {
	return StreamsTasks{Active: compactTasks(active), Standby: compactTasks(standby), Warmup: compactTasks(warmup)}
}

// compactTasks returns ts sorted by sub-topology id, each one's partitions sorted,
// without the AssignmentEpochs and nil when empty.
func compactTasks(ts []TaskIDs) []TaskIDs {
	if len(ts) == 0 {
		return nil
	}
	out := make([]TaskIDs, len(ts))
	for i, t := range ts {
		out[i] = TaskIDs{SubtopologyID: t.SubtopologyID, Partitions: slices.Sorted(slices.Values(t.Partitions))}
	}
	slices.SortFunc(out, func(a, b TaskIDs) int { return strings.Compare(a.SubtopologyID, b.SubtopologyID) })
	return out
}

// ReconciledTo reports whether the member owns its target assignment at the
// target epoch, as Kafka's ModernGroupMember.isReconciledTo decides: its state is
// stable and its member epoch is the target assignment epoch.
func (a *MemberAssignment) ReconciledTo(targetEpoch int32) bool {
	return a != nil && a.HasCurrent && a.State == MemberStable && a.MemberEpoch == targetEpoch
}

// applyAssignment applies an assignment record (types 6, 7, 8, 12, 13, 14, 20, 21, 22).
func (s *State) applyAssignment(g *Group, rec *Record) {
	switch v := rec.Value.(type) {
	case *ConsumerGroupTargetAssignmentMetadataValue:
		g.TargetAssignmentEpoch = v.AssignmentEpoch
	case *ShareGroupTargetAssignmentMetadataValue:
		g.TargetAssignmentEpoch = v.AssignmentEpoch
	case *StreamsGroupTargetAssignmentMetadataValue:
		g.TargetAssignmentEpoch = v.AssignmentEpoch
	case *StreamsGroupCurrentMemberAssignmentValue:
		a := s.assignment(g, rec.MemberID)
		a.HasCurrent, a.MemberEpoch, a.PreviousMemberEpoch, a.State = true, v.MemberEpoch, v.PreviousMemberEpoch, v.State.MemberState()
		t := a.tasks()
		t.Assigned = streamsTasks(v.ActiveTasks, v.StandbyTasks, v.WarmupTasks)
		t.PendingRevocation = streamsTasks(v.ActiveTasksPendingRevocation, v.StandbyTasksPendingRevocation, v.WarmupTasksPendingRevocation)
	case *StreamsGroupTargetAssignmentMemberValue:
		a := s.assignment(g, rec.MemberID)
		a.HasTarget = true
		a.tasks().Target = streamsTasks(v.ActiveTasks, v.StandbyTasks, v.WarmupTasks)
	case *ConsumerGroupTargetAssignmentMemberValue:
		a := s.assignment(g, rec.MemberID)
		a.HasTarget, a.Target = true, compactPartitions(v.TopicPartitions)
	case *ShareGroupTargetAssignmentMemberValue:
		a := s.assignment(g, rec.MemberID)
		a.HasTarget, a.Target = true, compactPartitions(v.TopicPartitions)
	case *ConsumerGroupCurrentMemberAssignmentValue:
		a := s.assignment(g, rec.MemberID)
		a.HasCurrent, a.MemberEpoch, a.PreviousMemberEpoch, a.State = true, v.MemberEpoch, v.PreviousMemberEpoch, v.State
		a.Assigned, a.PendingRevocation = compactPartitions(v.AssignedPartitions), compactPartitions(v.PartitionsPendingRevocation)
	case *ShareGroupCurrentMemberAssignmentValue:
		a := s.assignment(g, rec.MemberID)
		a.HasCurrent, a.MemberEpoch, a.PreviousMemberEpoch, a.State = true, v.MemberEpoch, v.PreviousMemberEpoch, v.State
		a.Assigned, a.PendingRevocation = compactPartitions(v.AssignedPartitions), nil
	}
}

// deleteAssignment applies the tombstone of an assignment record and reports
// whether rec was one.
func (s *State) deleteAssignment(g *Group, rec *Record) bool {
	switch rec.Type {
	case ConsumerGroupTargetAssignmentMetadata, ShareGroupTargetAssignmentMetadata, StreamsGroupTargetAssignmentMetadata:
		g.TargetAssignmentEpoch = -1
	case ConsumerGroupTargetAssignmentMember, ShareGroupTargetAssignmentMember, StreamsGroupTargetAssignmentMember,
		ConsumerGroupCurrentMemberAssignment, ShareGroupCurrentMemberAssignment, StreamsGroupCurrentMemberAssignment:
		m := g.members[rec.MemberID]
		if m == nil || m.Assignment == nil {
			return true
		}
		a := m.Assignment
		switch rec.Type {
		case ConsumerGroupTargetAssignmentMember, ShareGroupTargetAssignmentMember:
			a.HasTarget, a.Target = false, nil
		case StreamsGroupTargetAssignmentMember:
			a.HasTarget = false
			if a.Tasks != nil {
				a.Tasks.Target = StreamsTasks{}
			}
		default:
			keep := MemberAssignment{HasTarget: a.HasTarget, Target: a.Target}
			if a.Tasks != nil {
				keep.Tasks = &MemberTasks{Target: a.Tasks.Target}
			}
			*a = keep
		}
		if !a.HasTarget && !a.HasCurrent {
			m.Assignment = nil
		}
	default:
		return false
	}
	return true
}

// tasks returns a's streams tasks, creating them when missing.
func (a *MemberAssignment) tasks() *MemberTasks {
	if a.Tasks == nil {
		a.Tasks = &MemberTasks{}
	}
	return a.Tasks
}

// assignment returns the assignment of a member, creating both when missing: Kafka's
// coordinator also creates the member of an assignment record it replays first.
func (s *State) assignment(g *Group, id string) *MemberAssignment {
	m := g.members[id]
	if m == nil {
		m = &Member{ID: id}
		g.members[id] = m
	}
	if m.Assignment == nil {
		m.Assignment = &MemberAssignment{}
	}
	return m.Assignment
}

// compactPartitions returns ts sorted by topic id, each topic's partitions sorted,
// without the AssignmentEpochs (which only fence offset commits) and nil when
// empty, sharing ts's partition slices when they are already sorted.
func compactPartitions(ts []TopicIDPartitions) []TopicIDPartitions {
	if len(ts) == 0 {
		return nil
	}
	out := make([]TopicIDPartitions, len(ts))
	for i, t := range ts {
		ps := t.Partitions
		if !slices.IsSorted(ps) {
			ps = slices.Sorted(slices.Values(ps))
		}
		out[i] = TopicIDPartitions{TopicID: t.TopicID, Partitions: ps}
	}
	slices.SortFunc(out, func(a, b TopicIDPartitions) int { return slices.Compare(a.TopicID[:], b.TopicID[:]) })
	return out
}

// GroupState is a group's state as Kafka's coordinator derives it, from what the
// records hold (Group.State).
type GroupState uint8

// Group states. Not every type has every state: consumer and streams groups are
// empty, assigning, reconciling or stable (streams also not_ready); share groups
// empty or stable; classic groups empty or stable (see Group.State).
const (
	UnknownState GroupState = iota
	StateEmpty
	StateAssigning
	StateReconciling
	StateStable
	StateNotReady
)

var groupStateNames = [...]string{"unknown", "empty", "assigning", "reconciling", "stable", "not_ready"}

// String returns the lower-case name: "empty", "assigning", "reconciling",
// "stable", "not_ready" or "unknown".
func (s GroupState) String() string {
	if int(s) < len(groupStateNames) {
		return groupStateNames[s]
	}
	return "GroupState(" + strconv.Itoa(int(s)) + ")"
}

// ParseGroupState is the inverse of String.
func ParseGroupState(s string) (GroupState, bool) {
	i := slices.Index(groupStateNames[:], s)
	return GroupState(max(i, 0)), i >= 0
}

// GroupStates lists every state but UnknownState, in order.
func GroupStates() []GroupState {
	return []GroupState{StateEmpty, StateAssigning, StateReconciling, StateStable, StateNotReady}
}

// State derives the group's state the way Kafka's coordinator does from the same
// records (docs/consumer-offsets.md#group-state):
//   - consumer: empty without members; assigning while the group epoch is above the
//     target assignment epoch (the assignor has not run for the last change);
//     reconciling while a member is not reconciled to the target epoch
//     (MemberAssignment.ReconciledTo); else stable.
//   - share: empty without members, else stable, as Kafka's ShareGroup decides.
//   - streams: empty without members; not_ready without a topology record or while
//     the group's ValidatedTopologyEpoch is not the topology's epoch (Kafka also
//     checks the internal topics against the metadata, which the records do not
//     show); else as a consumer group, from the streams assignment records.
//   - classic: empty without members, else stable. The coordinator writes a
//     classic group's record only when a rebalance completes or the group empties,
//     so the transient PreparingRebalance and CompletingRebalance states never
//     reach the log.
func (g *Group) State() GroupState {
	if len(g.members) == 0 {
		return StateEmpty
	}
	switch g.Key.Type {
	case events.ClassicGroup, events.ShareGroup:
		return StateStable
	case events.StreamsGroup, events.ConsumerGroup:
		if g.Key.Type == events.StreamsGroup && (g.Topology == nil || g.Topology.Epoch != g.ValidatedTopologyEpoch) {
			return StateNotReady
		}
		target := g.targetEpoch()
		if g.Epoch > target {
			return StateAssigning
		}
		for _, m := range g.members {
			if !m.Assignment.ReconciledTo(target) {
				return StateReconciling
			}
		}
		return StateStable
	}
	return UnknownState
}

// Reconciling counts the members not reconciled to the target assignment epoch
// (consumer, share and streams groups; 0 for classic groups).
func (g *Group) Reconciling() int {
	if g.Key.Type == events.ClassicGroup {
		return 0
	}
	n, target := 0, g.targetEpoch()
	for _, m := range g.members {
		if !m.Assignment.ReconciledTo(target) {
			n++
		}
	}
	return n
}

// targetEpoch is the target assignment epoch the state is derived with: 0, Kafka's
// initial value, when no record holds one.
func (g *Group) targetEpoch() int32 { return max(g.TargetAssignmentEpoch, 0) }
