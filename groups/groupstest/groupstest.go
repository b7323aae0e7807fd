// Package groupstest encodes __consumer_offsets records for tests: the inverse of
// groups.Decode for every value groups decodes, plus keys of every record type and
// offset commits. It is written from the schemas in docs/consumer-offsets.md, not
// from Kafka's code, so a test that round-trips through it checks the decoder against
// the encoder; golden tests against real Kafka bytes check both against Kafka.
//
// Conventions where the decoded form loses information: an empty Go string is
// encoded as null in nullable fields (except SubscribedTopicRegex, which Kafka
// writes as ""), a nil slice as an empty array, a
// MetadataHash of 0 and a CreationTimeMs of -1 are left out (Kafka's defaults).
package groupstest

import (
	"encoding/binary"
	"fmt"

	"github.com/kraftwatch/kraftwatch/groups"
)

// Writer appends Kafka primitives to B (integers big-endian).
type Writer struct{ B []byte }

// Int8 appends one byte.
func (w *Writer) Int8(v int8) { w.B = append(w.B, byte(v)) }

// Int16 appends a big-endian int16.
func (w *Writer) Int16(v int16) { w.B = binary.BigEndian.AppendUint16(w.B, uint16(v)) }

// Uint16 appends a big-endian uint16.
func (w *Writer) Uint16(v uint16) { w.B = binary.BigEndian.AppendUint16(w.B, v) }

// Int32 appends a big-endian int32.
func (w *Writer) Int32(v int32) { w.B = binary.BigEndian.AppendUint32(w.B, uint32(v)) }

// Int64 appends a big-endian int64.
func (w *Writer) Int64(v int64) { w.B = binary.BigEndian.AppendUint64(w.B, uint64(v)) }

// UUID appends 16 bytes.
func (w *Writer) UUID(u [16]byte) { w.B = append(w.B, u[:]...) }

// Uvarint appends an unsigned varint.
func (w *Writer) Uvarint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }

// String writes an int16-length string.
func (w *Writer) String(s string) { w.Int16(int16(len(s))); w.B = append(w.B, s...) }

// NullableString writes an int16-length string, null when s is "".
func (w *Writer) NullableString(s string) {
	if s == "" {
		w.Int16(-1)
		return
	}
	w.String(s)
}

// CompactString writes a uvarint(len+1) string.
func (w *Writer) CompactString(s string) { w.Uvarint(uint64(len(s)) + 1); w.B = append(w.B, s...) }

// CompactNullableString writes a compact string, null when s is "".
func (w *Writer) CompactNullableString(s string) {
	if s == "" {
		w.Uvarint(0)
		return
	}
	w.CompactString(s)
}

// Bytes writes int32-length bytes.
func (w *Writer) Bytes(b []byte) { w.Int32(int32(len(b))); w.B = append(w.B, b...) }

// CompactBytes writes uvarint(len+1) bytes.
func (w *Writer) CompactBytes(b []byte) { w.Uvarint(uint64(len(b)) + 1); w.B = append(w.B, b...) }

// CompactStrings writes a compact array of compact strings.
func (w *Writer) CompactStrings(ss []string) {
	w.Uvarint(uint64(len(ss)) + 1)
	for _, s := range ss {
		w.CompactString(s)
	}
}

// Tag is one tagged field.
type Tag struct {
	Tag  uint64
	Data []byte
}

// Tags writes a tagged-field section; tags must be given in ascending order.
func (w *Writer) Tags(tags ...Tag) {
	w.Uvarint(uint64(len(tags)))
	for _, t := range tags {
		w.Uvarint(t.Tag)
		w.Uvarint(uint64(len(t.Data)))
		w.B = append(w.B, t.Data...)
	}
}

