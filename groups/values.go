package groups

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// UUID is a Kafka Uuid (topic ids); String gives Kafka's base64 text form.
type UUID = kbin.UUID

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
	TopicId           UUID
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
	InstanceId           string
	RackId               string
	ClientId             string
	ClientHost           string
	SubscribedTopicNames []string
	SubscribedTopicRegex string // "" when the member has no regex
	RebalanceTimeoutMs   int32
	ServerAssignor       string
	// ClassicMemberMetadata (tag 0) is set for members that joined with the classic
	// protocol; their subscribed topics are already in SubscribedTopicNames.
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

// ShareGroupMemberMetadataValue is the value of type 10.
type ShareGroupMemberMetadataValue struct {
	RackId               string
	ClientId             string
	ClientHost           string
	SubscribedTopicNames []string
}

// StreamsGroupMetadataValue is the value of type 17.
type StreamsGroupMetadataValue struct {
	Epoch                  int32
	MetadataHash           int64
	ValidatedTopologyEpoch int32 // tag 0; -1 when absent
	// AssignmentConfigs is a plain array in some revisions and the tagged
	// LastAssignmentConfigs (tag 1) in others; both layouts are read.
	AssignmentConfigs []KeyValue
}

// StreamsGroupMemberMetadataValue is the value of type 19.
type StreamsGroupMemberMetadataValue struct {
	InstanceId         string
	RackId             string
	ClientId           string
	ClientHost         string
	RebalanceTimeoutMs int32
	TopologyEpoch      int32
	ProcessId          string
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
	SubtopologyId           string
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
// its MetadataHash (spec §3): the union over sub-topologies of SourceTopics, the
// names of RepartitionSourceTopics and the names of StateChangelogTopics, sorted and
// without duplicates. SourceTopicRegex is not included, as in Kafka.
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
	MemberId         string
	GroupInstanceId  string // v3+
	ClientId         string
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
	GenerationId    int32             // v2+; -1 when absent
	RackId          string            // v3+
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
func (*ShareGroupMetadataValue) RecordType() RecordType         { return ShareGroupMetadata }
func (*ShareGroupMemberMetadataValue) RecordType() RecordType   { return ShareGroupMemberMetadata }
func (*StreamsGroupMetadataValue) RecordType() RecordType       { return StreamsGroupMetadata }
func (*StreamsGroupMemberMetadataValue) RecordType() RecordType { return StreamsGroupMemberMetadata }
func (*StreamsGroupTopologyValue) RecordType() RecordType       { return StreamsGroupTopology }
func (*GroupMetadataValue) RecordType() RecordType              { return GroupMetadata }

// maxVersion is the highest value version decoded per record type; types absent
// here are recognized but their values are not decoded.
func maxVersion(t RecordType) (int16, bool) {
	switch t {
	case GroupMetadata:
		return 4, true
	case ConsumerGroupMetadata, ConsumerGroupPartitionMetadata, ConsumerGroupMemberMetadata,
		ConsumerGroupRegularExpression, ShareGroupPartitionMetadata, ShareGroupMetadata,
		ShareGroupMemberMetadata, StreamsGroupMetadata, StreamsGroupMemberMetadata, StreamsGroupTopology:
		return 0, true
	}
	return 0, false
}

// decodeValue decodes the value struct b (after the version) of a record of type t.
// It returns nil, nil for types whose values are not decoded.
func decodeValue(t RecordType, version int16, b []byte) (Value, error) {
	maxV, decoded := maxVersion(t)
	if !decoded {
		return nil, nil
	}
	if version < 0 || version > maxV {
		return nil, ErrUnknownVersion
	}
	r := kbin.NewReader(b)
	var v Value
	switch t {
	case GroupMetadata:
		v = readGroupMetadata(r, version)
	case ConsumerGroupMetadata:
		v = readConsumerGroupMetadata(r)
	case ConsumerGroupPartitionMetadata:
		v = readPartitionMetadata(r)
	case ShareGroupPartitionMetadata:
		v = (*ShareGroupPartitionMetadataValue)(readPartitionMetadata(r))
	case ConsumerGroupMemberMetadata:
		v = readConsumerGroupMember(r)
	case ConsumerGroupRegularExpression:
		v = readRegularExpression(r)
	case ShareGroupMetadata:
		v = readShareGroupMetadata(r)
	case ShareGroupMemberMetadata:
		v = readShareGroupMember(r)
	case StreamsGroupMetadata:
		v = readStreamsGroupMetadata(r)
	case StreamsGroupMemberMetadata:
		v = readStreamsGroupMember(r)
	case StreamsGroupTopology:
		v = readStreamsGroupTopology(r)
	}
	if err := finish(r); err != nil {
		return nil, err
	}
	return v, nil
}

// finish fails r if bytes are left after the value struct, and returns r's error.
func finish(r *kbin.Reader) error {
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(fmt.Errorf("%d bytes after the value struct: %w", r.Len(), ErrCorrupt))
	}
	return r.Err()
}

