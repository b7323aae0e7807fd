package groups

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// UUID is a Kafka Uuid (topic ids); String gives Kafka's base64 text form.
type UUID = kbin.UUID

// The value types below carry the fields of Kafka's group coordinator records
// under Kafka's names, with Go's initialisms: Kafka's TopicId, MemberId, InstanceId,
// RackId, ClientId, ProcessId, SubtopologyId, GroupInstanceId and GenerationId are
// TopicID, MemberID, InstanceID, RackID, ClientID, ProcessID, SubtopologyID,
// GroupInstanceID and GenerationID here, as internal/metadata spells TopicID.

// KeyValue is a string pair (streams client tags, topic configs, assignment configs).
type KeyValue struct{ Key, Value string }

// ConsumerGroupMetadataValue is the value of type 3 (KIP-848 consumer groups).
type ConsumerGroupMetadataValue struct {
	Epoch int32 // the group epoch
	// MetadataHash is the coordinator's hash of the subscribed topics (KIP-1101, tag 0).
	// Kafka 4.0 does not write it, and a hash of 0 is never written: both read as 0.
	MetadataHash int64
	// CreationTimeMs is tag 1 (KIP-1282); -1 when absent.
	CreationTimeMs int64
}

// ConsumerGroupPartitionMetadataValue is the value of type 4, written by Kafka 4.0
// and only deleted by later releases.
type ConsumerGroupPartitionMetadataValue struct {
	Topics []TopicMetadata
}

// ShareGroupPartitionMetadataValue is the value of type 9 (Kafka 4.0 share groups);
// its layout is that of type 4.
type ShareGroupPartitionMetadataValue ConsumerGroupPartitionMetadataValue

// TopicMetadata is one topic of a partition metadata record.
type TopicMetadata struct {
	TopicID           UUID
	TopicName         string
	NumPartitions     int32
	PartitionMetadata []PartitionMetadata
}

// PartitionMetadata is the racks of one partition (empty in what 4.0 wrote).
type PartitionMetadata struct {
	Partition int32
	Racks     []string
}

// ConsumerGroupMemberMetadataValue is the value of type 5: one member's subscription.
// Nullable strings read as "" when null.
type ConsumerGroupMemberMetadataValue struct {
	InstanceID           string
	RackID               string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string
	SubscribedTopicRegex string // "" when the member has no regex
	RebalanceTimeoutMs   int32
	ServerAssignor       string
	// ClassicMemberMetadata (tag 0) is set for members that joined with the classic
	// protocol; their subscribed topics are already in SubscribedTopicNames. Kafka
	// writes tag 0 for every member, with a null marker for the others.
	ClassicMemberMetadata *ClassicMemberMetadata
}

// ClassicMemberMetadata is the classic-protocol part of a consumer group member.
type ClassicMemberMetadata struct {
	SessionTimeoutMs   int32
	SupportedProtocols []ClassicProtocol
}

// ClassicProtocol is one protocol a classic member supports, with its metadata
// (for the consumer protocol, an encoded ConsumerProtocolSubscription).
type ClassicProtocol struct {
	Name     string
	Metadata []byte
}

// ConsumerGroupRegularExpressionValue is the value of type 16: the coordinator's
// resolution of one regular expression of a group (the regex itself is in the key).
type ConsumerGroupRegularExpressionValue struct {
	Topics    []string // matching topic names, sorted
	Version   int64    // metadata image version (offset) used for the resolution
	Timestamp int64    // wall clock (ms) when the resolution started
}

// ShareGroupMetadataValue is the value of type 11.
type ShareGroupMetadataValue struct {
	Epoch int32
	// MetadataHash is a plain field since Kafka 4.1; the 4.0 layout (same version 0)
	// lacks it and reads as 0. The layouts are told apart by length.
	MetadataHash int64
}

// ShareGroupStatePartitionMetadataValue is the value of type 15: the topics whose
// share-group state (kept by the share coordinator) a share group's coordinator is
// initializing, has initialized, or is deleting. Kafka writes one when it starts
// initializing a subscribed topic's partitions and one when that is done.
type ShareGroupStatePartitionMetadataValue struct {
	InitializingTopics []TopicPartitionsInfo
	InitializedTopics  []TopicPartitionsInfo
	DeletingTopics     []TopicPartitionsInfo // Partitions nil: the record names the topics only
}

// TopicPartitionsInfo is a topic, by id and name, and some of its partitions.
type TopicPartitionsInfo struct {
	TopicID    UUID
	TopicName  string
	Partitions []int32
}

// ShareGroupMemberMetadataValue is the value of type 10.
type ShareGroupMemberMetadataValue struct {
	RackID               string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string
}

