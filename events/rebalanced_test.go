package events_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/eventschema"
)

// goldenRebalanced is the example event of testdata/rebalanced.golden.json.
func goldenRebalanced() events.GroupRebalanced {
	prev := int32(4)
	h := func(v int64) *events.Hash { x := events.Hash(v); return &x }
	return events.GroupRebalanced{
		ClusterID:       clusterID,
		GroupID:         "orders.app",
		GroupType:       events.ConsumerGroup,
		PreviousEpoch:   &prev,
		NewEpoch:        5,
		MetadataHash:    -6148914691236517206,
		ConsumerOffsets: events.OffsetsPosition{Partition: 17, Offset: 9001},
		Causes: []events.RebalanceCause{
			{Kind: events.CauseMemberJoined, MemberID: "MyD1biQITqGvSLd025P4zg", ClientID: "orders-1", ClientHost: "/10.0.0.7",
				RackID: "rack-a", SubscribedTopicNames: []string{"orders", "payments"}},
			{Kind: events.CauseMetadata, PreviousHash: h(6148914691236517205), NewHash: h(-6148914691236517206),
				PredictedBy: &events.Prediction{EventID: "kw1-0123456789abcdef0123456789abcdef", NewHash: -6148914691236517206,
					Time: time.Date(2025, 11, 3, 14, 15, 16, 123000000, time.UTC), LeadTimeMs: 666}},
		},
		Time: time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC),
	}
}

// goldenAssignment is the example event of testdata/rebalanced.assignment.golden.json:
// Kafka 4.3+, two group epoch bumps (5 and 6) folded into target assignment 6.
func goldenAssignment() events.GroupRebalanced {
	ev := goldenRebalanced()
	ev.NewEpoch = 6
	ev.Causes[0].Epoch = 5
	ev.Causes[1].Epoch = 6
	ev.Causes = append(ev.Causes, events.RebalanceCause{Kind: events.CauseMemberLeft, MemberID: "HL2H2fW_SOK_AeluDfj7wQ", Epoch: 6,
		SubscribedTopicNames: []string{"orders"}})
	a, moved := int32(6), 3
	ev.AssignmentEpoch, ev.EpochBumps, ev.PartitionsMoved = &a, []int32{5, 6}, &moved
	ev.AssignmentTime = time.Date(2025, 11, 3, 14, 15, 16, 700000000, time.UTC)
	ev.MovedPartitions = []events.MovedPartitions{{Topic: "orders", TopicID: "HV4bRRPZSuO20av5MPbNXw", Partitions: []int32{1, 2}},
		{Topic: "payments", TopicID: "5-ShnHPkQSukTgG_z4f6Vg", Partitions: []int32{0}}}
	return ev
}

func rebalancedBody(t testing.TB, ev events.GroupRebalanced) []byte { return indented(t, ev.Wrap) }

// TestRebalancedGolden pins the wire form of the rebalanced event, checks it against its
// schema and decodes it back. Regenerate with: go test ./events -run TestRebalancedGolden -rewrite
func TestRebalancedGolden(t *testing.T) {
	for file, ev := range map[string]events.GroupRebalanced{"rebalanced.golden.json": goldenRebalanced(),
		"rebalanced.assignment.golden.json": goldenAssignment()} {
		body := rebalancedBody(t, ev)
		checkGolden(t, file, body)
		if err := checkRebalancedSchema(t, body); err != nil {
			t.Fatalf("%s does not satisfy the schema: %v", file, err)
		}
		env, err := events.DecodeGroupRebalanced(body)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(env.Data, ev) {
			t.Errorf("%s decoded\n%+v\nwant\n%+v", file, env.Data, ev)
		}
	}
	got := rebalancedBody(t, goldenRebalanced())
	any, err := events.Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := any.Data.(*events.GroupRebalanced); !ok {
		t.Fatalf("events.Decode gave %T", any.Data)
	}
	if _, err := events.DecodeRebalanceNeeded(got); err == nil {
		t.Fatal("a rebalanced event decoded as a rebalance-needed event")
	}
}

