package publish_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kraftwatch/kraftwatch/publish"
)

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// validateEvent fails t unless body satisfies schema/rebalance_needed.v1.json.
func validateEvent(t testing.TB, body []byte) {
	t.Helper()
	if err := checkSchema(body); err != nil {
		t.Fatalf("event does not satisfy the schema: %v\n%s", err, body)
	}
}

func checkSchema(body []byte) error {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(publish.Schema))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		const url = "https://github.com/kraftwatch/kraftwatch/publish/schema/rebalance_needed.v1.json"
		if schemaErr = c.AddResource(url, doc); schemaErr != nil {
			return
		}
		schema, schemaErr = c.Compile(url)
	})
	if schemaErr != nil {
		return schemaErr
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return schema.Validate(inst)
}

// TestSchemaRejects shows the schema is strict enough to catch mistakes: each case
// breaks one rule of a valid event.
func TestSchemaRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, goldenBody(t)); err != nil {
		t.Fatal(err)
	}
	valid := buf.String()
	validateEvent(t, []byte(valid))
	for _, tc := range []struct{ name, old, new string }{
		{"hash as number", `"new_hash":"-6148914691236517206"`, `"new_hash":-6148914691236517206`},
		{"hash with plus", `"new_hash":"-6148914691236517206"`, `"new_hash":"+1"`},
		{"hash leading zero", `"new_hash":"-6148914691236517206"`, `"new_hash":"01"`},
		{"unknown group type", `"group_type":"consumer"`, `"group_type":"simple"`},
		{"unknown reason", `"kind":"partitions_added"`, `"kind":"moved"`},
		{"unknown scheme", `"hash_scheme":"murmur3"`, `"hash_scheme":"md5"`},
		{"wrong type", `rebalance_needed.v1"`, `rebalance_needed.v2"`},
		{"bad time", `"time":"2025-`, `"time":"yesterday-`},
		{"extra data field", `"cluster_id"`, `"colour":"red","cluster_id"`},
		{"short topic id", `"topic_id":"`, `"topic_id":"x`},
		{"recreated without old id", `"kind":"partitions_added"`, `"kind":"recreated"`},
		{"negative offset", `"metadata_offset":1234`, `"metadata_offset":-1`},
		{"bad id", `"id":"kw1-`, `"id":"kw2-`},
		{"topic hash as number", `"hash":"3131961357"`, `"hash":3131961357`},
		{"topic without id", `"topic_id":"b2KQm1tqRBCzb0Y5bXy2WQ","partitions"`, `"partitions"`},
		{"topic with zero partitions", `"partitions":6`, `"partitions":0`},
		{"extra topic field", `"partitions":6`, `"partitions":6,"leader":1`},
		{"truncated not boolean", `"topics":[`, `"topics_truncated":"yes","topics":[`},
		{"reason time not a date", `"time":"2025-11-03T14:12`, `"time":"later`},
		{"reason offset negative", `"metadata_offset":1187`, `"metadata_offset":-5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("golden event lacks %s", tc.old)
			}
			bad := strings.Replace(valid, tc.old, tc.new, 1)
			if err := checkSchema([]byte(bad)); err == nil {
				t.Fatalf("schema accepted\n%s", bad)
			}
		})
	}
}
