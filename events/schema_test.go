package events_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/eventschema"
)

// validateEvent fails t unless body, an event kraftwatch published, satisfies
// schema/rebalance_needed.v1.json read strictly: it declares every member.
func validateEvent(t testing.TB, body []byte) {
	t.Helper()
	if err := eventschema.Validate(strictSchema(t), body); err != nil {
		t.Fatalf("event does not satisfy the strict schema: %v\n%s", err, body)
	}
}

// checkRebalancedSchema validates body, a rebalanced event kraftwatch published, against
// schema/rebalanced.v1.json read strictly.
func checkRebalancedSchema(t testing.TB, body []byte) error {
	return eventschema.Validate(strictRebalancedSchema(t), body)
}

// TestSchemaObjects pins which objects of the schemas are open to members a later v1
// kraftwatch adds (all but the __consumer_offsets positions, whose members make the
// event id) and that each says so explicitly, so that an object added to a schema
// cannot be closed or open by accident.
func TestSchemaObjects(t *testing.T) {
	for name, doc := range map[string][]byte{"rebalance_needed.v1.json": events.RebalanceNeededSchema, "rebalanced.v1.json": events.GroupRebalancedSchema} {
		objs, err := eventschema.Objects(doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) < 4 {
			t.Fatalf("%s: only %d object schemas found: %v", name, len(objs), objs)
		}
		for ptr, ap := range objs {
			closed := strings.HasSuffix(ptr, "/consumer_offsets")
			if ap != !closed {
				t.Errorf("%s: %s has additionalProperties %v, want %v", name, ptr, ap, !closed)
			}
		}
	}
}

// TestSchemaRejects shows the schema is strict enough to catch mistakes: each case
// breaks one rule of a valid event. Members it does not know are accepted (a later v1
// kraftwatch's), except in consumer_offsets; the strict reading refuses them all.
func TestSchemaRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, goldenBody(t)); err != nil {
		t.Fatal(err)
	}
	valid := buf.String()
	validateEvent(t, []byte(valid))
	for _, tc := range []struct {
		name, old, new string
		open           bool // accepted as published, refused when strict
	}{
		{name: "hash as number", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":-6148914691236517206`},
		{name: "hash with plus", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":"+1"`},
		{name: "hash leading zero", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":"01"`},
		{name: "unknown group type", old: `"group_type":"consumer"`, new: `"group_type":"simple"`},
		{name: "unknown reason", old: `"kind":"partitions_added"`, new: `"kind":"moved"`},
		{name: "unknown scheme", old: `"hash_scheme":"murmur3"`, new: `"hash_scheme":"md5"`},
		{name: "wrong type", old: `rebalance_needed.v1"`, new: `rebalance_needed.v2"`},
		{name: "bad time", old: `"time":"2025-`, new: `"time":"yesterday-`},
		{name: "extra attribute", old: `"specversion"`, new: `"colour":"red","specversion"`, open: true},
		{name: "extra data member", old: `"cluster_id"`, new: `"colour":"red","cluster_id"`, open: true},
		{name: "extra reason member", old: `"kind":"partitions_added"`, new: `"colour":"red","kind":"partitions_added"`, open: true},
		{name: "extra topic member", old: `"partitions":6`, new: `"partitions":6,"leader":1`, open: true},
		{name: "extra consumer_offsets member", old: `"partition":17`, new: `"leader_epoch":3,"partition":17`},
		{name: "short topic id", old: `"topic_id":"`, new: `"topic_id":"x`},
		{name: "recreated without old id", old: `"kind":"partitions_added"`, new: `"kind":"recreated"`},
		{name: "negative offset", old: `"metadata_offset":1234`, new: `"metadata_offset":-1`},
		{name: "bad id", old: `"id":"kw1-`, new: `"id":"kw2-`},
		{name: "topic hash as number", old: `"hash":"3131961357"`, new: `"hash":3131961357`},
		{name: "topic without id", old: `"topic_id":"b2KQm1tqRBCzb0Y5bXy2WQ","partitions"`, new: `"partitions"`},
		{name: "topic with zero partitions", old: `"partitions":6`, new: `"partitions":0`},
		{name: "truncated not boolean", old: `"topics":[`, new: `"topics_truncated":"yes","topics":[`},
		{name: "reason time not a date", old: `"time":"2025-11-03T14:12`, new: `"time":"later`},
		{name: "reason offset negative", old: `"metadata_offset":1187`, new: `"metadata_offset":-5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("golden event lacks %s", tc.old)
			}
			bad := []byte(strings.Replace(valid, tc.old, tc.new, 1))
			if err := eventschema.Validate(schema(t), bad); (err == nil) != tc.open {
				t.Fatalf("schema: %v, want accepted=%v\n%s", err, tc.open, bad)
			}
			if err := eventschema.Validate(strictSchema(t), bad); err == nil {
				t.Fatalf("strict schema accepted\n%s", bad)
			}
		})
	}
}