// exact fails a tagged-field reader whose payload was not consumed exactly.
func exact(f *kbin.Reader) bool {
	if f.Err() == nil && f.Len() != 0 {
		f.Fail(fmt.Errorf("%d bytes left in tagged field: %w", f.Len(), ErrCorrupt))
	}
	return true
}

// skipTags reads a tagged-field section whose fields are all ignored.
func skipTags(r *kbin.Reader) { r.TaggedFields(nil) }

// compactStrings reads a compact array of compact strings; null reads as nil.
func compactStrings(r *kbin.Reader) []string {
	n := r.CompactArrayLen(1)
	if n <= 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.CompactString()
	}
	if r.Err() != nil {
		return nil
	}
	return out
}

// compactKeyValues reads a compact array of {string, string, tags}.
func compactKeyValues(r *kbin.Reader) []KeyValue {
	n := r.CompactArrayLen(3)
	if n <= 0 {
		return nil
	}
	out := make([]KeyValue, n)
	for i := range out {
		out[i].Key = r.CompactString()
		out[i].Value = r.CompactString()
		skipTags(r)
	}
	if r.Err() != nil {
		return nil
	}
	return out
}

func readConsumerGroupMetadata(r *kbin.Reader) *ConsumerGroupMetadataValue {
	v := &ConsumerGroupMetadataValue{Epoch: r.Int32(), CreationTimeMs: -1}
	r.TaggedFields(func(tag uint64, f *kbin.Reader) bool {
		switch tag {
		case 0:
			v.MetadataHash = f.Int64()
		case 1:
			v.CreationTimeMs = f.Int64()
		default:
			return false
		}
		return exact(f)
	})
	return v
}

func readPartitionMetadata(r *kbin.Reader) *ConsumerGroupPartitionMetadataValue {
	v := &ConsumerGroupPartitionMetadataValue{}
	if n := r.CompactArrayLen(16 + 1 + 4 + 1 + 1); n > 0 {
		v.Topics = make([]TopicMetadata, n)
		for i := range v.Topics {
			t := &v.Topics[i]
			t.TopicId = r.UUID()
			t.TopicName = r.CompactString()
			t.NumPartitions = r.Int32()
			if m := r.CompactArrayLen(4 + 1 + 1); m > 0 {
				t.PartitionMetadata = make([]PartitionMetadata, m)
				for j := range t.PartitionMetadata {
					p := &t.PartitionMetadata[j]
					p.Partition = r.Int32()
					p.Racks = compactStrings(r)
					skipTags(r)
				}
			}
			skipTags(r)
		}
	}
	skipTags(r)
	return v
}

