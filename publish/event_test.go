package publish_test

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

	"github.com/kraftwatch/kraftwatch/publish"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata/")

const clusterID = "MkU3OEVBNTcwNTJENDM2Qk"

// goldenEvent is the example event of testdata/rebalance_needed.golden.json.
func goldenEvent() publish.Event {
	return publish.Event{
		ClusterID:    clusterID,
		GroupID:      "orders.app",
		GroupType:    publish.ConsumerGroup,
		HashScheme:   publish.SchemeMurmur3,
		PreviousHash: publish.SomeHash(6148914691236517205),
		NewHash:      -6148914691236517206,
		Reasons: []publish.Reason{
			{Kind: publish.PartitionsAdded, Topic: "orders", TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ", OldPartitions: 3, NewPartitions: 6,
				MetadataOffset: 1230, Time: time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC)},
			{Kind: publish.RegexMatched, Topic: "orders-eu", TopicID: "Zm9vYmFyYmF6cXV4MTIzNA", Regex: "orders-.*", NewPartitions: 1,
				MetadataOffset: 1187, Time: time.Date(2025, 11, 3, 14, 12, 1, 5000000, time.UTC)},
		},
		Topics: []publish.CoveredTopic{
			{Name: "orders", TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ", Partitions: 6, Hash: 3131961357},
			{Name: "orders-eu", TopicID: "Zm9vYmFyYmF6cXV4MTIzNA", Partitions: 1, Hash: -8070450532247928832},
		},
		Cause: publish.Cause{
			MetadataOffset:  1234,
			MetadataEpoch:   5,
			ConsumerOffsets: &publish.OffsetsPosition{Partition: 17, Offset: 9001},
		},
		CoordinatorEpoch: 42,
		Time:             time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC),
	}
}

