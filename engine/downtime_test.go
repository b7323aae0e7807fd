package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/image/imagetest"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// replayAt applies metadata records to base as one batch whose records start at offset
// and whose append time is ts, stamping each record as the observer does.
func replayAt(t *testing.T, base *image.Image, offset int64, ts time.Time, lines ...string) observer.Update {
	t.Helper()
	d := image.NewDelta(base)
	for i, l := range lines {
		d.At(offset+int64(i), ts.UnixMilli())
		imagetest.Lines(t, d, nil, l)
	}
	im, ch := d.Apply(image.Provenance{Offset: offset + int64(len(lines)) - 1, Epoch: 1, Timestamp: ts.UnixMilli()})
	return observer.Update{Image: im, Changes: ch, Provenance: im.Provenance()}
}

// id is the text form of a topic id ending in n.
func id(n byte) string {
	var u image.UUID
	u[15] = n
	return u.String()
}

// TestRestartAfterDowntime: changes made while kraftwatch is stopped are announced at
// start-up with the reasons a live run gives (recreated, deleted, partitions_added,
// racks_changed, created, subscription_changed), each with the offset and time of the
// record that made it; the event's time is the latest of them and previous_hash the
// hash last announced.
func TestRestartAfterDowntime(t *testing.T) {
	nc, js := startNATS(t)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	part := func(topic string, p int, broker int) string {
		return fmt.Sprintf("PartitionRecord TopicID=%s PartitionID=%d Replicas=%d ISR=%d Leader=%d", topic, p, broker, broker, broker)
	}
	m0 := replayAt(t, image.Empty, 10, t0,
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"RegisterBrokerRecord BrokerID=2 BrokerEpoch=2 Rack=b",
		"TopicRecord Name=orders TopicID="+id(1), part(id(1), 0, 1),
		"TopicRecord Name=gone TopicID="+id(2), part(id(2), 0, 1),
		"TopicRecord Name=grow TopicID="+id(3), part(id(3), 0, 1),
		"TopicRecord Name=moved TopicID="+id(4), part(id(4), 0, 2),
		"TopicRecord Name=extra TopicID="+id(5), part(id(5), 0, 1))
	billing := member(t, "billing", 1, "orders", "gone", "grow", "moved", "fresh")
	subs := member(t, "subs", 2, "orders")
	rx := record(t, 4, &groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "rx", MemberID: "m1",
		Value: &groups.ConsumerGroupMemberMetadataValue{SubscribedTopicNames: []string{"grow"}, SubscribedTopicRegex: "fr.*"}})
	_, stop := run(t, nc, m0, billing, subs, rx)
	first := waitEvents(t, js, "billing", 1)[0].Data
	if len(first.Topics) != 4 || first.Topics[0].Name != "gone" || first.TopicsTruncated {
		t.Fatalf("first event topics: %+v", first.Topics)
	}
	firstSubs := waitEvents(t, js, "subs", 1)[0].Data
	stop()

	// While stopped: one batch per change, each at its own offset and time.
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	m := replayAt(t, m0.Image, 100, at(1), "RemoveTopicRecord TopicID="+id(1))
	m = replayAt(t, m.Image, 101, at(2), "TopicRecord Name=orders TopicID="+id(6), part(id(6), 0, 1))
	m = replayAt(t, m.Image, 110, at(3), "RemoveTopicRecord TopicID="+id(2))
	m = replayAt(t, m.Image, 120, at(4), part(id(3), 1, 1))
	m = replayAt(t, m.Image, 130, at(5), "RegisterBrokerRecord BrokerID=2 BrokerEpoch=3 Rack=c")
	m = replayAt(t, m.Image, 140, at(6), "TopicRecord Name=fresh TopicID="+id(7), part(id(7), 0, 1))
	// Observer start-up: the whole log after the last event arrives as one image.
	m.Changes = image.Diff(m0.Image, m.Image)
	resubscribed := member(t, "subs", 3, "orders", "extra")
	resubscribed.Time = at(7)

	_, stop = run(t, nc, m, billing, subs, rx, resubscribed)
	defer stop()
	got := waitEvents(t, js, "billing", 2)[1]
	type want struct {
		kind   events.ReasonKind
		topic  string
		offset int64
		time   time.Time
	}
	check := func(env events.Envelope[events.RebalanceNeeded], ws []want) {
		t.Helper()
		rs := env.Data.Reasons
		if len(rs) != len(ws) {
			t.Fatalf("%s: reasons %+v, want %d", env.Data.GroupID, rs, len(ws))
		}
		for i, w := range ws {
			r := rs[i]
			if r.Kind != w.kind || r.Topic != w.topic || r.MetadataOffset != w.offset || !r.Time.Equal(w.time) {
				t.Errorf("%s: reason %d: %s %s offset %d time %v, want %s %s offset %d time %v",
					env.Data.GroupID, i, r.Kind, r.Topic, r.MetadataOffset, r.Time, w.kind, w.topic, w.offset, w.time)
			}
		}
	}
	check(got, []want{
		{events.TopicCreated, "fresh", 140, at(6)},
		{events.TopicDeleted, "gone", 110, at(3)},
		{events.PartitionsAdded, "grow", 120, at(4)},
		{events.RacksChanged, "moved", 130, at(5)},
		{events.TopicRecreated, "orders", 101, at(2)},
	})
	if r := got.Data.Reasons[4]; r.OldTopicID != id(1) || r.TopicID != id(6) {
		t.Errorf("recreated: old id %s new id %s, want %s %s", r.OldTopicID, r.TopicID, id(1), id(6))
	}
	if r := got.Data.Reasons[2]; r.OldPartitions != 1 || r.NewPartitions != 2 {
		t.Errorf("partitions_added %d -> %d, want 1 -> 2", r.OldPartitions, r.NewPartitions)
	}
	if !got.Time.Equal(at(6)) {
		t.Errorf("event time %v, want the latest change's %v", got.Time, at(6))
	}
	if !got.Data.PreviousHash.Valid || got.Data.PreviousHash.Hash != first.NewHash {
		t.Errorf("previous_hash %+v, want the last announced %d", got.Data.PreviousHash, first.NewHash)
	}
	if len(got.Data.Topics) != 4 || got.Data.Topics[0].Name != "fresh" {
		t.Errorf("topics %+v", got.Data.Topics)
	}
	gotSubs := waitEvents(t, js, "subs", 2)[1]
	check(gotSubs, []want{
		{events.SubscriptionChanged, "extra", 0, at(7)},
		{events.TopicRecreated, "orders", 101, at(2)},
	})
	gotRx := waitEvents(t, js, "rx", 2)[1]
	check(gotRx, []want{
		{events.RegexMatched, "fresh", 140, at(6)},
		{events.PartitionsAdded, "grow", 120, at(4)},
	})
	if r := gotRx.Data.Reasons[0]; r.Regex != "fr.*" {
		t.Errorf("rx: regex_matched fresh with regex %q, want fr.*", r.Regex)
	}
	if !gotSubs.Time.Equal(at(7)) || gotSubs.Data.PreviousHash.Hash != firstSubs.NewHash {
		t.Errorf("subs event time %v previous %+v, want %v and %d", gotSubs.Time, gotSubs.Data.PreviousHash, at(7), firstSubs.NewHash)
	}
}