// StreamsGroupMetadataValue is the value of type 17. MetadataHash is a plain field
// (a tagged one in ConsumerGroupMetadataValue).
type StreamsGroupMetadataValue struct {
	Epoch                  int32
	MetadataHash           int64
	ValidatedTopologyEpoch int32 // tag 0 (Kafka 4.3+); -1 when absent
	// AssignmentConfigs is the tagged LastAssignmentConfigs (tag 1) of Kafka 4.3+;
	// a plain array in one pre-release revision, which is read too.
	AssignmentConfigs []KeyValue
	// StoredDescriptionTopologyEpoch and FailedDescriptionTopologyEpoch are tags 2 and
	// 3, written from Kafka 4.4 on (KIP-1331: the topology epoch whose description the
	// coordinator stored, and the one whose description failed); -1 when absent.
	StoredDescriptionTopologyEpoch int32
	FailedDescriptionTopologyEpoch int32
}

// StreamsGroupMemberMetadataValue is the value of type 19.
type StreamsGroupMemberMetadataValue struct {
	InstanceID         string
	RackID             string
	ClientID           string
	ClientHost         string
	RebalanceTimeoutMs int32
	TopologyEpoch      int32
	ProcessID          string
	UserEndpoint       *Endpoint // nil when null
	ClientTags         []KeyValue
}

// Endpoint is a streams member's interactive-query endpoint.
type Endpoint struct {
	Host string
	Port uint16
}

// StreamsGroupTopologyValue is the value of type 23: the topology of a streams group.
type StreamsGroupTopologyValue struct {
	Epoch         int32
	Subtopologies []Subtopology
}

// Subtopology is one sub-topology of a streams topology.
type Subtopology struct {
	SubtopologyID           string
	SourceTopics            []string
	SourceTopicRegex        []string
	StateChangelogTopics    []TopicInfo
	RepartitionSinkTopics   []string
	RepartitionSourceTopics []TopicInfo
	CopartitionGroups       []CopartitionGroup
}

// TopicInfo describes an internal topic of a streams topology.
type TopicInfo struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	TopicConfigs      []KeyValue
}

// CopartitionGroup lists indexes into the arrays of its Subtopology.
type CopartitionGroup struct {
	SourceTopics            []int16
	SourceTopicRegex        []int16
	RepartitionSourceTopics []int16
}

