package events_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
)

// TestKindsDocumented fails when an enumerated value is added to events without its
// entry in the schemas' enums and its row in docs/events.md, or the other way round.
func TestKindsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	var groupTypes, reasons, causes []string
	for k := range events.NumGroupTypes {
		if g := events.GroupType(k); g != events.UnknownGroup {
			groupTypes = append(groupTypes, g.String())
		}
	}
	for k := range events.NumReasonKinds {
		if r := events.ReasonKind(k); r != events.UnknownReason {
			reasons = append(reasons, r.String())
		}
	}
	for k := range events.NumCauseKinds {
		causes = append(causes, events.CauseKind(k).String()) // "unknown" is a cause on the wire
	}
	for _, tc := range []struct {
		schema []byte
		path   string // the enum's path in the schema
		want   []string
	}{
		{events.RebalanceNeededSchema, "$defs.data.properties.group_type", groupTypes},
		{events.GroupRebalancedSchema, "$defs.data.properties.group_type", groupTypes},
		{events.RebalanceNeededSchema, "$defs.reason.properties.kind", reasons},
		{events.GroupRebalancedSchema, "$defs.cause.properties.kind", causes},
	} {
		if got := schemaEnum(t, tc.schema, tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("schema enum at %s = %q, events has %q", tc.path, got, tc.want)
		}
		for _, name := range tc.want {
			if !strings.Contains(string(doc), "\n| `"+name+"` |") {
				t.Errorf("docs/events.md has no row for %q (a line starting \"| `%s` |\")", name, name)
			}
		}
	}
}

// schemaEnum returns the enum at the dotted path of a JSON Schema.
func schemaEnum(t *testing.T, schema []byte, path string) []string {
	t.Helper()
	var node any
	if err := json.Unmarshal(schema, &node); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := node.(map[string]any)
		if !ok {
			t.Fatalf("schema: %s: no object at %q", path, k)
		}
		node = m[k]
	}
	var out []string
	m, _ := node.(map[string]any)
	enum, _ := m["enum"].([]any)
	for _, v := range enum {
		out = append(out, fmt.Sprint(v))
	}
	return out
}