// TestRebalancedSchemaRejects: each case breaks one rule of the golden event; the schema
// and the decoder both refuse it. Members neither knows are accepted by both (a later v1
// kraftwatch's), except in consumer_offsets; the strict schema refuses them all.
func TestRebalancedSchemaRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, rebalancedBody(t, goldenRebalanced())); err != nil {
		t.Fatal(err)
	}
	valid := buf.String()
	for _, tc := range []struct {
		name, old, new string
		open           bool // accepted as published, refused when strict
	}{
		{name: "no causes", old: valid[strings.Index(valid, `"causes":[`) : len(valid)-2], new: `"causes":[]`},
		{name: "unknown cause", old: `"kind":"member_joined"`, new: `"kind":"moved"`},
		{name: "joined without member", old: `"member_id":"MyD1biQITqGvSLd025P4zg",`},
		{name: "metadata without new hash", old: `,"new_hash":"-6148914691236517206","predicted_by"`, new: `,"predicted_by"`},
		{name: "negative epoch", old: `"new_epoch":5`, new: `"new_epoch":-1`},
		{name: "null epoch", old: `"new_epoch":5`, new: `"new_epoch":null`},
		{name: "hash as number", old: `"metadata_hash":"-6148914691236517206"`, new: `"metadata_hash":-6148914691236517206`},
		{name: "hash with plus", old: `"metadata_hash":"-6148914691236517206"`, new: `"metadata_hash":"+6148914691236517206"`},
		{name: "bad id", old: `"id":"kwr1-`, new: `"id":"kw1-`},
		{name: "wrong type", old: `rebalanced.v1"`, new: `rebalanced.v2"`},
		{name: "bad prediction id", old: `"event_id":"kw1-`, new: `"event_id":"kwr1-`},
		{name: "no position", old: `"consumer_offsets":{"partition":17,"offset":9001},`},
		{name: "null topic name", old: `"orders","payments"`, new: `"orders",null`},
		{name: "topic names a string", old: `["orders","payments"]`, new: `"orders"`},
		{name: "extra data member", old: `"cluster_id"`, new: `"colour":"red","cluster_id"`, open: true},
		{name: "extra cause member", old: `"kind":"member_joined"`, new: `"colour":"red","kind":"member_joined"`, open: true},
		{name: "extra prediction member", old: `"lead_time_ms":666`, new: `"lead_time_ms":666,"colour":"red"`, open: true},
		{name: "extra consumer_offsets member", old: `"partition":17`, new: `"leader_epoch":3,"partition":17`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("golden event lacks %s", tc.old)
			}
			bad := []byte(strings.Replace(valid, tc.old, tc.new, 1))
			if err := eventschema.Validate(rebalancedSchema(t), bad); (err == nil) != tc.open {
				t.Errorf("schema: %v, want accepted=%v\n%s", err, tc.open, bad)
			}
			if err := checkRebalancedSchema(t, bad); err == nil {
				t.Errorf("strict schema accepted\n%s", bad)
			}
			if _, err := events.DecodeGroupRebalanced(bad); (err == nil) != tc.open {
				t.Errorf("decoder: %v, want accepted=%v\n%s", err, tc.open, bad)
			}
		})
	}
}

// TestFitMovedPartitions: the moved partitions are cut where their JSON passes the bound,
// as a rebalance-needed event's topics are.
func TestFitMovedPartitions(t *testing.T) {
	ms := make([]events.MovedPartitions, 3000)
	for i := range ms {
		ms[i] = events.MovedPartitions{Topic: strings.Repeat("t", 30), TopicID: "HV4bRRPZSuO20av5MPbNXw", Partitions: []int32{0, 1, 2, 3}}
	}
	got, cut := events.FitMovedPartitions(ms, events.MaxTopicsBytes)
	if !cut || len(got) == 0 || len(got) >= len(ms) {
		t.Fatalf("kept %d of %d, cut %v", len(got), len(ms), cut)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > events.MaxTopicsBytes {
		t.Errorf("%d bytes kept, more than %d", len(b), events.MaxTopicsBytes)
	}
	if got, cut := events.FitMovedPartitions(ms[:10], events.MaxTopicsBytes); cut || len(got) != 10 {
		t.Errorf("10 topics: kept %d, cut %v", len(got), cut)
	}
}