func goldenBody(t testing.TB) []byte {
	t.Helper()
	env, err := goldenEvent().Wrap(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestGolden pins the wire form. Regenerate with: go test ./publish -run TestGolden -rewrite
func TestGolden(t *testing.T) {
	got := goldenBody(t)
	path := filepath.Join("testdata", "rebalance_needed.golden.json")
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
	validateEvent(t, got)

	env, err := publish.Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if ev := goldenEvent(); !reflect.DeepEqual(env.Data, ev) {
		t.Fatalf("Decode gives\n%+v\nwant\n%+v", env.Data, ev)
	}
}

func TestEncodeEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*publish.Event)
	}{
		{"no previous hash", func(e *publish.Event) { e.PreviousHash = publish.NullHash{} }},
		{"extreme hashes", func(e *publish.Event) {
			e.PreviousHash, e.NewHash = publish.SomeHash(-1<<63), 1<<63-1
		}},
		{"zero hash", func(e *publish.Event) { e.NewHash = 0 }},
		{"no reasons", func(e *publish.Event) { e.Reasons = nil }},
		{"no consumer offsets", func(e *publish.Event) { e.ConsumerOffsets = nil; e.CoordinatorEpoch = -1 }},
		{"empty group id", func(e *publish.Event) { e.GroupID = "" }},
		{"odd group id", func(e *publish.Event) { e.GroupID = "a.*.> \t%\x00é\u2028🚀" }},
		{"every kind", func(e *publish.Event) {
			e.GroupType = publish.StreamsGroup
			e.HashScheme = publish.SchemeKafka
			e.Reasons = []publish.Reason{
				{Kind: publish.TopicCreated, Topic: "a", TopicID: "AAAAAAAAAAAAAAAAAAAAAA", NewPartitions: 1},
				{Kind: publish.TopicDeleted, Topic: "b", TopicID: "BBBBBBBBBBBBBBBBBBBBBB", OldPartitions: 2},
				{Kind: publish.TopicRecreated, Topic: "c", TopicID: "CCCCCCCCCCCCCCCCCCCCCC", OldTopicID: "DDDDDDDDDDDDDDDDDDDDDD"},
				{Kind: publish.PartitionsAdded, Topic: "d", TopicID: "EEEEEEEEEEEEEEEEEEEEEE", OldPartitions: 1, NewPartitions: 2},
				{Kind: publish.RacksChanged, Topic: "e", TopicID: "FFFFFFFFFFFFFFFFFFFFFF"},
				{Kind: publish.SubscriptionChanged, Topic: "f"},
				{Kind: publish.RegexMatched, Topic: "g", TopicID: "GGGGGGGGGGGGGGGGGGGGGG", Regex: "g.*"},
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
			back, err := publish.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Reasons == nil {
				ev.Reasons = []publish.Reason{}
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
		edit func(*publish.Event)
	}{
		{"no cluster", func(e *publish.Event) { e.ClusterID = "" }},
		{"group id not UTF-8", func(e *publish.Event) { e.GroupID = "a\xff" }},
		{"topic not UTF-8", func(e *publish.Event) { e.Reasons[0].Topic = "a\xff" }},
		{"unknown group type", func(e *publish.Event) { e.GroupType = publish.UnknownGroup }},
		{"bad scheme", func(e *publish.Event) { e.HashScheme = "md5" }},
		{"unknown reason", func(e *publish.Event) { e.Reasons[0].Kind = publish.UnknownReason }},
		{"bad topic id", func(e *publish.Event) { e.Reasons[0].TopicID = "not-an-id" }},
		{"recreated without old id", func(e *publish.Event) { e.Reasons[0].Kind = publish.TopicRecreated }},
		{"regex without regex", func(e *publish.Event) { e.Reasons[0].Kind = publish.RegexMatched }},
		{"negative offset", func(e *publish.Event) { e.MetadataOffset = -1 }},
		{"bad coordinator epoch", func(e *publish.Event) { e.CoordinatorEpoch = -2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := goldenEvent()
			tc.edit(&ev)
			if _, err := ev.Wrap(time.Time{}); !errors.Is(err, publish.ErrInvalidEvent) {
				t.Fatalf("Wrap = %v, want ErrInvalidEvent", err)
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
		if _, err := publish.Decode([]byte(body)); !errors.Is(err, publish.ErrNotEvent) {
			t.Errorf("%s: Decode = %v, want ErrNotEvent", name, err)
		}
	}
}

func TestMsgID(t *testing.T) {
	base := goldenEvent()
	id := base.MsgID()
	same := []func(*publish.Event){
		func(e *publish.Event) { e.PreviousHash = publish.NullHash{} },
		func(e *publish.Event) { e.Reasons = nil },
		func(e *publish.Event) { e.Time = time.Now() },
		func(e *publish.Event) { e.CoordinatorEpoch = 7 },
		func(e *publish.Event) { e.MetadataEpoch = 6 },
	}
	for i, edit := range same {
		ev := goldenEvent()
		edit(&ev)
		if got := ev.MsgID(); got != id {
			t.Errorf("same-transition edit %d changed the id: %s vs %s", i, got, id)
		}
	}
	differ := map[string]func(*publish.Event){
		"cluster":         func(e *publish.Event) { e.ClusterID = "other" },
		"group":           func(e *publish.Event) { e.GroupID = "orders.app2" },
		"group type":      func(e *publish.Event) { e.GroupType = publish.ShareGroup },
		"scheme":          func(e *publish.Event) { e.HashScheme = publish.SchemeKafka },
		"new hash":        func(e *publish.Event) { e.NewHash++ },
		"metadata offset": func(e *publish.Event) { e.MetadataOffset++ },
		"offsets offset":  func(e *publish.Event) { e.ConsumerOffsets = &publish.OffsetsPosition{Partition: 17, Offset: 9002} },
		"no offsets":      func(e *publish.Event) { e.ConsumerOffsets = nil },
		// Length-prefixed fields: moving bytes between them changes the id.
		"boundary": func(e *publish.Event) { e.ClusterID, e.GroupID = e.ClusterID+"o", "rders.app" },
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

func TestCauseSupersedes(t *testing.T) {
	co := func(p int32, o int64) *publish.OffsetsPosition {
		return &publish.OffsetsPosition{Partition: p, Offset: o}
	}
	for _, tc := range []struct {
		name string
		a, b publish.Cause
		want bool
	}{
		{"later metadata", publish.Cause{MetadataOffset: 20}, publish.Cause{MetadataOffset: 10}, true},
		{"earlier metadata", publish.Cause{MetadataOffset: 10}, publish.Cause{MetadataOffset: 20}, false},
		{"equal", publish.Cause{MetadataOffset: 10}, publish.Cause{MetadataOffset: 10}, false},
		{"later offsets", publish.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 8)}, publish.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, true},
		{"offsets over none", publish.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 0)}, publish.Cause{MetadataOffset: 10}, true},
		{"crossed", publish.Cause{MetadataOffset: 20, ConsumerOffsets: co(3, 5)}, publish.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, false},
		{"both later", publish.Cause{MetadataOffset: 20, ConsumerOffsets: co(3, 9)}, publish.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, true},
		{"other partition", publish.Cause{MetadataOffset: 20, ConsumerOffsets: co(4, 9)}, publish.Cause{MetadataOffset: 10, ConsumerOffsets: co(3, 7)}, false},
	} {
		if got := tc.a.Supersedes(tc.b); got != tc.want {
			t.Errorf("%s: Supersedes = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEnumText(t *testing.T) {
	for _, g := range []publish.GroupType{publish.ClassicGroup, publish.ConsumerGroup, publish.ShareGroup, publish.StreamsGroup} {
		back, err := publish.ParseGroupType(g.String())
		if err != nil || back != g {
			t.Errorf("ParseGroupType(%q) = %v, %v", g, back, err)
		}
	}
	if _, err := publish.ParseGroupType("unknown"); err == nil {
		t.Error("ParseGroupType(unknown) succeeded")
	}
	for k := publish.TopicCreated; k <= publish.RegexMatched; k++ {
		back, err := publish.ParseReasonKind(k.String())
		if err != nil || back != k {
			t.Errorf("ParseReasonKind(%q) = %v, %v", k, back, err)
		}
	}
	if s := publish.ReasonKind(99).String(); s != "unknown" {
		t.Errorf("ReasonKind(99) = %q", s)
	}
}
