package groups_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
)

// h decodes hex written with spaces and '|' separators.
func h(parts ...string) []byte {
	s := strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(strings.Join(parts, ""))
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// s16 is the hex of a classic string: int16 length, then the bytes.
func s16(s string) string { return fmt.Sprintf("%04x%x", len(s), s) }

// cs is the hex of a compact string shorter than 127 bytes: uvarint(len+1), bytes.
func cs(s string) string { return fmt.Sprintf("%02x%x", len(s)+1, s) }

// Subscription bytes of a classic consumer at each version, topics "a" and "b".
var (
	subV0 = h("0000", "00000002", s16("a"), s16("b"), "ffffffff")
	subV1 = h("0001", "00000002", s16("a"), s16("b"), "ffffffff",
		"00000001", s16("a"), "00000002 00000000 00000001")
	subV2 = h("0002", "00000001", s16("a"), "00000003 616263", "00000000", "00000007")
	subV3 = h("0003", "00000001", s16("a"), "ffffffff", "00000000", "00000007", s16("r1"))
	// A future version 9 with an unknown trailing field.
	subV9 = h("0009", "00000001", s16("a"), "ffffffff", "00000000", "00000007", "ffff", "deadbeef")
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name  string
		key   []byte
		value []byte
		want  groups.Record
		// canonical: groupstest.Encode of want gives exactly key and value.
		canonical bool
	}{
		{
			name:  "ConsumerGroupMetadata with MetadataHash (docs/consumer-offsets.md#consumergroupmetadatavalue-3)",
			key:   h("0003", s16("my-group")),
			value: h("0000 | 00000005 | 01 00 08 bb141cecc1725893"),
			want: groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "my-group", Version: 0,
				Value: &groups.ConsumerGroupMetadataValue{Epoch: 5, MetadataHash: -4966312685899458413, CreationTimeMs: -1}},
			canonical: true,
		},
		{
			name:  "ConsumerGroupMetadata as 4.0 wrote it (no tags)",
			key:   h("0003", s16("my-group")),
			value: h("0000 00000005 00"),
			want: groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "my-group", Version: 0,
				Value: &groups.ConsumerGroupMetadataValue{Epoch: 5, CreationTimeMs: -1}},
			canonical: true,
		},
		{
			name:  "ConsumerGroupMetadata with CreationTimeMs and an unknown tag",
			key:   h("0003", s16("g")),
			value: h("0000 00000007 03 | 00 08 0000000000000001 | 01 08 0000019000000000 | 07 02 abcd"),
			want: groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "g", Version: 0,
				Value: &groups.ConsumerGroupMetadataValue{Epoch: 7, MetadataHash: 1, CreationTimeMs: 0x19000000000}},
		},
		{
			name: "ConsumerGroupMemberMetadata by names",
			key:  h("0005", s16("g"), s16("m1")),
			value: h("0000", "00", "00", cs("client"), cs("/10.0.0.1"),
				"03", cs("bar"), cs("foo"), "01", "0000ea60", cs("uniform"), "01 00 01 00"),
			want: groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: "m1", Version: 0,
				Value: &groups.ConsumerGroupMemberMetadataValue{ClientID: "client", ClientHost: "/10.0.0.1",
					SubscribedTopicNames: []string{"bar", "foo"}, RebalanceTimeoutMs: 60000, ServerAssignor: "uniform"}},
			canonical: true,
		},
		{
			name: "ConsumerGroupMemberMetadata by regex, classic member",
			key:  h("0005", s16("g"), s16("m2")),
			value: h("0000", cs("inst"), cs("rack-a"), cs("c"), cs("h"),
				"01", cs("orders\\..*"), "ffffffff", "00",
				"01 00 12 | 01 | 00002710 | 02", cs("range"), "04 010203", "00 | 00"),
			want: groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: "m2", Version: 0,
				Value: &groups.ConsumerGroupMemberMetadataValue{InstanceID: "inst", RackID: "rack-a", ClientID: "c", ClientHost: "h",
					SubscribedTopicNames: nil, SubscribedTopicRegex: `orders\..*`, RebalanceTimeoutMs: -1,
					ClassicMemberMetadata: &groups.ClassicMemberMetadata{SessionTimeoutMs: 10000,
						SupportedProtocols: []groups.ClassicProtocol{{Name: "range", Metadata: []byte{1, 2, 3}}}}}},
			canonical: true,
		},
		{
			name: "ConsumerGroupMemberMetadata without tag 0 (not what Kafka writes, still valid)",
			key:  h("0005", s16("g"), s16("m1")),
			value: h("0000", "00", "00", cs("client"), cs("/10.0.0.1"),
				"02", cs("foo"), "00", "0000ea60", "00", "00"),
			want: groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: "m1", Version: 0,
				Value: &groups.ConsumerGroupMemberMetadataValue{ClientID: "client", ClientHost: "/10.0.0.1",
					SubscribedTopicNames: []string{"foo"}, RebalanceTimeoutMs: 60000}},
		},
		{
			name:  "ConsumerGroupRegularExpression",
			key:   h("0010", s16("g"), s16("orders\\..*")),
			value: h("0000", "03", cs("orders.eu"), cs("orders.us"), "000000000000002a", "0000019000000001", "00"),
			want: groups.Record{Type: groups.ConsumerGroupRegularExpression, GroupID: "g", Regex: `orders\..*`, Version: 0,
				Value: &groups.ConsumerGroupRegularExpressionValue{Topics: []string{"orders.eu", "orders.us"}, Version: 42, Timestamp: 0x19000000001}},
			canonical: true,
		},
		{
			name: "ConsumerGroupPartitionMetadata (4.0)",
			key:  h("0004", s16("g")),
			value: h("0000", "02", "0123456789abcdef fedcba9876543210", cs("foo"), "00000003",
				"02 00000000 03", cs("r1"), cs("r2"), "00", "00", "00"),
			want: groups.Record{Type: groups.ConsumerGroupPartitionMetadata, GroupID: "g", Version: 0,
				Value: &groups.ConsumerGroupPartitionMetadataValue{Topics: []groups.TopicMetadata{{
					TopicID:   groups.UUID(h("0123456789abcdef fedcba9876543210")),
					TopicName: "foo", NumPartitions: 3,
					PartitionMetadata: []groups.PartitionMetadata{{Partition: 0, Racks: []string{"r1", "r2"}}}}}}},
			canonical: true,
		},
		{
			name:  "ShareGroupPartitionMetadata (4.0)",
			key:   h("0009", s16("sg")),
			value: h("0000", "02", "00000000000000000000000000000001", cs("t"), "00000001", "01", "00", "00"),
			want: groups.Record{Type: groups.ShareGroupPartitionMetadata, GroupID: "sg", Version: 0,
				Value: &groups.ShareGroupPartitionMetadataValue{Topics: []groups.TopicMetadata{{
					TopicID: groups.UUID(h("00000000000000000000000000000001")), TopicName: "t", NumPartitions: 1}}}},
		},
		{
			name:  "ShareGroupMetadata 4.1+ (plain MetadataHash)",
			key:   h("000b", s16("sg")),
			value: h("0000 00000003 cd53200662bd02cc 00"),
			want: groups.Record{Type: groups.ShareGroupMetadata, GroupID: "sg", Version: 0,
				Value: &groups.ShareGroupMetadataValue{Epoch: 3, MetadataHash: -3651539661068893492}},
			canonical: true,
		},
		{
			name:  "ShareGroupMetadata 4.0 (epoch only)",
			key:   h("000b", s16("sg")),
			value: h("0000 00000003 00"),
			want: groups.Record{Type: groups.ShareGroupMetadata, GroupID: "sg", Version: 0,
				Value: &groups.ShareGroupMetadataValue{Epoch: 3}},
		},
		{
			name:  "ShareGroupMemberMetadata",
			key:   h("000a", s16("sg"), s16("m")),
			value: h("0000", "00", cs("c"), cs("h"), "02", cs("t"), "00"),
			want: groups.Record{Type: groups.ShareGroupMemberMetadata, GroupID: "sg", MemberID: "m", Version: 0,
				Value: &groups.ShareGroupMemberMetadataValue{ClientID: "c", ClientHost: "h", SubscribedTopicNames: []string{"t"}}},
			canonical: true,
		},
		{
			name:  "StreamsGroupMetadata, tagged layout",
			key:   h("0011", s16("app")),
			value: h("0000 00000002 0000000000000063 02 | 00 04 00000001 | 01 06 02", cs("k"), cs("v"), "00"),
			want: groups.Record{Type: groups.StreamsGroupMetadata, GroupID: "app", Version: 0,
				Value: &groups.StreamsGroupMetadataValue{Epoch: 2, MetadataHash: 99, ValidatedTopologyEpoch: 1,
					AssignmentConfigs:              []groups.KeyValue{{Key: "k", Value: "v"}},
					StoredDescriptionTopologyEpoch: -1, FailedDescriptionTopologyEpoch: -1}},
			canonical: true,
		},
		{
			name:  "StreamsGroupMetadata, plain AssignmentConfigs layout",
			key:   h("0011", s16("app")),
			value: h("0000 00000002 0000000000000063 02", cs("k"), cs("v"), "00 | 01 00 04 00000001"),
			want: groups.Record{Type: groups.StreamsGroupMetadata, GroupID: "app", Version: 0,
				Value: &groups.StreamsGroupMetadataValue{Epoch: 2, MetadataHash: 99, ValidatedTopologyEpoch: 1,
					AssignmentConfigs:              []groups.KeyValue{{Key: "k", Value: "v"}},
					StoredDescriptionTopologyEpoch: -1, FailedDescriptionTopologyEpoch: -1}},
		},
		{
			name:  "StreamsGroupMetadata, no configs",
			key:   h("0011", s16("app")),
			value: h("0000 00000002 0000000000000000 00"),
			want: groups.Record{Type: groups.StreamsGroupMetadata, GroupID: "app", Version: 0,
				Value: &groups.StreamsGroupMetadataValue{Epoch: 2, ValidatedTopologyEpoch: -1,
					StoredDescriptionTopologyEpoch: -1, FailedDescriptionTopologyEpoch: -1}},
			canonical: true,
		},
		{
			name:  "StreamsGroupMetadata, Kafka 4.4 tags 2 and 3 (KIP-1331)",
			key:   h("0011", s16("app")),
			value: h("0000 00000003 0000000000000063 03 | 00 04 00000001 | 02 04 00000001 | 03 04 ffffffff"),
			want: groups.Record{Type: groups.StreamsGroupMetadata, GroupID: "app", Version: 0,
				Value: &groups.StreamsGroupMetadataValue{Epoch: 3, MetadataHash: 99, ValidatedTopologyEpoch: 1,
					StoredDescriptionTopologyEpoch: 1, FailedDescriptionTopologyEpoch: -1}},
		},
		{
			name: "StreamsGroupMemberMetadata with endpoint",
			key:  h("0013", s16("app"), s16("m")),
			value: h("0000", "00 00", cs("c"), cs("h"), "0000ea60 00000001", cs("p1"),
				"01", cs("host"), "1f90 00", "02", cs("zone"), cs("a"), "00", "00"),
			want: groups.Record{Type: groups.StreamsGroupMemberMetadata, GroupID: "app", MemberID: "m", Version: 0,
				Value: &groups.StreamsGroupMemberMetadataValue{ClientID: "c", ClientHost: "h", RebalanceTimeoutMs: 60000,
					TopologyEpoch: 1, ProcessID: "p1", UserEndpoint: &groups.Endpoint{Host: "host", Port: 8080},
					ClientTags: []groups.KeyValue{{Key: "zone", Value: "a"}}}},
			canonical: true,
		},
		{
			name:  "StreamsGroupMemberMetadata without endpoint",
			key:   h("0013", s16("app"), s16("m")),
			value: h("0000", "00 00", cs("c"), cs("h"), "ffffffff 00000000", cs("p1"), "ff", "01", "00"),
			want: groups.Record{Type: groups.StreamsGroupMemberMetadata, GroupID: "app", MemberID: "m", Version: 0,
				Value: &groups.StreamsGroupMemberMetadataValue{ClientID: "c", ClientHost: "h", RebalanceTimeoutMs: -1, ProcessID: "p1"}},
		},
		{
			name: "StreamsGroupTopology",
			key:  h("0017", s16("app")),
			value: h("0000 00000001 03",
				// subtopology "0": reads "in", writes repartition "app-rep"
				cs("0"), "02", cs("in"), "01", "02", cs("app-store-changelog"), "00000000 0000 01 00", "02", cs("app-rep"), "01", "01", "00",
				// subtopology "1": reads regex "x.*" and repartition "app-rep"
				cs("1"), "01", "02", cs("x.*"), "01", "01", "02", cs("app-rep"), "00000004 0003 02", cs("cleanup.policy"), cs("delete"), "00 00",
				"02 | 01 02 0000 01 00 | 00",
				"00"),
			want: groups.Record{Type: groups.StreamsGroupTopology, GroupID: "app", Version: 0,
				Value: &groups.StreamsGroupTopologyValue{Epoch: 1, Subtopologies: []groups.Subtopology{
					{SubtopologyID: "0", SourceTopics: []string{"in"}, StateChangelogTopics: []groups.TopicInfo{{Name: "app-store-changelog"}},
						RepartitionSinkTopics: []string{"app-rep"}},
					{SubtopologyID: "1", SourceTopicRegex: []string{"x.*"},
						RepartitionSourceTopics: []groups.TopicInfo{{Name: "app-rep", Partitions: 4, ReplicationFactor: 3,
							TopicConfigs: []groups.KeyValue{{Key: "cleanup.policy", Value: "delete"}}}},
						CopartitionGroups: []groups.CopartitionGroup{{SourceTopicRegex: []int16{0}}}},
				}}},
			canonical: true,
		},
		{
			name: "GroupMetadata v0, consumer subscription v0",
			key:  h("0002", s16("cg")),
			value: h("0000", s16("consumer"), "00000001", s16("range"), s16("m1"), "00000001",
				s16("m1"), s16("cli"), s16("/h"), "00002710", fmt.Sprintf("%08x", len(subV0)), hex.EncodeToString(subV0), "00000000"),
			want: groups.Record{Type: groups.GroupMetadata, GroupID: "cg", Version: 0,
				Value: &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 1, Protocol: "range", Leader: "m1", CurrentStateTimestamp: -1,
					Members: []groups.GroupMember{{MemberID: "m1", ClientID: "cli", ClientHost: "/h", RebalanceTimeout: -1, SessionTimeout: 10000,
						Subscription: &groups.ConsumerProtocolSubscription{Version: 0, Topics: []string{"a", "b"}, GenerationID: -1}}}}},
		},
		{
			name: "GroupMetadata v1, consumer subscription v1",
			key:  h("0002", s16("cg")),
			value: h("0001", s16("consumer"), "00000002", s16("range"), s16("m1"), "00000001",
				s16("m1"), s16("cli"), s16("/h"), "0000ea60 00002710", fmt.Sprintf("%08x", len(subV1)), hex.EncodeToString(subV1), "00000000"),
			want: groups.Record{Type: groups.GroupMetadata, GroupID: "cg", Version: 1,
				Value: &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 2, Protocol: "range", Leader: "m1", CurrentStateTimestamp: -1,
					Members: []groups.GroupMember{{MemberID: "m1", ClientID: "cli", ClientHost: "/h", RebalanceTimeout: 60000, SessionTimeout: 10000,
						Subscription: &groups.ConsumerProtocolSubscription{Version: 1, Topics: []string{"a", "b"}, GenerationID: -1,
							OwnedPartitions: []groups.TopicPartitions{{Topic: "a", Partitions: []int32{0, 1}}}}}}}},
		},
		{
			name: "GroupMetadata v2, consumer subscription v2",
			key:  h("0002", s16("cg")),
			value: h("0002", s16("consumer"), "00000003", s16("range"), s16("m1"), "0000019000000000", "00000001",
				s16("m1"), s16("cli"), s16("/h"), "0000ea60 00002710", fmt.Sprintf("%08x", len(subV2)), hex.EncodeToString(subV2), "00000003 010203"),
			want: groups.Record{Type: groups.GroupMetadata, GroupID: "cg", Version: 2,
				Value: &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 3, Protocol: "range", Leader: "m1", CurrentStateTimestamp: 0x19000000000,
					Members: []groups.GroupMember{{MemberID: "m1", ClientID: "cli", ClientHost: "/h", RebalanceTimeout: 60000, SessionTimeout: 10000,
						Subscription: &groups.ConsumerProtocolSubscription{Version: 2, Topics: []string{"a"}, GenerationID: 7}}}}},
		},
		{
			name: "GroupMetadata v3, consumer subscription v3, static member",
			key:  h("0002", s16("cg")),
			value: h("0003", s16("consumer"), "00000004", s16("cooperative-sticky"), s16("m1"), "0000019000000000", "00000001",
				s16("m1"), s16("i1"), s16("cli"), s16("/h"), "0000ea60 00002710", fmt.Sprintf("%08x", len(subV3)), hex.EncodeToString(subV3), "00000000"),
			want: groups.Record{Type: groups.GroupMetadata, GroupID: "cg", Version: 3,
				Value: &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 4, Protocol: "cooperative-sticky", Leader: "m1", CurrentStateTimestamp: 0x19000000000,
					Members: []groups.GroupMember{{MemberID: "m1", GroupInstanceID: "i1", ClientID: "cli", ClientHost: "/h", RebalanceTimeout: 60000, SessionTimeout: 10000,
						Subscription: &groups.ConsumerProtocolSubscription{Version: 3, Topics: []string{"a"}, GenerationID: 7, RackID: "r1"}}}}},
		},
		{
			name: "GroupMetadata v4 (flexible), subscription v9 read as v3",
			key:  h("0002", s16("cg")),
			value: h("0004", cs("consumer"), "00000005", cs("range"), cs("m1"), "0000019000000000", "02",
				cs("m1"), "00", cs("cli"), cs("/h"), "0000ea60 00002710", fmt.Sprintf("%02x", len(subV9)+1), hex.EncodeToString(subV9), "01", "00", "00"),
			want: groups.Record{Type: groups.GroupMetadata, GroupID: "cg", Version: 4,
				Value: &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 5, Protocol: "range", Leader: "m1", CurrentStateTimestamp: 0x19000000000,
					Members: []groups.GroupMember{{MemberID: "m1", ClientID: "cli", ClientHost: "/h", RebalanceTimeout: 60000, SessionTimeout: 10000,
						Subscription: &groups.ConsumerProtocolSubscription{Version: 9, Topics: []string{"a"}, GenerationID: 7}}}}},
		},
		{
			name:  "GroupMetadata v3, empty group",
			key:   h("0002", s16("cg")),
			value: h("0003", s16(""), "00000000", "ffff", "ffff", "ffffffffffffffff", "00000000"),
			want: groups.Record{Type: groups.GroupMetadata, GroupID: "cg", Version: 3,
				Value: &groups.GroupMetadataValue{CurrentStateTimestamp: -1}},
			canonical: true,
		},
		{
			name: "GroupMetadata v3, connect group: subscription not decoded",
			key:  h("0002", s16("connect-x")),
			value: h("0003", s16("connect"), "00000001", s16("sessioned"), s16("m1"), "0000000000000000", "00000001",
				s16("m1"), "ffff", s16("cli"), s16("/h"), "0000ea60 00002710", "00000002 abcd", "00000000"),
			want: groups.Record{Type: groups.GroupMetadata, GroupID: "connect-x", Version: 3,
				Value: &groups.GroupMetadataValue{ProtocolType: "connect", Generation: 1, Protocol: "sessioned", Leader: "m1",
					Members: []groups.GroupMember{{MemberID: "m1", ClientID: "cli", ClientHost: "/h", RebalanceTimeout: 60000, SessionTimeout: 10000}}}},
		},
		{
			name:  "OffsetCommit is skipped without decoding its value",
			key:   groupstest.OffsetCommitKey("g", "t", 0),
			value: h("7fff garbage"[:4]),
			want:  groups.Record{Type: groups.OffsetCommit, Version: -1},
		},
		{
			name:  "LegacyOffsetCommit is skipped",
			key:   h("0000 ff"),
			value: h("0000"),
			want:  groups.Record{Type: groups.LegacyOffsetCommit, Version: -1},
		},
		{
			name: "OffsetCommit tombstone",
			key:  groupstest.OffsetCommitKey("g", "t", 0),
			want: groups.Record{Type: groups.OffsetCommit, Version: -1, Tombstone: true},
		},
		{
			name:      "member tombstone",
			key:       h("0005", s16("g"), s16("m1")),
			want:      groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: "m1", Version: -1, Tombstone: true},
			canonical: true,
		},
		{
			name:  "empty value is a tombstone",
			key:   h("0003", s16("g")),
			value: []byte{},
			want:  groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "g", Version: -1, Tombstone: true},
		},
		{
			// StreamsGroupTargetAssignmentMemberValue v0: active [{"0", [0, 1]}], no standby
			// or warmup tasks.
			name:  "streams target assignment member",
			key:   h("0015", s16("g"), s16("m1")),
			value: h("0000 02 0230 03 00000000 00000001 00 01 01 00"),
			want: groups.Record{Type: groups.StreamsGroupTargetAssignmentMember, GroupID: "g", MemberID: "m1", Version: 0,
				Value: &groups.StreamsGroupTargetAssignmentMemberValue{ActiveTasks: []groups.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0, 1}}}}},
		},
		{
			// ShareGroupStatePartitionMetadataValue v0: initializing t (id 01..) 0, 1;
			// nothing initialized; deleting u (id 02..).
			name:  "share state partition metadata",
			key:   h("000f", s16("g")),
			value: h("0000 02", "01000000000000000000000000000000", "0274 03 00000000 00000001 00", "01 02", "02000000000000000000000000000000", "0275 00 00"),
			want: groups.Record{Type: groups.ShareGroupStatePartitionMetadata, GroupID: "g", Version: 0,
				Value: &groups.ShareGroupStatePartitionMetadataValue{
					InitializingTopics: []groups.TopicPartitionsInfo{{TopicID: groups.UUID{1}, TopicName: "t", Partitions: []int32{0, 1}}},
					DeletingTopics:     []groups.TopicPartitionsInfo{{TopicID: groups.UUID{2}, TopicName: "u"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := groups.Decode(tt.key, tt.value)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Decode:\n got %+v\nwant %+v\n got value %+v\nwant value %+v", got, tt.want, got.Value, tt.want.Value)
			}
			if got.String() == "" {
				t.Fatal("empty String")
			}
			if !tt.canonical {
				return
			}
			k, v, err := groupstest.Encode(&tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(k, tt.key) || !bytes.Equal(v, tt.value) {
				t.Fatalf("groupstest.Encode differs from the hand-built bytes:\nkey   %x\nwant  %x\nvalue %x\nwant  %x", k, tt.key, v, tt.value)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name       string
		key, value []byte
		wantErr    error
		wantType   groups.RecordType
		wantVer    int16
		wantPart   groups.Part
	}{
		{"key too short", h("00"), h("0000"), groups.ErrTruncated, groups.UnknownRecordType, -1, groups.PartKey},
		{"unknown record type", h("0063", s16("g")), h("0000"), groups.ErrUnknownRecordType, 99, -1, groups.PartKey},
		{"negative record type", h("ffff", s16("g")), h("0000"), groups.ErrUnknownRecordType, -1, -1, groups.PartKey},
		{"key string past end", h("0003 0009 6162"), h("0000 00000001 00"), groups.ErrTruncated, groups.ConsumerGroupMetadata, -1, groups.PartKey},
		{"bytes after key struct", h("0003", s16("g"), "00"), h("0000 00000001 00"), groups.ErrCorrupt, groups.ConsumerGroupMetadata, -1, groups.PartKey},
		{"member key without member", h("0005", s16("g")), h("0000"), groups.ErrTruncated, groups.ConsumerGroupMemberMetadata, -1, groups.PartKey},
		{"value of one byte", h("0003", s16("g")), h("00"), groups.ErrTruncated, groups.ConsumerGroupMetadata, -1, groups.PartValue},
		{"unknown value version", h("0003", s16("g")), h("0001 00000001 00"), groups.ErrUnknownVersion, groups.ConsumerGroupMetadata, 1, groups.PartValue},
		{"ShareGroupStatePartitionMetadata v1", h("000f", s16("g")), h("0001 01 01 01 00"), groups.ErrUnknownVersion, groups.ShareGroupStatePartitionMetadata, 1, groups.PartValue},
		{"negative value version", h("0005", s16("g"), s16("m")), h("ffff 00"), groups.ErrUnknownVersion, groups.ConsumerGroupMemberMetadata, -1, groups.PartValue},
		{"GroupMetadata v5", h("0002", s16("g")), h("0005"), groups.ErrUnknownVersion, groups.GroupMetadata, 5, groups.PartValue},
		{"value truncated", h("0003", s16("g")), h("0000 000000"), groups.ErrTruncated, groups.ConsumerGroupMetadata, 0, groups.PartValue},
		{"missing tagged section", h("0003", s16("g")), h("0000 00000001"), groups.ErrTruncated, groups.ConsumerGroupMetadata, 0, groups.PartValue},
		{"trailing bytes", h("0003", s16("g")), h("0000 00000001 00 00"), groups.ErrCorrupt, groups.ConsumerGroupMetadata, 0, groups.PartValue},
		{"tagged hash of 4 bytes", h("0003", s16("g")), h("0000 00000001 01 00 04 00000001"), groups.ErrTruncated, groups.ConsumerGroupMetadata, 0, groups.PartValue},
		{"tagged hash of 9 bytes", h("0003", s16("g")), h("0000 00000001 01 00 09 000000000000000100"), groups.ErrCorrupt, groups.ConsumerGroupMetadata, 0, groups.PartValue},
		{"huge array count", h("0005", s16("g"), s16("m")), h("0000 00 00 01 01 ffffffff07"), groups.ErrLimit, groups.ConsumerGroupMemberMetadata, 0, groups.PartValue},
		{"bad ClassicMemberMetadata presence", h("0005", s16("g"), s16("m")), h("0000 00 00 01 01 01 00 ffffffff 00 01 00 01 02"), groups.ErrCorrupt, groups.ConsumerGroupMemberMetadata, 0, groups.PartValue},
		{"bad endpoint presence byte", h("0013", s16("a"), s16("m")), h("0000 00 00 01 01 00000000 00000000 01 05 01 00"), groups.ErrCorrupt, groups.StreamsGroupMemberMetadata, 0, groups.PartValue},
		{"classic member count past end", h("0002", s16("g")), h("0000", s16("consumer"), "00000001 ffff ffff 7fffffff"), groups.ErrLimit, groups.GroupMetadata, 0, groups.PartValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := groups.Decode(tt.key, tt.value)
			if err == nil {
				t.Fatalf("Decode succeeded: %v", rec.String())
			}
			var de *groups.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v is not a *DecodeError", err, err)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v does not wrap %v", err, tt.wantErr)
			}
			if de.RecordType != tt.wantType || de.Version != tt.wantVer || de.Part != tt.wantPart {
				t.Errorf("DecodeError{%v, %d, %v}, want {%v, %d, %v}", de.RecordType, de.Version, de.Part, tt.wantType, tt.wantVer, tt.wantPart)
			}
			if rec.Value != nil {
				t.Errorf("failed Decode returned a value: %+v", rec.Value)
			}
		})
	}
}

// A classic member whose subscription does not parse keeps the record decodable:
// the member carries the error, as Kafka treats the group's topics as unknown.
func TestDecodeBadClassicSubscription(t *testing.T) {
	key := h("0002", s16("cg"))
	value := h("0003", s16("consumer"), "00000001", s16("range"), s16("m1"), "0000000000000000", "00000001",
		s16("m1"), "ffff", s16("c"), s16("h"), "00000000 00000000", "00000004 00000000", "00000000")
	rec, err := groups.Decode(key, value)
	if err != nil {
		t.Fatal(err)
	}
	m := rec.Value.(*groups.GroupMetadataValue).Members[0]
	if m.Subscription != nil || !errors.Is(m.SubscriptionErr, groups.ErrTruncated) {
		t.Fatalf("member = %+v, want a truncated subscription error", m)
	}
}

func TestRecordTypeNames(t *testing.T) {
	for rt := groups.RecordType(0); rt <= 24; rt++ {
		if !rt.Known() || strings.HasPrefix(rt.String(), "RecordType(") {
			t.Errorf("type %d has no name", rt)
		}
	}
	if got := groups.RecordType(25).String(); got != "RecordType(25)" {
		t.Errorf("String of 25 = %q", got)
	}
	if got := groups.StreamsGroupTopology.GroupType(); got != events.StreamsGroup {
		t.Errorf("events.GroupType = %v", got)
	}
	for _, gt := range []events.GroupType{events.UnknownGroup, events.ClassicGroup, events.ConsumerGroup, events.ShareGroup, events.StreamsGroup} {
		if gt.String() == "" {
			t.Errorf("events.GroupType %d has no name", gt)
		}
	}
}

func TestRequiredTopics(t *testing.T) {
	v := &groups.StreamsGroupTopologyValue{Subtopologies: []groups.Subtopology{
		{SourceTopics: []string{"in", "b"}, SourceTopicRegex: []string{"x.*"}, RepartitionSinkTopics: []string{"rep"},
			StateChangelogTopics: []groups.TopicInfo{{Name: "chg"}}},
		{SourceTopics: []string{"b"}, RepartitionSourceTopics: []groups.TopicInfo{{Name: "rep"}}},
	}}
	got := v.RequiredTopics()
	want := []string{"b", "chg", "in", "rep"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RequiredTopics = %q, want %q", got, want)
	}
}

// TestDecodeUnknownTag: a tagged field this package does not know (a newer Kafka's) is
// skipped whole, the rest of the record decodes as without it, and the decoder counts
// it and names its kind once. The value is 4.3.1's ConsumerGroupMetadata of
// testdata/kafka-4.3.1/rebalances-offsets.txt (offset 1) with a tag 7 added.
func TestDecodeUnknownTag(t *testing.T) {
	d := groups.NewDecoder()
	key := h("0003", s16("g-rb"))
	want := &groups.ConsumerGroupMetadataValue{Epoch: 2, MetadataHash: 0x44d9e11c663e445c}
	for i, tc := range []struct {
		value string
		total uint64
		fresh []groups.UnknownTag
	}{
		{"0000 00000002 01 00 08 44d9e11c663e445c", 0, nil},
		{"0000 00000002 02 00 08 44d9e11c663e445c 07 01 ff", 1, []groups.UnknownTag{{Type: groups.ConsumerGroupMetadata, Tag: 7}}},
		{"0000 00000002 02 00 08 44d9e11c663e445c 07 02 ffff", 2, nil},
	} {
		rec, err := d.Decode(key, h(tc.value))
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if v, ok := rec.Value.(*groups.ConsumerGroupMetadataValue); !ok || v.Epoch != want.Epoch || v.MetadataHash != want.MetadataHash {
			t.Fatalf("%d: decoded %+v, want %+v", i, rec.Value, want)
		}
		if total, fresh := d.UnknownTags(); total != tc.total || !slices.Equal(fresh, tc.fresh) {
			t.Errorf("%d: %d unknown tags, new kinds %v; want %d, %v", i, total, fresh, tc.total, tc.fresh)
		}
	}
}