// TestDowntimeReasonsTruncated: with the last event's list cut (or absent), the
// names it does not list are judged by their stamps: a topic changed after the last
// event is a reason of that kind, an unchanged one is none (not a subscription
// change), and a listed topic is compared as usual.
func TestDowntimeReasonsTruncated(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	m := replayAt(t, image.Empty, 10, t0,
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=a TopicID="+id(1), "PartitionRecord TopicID="+id(1)+" PartitionID=0 Replicas=1 ISR=1 Leader=1",
		"TopicRecord Name=b TopicID="+id(2), "PartitionRecord TopicID="+id(2)+" PartitionID=0 Replicas=1 ISR=1 Leader=1",
		"TopicRecord Name=c TopicID="+id(3), "PartitionRecord TopicID="+id(3)+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	m = replayAt(t, m.Image, 50, t0.Add(time.Minute), "PartitionRecord TopicID="+id(3)+" PartitionID=1 Replicas=1 ISR=1 Leader=1")
	m = replayAt(t, m.Image, 60, t0.Add(2*time.Minute), "TopicRecord Name=d TopicID="+id(4),
		"PartitionRecord TopicID="+id(4)+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	cov := func(name string, n byte, parts int32, h int64) events.CoveredTopic {
		return events.CoveredTopic{Name: name, TopicID: id(n), Partitions: parts, Hash: events.Hash(h)}
	}
	now := []events.CoveredTopic{cov("a", 1, 1, 11), cov("b", 2, 1, 12), cov("c", 3, 2, 13), cov("d", 4, 1, 14)}
	for _, tc := range []struct {
		name string
		last publish.Last
		want string
	}{
		{"truncated", publish.Last{Cause: events.Cause{MetadataOffset: 40}, Topics: []events.CoveredTopic{cov("a", 1, 1, 99)}, TopicsTruncated: true},
			"racks_changed a @12; partitions_added c @50; regex_matched d @60"},
		{"absent", publish.Last{Cause: events.Cause{MetadataOffset: 40}},
			"partitions_added c @50; regex_matched d @60"},
		{"complete", publish.Last{Cause: events.Cause{MetadataOffset: 40}, Topics: []events.CoveredTopic{cov("a", 1, 1, 11), cov("c", 3, 1, 3)}},
			"subscription_changed b @0; partitions_added c @50; regex_matched d @60"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range downtimeReasons(newStamper(m.Image), tc.last, now, time.Time{}, func(topic string) string {
				if topic == "d" {
					return "[d-z]"
				}
				return ""
			}) {
				got = append(got, fmt.Sprintf("%s %s @%d", r.Kind, r.Topic, r.MetadataOffset))
			}
			if s := strings.Join(got, "; "); s != tc.want {
				t.Errorf("got  %s\nwant %s", s, tc.want)
			}
		})
	}
}
