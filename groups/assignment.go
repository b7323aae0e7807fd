package groups

import (
	"fmt"
	"strconv"
	"strings"
)

// The assignment records of consumer (types 6, 7, 8), share (12, 13, 14) and streams
// groups (20, 21, 22), version 0, from the group coordinator's JSON schemas of Kafka
// 4.1.1 to 4.4.0 (docs/consumer-offsets.md#assignment-records). The coordinator writes,
// for a group:
//   - the target assignment, what its assignor computed: one record per member (7, 13,
//     21) with the partitions (streams: the tasks) the member should own, then the epoch
//     of that assignment (6, 12, 20), which equals the group epoch it was computed for;
//   - each member's current assignment (8, 14, 22): the partitions or tasks it owns now,
//     those it must still revoke, its member epoch and its reconciliation state.
//
// Type 24 (StreamsGroupTargetAssignmentResolvedTopicIds) is in none of those releases'
// schemas, so there are no bytes to decode it from.

// MemberState is a member's reconciliation state, Kafka's modern.MemberState (an int8
// in the consumer and share current-assignment records, 8 and 14). Streams records
// (22) number their states otherwise (StreamsMemberState); MemberAssignment keeps
// every group type's state as a MemberState.
type MemberState int8

// Member states, numbered as Kafka numbers them.
const (
	// MemberStable: the member owns its target assignment at the target epoch.
	MemberStable MemberState = 0
	// MemberUnrevokedPartitions: it must first revoke partitions it should not own.
	MemberUnrevokedPartitions MemberState = 1
	// MemberUnreleasedPartitions: it waits for partitions other members still own.
	MemberUnreleasedPartitions MemberState = 2
	// MemberUnknown is Kafka's UNKNOWN (127).
	MemberUnknown MemberState = 127
)

// String returns Kafka's name in lower case ("stable", "unrevoked_partitions",
// "unreleased_partitions", "unknown"), or "MemberState(N)".
func (s MemberState) String() string {
	switch s {
	case MemberStable:
		return "stable"
	case MemberUnrevokedPartitions:
		return "unrevoked_partitions"
	case MemberUnreleasedPartitions:
		return "unreleased_partitions"
	case MemberUnknown:
		return "unknown"
	}
	return "MemberState(" + strconv.Itoa(int(s)) + ")"
}

// StreamsMemberState is a streams member's reconciliation state as Kafka numbers it
// in StreamsGroupCurrentMemberAssignment (22): the group coordinator's
// streams.MemberState, numbered from 1, not as MemberState (checked against the
// 4.1.1, 4.3.1 and 4.4.0 jars: STABLE 1, UNREVOKED_TASKS 2, UNRELEASED_TASKS 3,
// UNKNOWN 127; consumer and share groups' modern.MemberState starts at STABLE 0).
type StreamsMemberState int8

// Streams member states, numbered as Kafka numbers them.
const (
	// StreamsMemberStable: the member owns its target tasks at the target epoch.
	StreamsMemberStable StreamsMemberState = 1
	// StreamsMemberUnrevokedTasks: it must first revoke tasks it should not own.
	StreamsMemberUnrevokedTasks StreamsMemberState = 2
	// StreamsMemberUnreleasedTasks: it waits for tasks other members still own.
	StreamsMemberUnreleasedTasks StreamsMemberState = 3
	// StreamsMemberUnknown is Kafka's UNKNOWN (127).
	StreamsMemberUnknown StreamsMemberState = 127
)

// String returns Kafka's name in lower case ("stable", "unrevoked_tasks",
// "unreleased_tasks", "unknown"), or "StreamsMemberState(N)".
func (s StreamsMemberState) String() string {
	switch s {
	case StreamsMemberStable:
		return "stable"
	case StreamsMemberUnrevokedTasks:
		return "unrevoked_tasks"
	case StreamsMemberUnreleasedTasks:
		return "unreleased_tasks"
	case StreamsMemberUnknown:
		return "unknown"
	}
	return "StreamsMemberState(" + strconv.Itoa(int(s)) + ")"
}

