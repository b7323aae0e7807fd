package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kraftwatch/kraftwatch/events"
)

// golden is testdata/rebalance_needed.golden.json, a copy of publish's golden event
// (TestGoldenIsPublishs keeps the two the same).
func golden(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/rebalance_needed.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoldenIsPublishs(t *testing.T) {
	a, err := os.ReadFile("testdata/rebalance_needed.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../publish/testdata/rebalance_needed.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("testdata/rebalance_needed.golden.json differs from publish's: copy it again")
	}
}

func TestDecodeGolden(t *testing.T) {
	ev, err := events.Decode(golden(t))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := ev.Data.(*events.RebalanceNeeded)
	if !ok {
		t.Fatalf("Data is %T", ev.Data)
	}
	if ev.Type != events.TypeRebalanceNeeded || ev.ID != d.MsgID() || d.GroupID != "orders.app" || d.GroupType != events.ConsumerGroup ||
		int64(d.NewHash) != -6148914691236517206 || !d.PreviousHash.Valid || len(d.Reasons) != 2 ||
		d.Reasons[1].Regex != "orders-.*" || d.ConsumerOffsets == nil || d.ConsumerOffsets.Offset != 9001 ||
		!d.Time.Equal(time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC)) {
		t.Fatalf("decoded %+v, data %+v", ev, d)
	}
	// Wrap gives the same bytes back.
	env, err := d.Wrap(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(env)
	if !bytes.Equal(b, golden(t)) {
		t.Fatalf("re-encoded:\n%s\nwant\n%s", b, golden(t))
	}
	typed, err := events.DecodeRebalanceNeeded(golden(t))
	if err != nil || typed.Data.GroupID != "orders.app" {
		t.Fatalf("DecodeRebalanceNeeded = %+v, %v", typed, err)
	}
}

func TestDecodeUnknownType(t *testing.T) {
	b := []byte(`{"specversion":"1.0","id":"kw1-00000000000000000000000000000000","source":"kraftwatch/c","type":"kraftwatch.group.rebalanced.v1","subject":"group/consumer/g","time":"2025-01-01T00:00:00Z","datacontenttype":"application/json","data":{"whatever":1}}`)
	ev, err := events.Decode(b)
	if !errors.Is(err, events.ErrUnknownType) || ev.Type != "kraftwatch.group.rebalanced.v1" || ev.ID == "" || ev.Data != nil {
		t.Fatalf("Decode = %+v, %v; want the attributes and ErrUnknownType", ev, err)
	}
	if _, err := events.DecodeRebalanceNeeded(b); !errors.Is(err, events.ErrNotEvent) {
		t.Fatalf("DecodeRebalanceNeeded = %v, want ErrNotEvent", err)
	}
}

var schema = func() func(testing.TB) *jsonschema.Schema {
	var s *jsonschema.Schema
	return func(t testing.TB) *jsonschema.Schema {
		t.Helper()
		if s != nil {
			return s
		}
		f, err := os.Open("../publish/schema/rebalance_needed.v1.json")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		const url = "https://github.com/kraftwatch/kraftwatch/publish/schema/rebalance_needed.v1.json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if s, err = c.Compile(url); err != nil {
			t.Fatal(err)
		}
		return s
	}
}()