// Key encodes the key of a group record (not an offset commit): the type, then the
// group id and, by type, the member id or the regex.
func Key(rec *groups.Record) []byte {
	w := &Writer{}
	w.Int16(int16(rec.Type))
	w.String(rec.GroupID)
	switch rec.Type {
	case groups.ConsumerGroupMemberMetadata, groups.ConsumerGroupTargetAssignmentMember,
		groups.ConsumerGroupCurrentMemberAssignment, groups.ShareGroupMemberMetadata,
		groups.ShareGroupTargetAssignmentMember, groups.ShareGroupCurrentMemberAssignment,
		groups.StreamsGroupMemberMetadata, groups.StreamsGroupTargetAssignmentMember,
		groups.StreamsGroupCurrentMemberAssignment:
		w.String(rec.MemberID)
	case groups.ConsumerGroupRegularExpression:
		w.String(rec.Regex)
	}
	return w.B
}

// OffsetCommitKey encodes the key of an offset commit (type 1).
func OffsetCommitKey(group, topic string, partition int32) []byte {
	w := &Writer{}
	w.Int16(int16(groups.OffsetCommit))
	w.String(group)
	w.String(topic)
	w.Int32(partition)
	return w.B
}

// OffsetCommitValue encodes an OffsetCommitValue v3 (what Kafka 4.0 writes).
func OffsetCommitValue(offset int64, leaderEpoch int32, metadata string, commitTimestamp int64) []byte {
	w := &Writer{}
	w.Int16(3)
	w.Int64(offset)
	w.Int32(leaderEpoch)
	w.String(metadata)
	w.Int64(commitTimestamp)
	return w.B
}

// Encode returns the key and value of rec; the value is nil for a tombstone. The
// value is encoded at rec.Version from rec.Value.
func Encode(rec *groups.Record) (key, value []byte, err error) {
	key = Key(rec)
	if rec.Tombstone {
		return key, nil, nil
	}
	value, err = Value(rec.Version, rec.Value)
	return key, value, err
}

