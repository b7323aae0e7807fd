package events_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/eventschema"
)

// golden is testdata/rebalance_needed.golden.json (TestGolden writes it), compacted.
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

// TestDecodeCaptured: events kraftwatch published in e2e runs on real Kafka
// (testdata/captured, written by e2etest.Capture; its doc gives the command) decode,
// satisfy the strict schemas, and encode back to the same bytes.
func TestDecodeCaptured(t *testing.T) {
	files, err := filepath.Glob("testdata/captured/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("testdata/captured has %d events, want a few of each type", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.TrimSuffix(b, []byte("\n"))
			ev, err := events.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			var env any
			var strict *jsonschema.Schema
			switch d := ev.Data.(type) {
			case *events.RebalanceNeeded:
				env, err = d.Wrap(time.Time{})
				strict = strictSchema(t)
			case *events.GroupRebalanced:
				env, err = d.Wrap(time.Time{})
				strict = strictRebalancedSchema(t)
			default:
				t.Fatalf("Data is %T", ev.Data)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := eventschema.Validate(strict, b); err != nil {
				t.Fatalf("strict schema: %v", err)
			}
			again, err := json.Marshal(env)
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("re-encoded (%v):\n%s\nwant\n%s", err, again, b)
			}
		})
	}
}

// schema is events/schema/rebalance_needed.v1.json as published, the way subscribers
// validate; rebalancedSchema is events/schema/rebalanced.v1.json.
// strictSchema and strictRebalancedSchema are them read strictly (eventschema.CompileStrict).
var (
	schema                 = compiled("schema/rebalance_needed.v1.json", eventschema.Compile)
	rebalancedSchema       = compiled("schema/rebalanced.v1.json", eventschema.Compile)
	strictSchema           = compiled("schema/rebalance_needed.v1.json", eventschema.CompileStrict)
	strictRebalancedSchema = compiled("schema/rebalanced.v1.json", eventschema.CompileStrict)
)

