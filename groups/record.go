package groups

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/kraftwatch/kraftwatch/events"
)

// RecordType is the int16 that starts every __consumer_offsets key. The constants
// carry the names of Kafka's key and value schemas without the Key/Value suffix.
type RecordType int16

// Record types, numbered as in Kafka (docs/consumer-offsets.md#record-types).
const (
	// UnknownRecordType is used when a key is too short to hold a type.
	UnknownRecordType RecordType = -1

	LegacyOffsetCommit                           RecordType = 0
	OffsetCommit                                 RecordType = 1
	GroupMetadata                                RecordType = 2
	ConsumerGroupMetadata                        RecordType = 3
	ConsumerGroupPartitionMetadata               RecordType = 4
	ConsumerGroupMemberMetadata                  RecordType = 5
	ConsumerGroupTargetAssignmentMetadata        RecordType = 6
	ConsumerGroupTargetAssignmentMember          RecordType = 7
	ConsumerGroupCurrentMemberAssignment         RecordType = 8
	ShareGroupPartitionMetadata                  RecordType = 9
	ShareGroupMemberMetadata                     RecordType = 10
	ShareGroupMetadata                           RecordType = 11
	ShareGroupTargetAssignmentMetadata           RecordType = 12
	ShareGroupTargetAssignmentMember             RecordType = 13
	ShareGroupCurrentMemberAssignment            RecordType = 14
	ShareGroupStatePartitionMetadata             RecordType = 15
	ConsumerGroupRegularExpression               RecordType = 16
	StreamsGroupMetadata                         RecordType = 17
	StreamsGroupPartitionMetadata                RecordType = 18
	StreamsGroupMemberMetadata                   RecordType = 19
	StreamsGroupTargetAssignmentMetadata         RecordType = 20
	StreamsGroupTargetAssignmentMember           RecordType = 21
	StreamsGroupCurrentMemberAssignment          RecordType = 22
	StreamsGroupTopology                         RecordType = 23
	StreamsGroupTargetAssignmentResolvedTopicIDs RecordType = 24 // Kafka's StreamsGroupTargetAssignmentResolvedTopicIds

	maxRecordType = 24
)

// keyShape is the layout of a key struct after the type.
type keyShape uint8

const (
	keyUnknown      keyShape = iota
	keyOffsetCommit          // group, topic, partition int32
	keyGroup                 // group
	keyGroupMember           // group, member
	keyGroupRegex            // group, regular expression
)

var recordTypes = [maxRecordType + 1]struct {
	name  string
	group events.GroupType
	key   keyShape
}{
	LegacyOffsetCommit:                           {"LegacyOffsetCommit", events.UnknownGroup, keyOffsetCommit},
	OffsetCommit:                                 {"OffsetCommit", events.UnknownGroup, keyOffsetCommit},
	GroupMetadata:                                {"GroupMetadata", events.ClassicGroup, keyGroup},
	ConsumerGroupMetadata:                        {"ConsumerGroupMetadata", events.ConsumerGroup, keyGroup},
	ConsumerGroupPartitionMetadata:               {"ConsumerGroupPartitionMetadata", events.ConsumerGroup, keyGroup},
	ConsumerGroupMemberMetadata:                  {"ConsumerGroupMemberMetadata", events.ConsumerGroup, keyGroupMember},
	ConsumerGroupTargetAssignmentMetadata:        {"ConsumerGroupTargetAssignmentMetadata", events.ConsumerGroup, keyGroup},
	ConsumerGroupTargetAssignmentMember:          {"ConsumerGroupTargetAssignmentMember", events.ConsumerGroup, keyGroupMember},
	ConsumerGroupCurrentMemberAssignment:         {"ConsumerGroupCurrentMemberAssignment", events.ConsumerGroup, keyGroupMember},
	ShareGroupPartitionMetadata:                  {"ShareGroupPartitionMetadata", events.ShareGroup, keyGroup},
	ShareGroupMemberMetadata:                     {"ShareGroupMemberMetadata", events.ShareGroup, keyGroupMember},
	ShareGroupMetadata:                           {"ShareGroupMetadata", events.ShareGroup, keyGroup},
	ShareGroupTargetAssignmentMetadata:           {"ShareGroupTargetAssignmentMetadata", events.ShareGroup, keyGroup},
	ShareGroupTargetAssignmentMember:             {"ShareGroupTargetAssignmentMember", events.ShareGroup, keyGroupMember},
	ShareGroupCurrentMemberAssignment:            {"ShareGroupCurrentMemberAssignment", events.ShareGroup, keyGroupMember},
	ShareGroupStatePartitionMetadata:             {"ShareGroupStatePartitionMetadata", events.ShareGroup, keyGroup},
	ConsumerGroupRegularExpression:               {"ConsumerGroupRegularExpression", events.ConsumerGroup, keyGroupRegex},
	StreamsGroupMetadata:                         {"StreamsGroupMetadata", events.StreamsGroup, keyGroup},
	StreamsGroupPartitionMetadata:                {"StreamsGroupPartitionMetadata", events.StreamsGroup, keyGroup},
	StreamsGroupMemberMetadata:                   {"StreamsGroupMemberMetadata", events.StreamsGroup, keyGroupMember},
	StreamsGroupTargetAssignmentMetadata:         {"StreamsGroupTargetAssignmentMetadata", events.StreamsGroup, keyGroup},
	StreamsGroupTargetAssignmentMember:           {"StreamsGroupTargetAssignmentMember", events.StreamsGroup, keyGroupMember},
	StreamsGroupCurrentMemberAssignment:          {"StreamsGroupCurrentMemberAssignment", events.StreamsGroup, keyGroupMember},
	StreamsGroupTopology:                         {"StreamsGroupTopology", events.StreamsGroup, keyGroup},
	StreamsGroupTargetAssignmentResolvedTopicIDs: {"StreamsGroupTargetAssignmentResolvedTopicIds", events.StreamsGroup, keyGroup},
}

