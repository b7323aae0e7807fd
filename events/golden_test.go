package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata/")

const clusterID = "MkU3OEVBNTcwNTJENDM2Qk"

// goldenEvent is the example event of testdata/rebalance_needed.golden.json.
func goldenEvent() events.RebalanceNeeded {
	return events.RebalanceNeeded{
		ClusterID:    clusterID,
		GroupID:      "orders.app",
		GroupType:    events.ConsumerGroup,
		HashScheme:   events.SchemeMurmur3,
		PreviousHash: events.SomeHash(6148914691236517205),
		NewHash:      -6148914691236517206,
		Reasons: []events.Reason{
			{Kind: events.PartitionsAdded, Topic: "orders", TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ", OldPartitions: 3, NewPartitions: 6,
				MetadataOffset: 1230, Time: time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC)},
			{Kind: events.RegexMatched, Topic: "orders-eu", TopicID: "Zm9vYmFyYmF6cXV4MTIzNA", Regex: "orders-.*", NewPartitions: 1,
				MetadataOffset: 1187, Time: time.Date(2025, 11, 3, 14, 12, 1, 5000000, time.UTC)},
		},
		Topics: []events.CoveredTopic{
			{Name: "orders", TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ", Partitions: 6, Hash: 3131961357},
			{Name: "orders-eu", TopicID: "Zm9vYmFyYmF6cXV4MTIzNA", Partitions: 1, Hash: -8070450532247928832},
		},
		Cause: events.Cause{
			MetadataOffset:  1234,
			MetadataEpoch:   5,
			ConsumerOffsets: &events.OffsetsPosition{Partition: 17, Offset: 9001},
		},
		CoordinatorEpoch: 42,
		Time:             time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC),
	}
}

func goldenBody(t testing.TB) []byte { return indented(t, goldenEvent().Wrap) }

// indented is the envelope wrap gives (at the zero time: the event's own), indented as
// the golden files are.
func indented[D any](t testing.TB, wrap func(time.Time) (events.Envelope[D], error)) []byte {
	t.Helper()
	env, err := wrap(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// checkGolden fails t unless got is testdata/name, which -rewrite writes.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("event differs from %s (rerun with -rewrite if intended):\n%s", path, got)
	}
}

// TestGolden pins the wire form. Regenerate with: go test ./events -run TestGolden -rewrite
func TestGolden(t *testing.T) {
	got := goldenBody(t)
	checkGolden(t, "rebalance_needed.golden.json", got)
	validateEvent(t, got)

	env, err := events.DecodeRebalanceNeeded(got)
	if err != nil {
		t.Fatal(err)
	}
	if ev := goldenEvent(); !reflect.DeepEqual(env.Data, ev) {
		t.Fatalf("events.DecodeRebalanceNeeded gives\n%+v\nwant\n%+v", env.Data, ev)
	}
}

func TestEncodeEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*events.RebalanceNeeded)
	}{
		{"no previous hash", func(e *events.RebalanceNeeded) { e.PreviousHash = events.NullHash{} }},
		{"extreme hashes", func(e *events.RebalanceNeeded) {
			e.PreviousHash, e.NewHash = events.SomeHash(-1<<63), 1<<63-1
		}},
		{"zero hash", func(e *events.RebalanceNeeded) { e.NewHash = 0 }},
		{"no reasons", func(e *events.RebalanceNeeded) { e.Reasons = nil }},
		{"no consumer offsets", func(e *events.RebalanceNeeded) { e.ConsumerOffsets = nil; e.CoordinatorEpoch = -1 }},
		{"empty group id", func(e *events.RebalanceNeeded) { e.GroupID = "" }},
		{"odd group id", func(e *events.RebalanceNeeded) { e.GroupID = "a.*.> \t%\x00é\u2028🚀" }},
		{"every kind", func(e *events.RebalanceNeeded) {
			e.GroupType = events.StreamsGroup
			e.HashScheme = events.SchemeKafka
			e.Reasons = []events.Reason{
				{Kind: events.TopicCreated, Topic: "a", TopicID: "AAAAAAAAAAAAAAAAAAAAAA", NewPartitions: 1},
				{Kind: events.TopicDeleted, Topic: "b", TopicID: "BBBBBBBBBBBBBBBBBBBBBB", OldPartitions: 2},
				{Kind: events.TopicRecreated, Topic: "c", TopicID: "CCCCCCCCCCCCCCCCCCCCCC", OldTopicID: "DDDDDDDDDDDDDDDDDDDDDD"},
				{Kind: events.PartitionsAdded, Topic: "d", TopicID: "EEEEEEEEEEEEEEEEEEEEEE", OldPartitions: 1, NewPartitions: 2},
				{Kind: events.RacksChanged, Topic: "e", TopicID: "FFFFFFFFFFFFFFFFFFFFFF"},
				{Kind: events.SubscriptionChanged, Topic: "f"},
				{Kind: events.RegexMatched, Topic: "g", TopicID: "GGGGGGGGGGGGGGGGGGGGGG", Regex: "g.*"},
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := goldenEvent()
			tc.edit(&ev)
			env, err := ev.Wrap(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			validateEvent(t, b)
			back, err := events.DecodeRebalanceNeeded(b)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Reasons == nil {
				ev.Reasons = []events.Reason{}
			}
			if !reflect.DeepEqual(back.Data, ev) {
				t.Fatalf("round trip gives\n%+v\nwant\n%+v", back.Data, ev)
			}
		})
	}
}

func TestWrapRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*events.RebalanceNeeded)
	}{
		{"no cluster", func(e *events.RebalanceNeeded) { e.ClusterID = "" }},
		{"group id not UTF-8", func(e *events.RebalanceNeeded) { e.GroupID = "a\xff" }},
		{"topic not UTF-8", func(e *events.RebalanceNeeded) { e.Reasons[0].Topic = "a\xff" }},
		{"unknown group type", func(e *events.RebalanceNeeded) { e.GroupType = events.UnknownGroup }},
		{"bad scheme", func(e *events.RebalanceNeeded) { e.HashScheme = "md5" }},
		{"unknown reason", func(e *events.RebalanceNeeded) { e.Reasons[0].Kind = events.UnknownReason }},
		{"bad topic id", func(e *events.RebalanceNeeded) { e.Reasons[0].TopicID = "not-an-id" }},
		{"recreated without old id", func(e *events.RebalanceNeeded) { e.Reasons[0].Kind = events.TopicRecreated }},
		{"regex without regex", func(e *events.RebalanceNeeded) { e.Reasons[0].Kind = events.RegexMatched }},
		{"negative offset", func(e *events.RebalanceNeeded) { e.MetadataOffset = -1 }},
		{"bad coordinator epoch", func(e *events.RebalanceNeeded) { e.CoordinatorEpoch = -2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := goldenEvent()
			tc.edit(&ev)
			if _, err := ev.Wrap(time.Time{}); !errors.Is(err, events.ErrInvalidEvent) {
				t.Fatalf("Wrap = %v, want events.ErrInvalidEvent", err)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, body := range map[string]string{
		"not json":     "{",
		"other type":   `{"specversion":"1.0","type":"com.example.other","datacontenttype":"application/json","data":{}}`,
		"spec 0.3":     `{"specversion":"0.3","type":"kraftwatch.group.rebalance_needed.v1"}`,
		"bad hash":     `{"specversion":"1.0","type":"kraftwatch.group.rebalance_needed.v1","datacontenttype":"application/json","data":{"new_hash":"x"}}`,
		"missing data": `{"specversion":"1.0","type":"kraftwatch.group.rebalance_needed.v1","datacontenttype":"application/json"}`,
	} {
		if _, err := events.DecodeRebalanceNeeded([]byte(body)); !errors.Is(err, events.ErrNotEvent) {
			t.Errorf("%s: events.DecodeRebalanceNeeded = %v, want events.ErrNotEvent", name, err)
		}
	}
}

func TestMsgID(t *testing.T) {
	base := goldenEvent()
	id := base.MsgID()
	same := []func(*events.RebalanceNeeded){
		func(e *events.RebalanceNeeded) { e.PreviousHash = events.NullHash{} },
		func(e *events.RebalanceNeeded) { e.Reasons = nil },
		func(e *events.RebalanceNeeded) { e.Time = time.Now() },
		func(e *events.RebalanceNeeded) { e.CoordinatorEpoch = 7 },
		func(e *events.RebalanceNeeded) { e.MetadataEpoch = 6 },
	}
	for i, edit := range same {
		ev := goldenEvent()
		edit(&ev)
		if got := ev.MsgID(); got != id {
			t.Errorf("same-transition edit %d changed the id: %s vs %s", i, got, id)
		}
	}
	differ := map[string]func(*events.RebalanceNeeded){
		"cluster":         func(e *events.RebalanceNeeded) { e.ClusterID = "other" },
		"group":           func(e *events.RebalanceNeeded) { e.GroupID = "orders.app2" },
		"group type":      func(e *events.RebalanceNeeded) { e.GroupType = events.ShareGroup },
		"scheme":          func(e *events.RebalanceNeeded) { e.HashScheme = events.SchemeKafka },
		"new hash":        func(e *events.RebalanceNeeded) { e.NewHash++ },
		"metadata offset": func(e *events.RebalanceNeeded) { e.MetadataOffset++ },
		"offsets offset": func(e *events.RebalanceNeeded) {
			e.ConsumerOffsets = &events.OffsetsPosition{Partition: 17, Offset: 9002}
		},
		"no offsets": func(e *events.RebalanceNeeded) { e.ConsumerOffsets = nil },
		// Length-prefixed fields: moving bytes between them changes the id.
		"boundary": func(e *events.RebalanceNeeded) { e.ClusterID, e.GroupID = e.ClusterID+"o", "rders.app" },
	}
	seen := map[string]string{id: "base"}
	for name, edit := range differ {
		ev := goldenEvent()
		edit(&ev)
		got := ev.MsgID()
		if other, ok := seen[got]; ok {
			t.Errorf("%s: id %s equals that of %s", name, got, other)
		}
		seen[got] = name
	}
}

func TestCauseDominates(t *testing.T) {
	co := func(p int32, o int64) *events.OffsetsPosition {
		return &events.OffsetsPosition{Partition: p, Offset: o}
	}
	for _, tc := range []struct {
		name string
		a, b events.Cause
		want bool
	}{
		{"later metadata", events.Cause{MetadataOffset: 20}, events.Cause{MetadataOffset: 10}, true},
		{"earlier metadata", events.Cause{MetadataOffset: 10}, events.Cause{MetadataOffset: 20}, false},
		{"equal", events.Cause{MetadataOffset: 10}, events.Cause{MetadataOffset: 10}, true},
		{"later offsets", events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 8)}, events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, true},
		{"earlier offsets", events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 8)}, false},
		{"offsets over none", events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 0)}, events.Cause{MetadataOffset: 10}, true},
		{"none under offsets", events.Cause{MetadataOffset: 10}, events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 0)}, false},
		// A replica ahead in the metadata log and behind in __consumer_offsets (and the
		// other way round) is behind in one of them.
		{"crossed, behind in offsets", events.Cause{MetadataOffset: 110, ConsumerOffsets: co(1, 0)}, events.Cause{MetadataOffset: 106, ConsumerOffsets: co(1, 50)}, false},
		{"crossed, behind in metadata", events.Cause{MetadataOffset: 106, ConsumerOffsets: co(1, 50)}, events.Cause{MetadataOffset: 110, ConsumerOffsets: co(1, 0)}, false},
		{"both later", events.Cause{MetadataOffset: 20, ConsumerOffsets: co(3, 9)}, events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, true},
		{"other partition, later metadata", events.Cause{MetadataOffset: 20, ConsumerOffsets: co(4, 1)}, events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, true},
		{"other partition, earlier metadata", events.Cause{MetadataOffset: 5, ConsumerOffsets: co(4, 9)}, events.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, false},
	} {
		if got := tc.a.Dominates(tc.b); got != tc.want {
			t.Errorf("%s: Dominates = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEnumText(t *testing.T) {
	for _, g := range []events.GroupType{events.ClassicGroup, events.ConsumerGroup, events.ShareGroup, events.StreamsGroup} {
		back, err := events.ParseGroupType(g.String())
		if err != nil || back != g {
			t.Errorf("events.ParseGroupType(%q) = %v, %v", g, back, err)
		}
	}
	if _, err := events.ParseGroupType("unknown"); err == nil {
		t.Error("events.ParseGroupType(unknown) succeeded")
	}
	for k := events.TopicCreated; k <= events.RegexMatched; k++ {
		back, err := events.ParseReasonKind(k.String())
		if err != nil || back != k {
			t.Errorf("events.ParseReasonKind(%q) = %v, %v", k, back, err)
		}
	}
	if s := events.ReasonKind(99).String(); s != "unknown" {
		t.Errorf("events.ReasonKind(99) = %q", s)
	}
}