func readConsumerGroupMember(r *kbin.Reader) *ConsumerGroupMemberMetadataValue {
	v := &ConsumerGroupMemberMetadataValue{}
	v.InstanceId = r.CompactString()
	v.RackId = r.CompactString()
	v.ClientId = r.CompactString()
	v.ClientHost = r.CompactString()
	v.SubscribedTopicNames = compactStrings(r)
	v.SubscribedTopicRegex = r.CompactString()
	v.RebalanceTimeoutMs = r.Int32()
	v.ServerAssignor = r.CompactString()
	r.TaggedFields(func(tag uint64, f *kbin.Reader) bool {
		if tag != 0 {
			return false
		}
		// A nullable struct in a tagged field is present only when non-null.
		c := &ClassicMemberMetadata{SessionTimeoutMs: f.Int32()}
		if n := f.CompactArrayLen(1 + 1 + 1); n > 0 {
			c.SupportedProtocols = make([]ClassicProtocol, n)
			for i := range c.SupportedProtocols {
				p := &c.SupportedProtocols[i]
				p.Name = f.CompactString()
				if b := f.CompactBytes(); len(b) > 0 {
					p.Metadata = slices.Clone(b)
				}
				skipTags(f)
			}
		}
		skipTags(f)
		v.ClassicMemberMetadata = c
		return exact(f)
	})
	return v
}

func readRegularExpression(r *kbin.Reader) *ConsumerGroupRegularExpressionValue {
	v := &ConsumerGroupRegularExpressionValue{}
	v.Topics = compactStrings(r)
	v.Version = r.Int64()
	v.Timestamp = r.Int64()
	skipTags(r)
	return v
}

func readShareGroupMetadata(r *kbin.Reader) *ShareGroupMetadataValue {
	v := &ShareGroupMetadataValue{Epoch: r.Int32()}
	// 4.1+ adds a plain int64 before the tagged fields under the same version 0.
	// A 4.0 value has only its tagged-field section left here (one byte when empty,
	// and at least 3 bytes otherwise, so never 8 + 1). Take the 4.1 layout whenever
	// 9 or more bytes are left.
	if r.Len() >= 9 {
		v.MetadataHash = r.Int64()
	}
	skipTags(r)
	return v
}

func readShareGroupMember(r *kbin.Reader) *ShareGroupMemberMetadataValue {
	v := &ShareGroupMemberMetadataValue{}
	v.RackId = r.CompactString()
	v.ClientId = r.CompactString()
	v.ClientHost = r.CompactString()
	v.SubscribedTopicNames = compactStrings(r)
	skipTags(r)
	return v
}

func readStreamsGroupMetadata(r *kbin.Reader) *StreamsGroupMetadataValue {
	v := &StreamsGroupMetadataValue{Epoch: r.Int32(), MetadataHash: r.Int64(), ValidatedTopologyEpoch: -1}
	if r.Err() != nil {
		return v
	}
	// Two layouts share version 0 (spec §2.5): tagged fields directly (tag 0
	// ValidatedTopologyEpoch, tag 1 LastAssignmentConfigs), or a plain
	// AssignmentConfigs array before them. Try the first on a copy; fall back.
	rest := r.Rest()
	tr := kbin.NewReader(rest)
	v.readStreamsTags(tr)
	if finish(tr) == nil {
		return v
	}
	*v = StreamsGroupMetadataValue{Epoch: v.Epoch, MetadataHash: v.MetadataHash, ValidatedTopologyEpoch: -1}
	ar := kbin.NewReader(rest)
	v.AssignmentConfigs = compactKeyValues(ar)
	v.readStreamsTags(ar)
	if err := finish(ar); err != nil {
		r.Fail(err)
	}
	return v
}

func (v *StreamsGroupMetadataValue) readStreamsTags(r *kbin.Reader) {
	r.TaggedFields(func(tag uint64, f *kbin.Reader) bool {
		switch tag {
		case 0:
			v.ValidatedTopologyEpoch = f.Int32()
		case 1:
			v.AssignmentConfigs = compactKeyValues(f)
		default:
			return false
		}
		return exact(f)
	})
}