// TestDecodeAgreesWithSchema: for each edit of the golden event, Decode accepts it exactly
// when the JSON Schema (publish/schema/rebalance_needed.v1.json) does, except the cases
// marked goOnly, where Decode checks more than a schema can (the subject and source agree
// with the data).
func TestDecodeAgreesWithSchema(t *testing.T) {
	valid := string(golden(t))
	for _, tc := range []struct {
		name, old, new string
		ok, goOnly     bool
	}{
		{name: "golden", ok: true},
		{name: "extension attribute", old: `"specversion"`, new: `"traceparent":"00-x","specversion"`, ok: true},
		{name: "dataschema", old: `"specversion"`, new: `"dataschema":"https://example.com/s.json","specversion"`, ok: true},
		{name: "relative dataschema", old: `"specversion"`, new: `"dataschema":"s.json","specversion"`},
		{name: "null previous hash", old: `"previous_hash":"6148914691236517205"`, new: `"previous_hash":null`, ok: true},
		{name: "no consumer offsets", old: `,"consumer_offsets":{"partition":17,"offset":9001}`, new: ``, ok: true},
		{name: "unknown data member", old: `"reasons":[`, new: `"reasons":[],"x":[`},
		{name: "empty reasons", old: `[{"kind":"partitions_added","topic":"orders","topic_id":"b2KQm1tqRBCzb0Y5bXy2WQ","old_partitions":3,"new_partitions":6},{"kind":"regex_matched","topic":"orders-eu","topic_id":"Zm9vYmFyYmF6cXV4MTIzNA","new_partitions":1,"regex":"orders-.*"}]`, new: `[]`, ok: true},
		{name: "hash as number", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":-6148914691236517206`},
		{name: "hash with plus", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":"+1"`},
		{name: "hash leading zero", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":"01"`},
		{name: "minus zero", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":"-0"`},
		{name: "null new hash", old: `"new_hash":"-6148914691236517206"`, new: `"new_hash":null`},
		{name: "unknown group type", old: `"group_type":"consumer"`, new: `"group_type":"simple"`},
		{name: "unknown reason", old: `"kind":"partitions_added"`, new: `"kind":"moved"`},
		{name: "unknown scheme", old: `"hash_scheme":"murmur3"`, new: `"hash_scheme":"md5"`},
		{name: "spec 0.3", old: `"specversion":"1.0"`, new: `"specversion":"0.3"`},
		{name: "bad time", old: `"time":"2025-`, new: `"time":"yesterday-`},
		{name: "no time", old: `"time":"2025-11-03T14:15:16.789Z",`, new: ``},
		{name: "extra data field", old: `"cluster_id"`, new: `"colour":"red","cluster_id"`},
		{name: "extra reason field", old: `"kind":"partitions_added"`, new: `"colour":"red","kind":"partitions_added"`},
		{name: "extra offsets field", old: `"partition":17`, new: `"colour":"red","partition":17`},
		{name: "offsets without offset", old: `,"offset":9001`, new: ``},
		{name: "short topic id", old: `"topic_id":"`, new: `"topic_id":"x`},
		{name: "empty topic id", old: `"topic_id":"b2KQm1tqRBCzb0Y5bXy2WQ"`, new: `"topic_id":""`},
		{name: "zero partitions", old: `"old_partitions":3`, new: `"old_partitions":0`},
		{name: "reason without topic", old: `"topic":"orders",`, new: ``},
		{name: "recreated without old id", old: `"kind":"partitions_added"`, new: `"kind":"recreated"`},
		{name: "recreated with old id", old: `"kind":"partitions_added"`, new: `"kind":"recreated","old_topic_id":"AAAAAAAAAAAAAAAAAAAAAA"`, ok: true},
		{name: "regex matched without regex", old: `,"regex":"orders-.*"`, new: ``},
		{name: "negative offset", old: `"metadata_offset":1234`, new: `"metadata_offset":-1`},
		{name: "fractional offset", old: `"metadata_offset":1234`, new: `"metadata_offset":12.5`},
		{name: "epoch -2", old: `"coordinator_epoch":42`, new: `"coordinator_epoch":-2`},
		{name: "epoch -1", old: `"coordinator_epoch":42`, new: `"coordinator_epoch":-1`, ok: true},
		{name: "bad id", old: `"id":"kw1-`, new: `"id":"kw2-`},
		{name: "other source", old: `"source":"kraftwatch/`, new: `"source":"other/`},
		{name: "bad subject", old: `"subject":"group/consumer/`, new: `"subject":"grp/consumer/`},
		{name: "empty cluster", old: `"cluster_id":"MkU3OEVBNTcwNTJENDM2Qk"`, new: `"cluster_id":""`},
		{name: "null group id", old: `"group_id":"orders.app"`, new: `"group_id":null`},
		{name: "data not an object", old: `"data":{`, new: `"data":[],"x":{`},
		{name: "datacontenttype", old: `"datacontenttype":"application/json"`, new: `"datacontenttype":"text/plain"`},
		{name: "subject names another group", old: `"subject":"group/consumer/orders.app"`, new: `"subject":"group/consumer/other"`, goOnly: true},
		{name: "source names another cluster", old: `"source":"kraftwatch/MkU3OEVBNTcwNTJENDM2Qk"`, new: `"source":"kraftwatch/other"`, goOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("golden event lacks %s", tc.old)
			}
			body := []byte(strings.Replace(valid, tc.old, tc.new, 1))
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			schemaErr := schema(t).Validate(inst)
			_, decodeErr := events.Decode(body)
			if tc.goOnly {
				if schemaErr != nil || decodeErr == nil || !errors.Is(decodeErr, events.ErrNotEvent) {
					t.Fatalf("schema: %v; Decode: %v; want the schema to accept and Decode to refuse", schemaErr, decodeErr)
				}
				return
			}
			if (schemaErr == nil) != tc.ok || (decodeErr == nil) != tc.ok {
				t.Fatalf("schema: %v\nDecode: %v\nwant ok=%v for\n%s", schemaErr, decodeErr, tc.ok, body)
			}
			if decodeErr != nil && !errors.Is(decodeErr, events.ErrNotEvent) {
				t.Fatalf("Decode error %v does not wrap ErrNotEvent", decodeErr)
			}
			t.Log(decodeErr)
		})
	}
}
