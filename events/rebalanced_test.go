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

func rebalancedBody(t testing.TB, ev events.GroupRebalanced) []byte { return indented(t, ev.Wrap) }

// TestRebalancedGolden pins the wire form of the rebalanced event, checks it against its
// schema and decodes it back. Regenerate with: go test ./events -run TestRebalancedGolden -rewrite
func TestRebalancedGolden(t *testing.T) {
	got := rebalancedBody(t, goldenRebalanced())
	checkGolden(t, "rebalanced.golden.json", got)
	if err := checkRebalancedSchema(t, got); err != nil {
		t.Fatalf("golden event does not satisfy the schema: %v", err)
	}
	env, err := events.DecodeGroupRebalanced(got)
	if err != nil {
		t.Fatal(err)
	}
	if wantEv := goldenRebalanced(); !reflect.DeepEqual(env.Data, wantEv) {
		t.Errorf("decoded\n%+v\nwant\n%+v", env.Data, wantEv)
	}
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