// RequiredTopics returns the topics Kafka registers for a streams group and feeds to
// its MetadataHash (docs/consumer-offsets.md#subscribed-topics): the union over
// sub-topologies of SourceTopics, the names of RepartitionSourceTopics and the names
// of StateChangelogTopics, sorted and without duplicates. SourceTopicRegex is not
// included, as in Kafka.
func (v *StreamsGroupTopologyValue) RequiredTopics() []string {
	var out []string
	for i := range v.Subtopologies {
		s := &v.Subtopologies[i]
		out = append(out, s.SourceTopics...)
		for _, t := range s.RepartitionSourceTopics {
			out = append(out, t.Name)
		}
		for _, t := range s.StateChangelogTopics {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// GroupMetadataValue is the value of type 2 (classic groups), versions 0 to 4.
type GroupMetadataValue struct {
	ProtocolType          string // "consumer" for Kafka consumers; "" for an empty group
	Generation            int32
	Protocol              string // selected protocol (assignor); "" when null
	Leader                string
	CurrentStateTimestamp int64 // v2+; -1 when absent
	Members               []GroupMember
}

// GroupMember is one member of a classic group. Only for ProtocolType "consumer"
// with a selected Protocol is the member's subscription decoded (into Subscription,
// or SubscriptionErr when it does not parse); the raw subscription and assignment
// bytes are not kept.
type GroupMember struct {
	MemberID         string
	GroupInstanceID  string // v3+
	ClientID         string
	ClientHost       string
	RebalanceTimeout int32 // v1+; -1 when absent
	SessionTimeout   int32
	Subscription     *ConsumerProtocolSubscription
	SubscriptionErr  error
}

// ConsumerProtocolSubscription is the subscription of a classic consumer, versions
// 0 to 3. Newer versions are read with the version 3 layout and their extra trailing
// bytes ignored, as Kafka clients do. UserData is not kept.
type ConsumerProtocolSubscription struct {
	Version         int16
	Topics          []string
	OwnedPartitions []TopicPartitions // v1+
	GenerationID    int32             // v2+; -1 when absent
	RackID          string            // v3+
}

// TopicPartitions is a topic and some of its partitions.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// RecordType implementations: each value knows the record type that carries it.

func (*ConsumerGroupMetadataValue) RecordType() RecordType { return ConsumerGroupMetadata }
func (*ConsumerGroupPartitionMetadataValue) RecordType() RecordType {
	return ConsumerGroupPartitionMetadata
}
func (*ShareGroupPartitionMetadataValue) RecordType() RecordType { return ShareGroupPartitionMetadata }
func (*ConsumerGroupMemberMetadataValue) RecordType() RecordType { return ConsumerGroupMemberMetadata }
func (*ConsumerGroupRegularExpressionValue) RecordType() RecordType {
	return ConsumerGroupRegularExpression
}
func (*ShareGroupMetadataValue) RecordType() RecordType       { return ShareGroupMetadata }
func (*ShareGroupMemberMetadataValue) RecordType() RecordType { return ShareGroupMemberMetadata }
func (*ShareGroupStatePartitionMetadataValue) RecordType() RecordType {
	return ShareGroupStatePartitionMetadata
}
func (*StreamsGroupMetadataValue) RecordType() RecordType       { return StreamsGroupMetadata }
func (*StreamsGroupMemberMetadataValue) RecordType() RecordType { return StreamsGroupMemberMetadata }
func (*StreamsGroupTopologyValue) RecordType() RecordType       { return StreamsGroupTopology }
func (*GroupMetadataValue) RecordType() RecordType              { return GroupMetadata }

// describe gives a short readable form of a value for Record.String.
func describe(v Value) string {
	if s, ok := describeAssignment(v); ok {
		return s
	}
	switch v := v.(type) {
	case *ConsumerGroupMetadataValue:
		return fmt.Sprintf("epoch=%d metadata_hash=%#016x", v.Epoch, uint64(v.MetadataHash))
	case *ConsumerGroupPartitionMetadataValue:
		return describeTopicMetadata(v.Topics)
	case *ShareGroupPartitionMetadataValue:
		return describeTopicMetadata(v.Topics)
	case *ConsumerGroupMemberMetadataValue:
		s := fmt.Sprintf("topics=%s", list(v.SubscribedTopicNames))
		if v.SubscribedTopicRegex != "" {
			s += fmt.Sprintf(" regex=%q", v.SubscribedTopicRegex)
		}
		if v.ClassicMemberMetadata != nil {
			s += fmt.Sprintf(" classic_protocols=%d", len(v.ClassicMemberMetadata.SupportedProtocols))
		}
		return s
	case *ConsumerGroupRegularExpressionValue:
		return fmt.Sprintf("topics=%s version=%d", list(v.Topics), v.Version)
	case *ShareGroupMetadataValue:
		return fmt.Sprintf("epoch=%d metadata_hash=%#016x", v.Epoch, uint64(v.MetadataHash))
	case *ShareGroupMemberMetadataValue:
		return fmt.Sprintf("topics=%s", list(v.SubscribedTopicNames))
	case *ShareGroupStatePartitionMetadataValue:
		return fmt.Sprintf("initializing=%s initialized=%s deleting=%s", describeTopicPartitions(v.InitializingTopics),
			describeTopicPartitions(v.InitializedTopics), describeTopicPartitions(v.DeletingTopics))
	case *StreamsGroupMetadataValue:
		return fmt.Sprintf("epoch=%d metadata_hash=%#016x validated_topology_epoch=%d stored_description_topology_epoch=%d failed_description_topology_epoch=%d",
			v.Epoch, uint64(v.MetadataHash), v.ValidatedTopologyEpoch, v.StoredDescriptionTopologyEpoch, v.FailedDescriptionTopologyEpoch)
	case *StreamsGroupMemberMetadataValue:
		return fmt.Sprintf("topology_epoch=%d", v.TopologyEpoch)
	case *StreamsGroupTopologyValue:
		return fmt.Sprintf("epoch=%d subtopologies=%d required_topics=%s", v.Epoch, len(v.Subtopologies), list(v.RequiredTopics()))
	case *GroupMetadataValue:
		s := fmt.Sprintf("protocol_type=%q generation=%d protocol=%q members=%d", v.ProtocolType, v.Generation, v.Protocol, len(v.Members))
		for _, m := range v.Members {
			switch {
			case m.SubscriptionErr != nil:
				s += fmt.Sprintf(" [%s: %v]", m.MemberID, m.SubscriptionErr)
			case m.Subscription != nil:
				s += fmt.Sprintf(" [%s: v%d topics=%s]", m.MemberID, m.Subscription.Version, list(m.Subscription.Topics))
			}
		}
		return s
	}
	return fmt.Sprintf("%T", v)
}

func describeTopicMetadata(ts []TopicMetadata) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s:%d", t.TopicName, t.NumPartitions)
	}
	return "topics=[" + strings.Join(parts, " ") + "]"
}

// describeTopicPartitions gives "[orders:0,1 payments]" (a topic without partitions
// by name only).
func describeTopicPartitions(ts []TopicPartitionsInfo) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.TopicName
		if t.Partitions != nil {
			ps := make([]string, len(t.Partitions))
			for j, p := range t.Partitions {
				ps[j] = fmt.Sprint(p)
			}
			parts[i] += ":" + strings.Join(ps, ",")
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func list(s []string) string { return "[" + strings.Join(s, " ") + "]" }