func compiled(path string, compile func([]byte) (*jsonschema.Schema, error)) func(testing.TB) *jsonschema.Schema {
	get := sync.OnceValues(func() (*jsonschema.Schema, error) {
		doc, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return compile(doc)
	})
	return func(t testing.TB) *jsonschema.Schema {
		t.Helper()
		s, err := get()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// TestDecodeAgreesWithSchema: for each edit of the golden event, Decode accepts it exactly
// when the JSON Schema (events/schema/rebalance_needed.v1.json) does, except the cases
// marked goOnly, where Decode checks more than a schema can (the subject and source agree
// with the data).
func TestDecodeAgreesWithSchema(t *testing.T) {
	valid := string(golden(t))
	for _, tc := range []struct {
		name, old, new string
		ok, goOnly     bool
		moveType       bool   // put the type attribute after the data
		same           bool   // decodes to what the golden event does
		want           string // in Decode's error
	}{
		{name: "golden", ok: true},
		{name: "extension attribute", old: `"specversion"`, new: `"traceparent":"00-x","specversion"`, ok: true},
		{name: "dataschema", old: `"specversion"`, new: `"dataschema":"https://example.com/s.json","specversion"`, ok: true},
		{name: "relative dataschema", old: `"specversion"`, new: `"dataschema":"s.json","specversion"`},
		{name: "null previous hash", old: `"previous_hash":"6148914691236517205"`, new: `"previous_hash":null`, ok: true},
		{name: "no consumer offsets", old: `,"consumer_offsets":{"partition":17,"offset":9001}`, new: ``, ok: true},
		{name: "unknown data member", old: `"reasons":[`, new: `"reasons":[],"x":[`, ok: true},
		{name: "empty reasons", old: `"reasons":[{"kind":"partitions_added"`, new: `"reasons":[],"x":[{"kind":"partitions_added"`, ok: true},
		{name: "reasons null", old: `"reasons":[`, new: `"reasons":null,"x":[`, want: "data.reasons is null"},
		{name: "reasons an object", old: `"reasons":[`, new: `"reasons":{},"x":[`, want: "data.reasons is not an array"},
		{name: "no reasons", old: `"reasons":[`, new: `"x":[`, want: `data has no "reasons"`},
		{name: "empty topics", old: `"topics":[{"name":"orders"`, new: `"topics":[],"x":[{"name":"orders"`, ok: true},
		{name: "no topics (an older kraftwatch)", old: `"topics":[`, new: `"x":[`, ok: true},
		{name: "topics truncated", old: `"topics":[`, new: `"topics_truncated":true,"topics":[`, ok: true},
		{name: "topics truncated not a boolean", old: `"topics":[`, new: `"topics_truncated":"yes","topics":[`, want: "data.topics_truncated is string, want a boolean"},
		{name: "topics null", old: `"topics":[`, new: `"topics":null,"x":[`, want: "data.topics is null"},
		{name: "topic name a number", old: `"name":"orders"`, new: `"name":7`, want: "data.topics[0].name is number, want a string"},
		{name: "topic hash as number", old: `"hash":"3131961357"`, new: `"hash":3131961357`},
		{name: "topic hash leading zero", old: `"hash":"3131961357"`, new: `"hash":"03131961357"`},
		{name: "topic without id", old: `"topic_id":"b2KQm1tqRBCzb0Y5bXy2WQ","partitions"`, new: `"partitions"`},
		{name: "topic with empty name", old: `"name":"orders"`, new: `"name":""`},
		{name: "topic with zero partitions", old: `"partitions":6`, new: `"partitions":0`},
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
		{name: "extra attribute", old: `"specversion"`, new: `"kraftwatchnext":{"a":[1]},"specversion"`, ok: true},
		{name: "extra data field", old: `"cluster_id"`, new: `"colour":"red","cluster_id"`, ok: true},
		{name: "extra reason field", old: `"kind":"partitions_added"`, new: `"colour":"red","kind":"partitions_added"`, ok: true},
		{name: "extra topic field", old: `"partitions":6`, new: `"partitions":6,"leader":1`, ok: true},
		{name: "extra null field", old: `"cluster_id"`, new: `"colour":null,"cluster_id"`, ok: true},
		{name: "extra offsets field", old: `"partition":17`, new: `"colour":"red","partition":17`, want: `data.consumer_offsets has a member "colour"`},
		{name: "member differing in case only", old: `"cluster_id"`, new: `"NEW_HASH":"7","Topics":3,"cluster_id"`, ok: true},
		{name: "offsets without offset", old: `,"offset":9001`, new: ``, want: `data.consumer_offsets has no "offset"`},
		{name: "offsets partition a string", old: `"partition":17`, new: `"partition":"17"`, want: "data.consumer_offsets.partition is string, want an integer"},
		{name: "offsets partition beyond int32", old: `"partition":17`, new: `"partition":2147483648`, want: "data.consumer_offsets.partition is number 2147483648, want an integer that fits int32"},
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
		{name: "data not an object", old: `"data":{`, new: `"data":[],"x":{`, want: "data is not a JSON object"},
		{name: "not JSON", old: `"data":{`, new: `"data":{{`, want: "event is not a JSON object"},
		{name: "truncated", old: `"coordinator_epoch":42}}`, new: `"coordinator_epoch":42}`, want: "event is not a JSON object"},
		{name: "id a number", old: `"id":"kw1-cf2619beef075874f91ba8989936c08c"`, new: `"id":7`, want: "event.id is number, want a string"},
		{name: "no subject", old: `"subject":"group/consumer/orders.app",`, new: ``, want: `event has no "subject"`},
		{name: "spec 2.0 without subject", old: `"specversion":"1.0","id":"kw1-cf2619beef075874f91ba8989936c08c","source":"kraftwatch/MkU3OEVBNTcwNTJENDM2Qk","type":"kraftwatch.group.rebalance_needed.v1","subject":"group/consumer/orders.app",`,
			new: `"specversion":"2.0","id":"kw1-cf2619beef075874f91ba8989936c08c","source":"kraftwatch/MkU3OEVBNTcwNTJENDM2Qk","type":"kraftwatch.group.rebalance_needed.v1",`, want: `specversion "2.0", want "1.0"`},
		{name: "epoch a string", old: `"coordinator_epoch":42`, new: `"coordinator_epoch":"42"`, want: "data.coordinator_epoch is string, want an integer"},
		{name: "reason kind a number", old: `"kind":"partitions_added"`, new: `"kind":4`, want: "data.reasons[0].kind is number, want a string"},
		{name: "second reason partitions a string", old: `"new_partitions":1`, new: `"new_partitions":"1"`, want: "data.reasons[1].new_partitions"},
		{name: "datacontenttype", old: `"datacontenttype":"application/json"`, new: `"datacontenttype":"text/plain"`},
		{name: "subject names another group", old: `"subject":"group/consumer/orders.app"`, new: `"subject":"group/consumer/other"`, goOnly: true},
		{name: "source names another cluster", old: `"source":"kraftwatch/MkU3OEVBNTcwNTJENDM2Qk"`, new: `"source":"kraftwatch/other"`, goOnly: true},
		{name: "escaped member name", same: true, old: `"group_id"`, new: `"group\u005fid"`, ok: true},
		{name: "escaped value", same: true, old: `"topic":"orders"`, new: `"topic":"\u006frders"`, ok: true},
		{name: "data before type", same: true, old: `"type":"kraftwatch.group.rebalance_needed.v1",`, new: ``, ok: true, moveType: true},
		{name: "known member twice", old: `"group_id":"orders.app"`, new: `"group_id":"orders.app","group_id":"other"`, goOnly: true, want: "data.group_id is given twice"},
		{name: "unknown member twice", same: true, old: `"cluster_id"`, new: `"x":1,"x":2,"cluster_id"`, ok: true},
		{name: "invalid UTF-8", old: `"group_id":"orders.app"`, new: "\"group_id\":\"orders\xff.app\"", goOnly: true, want: "invalid UTF-8"},
		{name: "trailing value", old: `"coordinator_epoch":42}}`, new: `"coordinator_epoch":42}}{}`, want: "event is not a JSON object"},
		{name: "error after the data", old: `"coordinator_epoch":42}}`, new: `"coordinator_epoch":42},"id":7}`, want: "event.id is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("golden event lacks %s", tc.old)
			}
			body := []byte(strings.Replace(valid, tc.old, tc.new, 1))
			if tc.moveType {
				body = append(body[:len(body)-1], `,"type":"kraftwatch.group.rebalance_needed.v1"}`...)
			}
			schemaErr := eventschema.Validate(schema(t), body)
			ev, decodeErr := events.Decode(body)
			if tc.goOnly {
				if schemaErr != nil || decodeErr == nil || !errors.Is(decodeErr, events.ErrNotEvent) {
					t.Fatalf("schema: %v; Decode: %v; want the schema to accept and Decode to refuse", schemaErr, decodeErr)
				}
				if !strings.Contains(decodeErr.Error(), tc.want) {
					t.Fatalf("Decode error %v, want one saying %s", decodeErr, tc.want)
				}
				t.Log(decodeErr)
				return
			}
			if tc.same && decodeErr == nil {
				if want, _ := events.Decode(golden(t)); !reflect.DeepEqual(ev, want) {
					t.Fatalf("decoded\n%+v\nwant the golden event's\n%+v", ev, want)
				}
			}
			if (schemaErr == nil) != tc.ok || (decodeErr == nil) != tc.ok {
				t.Fatalf("schema: %v\nDecode: %v\nwant ok=%v for\n%s", schemaErr, decodeErr, tc.ok, body)
			}
			if decodeErr != nil && !errors.Is(decodeErr, events.ErrNotEvent) {
				t.Fatalf("Decode error %v does not wrap ErrNotEvent", decodeErr)
			}
			if tc.want != "" && (decodeErr == nil || !strings.Contains(decodeErr.Error(), tc.want)) {
				t.Fatalf("Decode error %v, want one saying %s", decodeErr, tc.want)
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

// objectPaths returns the path ("data.reasons[0]") of every JSON object in v.
func objectPaths(v any, path string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		out = append(out, path)
		for k, e := range v {
			out = append(out, objectPaths(e, strings.TrimPrefix(path+"."+k, "."))...)
		}
	case []any:
		for i, e := range v {
			out = append(out, objectPaths(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}

// addMembers returns body with members added to the object at path ("" for the
// event): one a later kraftwatch might add, one null, and for each member of the object
// one whose name differs from it only in case, holding a value of another type.
func addMembers(t testing.TB, body []byte, path string) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		t.Fatal(err)
	}
	var visit func(v any, p string)
	visit = func(v any, p string) {
		switch v := v.(type) {
		case map[string]any:
			if p == path {
				for k := range v {
					if up := strings.ToUpper(k); up != k {
						v[up] = []any{"not", "the", k}
					}
				}
				v["added_in_v1_later"] = map[string]any{"a": []any{json.Number("1"), "x", nil}}
				v["also_added"] = nil
				return
			}
			for k, e := range v {
				visit(e, strings.TrimPrefix(p+"."+k, "."))
			}
		case []any:
			for i, e := range v {
				visit(e, fmt.Sprintf("%s[%d]", p, i))
			}
		}
	}
	visit(root, "")
	b, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeIgnoresUnknownMembers: the forward compatibility rule. An event with members
// this package and the schema do not know, in any object but a __consumer_offsets
// position, decodes to exactly what the event without them does, and the published
// schema accepts it; the strict reading kraftwatch's own tests use refuses it. In a
// position both refuse it.
func TestDecodeIgnoresUnknownMembers(t *testing.T) {
	rebalanced, err := os.ReadFile("testdata/rebalanced.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []struct {
		name         string
		body         []byte
		schema       func(testing.TB) *jsonschema.Schema
		strict       func(testing.TB) *jsonschema.Schema
		wantPaths    int // objects in the golden event
		positionPath string
	}{
		{"rebalance_needed", golden(t), schema, strictSchema, 7, "data.consumer_offsets"},
		{"rebalanced", rebalanced, rebalancedSchema, strictRebalancedSchema, 6, "data.consumer_offsets"},
	} {
		want, err := events.Decode(ev.body)
		if err != nil {
			t.Fatal(err)
		}
		var root any
		if err := json.Unmarshal(ev.body, &root); err != nil {
			t.Fatal(err)
		}
		paths := objectPaths(root, "")
		if len(paths) != ev.wantPaths {
			t.Fatalf("%s: objects %q, want %d", ev.name, paths, ev.wantPaths)
		}
		for _, p := range paths {
			t.Run(ev.name+"/"+cmp.Or(p, "event"), func(t *testing.T) {
				body := addMembers(t, ev.body, p)
				got, decodeErr := events.Decode(body)
				schemaErr := eventschema.Validate(ev.schema(t), body)
				if strictErr := eventschema.Validate(ev.strict(t), body); strictErr == nil {
					t.Errorf("the strict schema accepted\n%s", body)
				}
				if p == ev.positionPath {
					if decodeErr == nil || !strings.Contains(decodeErr.Error(), p+` has a member "`) || schemaErr == nil {
						t.Fatalf("Decode: %v; schema: %v; want both to refuse members added to %s", decodeErr, schemaErr, p)
					}
					return
				}
				if decodeErr != nil || schemaErr != nil {
					t.Fatalf("Decode: %v\nschema: %v\nwant both to accept\n%s", decodeErr, schemaErr, body)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("decoded\n%+v\nwant what the event without the members gives\n%+v", got.Data, want.Data)
				}
			})
		}
	}
}

// FuzzDecode: Decode never panics; what it accepts the published schema accepts, and
// encodes back to an event that decodes to the same data.
func FuzzDecode(f *testing.F) {
	rebalanced, err := os.ReadFile("testdata/rebalanced.golden.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden(f))
	f.Add(rebalanced)
	if assignment, err := os.ReadFile("testdata/rebalanced.assignment.golden.json"); err == nil {
		f.Add(assignment)
	}
	f.Add(addMembers(f, golden(f), "data"))
	captured, _ := filepath.Glob("testdata/captured/*.json")
	for _, name := range captured {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.TrimSuffix(b, []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := events.Decode(b)
		if err != nil {
			if !errors.Is(err, events.ErrNotEvent) && !errors.Is(err, events.ErrUnknownType) {
				t.Fatalf("error %v wraps neither ErrNotEvent nor ErrUnknownType", err)
			}
			return
		}
		var again []byte
		switch d := ev.Data.(type) {
		case *events.RebalanceNeeded:
			if err := eventschema.Validate(schema(t), b); err != nil {
				t.Fatalf("Decode accepted what the schema refuses: %v\n%q", err, b)
			}
			env, err := d.Wrap(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			again, _ = json.Marshal(env)
		case *events.GroupRebalanced:
			if err := eventschema.Validate(rebalancedSchema(t), b); err != nil {
				t.Fatalf("Decode accepted what the schema refuses: %v\n%q", err, b)
			}
			env, err := d.Wrap(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			again, _ = json.Marshal(env)
		}
		ev2, err := events.Decode(again)
		if err != nil || !reflect.DeepEqual(ev2.Data, ev.Data) {
			t.Fatalf("re-encoded %s\ndecodes to %+v, %v\nwant %+v", again, ev2.Data, err, ev.Data)
		}
	})
}

// BenchmarkDecode decodes the golden rebalance-needed event; BenchmarkDecodeRebalanced
// the golden rebalanced event. BenchmarkDecodeAnchor measures, on the same bytes, what
// encoding/json does without checking anything (Unmarshal into the Go types, and Valid)
// and what go-json-experiment/json's Unmarshal and Validate do (bench/decode.sh prints
// Decode against them). Each reports the process's CPU time per
// event (cpu-ns/op), which other processes on a shared machine inflate less than wall
// time.
func BenchmarkDecode(b *testing.B) {
	body := golden(b)
	benchCPU(b, func() error {
		_, err := events.Decode(body)
		return err
	})
}

func BenchmarkDecodeRebalanced(b *testing.B) {
	body, err := os.ReadFile("testdata/rebalanced.golden.json")
	if err != nil {
		b.Fatal(err)
	}
	benchCPU(b, func() error {
		_, err := events.Decode(body)
		return err
	})
}

func BenchmarkDecodeAnchor(b *testing.B) {
	body := golden(b)
	b.Run("json.Unmarshal", func(b *testing.B) {
		benchCPU(b, func() error {
			var ev events.Envelope[events.RebalanceNeeded]
			return json.Unmarshal(body, &ev)
		})
	})
	// What Decode would be on go-json-experiment/json (encoding/json/v2): its Unmarshal,
	// which refuses invalid UTF-8 and duplicate members as Decode does, then Validate.
	// It still checks less than Decode (null and wrong-typed members, the attributes).
	b.Run("jsonv2.Unmarshal+Validate", func(b *testing.B) {
		benchCPU(b, func() error {
			var ev events.Envelope[events.RebalanceNeeded]
			if err := jsonv2.Unmarshal(body, &ev); err != nil {
				return err
			}
			return ev.Data.Validate()
		})
	})
	b.Run("json.Valid", func(b *testing.B) {
		benchCPU(b, func() error {
			if !json.Valid(body) {
				return errors.New("not valid")
			}
			return nil
		})
	})
}

func benchCPU(b *testing.B, f func() error) {
	b.ReportAllocs()
	cpu0, n := cpuTime(), 0
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
}

// cpuTime is the CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