// Known reports whether t is a record type this package recognizes.
func (t RecordType) Known() bool { return t >= 0 && t <= maxRecordType }

// String returns Kafka's schema name without the Key/Value suffix, or
// "RecordType(N)" for an unknown type.
func (t RecordType) String() string {
	if t.Known() {
		return recordTypes[t].name
	}
	return "RecordType(" + strconv.Itoa(int(t)) + ")"
}

// GroupType returns the kind of group a record of this type belongs to, or
// UnknownGroup for offset commits and unknown types.
func (t RecordType) GroupType() events.GroupType {
	if t.Known() {
		return recordTypes[t].group
	}
	return events.UnknownGroup
}

// IsOffsetCommit reports whether t is type 0 or 1.
func (t RecordType) IsOffsetCommit() bool { return t == LegacyOffsetCommit || t == OffsetCommit }

// PeekType returns the record type of a key from its first two bytes without
// decoding anything else. ok is false when the key is shorter than two bytes.
func PeekType(key []byte) (t RecordType, ok bool) {
	if len(key) < 2 {
		return UnknownRecordType, false
	}
	return RecordType(binary.BigEndian.Uint16(key)), true
}

// Record is one decoded __consumer_offsets record.
type Record struct {
	Type     RecordType
	GroupID  string // empty for offset commits, which are not decoded
	MemberID string // set for records keyed by group and member
	Regex    string // set for ConsumerGroupRegularExpression: the key's RegularExpression

	// Tombstone is true for a record with a null value: Kafka deleted the key.
	Tombstone bool
	// Version is the value's int16 version, or -1 for tombstones and offset commits.
	Version int16
	// Value is the decoded value (one of the *XxxValue types of this package), or nil
	// for tombstones and for record types whose value this package does not need
	// (offset commits, streams assignments, share state). Its dynamic type always
	// matches Type.
	Value Value
}

// Value is the decoded value of a record: one of the *XxxValue types of this package.
type Value interface {
	// RecordType is the type of record that carries this value.
	RecordType() RecordType
}

// GroupKey returns the key of the group the record belongs to.
func (r *Record) GroupKey() events.GroupKey {
	return events.GroupKey{Type: r.Type.GroupType(), ID: r.GroupID}
}

// String gives a one-line readable form, for logs and golden files.
func (r *Record) String() string {
	var b strings.Builder
	b.WriteString(r.Type.String())
	if r.Type.IsOffsetCommit() {
		if r.Tombstone {
			b.WriteString(" tombstone")
		}
		return b.String()
	}
	fmt.Fprintf(&b, " group=%q", r.GroupID)
	if r.MemberID != "" || r.Type.keyShape() == keyGroupMember {
		fmt.Fprintf(&b, " member=%q", r.MemberID)
	}
	if r.Type == ConsumerGroupRegularExpression {
		fmt.Fprintf(&b, " regex=%q", r.Regex)
	}
	switch {
	case r.Tombstone:
		b.WriteString(" tombstone")
	case r.Value == nil:
		fmt.Fprintf(&b, " v%d (not decoded)", r.Version)
	default:
		fmt.Fprintf(&b, " v%d %s", r.Version, describe(r.Value))
	}
	return b.String()
}

func (t RecordType) keyShape() keyShape {
	if t.Known() {
		return recordTypes[t].key
	}
	return keyUnknown
}
