package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/publish"
)

func epochRecord(t *testing.T, group string, offset int64, epoch int32, hash int64, at time.Time) groups.Message {
	t.Helper()
	key, value, err := groupstest.Encode(&groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: group,
		Value: &groups.ConsumerGroupMetadataValue{Epoch: epoch, MetadataHash: hash, CreationTimeMs: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return groups.Message{Partition: 0, Offset: offset, Key: key, Value: value, Time: at}
}

// assignmentRecord encodes a target assignment metadata record of a coordinator that
// does not batch (before Kafka 4.3: no AssignmentTimestamp), as it writes one after
// each bump.
func assignmentRecord(t *testing.T, group string, offset int64, epoch int32, at time.Time) groups.Message {
	t.Helper()
	key, value, err := groupstest.Encode(&groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: group,
		Value: &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: epoch}})
	if err != nil {
		t.Fatal(err)
	}
	return groups.Message{Partition: 0, Offset: offset, Key: key, Value: value, Time: at}
}

// rebalancedEvents returns the rebalanced events stored for a consumer group, oldest first.
func rebalancedEvents(t *testing.T, js jetstream.JetStream, group string, n int) []events.Envelope[events.GroupRebalanced] {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, "KRAFTWATCH_cluster-1")
	if err != nil {
		t.Fatal(err)
	}
	subject := "kraftwatch.cluster-1.rebalanced.consumer." + events.EscapeToken(group)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
		if err != nil {
			t.Fatal(err)
		}
		if got := int(info.State.Subjects[subject]); got >= n || time.Now().After(deadline) {
			if got != n {
				t.Fatalf("%s: %d rebalanced events, want %d", group, got, n)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Envelope[events.GroupRebalanced]
	for len(out) < n {
		msg, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.DecodeGroupRebalanced(msg.Data())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, env)
	}
	return out
}

// TestRunRebalanced: a bump replayed at start-up is announced once; a live bump after a
// member joined links the rebalance-needed event the join caused (the coordinator's
// stored hash is the kafka-scheme hash of the group's topics), with the lead time from
// that event to the bump record; a restart that replays both announces neither again.
func TestRunRebalanced(t *testing.T) {
	nc, js := startNATS(t)
	m0 := replay(t, image.Empty, 10,
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=orders TopicID="+orders,
		"PartitionRecord TopicID="+orders+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	kafka, err := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	if err != nil {
		t.Fatal(err)
	}
	stored := kafka.GroupHash(hashcache.ImageCluster{Image: m0.Image}, []string{"orders"})
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	records := []groups.Message{epochRecord(t, "billing", 1, 1, 0, t0)}

	e, stop := run(t, nc, m0, records...)
	first := rebalancedEvents(t, js, "billing", 1)[0]
	if d := first.Data; d.PreviousEpoch != nil || d.NewEpoch != 1 || len(d.Causes) != 1 || d.Causes[0].Kind != events.UnknownCause {
		t.Fatalf("replayed bump: %+v", d)
	}
	joined := member(t, "billing", 2, "orders")
	joined.Time = t0.Add(time.Second)
	if err := e.OnGroupRecord(joined); err != nil {
		t.Fatal(err)
	}
	needed := waitEvents(t, js, "billing", 1)[0]
	if err := e.OnGroupRecord(epochRecord(t, "billing", 3, 2, stored, t0.Add(1500*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	// The group's bump is held until its assignment record shows the coordinator does
	// not batch; it is still told at its bump record.
	assigned := assignmentRecord(t, "billing", 4, 2, t0.Add(1600*time.Millisecond))
	if err := e.OnGroupRecord(assigned); err != nil {
		t.Fatal(err)
	}
	second := rebalancedEvents(t, js, "billing", 2)[1]
	d := second.Data
	if d.PreviousEpoch == nil || *d.PreviousEpoch != 1 || d.NewEpoch != 2 || d.ConsumerOffsets.Offset != 3 || !second.Time.Equal(t0.Add(1500*time.Millisecond)) {
		t.Fatalf("live bump: %+v at %v", d, second.Time)
	}
	if len(d.Causes) != 2 || d.Causes[0].Kind != events.CauseMemberJoined || d.Causes[0].MemberID != "m1" ||
		d.Causes[1].Kind != events.CauseMetadata {
		t.Fatalf("live bump causes: %+v", d.Causes)
	}
	p := d.Causes[1].PredictedBy
	if p == nil || p.EventID != needed.ID || p.LeadTimeMs != 500 || p.NewHash != needed.Data.NewHash {
		t.Fatalf("prediction %+v, want event %s 500 ms before", p, needed.ID)
	}
	// The history belongs to the engine's goroutine: read it there. The bump was
	// recorded before the Query is served, in the same goroutine as its event.
	var evs []HistoryEvent
	if err := e.Query(context.Background(), func(v *View) {
		evs = slices.Clone(v.History.Events(events.GroupKey{Type: events.ConsumerGroup, ID: "billing"}))
	}); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[2].Type != events.TypeGroupRebalanced {
		t.Fatalf("history: %+v", evs)
	}
	if h := evs[2]; !h.HasPreviousHash || h.PreviousHash != 0 || !h.HasNewHash || h.NewHash != stored {
		t.Fatalf("history of the bump: %+v, want the metadata cause's hashes 0 -> %d", h, stored)
	}
	stop()

	e2, stop2 := run(t, nc, m0, records[0], joined, epochRecord(t, "billing", 3, 2, stored, t0.Add(1500*time.Millisecond)), assigned)
	defer stop2()
	pub := e2.cfg.Publisher.(*publish.Publisher)
	deadline := time.Now().Add(10 * time.Second)
	for s := pub.Stats(); s.AlreadyPublished+s.Superseded+s.Published < 2; s = pub.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("restarted publisher: %+v, want both bumps handled", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := pub.Stats(); s.Published != 0 {
		t.Fatalf("restart published again: %+v", s)
	}
	rebalancedEvents(t, js, "billing", 2)
}