// MemberState gives the group-type-independent state MemberAssignment keeps:
// unrevoked and unreleased tasks are MemberUnrevokedPartitions and
// MemberUnreleasedPartitions; a value Kafka does not define is MemberUnknown.
func (s StreamsMemberState) MemberState() MemberState {
	switch s {
	case StreamsMemberStable:
		return MemberStable
	case StreamsMemberUnrevokedTasks:
		return MemberUnrevokedPartitions
	case StreamsMemberUnreleasedTasks:
		return MemberUnreleasedPartitions
	}
	return MemberUnknown
}

// TopicIDPartitions is a topic, by id, and some of its partitions.
type TopicIDPartitions struct {
	TopicID    UUID
	Partitions []int32
	// AssignmentEpochs (tag 0 of the current-assignment records, Kafka 4.3+) is the
	// epoch at which each partition was assigned, of the same length as Partitions;
	// nil when absent.
	AssignmentEpochs []int32
}

// ConsumerGroupTargetAssignmentMetadataValue is the value of type 6: the epoch of a
// group's target assignment.
type ConsumerGroupTargetAssignmentMetadataValue struct {
	AssignmentEpoch int32
	// AssignmentTimestamp is tag 0 (KIP-1263, Kafka 4.3+): when the assignment was
	// computed, in ms; 0 when absent.
	AssignmentTimestamp int64
}

// ConsumerGroupTargetAssignmentMemberValue is the value of type 7: the partitions
// the target assignment gives one member.
type ConsumerGroupTargetAssignmentMemberValue struct {
	TopicPartitions []TopicIDPartitions
}

// ConsumerGroupCurrentMemberAssignmentValue is the value of type 8: what one member
// owns now.
type ConsumerGroupCurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               MemberState
	AssignedPartitions  []TopicIDPartitions
	// PartitionsPendingRevocation are owned but must be given up.
	PartitionsPendingRevocation []TopicIDPartitions
}

// ShareGroupTargetAssignmentMetadataValue is the value of type 12; its layout is
// that of type 6.
type ShareGroupTargetAssignmentMetadataValue ConsumerGroupTargetAssignmentMetadataValue

// ShareGroupTargetAssignmentMemberValue is the value of type 13; its layout is that
// of type 7.
type ShareGroupTargetAssignmentMemberValue ConsumerGroupTargetAssignmentMemberValue

// ShareGroupCurrentMemberAssignmentValue is the value of type 14: type 8 without
// PartitionsPendingRevocation (share partitions are shared, never revoked first).
type ShareGroupCurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               MemberState
	AssignedPartitions  []TopicIDPartitions
}

// StreamsGroupTargetAssignmentMetadataValue is the value of type 20; its layout is
// that of type 6.
type StreamsGroupTargetAssignmentMetadataValue ConsumerGroupTargetAssignmentMetadataValue

// StreamsGroupCurrentMemberAssignmentValue is the value of type 22: the tasks one
// member of a streams group owns now, by kind, and those it must still revoke.
type StreamsGroupCurrentMemberAssignmentValue struct {
	MemberEpoch                   int32
	PreviousMemberEpoch           int32
	State                         StreamsMemberState
	ActiveTasks                   []TaskIDs
	StandbyTasks                  []TaskIDs
	WarmupTasks                   []TaskIDs
	ActiveTasksPendingRevocation  []TaskIDs
	StandbyTasksPendingRevocation []TaskIDs
	WarmupTasksPendingRevocation  []TaskIDs
}

// StreamsGroupTargetAssignmentMemberValue is the value of type 21: the tasks the
// group's assignor gives one member of a streams group, by kind.
type StreamsGroupTargetAssignmentMemberValue struct {
	ActiveTasks  []TaskIDs
	StandbyTasks []TaskIDs
	WarmupTasks  []TaskIDs
}