func readStreamsGroupMember(r *kbin.Reader) *StreamsGroupMemberMetadataValue {
	v := &StreamsGroupMemberMetadataValue{}
	v.InstanceId = r.CompactString()
	v.RackId = r.CompactString()
	v.ClientId = r.CompactString()
	v.ClientHost = r.CompactString()
	v.RebalanceTimeoutMs = r.Int32()
	v.TopologyEpoch = r.Int32()
	v.ProcessId = r.CompactString()
	// A nullable struct outside a tagged field: int8 -1 for null, 1 when present.
	switch present := r.Int8(); present {
	case -1:
	case 1:
		e := &Endpoint{Host: r.CompactString(), Port: r.Uint16()}
		skipTags(r)
		v.UserEndpoint = e
	default:
		r.Fail(fmt.Errorf("UserEndpoint presence byte %d: %w", present, ErrCorrupt))
	}
	v.ClientTags = compactKeyValues(r)
	skipTags(r)
	return v
}

func readStreamsGroupTopology(r *kbin.Reader) *StreamsGroupTopologyValue {
	v := &StreamsGroupTopologyValue{Epoch: r.Int32()}
	if n := r.CompactArrayLen(7 + 1); n > 0 {
		v.Subtopologies = make([]Subtopology, n)
		for i := range v.Subtopologies {
			s := &v.Subtopologies[i]
			s.SubtopologyId = r.CompactString()
			s.SourceTopics = compactStrings(r)
			s.SourceTopicRegex = compactStrings(r)
			s.StateChangelogTopics = readTopicInfos(r)
			s.RepartitionSinkTopics = compactStrings(r)
			s.RepartitionSourceTopics = readTopicInfos(r)
			if m := r.CompactArrayLen(3 + 1); m > 0 {
				s.CopartitionGroups = make([]CopartitionGroup, m)
				for j := range s.CopartitionGroups {
					g := &s.CopartitionGroups[j]
					g.SourceTopics = compactInt16s(r)
					g.SourceTopicRegex = compactInt16s(r)
					g.RepartitionSourceTopics = compactInt16s(r)
					skipTags(r)
				}
			}
			skipTags(r)
		}
	}
	skipTags(r)
	return v
}

func readTopicInfos(r *kbin.Reader) []TopicInfo {
	n := r.CompactArrayLen(1 + 4 + 2 + 1 + 1)
	if n <= 0 {
		return nil
	}
	out := make([]TopicInfo, n)
	for i := range out {
		t := &out[i]
		t.Name = r.CompactString()
		t.Partitions = r.Int32()
		t.ReplicationFactor = r.Int16()
		t.TopicConfigs = compactKeyValues(r)
		skipTags(r)
	}
	return out
}

func compactInt16s(r *kbin.Reader) []int16 {
	n := r.CompactArrayLen(2)
	if n <= 0 {
		return nil
	}
	out := make([]int16, n)
	for i := range out {
		out[i] = r.Int16()
	}
	return out
}

// readGroupMetadata reads GroupMetadataValue v0-v4 (v4 is flexible).
func readGroupMetadata(r *kbin.Reader, version int16) *GroupMetadataValue {
	d := classicReader{r: r, flex: version >= 4}
	v := &GroupMetadataValue{CurrentStateTimestamp: -1}
	v.ProtocolType = d.str()
	v.Generation = r.Int32()
	protocol, hasProtocol := d.nullableStr()
	v.Protocol = protocol
	v.Leader, _ = d.nullableStr()
	if version >= 2 {
		v.CurrentStateTimestamp = r.Int64()
	}
	decodeSubs := v.ProtocolType == "consumer" && hasProtocol
	// Smallest member: v0 classic = 3 strings (2 each) + int32 + 2 bytes (4 each).
	if n := d.arrayLen(2*3 + 4 + 4 + 4); n > 0 {
		v.Members = make([]GroupMember, n)
		for i := range v.Members {
			m := &v.Members[i]
			m.MemberId = d.str()
			if version >= 3 {
				m.GroupInstanceId, _ = d.nullableStr()
			}
			m.ClientId = d.str()
			m.ClientHost = d.str()
			m.RebalanceTimeout = -1
			if version >= 1 {
				m.RebalanceTimeout = r.Int32()
			}
			m.SessionTimeout = r.Int32()
			sub := d.bytes()
			d.bytes() // assignment: not needed
			if d.flex {
				skipTags(r)
			}
			if decodeSubs && r.Err() == nil {
				m.Subscription, m.SubscriptionErr = DecodeConsumerProtocolSubscription(sub)
			}
		}
	}
	if d.flex {
		skipTags(r)
	}
	return v
}