// Value encodes a value at a version, with the int16 version first.
func Value(version int16, v groups.Value) ([]byte, error) {
	w := &Writer{}
	w.Int16(version)
	if _, ok := v.(*groups.GroupMetadataValue); !ok && version != 0 {
		return nil, fmt.Errorf("groupstest: %T has only version 0", v)
	}
	switch v := v.(type) {
	case *groups.ConsumerGroupMetadataValue:
		w.Int32(v.Epoch)
		var tags []Tag
		if v.MetadataHash != 0 {
			tags = append(tags, Tag{0, be64(v.MetadataHash)})
		}
		if v.CreationTimeMs != -1 {
			tags = append(tags, Tag{1, be64(v.CreationTimeMs)})
		}
		w.Tags(tags...)
	case *groups.ConsumerGroupPartitionMetadataValue:
		partitionMetadata(w, v.Topics)
	case *groups.ShareGroupPartitionMetadataValue:
		partitionMetadata(w, v.Topics)
	case *groups.ConsumerGroupMemberMetadataValue:
		w.CompactNullableString(v.InstanceID)
		w.CompactNullableString(v.RackID)
		w.CompactString(v.ClientID)
		w.CompactString(v.ClientHost)
		w.CompactStrings(v.SubscribedTopicNames)
		w.CompactString(v.SubscribedTopicRegex) // Kafka writes "", not null, for no regex
		w.Int32(v.RebalanceTimeoutMs)
		w.CompactNullableString(v.ServerAssignor)
		// Tag 0 is written for every member, as Kafka does: uvarint 0 for null,
		// or 1 followed by the struct.
		if c := v.ClassicMemberMetadata; c != nil {
			t := &Writer{}
			t.Uvarint(1)
			t.Int32(c.SessionTimeoutMs)
			t.Uvarint(uint64(len(c.SupportedProtocols)) + 1)
			for _, p := range c.SupportedProtocols {
				t.CompactString(p.Name)
				t.CompactBytes(p.Metadata)
				t.Tags()
			}
			t.Tags()
			w.Tags(Tag{0, t.B})
		} else {
			w.Tags(Tag{0, []byte{0}})
		}
	case *groups.ConsumerGroupRegularExpressionValue:
		w.CompactStrings(v.Topics)
		w.Int64(v.Version)
		w.Int64(v.Timestamp)
		w.Tags()
	case *groups.ShareGroupMetadataValue:
		w.Int32(v.Epoch)
		w.Int64(v.MetadataHash)
		w.Tags()
	case *groups.ShareGroupStatePartitionMetadataValue:
		for i, ts := range [][]groups.TopicPartitionsInfo{v.InitializingTopics, v.InitializedTopics, v.DeletingTopics} {
			w.Uvarint(uint64(len(ts)) + 1)
			for _, t := range ts {
				w.UUID(t.TopicID)
				w.CompactString(t.TopicName)
				if i < 2 { // DeletingTopics have no partitions
					int32s(w, t.Partitions)
				}
				w.Tags()
			}
		}
		w.Tags()
	case *groups.ShareGroupMemberMetadataValue:
		w.CompactNullableString(v.RackID)
		w.CompactString(v.ClientID)
		w.CompactString(v.ClientHost)
		w.CompactStrings(v.SubscribedTopicNames)
		w.Tags()
	case *groups.StreamsGroupMetadataValue:
		w.Int32(v.Epoch)
		w.Int64(v.MetadataHash)
		var tags []Tag
		if v.ValidatedTopologyEpoch != -1 {
			tags = append(tags, Tag{0, be32(v.ValidatedTopologyEpoch)})
		}
		if v.AssignmentConfigs != nil {
			t := &Writer{}
			keyValues(t, v.AssignmentConfigs)
			tags = append(tags, Tag{1, t.B})
		}
		if v.StoredDescriptionTopologyEpoch != -1 {
			tags = append(tags, Tag{2, be32(v.StoredDescriptionTopologyEpoch)})
		}
		if v.FailedDescriptionTopologyEpoch != -1 {
			tags = append(tags, Tag{3, be32(v.FailedDescriptionTopologyEpoch)})
		}
		w.Tags(tags...)
	case *groups.StreamsGroupMemberMetadataValue:
		w.CompactNullableString(v.InstanceID)
		w.CompactNullableString(v.RackID)
		w.CompactString(v.ClientID)
		w.CompactString(v.ClientHost)
		w.Int32(v.RebalanceTimeoutMs)
		w.Int32(v.TopologyEpoch)
		w.CompactString(v.ProcessID)
		if e := v.UserEndpoint; e != nil {
			w.Int8(1)
			w.CompactString(e.Host)
			w.Uint16(e.Port)
			w.Tags()
		} else {
			w.Int8(-1)
		}
		keyValues(w, v.ClientTags)
		w.Tags()
	case *groups.StreamsGroupTopologyValue:
		w.Int32(v.Epoch)
		w.Uvarint(uint64(len(v.Subtopologies)) + 1)
		for _, s := range v.Subtopologies {
			w.CompactString(s.SubtopologyID)
			w.CompactStrings(s.SourceTopics)
			w.CompactStrings(s.SourceTopicRegex)
			topicInfos(w, s.StateChangelogTopics)
			w.CompactStrings(s.RepartitionSinkTopics)
			topicInfos(w, s.RepartitionSourceTopics)
			w.Uvarint(uint64(len(s.CopartitionGroups)) + 1)
			for _, g := range s.CopartitionGroups {
				int16s(w, g.SourceTopics)
				int16s(w, g.SourceTopicRegex)
				int16s(w, g.RepartitionSourceTopics)
				w.Tags()
			}
			w.Tags()
		}
		w.Tags()
	case *groups.ConsumerGroupTargetAssignmentMetadataValue:
		targetAssignmentMetadata(w, v)
	case *groups.ShareGroupTargetAssignmentMetadataValue:
		targetAssignmentMetadata(w, (*groups.ConsumerGroupTargetAssignmentMetadataValue)(v))
	case *groups.StreamsGroupTargetAssignmentMetadataValue:
		targetAssignmentMetadata(w, (*groups.ConsumerGroupTargetAssignmentMetadataValue)(v))
	case *groups.StreamsGroupCurrentMemberAssignmentValue:
		w.Int32(v.MemberEpoch)
		w.Int32(v.PreviousMemberEpoch)
		w.Int8(int8(v.State))
		for _, ts := range [][]groups.TaskIDs{v.ActiveTasks, v.StandbyTasks, v.WarmupTasks,
			v.ActiveTasksPendingRevocation, v.StandbyTasksPendingRevocation, v.WarmupTasksPendingRevocation} {
			taskIDs(w, ts)
		}
		w.Tags()
	case *groups.StreamsGroupTargetAssignmentMemberValue:
		for _, ts := range [][]groups.TaskIDs{v.ActiveTasks, v.StandbyTasks, v.WarmupTasks} {
			taskIDs(w, ts)
		}
		w.Tags()
	case *groups.ConsumerGroupTargetAssignmentMemberValue:
		topicIDPartitions(w, v.TopicPartitions)
		w.Tags()
	case *groups.ShareGroupTargetAssignmentMemberValue:
		topicIDPartitions(w, v.TopicPartitions)
		w.Tags()
	case *groups.ConsumerGroupCurrentMemberAssignmentValue:
		w.Int32(v.MemberEpoch)
		w.Int32(v.PreviousMemberEpoch)
		w.Int8(int8(v.State))
		topicIDPartitions(w, v.AssignedPartitions)
		topicIDPartitions(w, v.PartitionsPendingRevocation)
		w.Tags()
	case *groups.ShareGroupCurrentMemberAssignmentValue:
		w.Int32(v.MemberEpoch)
		w.Int32(v.PreviousMemberEpoch)
		w.Int8(int8(v.State))
		topicIDPartitions(w, v.AssignedPartitions)
		w.Tags()
	case *groups.GroupMetadataValue:
		if version < 0 || version > 4 {
			return nil, fmt.Errorf("groupstest: GroupMetadataValue v%d", version)
		}
		groupMetadata(w, version, v)
	default:
		return nil, fmt.Errorf("groupstest: cannot encode %T", v)
	}
	return w.B, nil
}