// TaskIDs is the tasks of one sub-topology: one per partition of its input topics.
type TaskIDs struct {
	SubtopologyID    string
	Partitions       []int32
	AssignmentEpochs []int32 // tag 0 (Kafka 4.3+, active tasks); nil when absent
}

func (*StreamsGroupTargetAssignmentMetadataValue) RecordType() RecordType {
	return StreamsGroupTargetAssignmentMetadata
}
func (*StreamsGroupCurrentMemberAssignmentValue) RecordType() RecordType {
	return StreamsGroupCurrentMemberAssignment
}
func (*StreamsGroupTargetAssignmentMemberValue) RecordType() RecordType {
	return StreamsGroupTargetAssignmentMember
}

func (r *reader) streamsCurrentMemberAssignment() *StreamsGroupCurrentMemberAssignmentValue {
	v := &StreamsGroupCurrentMemberAssignmentValue{MemberEpoch: r.Int32(), PreviousMemberEpoch: r.Int32(), State: StreamsMemberState(r.Int8())}
	for _, tasks := range []*[]TaskIDs{&v.ActiveTasks, &v.StandbyTasks, &v.WarmupTasks,
		&v.ActiveTasksPendingRevocation, &v.StandbyTasksPendingRevocation, &v.WarmupTasksPendingRevocation} {
		*tasks = r.taskIDs()
	}
	r.skipTags()
	return v
}

func (r *reader) streamsTargetAssignmentMember() *StreamsGroupTargetAssignmentMemberValue {
	v := &StreamsGroupTargetAssignmentMemberValue{}
	for _, tasks := range []*[]TaskIDs{&v.ActiveTasks, &v.StandbyTasks, &v.WarmupTasks} {
		*tasks = r.taskIDs()
	}
	r.skipTags()
	return v
}

// taskIDs reads a compact array of {SubtopologyId string, Partitions []int32, tag 0
// AssignmentEpochs []int32}. The target assignment's TaskIds has no tag 0; one there
// would be read all the same.
func (r *reader) taskIDs() []TaskIDs {
	return readArray(r, r.CompactArrayLen(1+1+1), func(t *TaskIDs) {
		t.SubtopologyID = r.cstr()
		t.Partitions = r.compactInt32s()
		r.tags(func(tag uint64, f *reader) bool {
			if tag != 0 {
				return false
			}
			t.AssignmentEpochs = f.compactInt32s()
			return true
		})
	})
}

func (*ConsumerGroupTargetAssignmentMetadataValue) RecordType() RecordType {
	return ConsumerGroupTargetAssignmentMetadata
}
func (*ConsumerGroupTargetAssignmentMemberValue) RecordType() RecordType {
	return ConsumerGroupTargetAssignmentMember
}
func (*ConsumerGroupCurrentMemberAssignmentValue) RecordType() RecordType {
	return ConsumerGroupCurrentMemberAssignment
}
func (*ShareGroupTargetAssignmentMetadataValue) RecordType() RecordType {
	return ShareGroupTargetAssignmentMetadata
}
func (*ShareGroupTargetAssignmentMemberValue) RecordType() RecordType {
	return ShareGroupTargetAssignmentMember
}
func (*ShareGroupCurrentMemberAssignmentValue) RecordType() RecordType {
	return ShareGroupCurrentMemberAssignment
}

func (r *reader) targetAssignmentMetadata() *ConsumerGroupTargetAssignmentMetadataValue {
	v := &ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: r.Int32()}
	r.tags(func(tag uint64, f *reader) bool {
		if tag != 0 {
			return false
		}
		v.AssignmentTimestamp = f.Int64()
		return true
	})
	return v
}

func (r *reader) targetAssignmentMember() *ConsumerGroupTargetAssignmentMemberValue {
	v := &ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: r.topicIDPartitions()}
	r.skipTags()
	return v
}

