package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	b := []byte(`{"specversion":"1.0","id":"kw1-00000000000000000000000000000000","source":"kraftwatch/c","type":"kraftwatch.group.rebalanced.v2","subject":"group/consumer/g","time":"2025-01-01T00:00:00Z","datacontenttype":"application/json","data":{"whatever":1}}`)
	ev, err := events.Decode(b)
	if !errors.Is(err, events.ErrUnknownType) || ev.Type != "kraftwatch.group.rebalanced.v2" || ev.ID == "" || ev.Data != nil {
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
		{name: "empty reasons", old: `"reasons":[{"kind":"partitions_added"`, new: `"reasons":[],"x":[{"kind":"partitions_added"`},
		{name: "empty topics", old: `"topics":[{"name":"orders"`, new: `"topics":[],"x":[{"name":"orders"`},
		{name: "no topics (an older kraftwatch)", old: `"topics":[`, new: `"x":[`},
		{name: "topics truncated", old: `"topics":[`, new: `"topics_truncated":true,"topics":[`, ok: true},
		{name: "topics null", old: `"topics":[`, new: `"topics":null,"x":[`},
		{name: "topic hash as number", old: `"hash":"3131961357"`, new: `"hash":3131961357`},
		{name: "topic hash leading zero", old: `"hash":"3131961357"`, new: `"hash":"03131961357"`},
		{name: "topic without id", old: `"topic_id":"b2KQm1tqRBCzb0Y5bXy2WQ","partitions"`, new: `"partitions"`},
		{name: "topic with empty name", old: `"name":"orders"`, new: `"name":""`},
		{name: "topic with zero partitions", old: `"partitions":6`, new: `"partitions":0`},
		{name: "extra topic field", old: `"partitions":6`, new: `"partitions":6,"leader":1`},
		{name: "reason time", old: `"time":"2025-11-03T14:12`, new: `"time":"later`},
		{name: "reason without time and offset", old: `,"metadata_offset":1187,"time":"2025-11-03T14:12:01.005Z"`, new: ``, ok: true},
		{name: "reason offset zero", old: `"metadata_offset":1187`, new: `"metadata_offset":0`},
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

// TestFitTopics: the topics list of an event stays within its byte budget, cut at
// the last topic that fits, and the bound is never below the real JSON size.
func TestFitTopics(t *testing.T) {
	var ts []events.CoveredTopic
	for i := range 10_000 {
		ts = append(ts, events.CoveredTopic{Name: fmt.Sprintf("orders.eu-west-%05d.v2", i), TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ",
			Partitions: int32(i%64 + 1), Hash: events.Hash(-int64(i) * 1_000_003_000_001)})
	}
	kept, cut := events.FitTopics(ts, events.MaxTopicsBytes)
	if !cut || len(kept) == 0 || len(kept) >= len(ts) {
		t.Fatalf("10,000 topics: kept %d, cut %v", len(kept), cut)
	}
	b, err := json.Marshal(kept)
	if err != nil {
		t.Fatal(err)
	}
	next, _ := json.Marshal(ts[:len(kept)+1])
	if len(b) > events.MaxTopicsBytes || len(next) <= events.MaxTopicsBytes-200 {
		t.Fatalf("kept %d topics, %d bytes (with one more %d), budget %d", len(kept), len(b), len(next), events.MaxTopicsBytes)
	}
	t.Logf("10,000 topics of 25-character names: %d kept, %d bytes of JSON", len(kept), len(b))
	if kept, cut := events.FitTopics(ts[:100], events.MaxTopicsBytes); cut || len(kept) != 100 {
		t.Fatalf("100 topics: kept %d, cut %v", len(kept), cut)
	}
	// A whole event with the cut list stays under NATS's default max payload.
	env, err := (events.RebalanceNeeded{ClusterID: "c", GroupID: "g", GroupType: events.ConsumerGroup, HashScheme: events.SchemeMurmur3,
		Topics: kept, TopicsTruncated: true}).Wrap(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(env)
	if len(body) > 1<<20 {
		t.Fatalf("event of %d bytes", len(body))
	}
	if _, err := events.Decode(body); err != nil {
		t.Fatal(err)
	}
}
