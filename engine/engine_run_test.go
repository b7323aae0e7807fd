package engine

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/image/imagetest"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// replay applies metadata records (in their text form) to base.
func replay(t testing.TB, base *image.Image, offset int64, lines ...string) observer.Update {
	t.Helper()
	d := image.NewDelta(base)
	imagetest.Lines(t, d, nil, lines...)
	im, ch := d.Apply(image.Provenance{Offset: offset, Epoch: 1, Timestamp: time.Now().UnixMilli()})
	return observer.Update{Image: im, Changes: ch, Provenance: im.Provenance()}
}

func member(t testing.TB, group string, offset int64, topics ...string) groups.Message {
	t.Helper()
	key, value, err := groupstest.Encode(&groups.Record{
		Type: groups.ConsumerGroupMemberMetadata, GroupID: group, MemberID: "m1",
		Value: &groups.ConsumerGroupMemberMetadataValue{SubscribedTopicNames: topics},
	})
	if err != nil {
		t.Fatal(err)
	}
	return groups.Message{Partition: 0, Offset: offset, Key: key, Value: value}
}

const orders = "AAAAAAAAAAAAAAAAAAAAAQ"

// startNATS starts an in-process JetStream server for the test and connects to it.
func startNATS(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(natstest.Start(t).ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// run starts an engine and a publisher on nc, feeds them, and returns once the engine
// is ready; stop ends both.
func run(t *testing.T, nc *nats.Conn, meta observer.Update, records ...groups.Message) (e *Engine, stop func()) {
	t.Helper()
	pub, err := publish.New(publish.Config{Conn: nc, ClusterID: "cluster-1", HashScheme: "murmur3"})
	if err != nil {
		t.Fatal(err)
	}
	caughtUp := make(chan struct{})
	e, err = New(Config{ClusterID: "cluster-1", Scheme: "murmur3", GroupsCaughtUp: caughtUp, Publisher: pub, Rebalanced: true,
		Exclude: regexp.MustCompile(`^(?:skip-.*)$`)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pubDone, engDone := make(chan error, 1), make(chan error, 1)
	go func() { pubDone <- pub.Run(ctx) }()
	go func() { engDone <- e.Run(ctx) }()
	e.OnMetadata(meta)
	for _, m := range records {
		if err := e.OnGroupRecord(m); err != nil {
			t.Fatal(err)
		}
	}
	close(caughtUp)
	deadline := time.Now().Add(10 * time.Second)
	for e.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("engine not ready: %v", e.Ready())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return e, func() {
		cancel()
		<-engDone
		<-pubDone
	}
}

// events returns the events stored for group so far, oldest first.
func storedEvents(t *testing.T, js jetstream.JetStream, group string) []events.Envelope[events.RebalanceNeeded] {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, "KRAFTWATCH_cluster-1")
	if err != nil {
		t.Fatal(err)
	}
	subject := "kraftwatch.cluster-1.group.consumer." + events.EscapeToken(group)
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	n := int(info.State.Subjects[subject])
	var out []events.Envelope[events.RebalanceNeeded]
	for len(out) < n {
		msg, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		env, err := events.DecodeRebalanceNeeded(msg.Data())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, env)
	}
	return out
}

// waitEvents waits until group has n stored events.
func waitEvents(t *testing.T, js jetstream.JetStream, group string, n int) []events.Envelope[events.RebalanceNeeded] {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs := storedEvents(t, js, group)
		if len(evs) >= n || time.Now().After(deadline) {
			if len(evs) != n {
				t.Fatalf("group %s has %d events, want %d", group, len(evs), n)
			}
			return evs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunStartupLiveRestart drives the engine with a real publisher on an in-process
// JetStream: a group's first event at start-up, an excluded group never announced, a
// live change, a restart that repeats nothing, and a change made while stopped
// announced once.
func TestRunStartupLiveRestart(t *testing.T) {
	nc, js := startNATS(t)
	m0 := replay(t, image.Empty, 10,
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=orders TopicID="+orders,
		"PartitionRecord TopicID="+orders+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	records := []groups.Message{member(t, "billing", 1, "orders"), member(t, "skip-me", 2, "orders")}

	e, stop := run(t, nc, m0, records...)
	first := waitEvents(t, js, "billing", 1)[0].Data
	if first.PreviousHash.Valid || len(first.Reasons) != 1 || first.Reasons[0].Kind != events.SubscriptionChanged {
		t.Fatalf("first event: %+v", first)
	}
	m1 := replay(t, m0.Image, 20, "PartitionRecord TopicID="+orders+" PartitionID=1 Replicas=1 ISR=1 Leader=1")
	e.OnMetadata(m1)
	evs := waitEvents(t, js, "billing", 2)
	second := evs[1].Data
	if !second.PreviousHash.Valid || second.PreviousHash.Hash != first.NewHash || second.NewHash == first.NewHash {
		t.Fatalf("second event hashes: previous %+v new %d, first new %d", second.PreviousHash, second.NewHash, first.NewHash)
	}
	if len(second.Reasons) != 1 || second.Reasons[0].Kind != events.PartitionsAdded ||
		second.Reasons[0].OldPartitions != 1 || second.Reasons[0].NewPartitions != 2 {
		t.Fatalf("second event reasons: %+v", second.Reasons)
	}
	if second.MetadataOffset != 20 {
		t.Fatalf("second event at metadata offset %d, want 20", second.MetadataOffset)
	}
	// A group that appears while live: its event is timed by its record.
	joined := member(t, "late", 3, "orders")
	joined.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := e.OnGroupRecord(joined); err != nil {
		t.Fatal(err)
	}
	if late := waitEvents(t, js, "late", 1)[0]; !late.Time.Equal(joined.Time) {
		t.Fatalf("live group event time %v, want its record's %v", late.Time, joined.Time)
	}
	if got := storedEvents(t, js, "skip-me"); len(got) != 0 {
		t.Fatalf("excluded group announced: %+v", got)
	}
	// billing's first event and late's are subscription_changed, billing's second
	// partitions_added.
	var byReason [events.NumReasonKinds]uint64
	byReason[events.SubscriptionChanged], byReason[events.PartitionsAdded] = 2, 1
	if s := e.Stats(); s.Groups != 3 || s.Decisions != 3 || s.DecisionReasons != byReason {
		t.Fatalf("stats: %+v", s)
	}
	stop()

	// Restart on the same image: nothing new to say. Ready means the start-up
	// comparison is done: with no decision nothing was enqueued, so the stream keeps
	// its two events.
	e, stop = run(t, nc, m1, records...)
	if s := e.Stats(); s.Decisions != 0 {
		t.Fatalf("restart decided %d times, want 0", s.Decisions)
	}
	waitEvents(t, js, "billing", 2)
	stop()

	// A third partition added while kraftwatch was down: announced once at start-up.
	m2 := replay(t, m1.Image, 30, "PartitionRecord TopicID="+orders+" PartitionID=2 Replicas=1 ISR=1 Leader=1")
	_, stop = run(t, nc, m2, records...)
	evs = waitEvents(t, js, "billing", 3)
	if third := evs[2].Data; third.PreviousHash.Hash != second.NewHash || third.MetadataOffset != 30 {
		t.Fatalf("third event: %+v", third)
	}
	stop()
}

// TestPreviousHashIsLastAnnounced: previous_hash chains to the group's last event,
// whatever the Tracker computed in between. A group first seen reading no existing
// topic (hash 0, never announced) has none; a group whose records are all removed and
// that is created again chains to the event announced before its removal.
func TestPreviousHashIsLastAnnounced(t *testing.T) {
	nc, js := startNATS(t)
	m0 := replay(t, image.Empty, 10, "RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a")
	e, stop := run(t, nc, m0, member(t, "early", 1, "later"))
	defer stop()
	if got := storedEvents(t, js, "early"); len(got) != 0 {
		t.Fatalf("a group reading no existing topic was announced: %+v", got)
	}
	later := "AAAAAAAAAAAAAAAAAAAAAg"
	e.OnMetadata(replay(t, m0.Image, 20,
		"TopicRecord Name=later TopicID="+later,
		"PartitionRecord TopicID="+later+" PartitionID=0 Replicas=1 ISR=1 Leader=1"))
	first := waitEvents(t, js, "early", 1)[0].Data
	if first.PreviousHash.Valid {
		t.Fatalf("first event previous_hash = %d, want null (hash 0 was never announced)", first.PreviousHash.Hash)
	}

	// The member leaves (tombstone) while the group's metadata record stays: the
	// group's hash drops to 0 and is announced.
	if err := e.OnGroupRecord(record(t, 2, &groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "early",
		Value: &groups.ConsumerGroupMetadataValue{Epoch: 1}})); err != nil {
		t.Fatal(err)
	}
	if err := e.OnGroupRecord(tombstone(t, 3, &groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "early", MemberID: "m1"})); err != nil {
		t.Fatal(err)
	}
	second := waitEvents(t, js, "early", 2)[1].Data
	if !second.PreviousHash.Valid || second.PreviousHash.Hash != first.NewHash || second.NewHash != 0 {
		t.Fatalf("after the member left: previous %+v new %d, want previous %d new 0", second.PreviousHash, second.NewHash, first.NewHash)
	}
	// The coordinator deletes the empty group, then it is created again: previous_hash
	// is the 0 announced before the deletion, not null.
	if err := e.OnGroupRecord(tombstone(t, 4, &groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "early"})); err != nil {
		t.Fatal(err)
	}
	if err := e.OnGroupRecord(member(t, "early", 5, "later")); err != nil {
		t.Fatal(err)
	}
	third := waitEvents(t, js, "early", 3)[2].Data
	if !third.PreviousHash.Valid || third.PreviousHash.Hash != 0 || third.NewHash != first.NewHash {
		t.Fatalf("after the group came back: previous %+v new %d, want previous 0 new %d", third.PreviousHash, third.NewHash, first.NewHash)
	}
}

// record encodes rec as the __consumer_offsets record at offset of partition 0.
func record(t *testing.T, offset int64, rec *groups.Record) groups.Message {
	t.Helper()
	key, value, err := groupstest.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	return groups.Message{Partition: 0, Offset: offset, Key: key, Value: value}
}

// tombstone is the tombstone of rec's key at offset of partition 0.
func tombstone(t *testing.T, offset int64, rec *groups.Record) groups.Message {
	t.Helper()
	return groups.Message{Partition: 0, Offset: offset, Key: groupstest.Key(rec)}
}

// TestInvalidEventNotFatal: a decision whose event the publisher refuses (a topic that
// shrank, which only a truncated log shows: its reason kind is unknown) is logged and
// counted, and the engine goes on deciding.
func TestInvalidEventNotFatal(t *testing.T) {
	nc, js := startNATS(t)
	lines := []string{
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=orders TopicID=" + orders,
		"PartitionRecord TopicID=" + orders + " PartitionID=0 Replicas=1 ISR=1 Leader=1",
	}
	m0 := replay(t, image.Empty, 10, append(lines, "PartitionRecord TopicID="+orders+" PartitionID=1 Replicas=1 ISR=1 Leader=1")...)
	e, stop := run(t, nc, m0, member(t, "billing", 1, "orders"))
	defer stop()
	waitEvents(t, js, "billing", 1)

	// A rebuild after a truncation: orders has one partition again.
	shrunk := replay(t, image.Empty, 5, lines...)
	e.OnMetadata(observer.Update{Image: shrunk.Image, Changes: image.Diff(m0.Image, shrunk.Image),
		Provenance: shrunk.Provenance, Reset: true, Reason: "truncated"})
	// It grows past its old size: announced as usual.
	e.OnMetadata(replay(t, shrunk.Image, 20, "PartitionRecord TopicID="+orders+" PartitionID=1 Replicas=1 ISR=1 Leader=1",
		"PartitionRecord TopicID="+orders+" PartitionID=2 Replicas=1 ISR=1 Leader=1"))
	evs := waitEvents(t, js, "billing", 2)
	if r := evs[1].Data.Reasons; len(r) != 1 || r[0].Kind != events.PartitionsAdded || evs[1].Data.MetadataOffset != 20 {
		t.Fatalf("event after the refused one: %+v", evs[1].Data)
	}
	if s := e.Stats(); s.InvalidEvents != 1 {
		t.Fatalf("InvalidEvents = %d, want 1", s.InvalidEvents)
	}
}

// TestLaggingReplicaNeverRollsBack: a replica that is ahead in the metadata log but
// behind in __consumer_offsets decides states the group has left; none of them is
// published, and its next real transition chains to the event the other replica
// stored.
func TestLaggingReplicaNeverRollsBack(t *testing.T) {
	nc, js := startNATS(t)
	t1, t2, t3 := "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"
	m0 := replay(t, image.Empty, 100,
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=t1 TopicID="+t1, "PartitionRecord TopicID="+t1+" PartitionID=0 Replicas=1 ISR=1 Leader=1",
		"TopicRecord Name=t2 TopicID="+t2, "PartitionRecord TopicID="+t2+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	m1 := replay(t, m0.Image, 110, "TopicRecord Name=t3 TopicID="+t3, "PartitionRecord TopicID="+t3+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	joined, moved := member(t, "g", 1, "t1"), member(t, "g", 2, "t2")

	// Replica A has read both records: it announces the group reading t2, at (100, 0/2).
	_, stopA := run(t, nc, m0, joined, moved)
	defer stopA()
	stored := waitEvents(t, js, "g", 1)[0].Data

	// Replica B starts at metadata offset 110 and reads the records live: at (110, 0/1)
	// the group reads t1, a state it left at 0/2.
	b, stopB := run(t, nc, m1)
	defer stopB()
	for _, m := range []groups.Message{joined, moved} {
		if err := b.OnGroupRecord(m); err != nil {
			t.Fatal(err)
		}
	}
	// Once B has applied both records (the engine picks metadata and records in any
	// order), a real transition: t2 grows. B announces it after A's event.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var topics []string
		if err := b.Query(context.Background(), func(v *View) { topics = v.Tracker.Topics(events.GroupKey{Type: events.ConsumerGroup, ID: "g"}) }); err != nil {
			t.Fatal(err)
		}
		if slices.Equal(topics, []string{"t2"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B's group reads %q, want [t2]", topics)
		}
	}
	b.OnMetadata(replay(t, m1.Image, 120, "PartitionRecord TopicID="+t2+" PartitionID=1 Replicas=1 ISR=1 Leader=1"))
	evs := waitEvents(t, js, "g", 2)
	grown := evs[1].Data
	if grown.MetadataOffset != 120 || !grown.PreviousHash.Valid || grown.PreviousHash.Hash != stored.NewHash {
		t.Fatalf("after A's event (hash %d) the stream holds %+v, want t2's growth at offset 120 chaining to it", stored.NewHash, grown)
	}
	if r := grown.Reasons; len(r) != 1 || r[0].Kind != events.PartitionsAdded {
		t.Fatalf("reasons %+v, want partitions_added", r)
	}
}