// targetAssignmentMetadata writes types 6 and 12; tag 0 only when set, as Kafka
// leaves out a tagged field at its default.
func targetAssignmentMetadata(w *Writer, v *groups.ConsumerGroupTargetAssignmentMetadataValue) {
	w.Int32(v.AssignmentEpoch)
	if v.AssignmentTimestamp != 0 {
		w.Tags(Tag{0, be64(v.AssignmentTimestamp)})
	} else {
		w.Tags()
	}
}

// topicIDPartitions writes a compact array of {uuid, []int32, tag 0 []int32}.
func topicIDPartitions(w *Writer, ts []groups.TopicIDPartitions) {
	w.Uvarint(uint64(len(ts)) + 1)
	for _, t := range ts {
		w.UUID(t.TopicID)
		int32s(w, t.Partitions)
		if t.AssignmentEpochs != nil {
			e := &Writer{}
			int32s(e, t.AssignmentEpochs)
			w.Tags(Tag{0, e.B})
		} else {
			w.Tags()
		}
	}
}

// taskIDs writes a compact array of TaskIds, with tag 0 (AssignmentEpochs) when set.
func taskIDs(w *Writer, ts []groups.TaskIDs) {
	w.Uvarint(uint64(len(ts)) + 1)
	for _, t := range ts {
		w.CompactString(t.SubtopologyID)
		int32s(w, t.Partitions)
		if t.AssignmentEpochs != nil {
			e := &Writer{}
			int32s(e, t.AssignmentEpochs)
			w.Tags(Tag{0, e.B})
		} else {
			w.Tags()
		}
	}
}