func (r *reader) currentMemberAssignment(pending bool) *ConsumerGroupCurrentMemberAssignmentValue {
	v := &ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: r.Int32(), PreviousMemberEpoch: r.Int32(), State: MemberState(r.Int8())}
	v.AssignedPartitions = r.topicIDPartitions()
	if pending {
		v.PartitionsPendingRevocation = r.topicIDPartitions()
	}
	r.skipTags()
	return v
}

// topicIDPartitions reads a compact array of {TopicId uuid, Partitions []int32,
// tag 0 AssignmentEpochs []int32}.
func (r *reader) topicIDPartitions() []TopicIDPartitions {
	return readArray(r, r.CompactArrayLen(16+1+1), func(t *TopicIDPartitions) {
		t.TopicID = r.UUID()
		t.Partitions = r.compactInt32s()
		r.tags(func(tag uint64, f *reader) bool {
			if tag != 0 {
				return false
			}
			t.AssignmentEpochs = f.compactInt32s()
			return true
		})
	})
}

func (r *reader) compactInt32s() []int32 {
	return readArray(r, r.CompactArrayLen(4), func(v *int32) { *v = r.Int32() })
}

// describeAssignment gives the readable form of the assignment values.
func describeAssignment(v Value) (string, bool) {
	switch v := v.(type) {
	case *ConsumerGroupTargetAssignmentMetadataValue:
		return fmt.Sprintf("assignment_epoch=%d", v.AssignmentEpoch), true
	case *ShareGroupTargetAssignmentMetadataValue:
		return fmt.Sprintf("assignment_epoch=%d", v.AssignmentEpoch), true
	case *StreamsGroupTargetAssignmentMetadataValue:
		return fmt.Sprintf("assignment_epoch=%d", v.AssignmentEpoch), true
	case *StreamsGroupCurrentMemberAssignmentValue:
		return fmt.Sprintf("member_epoch=%d previous_member_epoch=%d state=%s active=%s standby=%s warmup=%s",
			v.MemberEpoch, v.PreviousMemberEpoch, v.State, describeTasks(v.ActiveTasks), describeTasks(v.StandbyTasks), describeTasks(v.WarmupTasks)), true
	case *StreamsGroupTargetAssignmentMemberValue:
		return fmt.Sprintf("active=%s standby=%s warmup=%s", describeTasks(v.ActiveTasks), describeTasks(v.StandbyTasks), describeTasks(v.WarmupTasks)), true
	case *ConsumerGroupTargetAssignmentMemberValue:
		return "partitions=" + DescribePartitions(v.TopicPartitions), true
	case *ShareGroupTargetAssignmentMemberValue:
		return "partitions=" + DescribePartitions(v.TopicPartitions), true
	case *ConsumerGroupCurrentMemberAssignmentValue:
		return fmt.Sprintf("member_epoch=%d previous_member_epoch=%d state=%s assigned=%s pending_revocation=%s",
			v.MemberEpoch, v.PreviousMemberEpoch, v.State, DescribePartitions(v.AssignedPartitions), DescribePartitions(v.PartitionsPendingRevocation)), true
	case *ShareGroupCurrentMemberAssignmentValue:
		return fmt.Sprintf("member_epoch=%d previous_member_epoch=%d state=%s assigned=%s",
			v.MemberEpoch, v.PreviousMemberEpoch, v.State, DescribePartitions(v.AssignedPartitions)), true
	}
	return "", false
}

// DescribePartitions gives "[topic_id:p,p,... ...]", topics in the order given.
func DescribePartitions(ts []TopicIDPartitions) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		ps := make([]string, len(t.Partitions))
		for j, p := range t.Partitions {
			ps[j] = strconv.Itoa(int(p))
		}
		parts[i] = t.TopicID.String() + ":" + strings.Join(ps, ",")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func describeTasks(ts []TaskIDs) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		ps := make([]string, len(t.Partitions))
		for j, p := range t.Partitions {
			ps[j] = strconv.Itoa(int(p))
		}
		parts[i] = t.SubtopologyID + ":" + strings.Join(ps, ",")
	}
	return "[" + strings.Join(parts, " ") + "]"
}