// classicReader reads either classic or compact encodings.
type classicReader struct {
	r    *kbin.Reader
	flex bool
}

func (d classicReader) str() string {
	if d.flex {
		return d.r.CompactString()
	}
	return d.r.String()
}

func (d classicReader) nullableStr() (string, bool) {
	if d.flex {
		return d.r.CompactNullableString()
	}
	return d.r.NullableString()
}

func (d classicReader) bytes() []byte {
	if d.flex {
		return d.r.CompactBytes()
	}
	return d.r.Bytes()
}

// arrayLen reads an element count; minClassic is the smallest element in the
// classic encoding (compact elements are taken as at least a third as large).
func (d classicReader) arrayLen(minClassic int) int {
	if d.flex {
		return d.r.CompactArrayLen(max(1, minClassic/3))
	}
	return d.r.ArrayLen(minClassic)
}

// DecodeConsumerProtocolSubscription decodes the subscription bytes of a classic
// consumer (an int16 version, then the non-flexible struct). Versions above 3 are
// read with the version 3 layout; bytes after the last known field are ignored, as
// Kafka clients do. The result does not share memory with b.
func DecodeConsumerProtocolSubscription(b []byte) (*ConsumerProtocolSubscription, error) {
	r := kbin.NewReader(b)
	s := &ConsumerProtocolSubscription{Version: r.Int16(), GenerationId: -1}
	if r.Err() == nil && s.Version < 0 {
		r.Fail(fmt.Errorf("subscription version %d: %w", s.Version, ErrCorrupt))
	}
	if n := r.ArrayLen(2); n > 0 {
		s.Topics = make([]string, n)
		for i := range s.Topics {
			s.Topics[i] = r.String()
		}
	}
	r.Bytes() // UserData
	if s.Version >= 1 {
		if n := r.ArrayLen(2 + 4); n > 0 {
			s.OwnedPartitions = make([]TopicPartitions, n)
			for i := range s.OwnedPartitions {
				p := &s.OwnedPartitions[i]
				p.Topic = r.String()
				if m := r.ArrayLen(4); m > 0 {
					p.Partitions = make([]int32, m)
					for j := range p.Partitions {
						p.Partitions[j] = r.Int32()
					}
				}
			}
		}
	}
	if s.Version >= 2 {
		s.GenerationId = r.Int32()
	}
	if s.Version >= 3 {
		s.RackId, _ = r.NullableString()
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("ConsumerProtocolSubscription v%d: %w", s.Version, err)
	}
	return s, nil
}

// describe gives a short readable form of a value for Record.String.
func describe(v Value) string {
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
	case *StreamsGroupMetadataValue:
		return fmt.Sprintf("epoch=%d metadata_hash=%#016x validated_topology_epoch=%d", v.Epoch, uint64(v.MetadataHash), v.ValidatedTopologyEpoch)
	case *StreamsGroupMemberMetadataValue:
		return fmt.Sprintf("topology_epoch=%d", v.TopologyEpoch)
	case *StreamsGroupTopologyValue:
		return fmt.Sprintf("epoch=%d subtopologies=%d required_topics=%s", v.Epoch, len(v.Subtopologies), list(v.RequiredTopics()))
	case *GroupMetadataValue:
		s := fmt.Sprintf("protocol_type=%q generation=%d protocol=%q members=%d", v.ProtocolType, v.Generation, v.Protocol, len(v.Members))
		for _, m := range v.Members {
			switch {
			case m.SubscriptionErr != nil:
				s += fmt.Sprintf(" [%s: %v]", m.MemberId, m.SubscriptionErr)
			case m.Subscription != nil:
				s += fmt.Sprintf(" [%s: v%d topics=%s]", m.MemberId, m.Subscription.Version, list(m.Subscription.Topics))
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

func list(s []string) string { return "[" + strings.Join(s, " ") + "]" }