func int32s(w *Writer, vs []int32) {
	w.Uvarint(uint64(len(vs)) + 1)
	for _, v := range vs {
		w.Int32(v)
	}
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

func partitionMetadata(w *Writer, topics []groups.TopicMetadata) {
	w.Uvarint(uint64(len(topics)) + 1)
	for _, t := range topics {
		w.UUID(t.TopicID)
		w.CompactString(t.TopicName)
		w.Int32(t.NumPartitions)
		w.Uvarint(uint64(len(t.PartitionMetadata)) + 1)
		for _, p := range t.PartitionMetadata {
			w.Int32(p.Partition)
			w.CompactStrings(p.Racks)
			w.Tags()
		}
		w.Tags()
	}
	w.Tags()
}

func keyValues(w *Writer, kvs []groups.KeyValue) {
	w.Uvarint(uint64(len(kvs)) + 1)
	for _, kv := range kvs {
		w.CompactString(kv.Key)
		w.CompactString(kv.Value)
		w.Tags()
	}
}

func topicInfos(w *Writer, ts []groups.TopicInfo) {
	w.Uvarint(uint64(len(ts)) + 1)
	for _, t := range ts {
		w.CompactString(t.Name)
		w.Int32(t.Partitions)
		w.Int16(t.ReplicationFactor)
		keyValues(w, t.TopicConfigs)
		w.Tags()
	}
}

func int16s(w *Writer, vs []int16) {
	w.Uvarint(uint64(len(vs)) + 1)
	for _, v := range vs {
		w.Int16(v)
	}
}

func groupMetadata(w *Writer, version int16, v *groups.GroupMetadataValue) {
	flex := version >= 4
	str := func(s string) {
		if flex {
			w.CompactString(s)
		} else {
			w.String(s)
		}
	}
	nstr := func(s string) {
		if flex {
			w.CompactNullableString(s)
		} else {
			w.NullableString(s)
		}
	}
	bytes := func(b []byte) {
		if flex {
			w.CompactBytes(b)
		} else {
			w.Bytes(b)
		}
	}
	str(v.ProtocolType)
	w.Int32(v.Generation)
	nstr(v.Protocol)
	nstr(v.Leader)
	if version >= 2 {
		w.Int64(v.CurrentStateTimestamp)
	}
	if flex {
		w.Uvarint(uint64(len(v.Members)) + 1)
	} else {
		w.Int32(int32(len(v.Members)))
	}
	for _, m := range v.Members {
		str(m.MemberID)
		if version >= 3 {
			nstr(m.GroupInstanceID)
		}
		str(m.ClientID)
		str(m.ClientHost)
		if version >= 1 {
			w.Int32(m.RebalanceTimeout)
		}
		w.Int32(m.SessionTimeout)
		var sub []byte
		if m.Subscription != nil {
			sub = ConsumerProtocolSubscription(m.Subscription)
		}
		bytes(sub)
		bytes(nil) // assignment
		if flex {
			w.Tags()
		}
	}
	if flex {
		w.Tags()
	}
}

// ConsumerProtocolSubscription encodes a classic consumer's subscription at
// s.Version (0 to 3), with null UserData.
func ConsumerProtocolSubscription(s *groups.ConsumerProtocolSubscription) []byte {
	w := &Writer{}
	w.Int16(s.Version)
	w.Int32(int32(len(s.Topics)))
	for _, t := range s.Topics {
		w.String(t)
	}
	w.Int32(-1) // UserData: null
	if s.Version >= 1 {
		w.Int32(int32(len(s.OwnedPartitions)))
		for _, p := range s.OwnedPartitions {
			w.String(p.Topic)
			w.Int32(int32(len(p.Partitions)))
			for _, n := range p.Partitions {
				w.Int32(n)
			}
		}
	}
	if s.Version >= 2 {
		w.Int32(s.GenerationID)
	}
	if s.Version >= 3 {
		w.NullableString(s.RackID)
	}
	return w.B
}
