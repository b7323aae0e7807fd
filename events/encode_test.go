package events_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
)

// encodeEvent is a valid event using every field.
func encodeEvent() events.RebalanceNeeded {
	return events.RebalanceNeeded{
		ClusterID:    "Zm9vYmFyYmF6cXV4MTIzNA",
		GroupID:      "orders.app",
		GroupType:    events.ConsumerGroup,
		HashScheme:   events.SchemeMurmur3,
		PreviousHash: events.SomeHash(6148914691236517205),
		NewHash:      -6148914691236517206,
		Reasons: []events.Reason{
			{Kind: events.PartitionsAdded, Topic: "orders", TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ", OldPartitions: 3, NewPartitions: 6,
				MetadataOffset: 1230, Time: time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC)},
			{Kind: events.RegexMatched, Topic: "orders-eu", TopicID: "Zm9vYmFyYmF6cXV4MTIzNA", Regex: "orders-.*", NewPartitions: 1,
				MetadataOffset: 1187, Time: time.Date(2025, 11, 3, 14, 12, 1, 5000000, time.FixedZone("x", 5400))},
			{Kind: events.TopicRecreated, Topic: "c", TopicID: "CCCCCCCCCCCCCCCCCCCCCC", OldTopicID: "DDDDDDDDDDDDDDDDDDDDDD"},
			{Kind: events.SubscriptionChanged, Topic: ""},
		},
		Topics: []events.CoveredTopic{
			{Name: "orders", TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ", Partitions: 6, Hash: 3131961357},
			{Name: "orders-eu", TopicID: "Zm9vYmFyYmF6cXV4MTIzNA", Partitions: 1, Hash: -8070450532247928832},
		},
		TopicsTruncated:  true,
		Cause:            events.Cause{MetadataOffset: 1234, MetadataEpoch: 5, ConsumerOffsets: &events.OffsetsPosition{Partition: 17, Offset: 9001}},
		CoordinatorEpoch: 42,
		Time:             time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC),
	}
}

// checkMarshal fails t unless Marshal gives json.Marshal's bytes for ev's envelope and
// its id (or both refuse it).
func checkMarshal(t *testing.T, ev events.RebalanceNeeded) {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	env, err := ev.Wrap(now)
	if err != nil {
		return // not an event kraftwatch publishes
	}
	want, err := json.Marshal(env)
	id, got, gotErr := ev.Marshal(now)
	if (gotErr == nil) != (err == nil) {
		t.Fatalf("Marshal error %v, json.Marshal error %v", gotErr, err)
	}
	if gotErr == nil && (!bytes.Equal(got, want) || id != env.ID) {
		t.Fatalf("Marshal gives id %s\n%s\njson.Marshal gives id %s\n%s", id, got, env.ID, want)
	}
}

func TestMarshalMatchesJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*events.RebalanceNeeded)
	}{
		{"every field", func(*events.RebalanceNeeded) {}},
		{"first event", func(e *events.RebalanceNeeded) { e.PreviousHash = events.NullHash{} }},
		{"no reasons", func(e *events.RebalanceNeeded) { e.Reasons = nil }},
		{"no topics", func(e *events.RebalanceNeeded) { e.Topics, e.TopicsTruncated = nil, false }},
		{"empty topics", func(e *events.RebalanceNeeded) { e.Topics, e.TopicsTruncated = []events.CoveredTopic{}, false }},
		{"no consumer offsets", func(e *events.RebalanceNeeded) {
			e.ConsumerOffsets = nil
			e.CoordinatorEpoch = -1
			e.MetadataEpoch = -1
		}},
		{"zero time", func(e *events.RebalanceNeeded) { e.Time = time.Time{} }},
		{"time in a zone", func(e *events.RebalanceNeeded) {
			e.Time = time.Date(2025, 1, 1, 0, 0, 0, 1, time.FixedZone("y", -3600))
		}},
		{"year 10000", func(e *events.RebalanceNeeded) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"reason year 10000", func(e *events.RebalanceNeeded) { e.Reasons[0].Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"kafka scheme, streams group", func(e *events.RebalanceNeeded) { e.HashScheme, e.GroupType = events.SchemeKafka, events.StreamsGroup }},
		{"escapes", func(e *events.RebalanceNeeded) {
			e.GroupID = "a\"b\\c\b\f\n\r\t\x00\x1f<>&\u2028\u2029é🚀\xff\xc3x\x7f"
			e.ClusterID = "<&>"
			e.Reasons[0].Topic = "\u2028t<"
			e.Reasons[1].Regex = "a\\.*\""
			e.Topics[0].Name = "&\x01"
		}},
		{"long group id", func(e *events.RebalanceNeeded) { e.GroupID = strings.Repeat("long.", 2000) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := encodeEvent()
			tc.edit(&ev)
			checkMarshal(t, ev)
		})
	}
}

func FuzzMarshal(f *testing.F) {
	f.Add("orders.app", "orders", "orders-.*", "orders", int64(-6148914691236517206), int64(1234), int64(1_700_000_000_123_456_789), -1)
	f.Add("a\"b\\c\n\x00<>&\u2028é\xff", "\u2029", "", "&", int64(0), int64(0), int64(0), 3600)
	f.Fuzz(func(t *testing.T, group, topic, regex, name string, hash, offset, nanos int64, zone int) {
		ev := encodeEvent()
		ev.GroupID, ev.NewHash, ev.MetadataOffset = group, events.Hash(hash), offset
		ev.Reasons[0].Topic = topic
		ev.Reasons[1].Regex = regex
		ev.Topics[0].Name = name
		ev.Time = time.Unix(0, nanos).In(time.FixedZone("z", zone%(48*3600)))
		ev.Reasons[0].Time = ev.Time
		checkMarshal(t, ev)
	})
}
