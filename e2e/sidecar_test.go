//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// The sidecar tests run kraftwatch as an operator would: its own process
// (e2etest.StartKraftwatch), configured by KRAFTWATCH_* variables, beside a real Kafka
// (one node, shared by these tests, started on first use and stopped by TestMain) and a
// real nats-server process (one per test, so each test starts from an empty stream).
// Each test has its own topic and group names and sets KRAFTWATCH_GROUP_INCLUDE to its
// own groups, so groups left by earlier tests are never announced.
//
// Counts are exact: after each change the test waits for the events it causes, then
// for a quiet period, and compares. Events are read back from the JetStream stream (the
// durable record) and from a core NATS subscription; every event is checked with
// events.DecodeRebalanceNeeded, the JSON Schema, its subject, its Nats-Msg-Id and Content-Type.

// sidecarCluster is the Kafka the sidecar tests share: one node, in rack-a, with share
// groups (a preview in 4.1: storage formatted with share.version=1 there).
func sidecarCluster(t testing.TB) *kafkatest.Cluster {
	t.Helper()
	opts := kafkatest.Options{Rack: "rack-a"}
	if strings.HasPrefix(kafkatest.Version(), "4.1.") {
		opts.Features = map[string]int{"share.version": 1}
	}
	return e2etest.Shared(t, "sidecar", opts)
}

// sidecar is a sidecar test's set-up on the shared cluster, and the test's context:
// three minutes from now at most.
func sidecar(t *testing.T) (*e2etest.Sidecar, context.Context) {
	t.Helper()
	s := e2etest.StartSidecar(t, sidecarCluster(t))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return s, ctx
}

// TestSidecarPartitionsAdded: three groups join while kraftwatch runs (each gets one
// first event, reason subscription_changed); partitions are added to the topic two of
// them read: exactly one event for each of those two, reason partitions_added 2 -> 4,
// previous hash the first event's, new hash what `kraftwatch hashes` computes; none
// for the group on the other topic. Then changes to topics no group reads (create, add
// partitions, alter config, delete) give no event at all.
func TestSidecarPartitionsAdded(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "pa-orders", 2)
	s.Admin.CreateTopic(ctx, t, "pa-audit", 1)
	kw := s.StartKraftwatch(ctx, t, "pa-.*", "KRAFTWATCH_COORDINATOR_MISMATCH_AFTER=1s")

	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"pa-billing": "pa-orders", "pa-shipping": "pa-orders", "pa-auditor": "pa-audit"})
	first := s.Watcher.Expect(ctx, t, map[string]int{"pa-billing": 1, "pa-shipping": 1, "pa-auditor": 1}, time.Minute)
	topicID := map[string]string{}
	for g, want := range map[string]events.Reason{
		"pa-billing":  {Kind: events.SubscriptionChanged, Topic: "pa-orders", NewPartitions: 2},
		"pa-shipping": {Kind: events.SubscriptionChanged, Topic: "pa-orders", NewPartitions: 2},
		"pa-auditor":  {Kind: events.SubscriptionChanged, Topic: "pa-audit", NewPartitions: 1},
	} {
		e := first[g][0]
		r := e.Reason(t)
		want.TopicID = r.TopicID
		if !e2etest.SameReason(r, want) || r.TopicID == "" || e.Env.Data.PreviousHash.Valid {
			t.Fatalf("group %s's first event: %v; want previous null and reason %+v", g, e, want)
		}
		topicID[r.Topic] = r.TopicID
	}

	s.Admin.AlterPartitions(ctx, t, "pa-orders", 4)
	got := s.Watcher.Expect(ctx, t, map[string]int{"pa-billing": 2, "pa-shipping": 2, "pa-auditor": 1}, time.Minute)
	fresh := e2etest.Hashes(t, s.Cluster)
	for _, g := range []string{"pa-billing", "pa-shipping"} {
		e := got[g][1]
		want := events.Reason{Kind: events.PartitionsAdded, Topic: "pa-orders", TopicID: topicID["pa-orders"], OldPartitions: 2, NewPartitions: 4}
		if r := e.Reason(t); !e2etest.SameReason(r, want) {
			t.Fatalf("group %s: %v; want reason %+v", g, e, want)
		}
		e2etest.CheckChain(t, g, got[g])
		if int64(e.Env.Data.NewHash) != fresh[g] {
			t.Fatalf("group %s: announced hash %d, kraftwatch hashes computes %d", g, e.Env.Data.NewHash, fresh[g])
		}
		if e.Env.Data.MetadataOffset <= got[g][0].Env.Data.MetadataOffset {
			t.Fatalf("group %s: partitions_added at metadata offset %d, not after the first event's %d", g, e.Env.Data.MetadataOffset, got[g][0].Env.Data.MetadataOffset)
		}
	}
	if h := int64(got["pa-auditor"][0].Env.Data.NewHash); h != fresh["pa-auditor"] {
		t.Fatalf("group pa-auditor: announced hash %d, kraftwatch hashes computes %d", h, fresh["pa-auditor"])
	}
	t.Logf("partitions added: one event each for pa-billing and pa-shipping, none for pa-auditor")

	// The coordinators refresh their stored MetadataHash on the members' next
	// heartbeats: kraftwatch's kafka-scheme hash (it publishes murmur3) then agrees for
	// all three groups, and a lasting disagreement would fail the wait.
	err := e2etest.Wait(ctx, time.Minute, func() error {
		checked, bad := kw.Metric("kraftwatch_hash_coordinator_checked"), kw.Metric("kraftwatch_hash_coordinator_mismatches")
		if checked != 3 || bad != 0 {
			return fmt.Errorf("kraftwatch compared %v group(s) with their coordinator, %v disagree; want 3 and 0", checked, bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("unread topics", func(t *testing.T) {
		s.Admin.CreateTopic(ctx, t, "pa-unread", 1)
		s.Admin.AlterPartitions(ctx, t, "pa-unread", 3)
		s.Admin.AlterTopicConfig(ctx, t, "pa-unread", "retention.ms", "3600000")
		s.Admin.AlterTopicConfig(ctx, t, "pa-orders", "retention.ms", "3600000") // a read topic, but no hash input
		s.Admin.DeleteTopic(ctx, t, "pa-unread")
		s.Admin.CreateTopic(ctx, t, "pa-unread-2", 2)
		s.Admin.DeleteTopic(ctx, t, "pa-unread-2")
		// A change that does move a group: kraftwatch decides in metadata log order, so
		// once its event is here every change above has been decided.
		s.Admin.AlterPartitions(ctx, t, "pa-audit", 2)
		got := s.Watcher.Expect(ctx, t, map[string]int{"pa-billing": 2, "pa-shipping": 2, "pa-auditor": 2}, time.Minute)
		e := got["pa-auditor"][1]
		want := events.Reason{Kind: events.PartitionsAdded, Topic: "pa-audit", TopicID: topicID["pa-audit"], OldPartitions: 1, NewPartitions: 2}
		if r := e.Reason(t); !e2etest.SameReason(r, want) {
			t.Fatalf("pa-auditor: %v; want reason %+v", e, want)
		}
	})

	stream := s.Stream(t)
	if n := len(stream); n != 6 {
		t.Fatalf("stream holds %d events, want 6:\n%s", n, stream)
	}
	e2etest.CheckStreamAndCore(t, stream, s.Watcher, "pa-billing", "pa-shipping", "pa-auditor")
}

// TestSidecarTwoReplicas: two kraftwatch processes on one cluster, one NATS and one
// stream, started together after the groups exist (so they race on the first
// events), then a burst of three partition increases: every transition is stored once
// (1 + 3 events per group, a consistent chain), the replicas' published counters add
// up to the stream's events, and both replicas decided every live transition.
func TestSidecarTwoReplicas(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "rr-orders", 1)
	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"rr-a": "rr-orders", "rr-b": "rr-orders"})

	env := e2etest.Env(s.Cluster, s.NATS.URL(), "rr-.*")
	kws := []*e2etest.Kraftwatch{e2etest.StartKraftwatch(t, "kw1", env), e2etest.StartKraftwatch(t, "kw2", env)}
	for _, k := range kws {
		k.WaitReady(ctx, time.Minute)
	}
	s.Watcher.Expect(ctx, t, map[string]int{"rr-a": 1, "rr-b": 1}, time.Minute)
	for n := 2; n <= 4; n++ {
		s.Admin.AlterPartitions(ctx, t, "rr-orders", n)
	}
	got := s.Watcher.Expect(ctx, t, map[string]int{"rr-a": 4, "rr-b": 4}, time.Minute)
	fresh := e2etest.Hashes(t, s.Cluster)
	stream := s.Stream(t)
	for _, g := range []string{"rr-a", "rr-b"} {
		evs := got[g]
		e2etest.CheckChain(t, g, evs)
		for i, e := range evs[1:] {
			want := events.Reason{Kind: events.PartitionsAdded, Topic: "rr-orders", TopicID: evs[0].Reason(t).TopicID,
				OldPartitions: int32(i + 1), NewPartitions: int32(i + 2)}
			if r := e.Reason(t); !e2etest.SameReason(r, want) {
				t.Fatalf("group %s event %d: %v; want reason %+v", g, i+1, e, want)
			}
		}
		if h := int64(evs[3].Env.Data.NewHash); h != fresh[g] {
			t.Fatalf("group %s: last hash %d, kraftwatch hashes computes %d", g, h, fresh[g])
		}
		e2etest.SameEvents(t, "stream and core subscriber events of "+g, stream.Group(g), evs)
		for _, k := range kws {
			live := 0
			for _, d := range k.Decisions(1, g) {
				for _, e := range evs[1:] {
					if d.NewHash == int64(e.Env.Data.NewHash) && d.MetadataOffset == e.Env.Data.MetadataOffset {
						live++
					}
				}
			}
			if live != 3 {
				t.Fatalf("kraftwatch %s decided %d of group %s's 3 live transitions: %+v", k.Name(), live, g, k.Decisions(1, g))
			}
		}
	}
	// The losing replica of each race publishes the same event expecting a last
	// sequence the winner already moved (or finds it stored): the stream refuses it and
	// republishes only what it stores, so the core subscriber received each stored
	// event exactly once and nothing else.
	s.Watcher.NoRepeats(t)
	e2etest.SameEvents(t, "stream and core subscriber events", stream, s.Watcher.All(t))
	t.Logf("core subscriber: %d events, each once, the stream's", len(s.Watcher.All(t)))
	var published, already, decided float64
	for _, k := range kws {
		p, a, d := k.Metric("kraftwatch_events_published_total"), k.Metric("kraftwatch_events_already_published_total"), k.Metric("kraftwatch_decisions_total")
		t.Logf("kraftwatch %s: %v decisions, %v events published, %v found already published", k.Name(), d, p, a)
		published, already, decided = published+p, already+a, decided+d
	}
	if int(published) != len(stream) || len(stream) != 8 {
		t.Fatalf("replicas published %v events in all, the stream holds %d, want 8", published, len(stream))
	}
	if already == 0 || decided < 14 {
		t.Fatalf("replicas decided %v and found %v already published: want both replicas deciding every live transition", decided, already)
	}
}

// TestSidecarPausedReplica: of two replicas, one is paused (SIGSTOP) while a group
// joins reading one topic, moves to another and a topic nobody reads is created, then
// resumed: it reads those records with a newer metadata image than the other replica
// had, and decides states the group has left. None of them is stored: the group's
// chain goes forward in both logs, and after a real transition (the topic grows) the
// stream holds exactly one event more, chaining to the last one. Then a third replica
// is paused in its start-up replay and the first in the middle of a burst: the chain
// still goes forward, never announcing a hash twice.
func TestSidecarPausedReplica(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "pr-t1", 1)
	s.Admin.CreateTopic(ctx, t, "pr-t2", 1)
	env := e2etest.Env(s.Cluster, s.NATS.URL(), "pr-.*")
	ahead, behind := e2etest.StartKraftwatch(t, "ahead", env), e2etest.StartKraftwatch(t, "behind", env)
	ahead.WaitReady(ctx, time.Minute)
	behind.WaitReady(ctx, time.Minute)

	behind.Pause()
	paused := true
	defer func() {
		if paused {
			behind.Resume()
		}
	}()
	first := e2etest.StartMembers(ctx, t, s.Cluster, e2etest.Join{Group: "pr-g", Topics: []string{"pr-t1"}})
	s.Watcher.Expect(ctx, t, map[string]int{"pr-g": 1}, time.Minute)
	first[0].Close()
	e2etest.StartMembers(ctx, t, s.Cluster, e2etest.Join{Group: "pr-g", Topics: []string{"pr-t2"}})
	moved := e2etest.Hashes(t, s.Cluster)["pr-g"]
	last := func() e2etest.Events { return s.Stream(t).Group("pr-g") }
	if err := e2etest.Wait(ctx, time.Minute, func() error {
		if evs := last(); len(evs) == 0 || int64(evs[len(evs)-1].Env.Data.NewHash) != moved {
			return fmt.Errorf("group pr-g's last event is not its hash reading pr-t2 (%d):\n%s", moved, evs)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Admin.CreateTopic(ctx, t, "pr-unread", 1)
	before := last()
	e2etest.CheckChain(t, "pr-g", before)

	behind.Resume()
	paused = false
	s.Admin.AlterPartitions(ctx, t, "pr-t2", 2)
	grown := e2etest.Hashes(t, s.Cluster)["pr-g"]
	// Both replicas decide the growth: the one behind has read everything before it.
	if err := e2etest.Wait(ctx, time.Minute, func() error {
		if evs := last(); int64(evs[len(evs)-1].Env.Data.NewHash) != grown {
			return fmt.Errorf("group pr-g's last event is not its hash after pr-t2 grew (%d):\n%s", grown, evs)
		}
		for _, d := range behind.Decisions(1, "pr-g") {
			if d.NewHash == grown {
				return nil
			}
		}
		return fmt.Errorf("the replica behind has not decided pr-g's hash after pr-t2 grew (%d): %+v", grown, behind.Decisions(1, "pr-g"))
	}); err != nil {
		t.Fatal(err)
	}
	after := last()
	e2etest.CheckChain(t, "pr-g", after)
	if len(after) != len(before)+1 {
		t.Fatalf("group pr-g: %d events before the replica behind resumed, %d after one transition, want %d:\n%s",
			len(before), len(after), len(before)+1, after)
	}
	t.Logf("replica behind: decided %+v, %v events superseded, %v already published, %v published; group pr-g's chain:\n%s",
		behind.Decisions(1, "pr-g"), behind.Metric("kraftwatch_events_superseded_total"),
		behind.Metric("kraftwatch_events_already_published_total"), behind.Metric("kraftwatch_events_published_total"), after)

	// The worst moments: a third replica paused in its start-up replay, and the one
	// ahead paused in the middle of a burst of four partition increases; both resumed
	// after it. The chain goes on from the last event, at most one event per increase
	// (a replica catching up may announce several at once), ending at the final hash.
	late := e2etest.StartKraftwatch(t, "late", env)
	time.Sleep(300 * time.Millisecond) // started, not ready: reading the logs
	late.Pause()
	for n := 3; n <= 6; n++ {
		s.Admin.AlterPartitions(ctx, t, "pr-t2", n)
		if n == 4 {
			ahead.Pause()
		}
	}
	final := e2etest.Hashes(t, s.Cluster)["pr-g"]
	late.Resume()
	ahead.Resume()
	late.WaitReady(ctx, time.Minute)
	if err := e2etest.Wait(ctx, time.Minute, func() error {
		for _, k := range []*e2etest.Kraftwatch{ahead, late} {
			if d, err := getGroup(k, "consumer", "pr-g"); err != nil || int64(d.Hashes.Murmur3) != final {
				return fmt.Errorf("replica %s does not hold pr-g's final hash %d: %+v, %v", k.Name(), final, d.Hashes, err)
			}
			if q := k.Metric("kraftwatch_events_queued"); q != 0 {
				return fmt.Errorf("replica %s has %v events queued", k.Name(), q)
			}
		}
		if evs := last(); int64(evs[len(evs)-1].Env.Data.NewHash) != final {
			return fmt.Errorf("group pr-g's last event is not its final hash %d:\n%s", final, evs)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	burst := last()
	e2etest.CheckChain(t, "pr-g", burst)
	if n := len(burst) - len(after); n < 1 || n > 4 || int64(burst[len(burst)-1].Env.Data.NewHash) != final {
		t.Fatalf("group pr-g: %d events for 4 partition increases, want 1 to 4 ending at %d:\n%s", n, final, burst)
	}
	t.Logf("paused mid-replay and mid-burst: %d events for 4 increases; superseded: ahead %v, late %v; chain:\n%s",
		len(burst)-len(after), ahead.Metric("kraftwatch_events_superseded_total"), late.Metric("kraftwatch_events_superseded_total"), burst)
}

// TestSidecarSIGKILL kills kraftwatch with SIGKILL in the middle of a burst of eight
// partition increases and starts it again at once, while the burst goes on: afterwards
// each group's last stored hash is the hash computed from scratch (nothing lost), the
// chain of events is consistent with no hash announced twice in a row and no id stored
// twice (nothing duplicated), the core subscriber saw exactly the stored events, and
// every decision of the restarted process is in the stream.
func TestSidecarSIGKILL(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "kill-orders", 1)
	kw := s.StartKraftwatch(ctx, t, "kill-.*")
	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"kill-a": "kill-orders", "kill-b": "kill-orders"})
	s.Watcher.Expect(ctx, t, map[string]int{"kill-a": 1, "kill-b": 1}, time.Minute)

	const last = 9
	var step atomic.Int32
	burst := make(chan error, 1)
	go func() {
		for n := 2; n <= last; n++ {
			if err := s.Admin.TryAlterPartitions(ctx, "kill-orders", n); err != nil {
				burst <- err
				return
			}
			step.Store(int32(n))
			time.Sleep(200 * time.Millisecond)
		}
		burst <- nil
	}()
	err := e2etest.Wait(ctx, time.Minute, func() error {
		if evs := s.Watcher.All(t); len(evs.Group("kill-a")) < 3 {
			return fmt.Errorf("no event for the burst's first two steps:\n%s", evs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	kw.Kill()
	killedAt := step.Load()
	before := map[string]int{"kill-a": len(s.Watcher.All(t).Group("kill-a")), "kill-b": len(s.Watcher.All(t).Group("kill-b"))}
	// Two more steps while it is down, then start it again while the burst goes on.
	waitStep(ctx, t, &step, killedAt+2)
	restartedAt := step.Load()
	kw.Start()
	kw.WaitReady(ctx, time.Minute)
	t.Logf("SIGKILL after the burst's step to %d partitions (events stored: %v); restarted at step %d", killedAt, before, restartedAt)
	if err := <-burst; err != nil {
		t.Fatal(err)
	}
	if restartedAt >= last {
		t.Fatalf("the burst was over when kraftwatch was started again: not a restart during a burst")
	}

	fresh := e2etest.Hashes(t, s.Cluster)
	lastHash := func(g string) int64 {
		evs := s.Watcher.All(t).Group(g)
		return int64(evs[len(evs)-1].Env.Data.NewHash)
	}
	err = e2etest.Wait(ctx, time.Minute, func() error {
		if lastHash("kill-a") != fresh["kill-a"] || lastHash("kill-b") != fresh["kill-b"] {
			return fmt.Errorf("last hashes never reached the fresh ones %v:\n%s", fresh, s.Watcher.All(t))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(e2etest.Quiet)
	stream := s.Stream(t)
	for _, g := range []string{"kill-a", "kill-b"} {
		evs := stream.Group(g)
		e2etest.CheckChain(t, g, evs)
		e2etest.SameEvents(t, "stream and core subscriber events of "+g, evs, s.Watcher.All(t).Group(g))
		if h := int64(evs[len(evs)-1].Env.Data.NewHash); h != fresh[g] {
			t.Fatalf("group %s: last stored hash %d, kraftwatch hashes computes %d", g, h, fresh[g])
		}
		stored := map[e2etest.Decision]bool{}
		for _, e := range evs {
			stored[e2etest.Decision{Group: g, NewHash: int64(e.Env.Data.NewHash), MetadataOffset: e.Env.Data.MetadataOffset}] = true
		}
		for _, d := range kw.Decisions(2, g) {
			if !stored[d] {
				t.Fatalf("group %s: the restarted kraftwatch decided %+v, which is not in the stream:\n%s", g, d, evs)
			}
		}
		// What changed while it was down (two steps at least) is announced once, at
		// start-up, as the partitions added since the last stored event, right after the
		// events the killed process stored; every other event after the first is one
		// step, and each starts where the one before ended.
		catchUp := 0
		for i, e := range evs[1:] {
			r := e.Reason(t)
			if r.Kind != events.PartitionsAdded {
				t.Fatalf("group %s: unexpected reason in %v", g, e)
			}
			if p := evs[i].Env.Data.Reasons[0]; i > 0 && p.NewPartitions != r.OldPartitions {
				t.Fatalf("group %s: event %v does not start where the one before ended (%d partitions)", g, e, p.NewPartitions)
			}
			if r.NewPartitions != r.OldPartitions+1 {
				catchUp++
				if i+1 < before[g] {
					t.Fatalf("group %s: start-up event %d among the %d events stored before the kill:\n%s", g, i+1, before[g], evs)
				}
			}
		}
		if catchUp != 1 {
			t.Fatalf("group %s: %d start-up events after the restart, want 1:\n%s", g, catchUp, evs)
		}
		t.Logf("group %s: %d events stored for 1 + %d transitions (those made while kraftwatch was down announced as one)", g, len(evs), last-1)
	}
	s.Watcher.NoRepeats(t)
}

// TestSidecarChangeWhileDown stops kraftwatch (SIGTERM), adds partitions to the topic
// one group reads and starts kraftwatch again: exactly one event for that group, from
// the hash announced before to the hash computed from scratch, none for the group on
// the unchanged topic; a further restart announces nothing.
func TestSidecarChangeWhileDown(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "down-orders", 2)
	s.Admin.CreateTopic(ctx, t, "down-other", 1)
	kw := s.StartKraftwatch(ctx, t, "down-.*")
	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"down-g": "down-orders", "down-h": "down-other"})
	first := s.Watcher.Expect(ctx, t, map[string]int{"down-g": 1, "down-h": 1}, time.Minute)
	if code, took := kw.Stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("kraftwatch exited %d after %v", code, took)
	}

	s.Admin.AlterPartitions(ctx, t, "down-orders", 5)
	fresh := e2etest.Hashes(t, s.Cluster)
	kw.Start()
	kw.WaitReady(ctx, time.Minute)
	got := s.Watcher.Expect(ctx, t, map[string]int{"down-g": 2, "down-h": 1}, time.Minute)
	e := got["down-g"][1]
	d := e.Env.Data
	if !d.PreviousHash.Valid || d.PreviousHash.Hash != first["down-g"][0].Env.Data.NewHash || int64(d.NewHash) != fresh["down-g"] {
		t.Fatalf("event after the restart: %v; want previous %d, new %d", e, first["down-g"][0].Env.Data.NewHash, fresh["down-g"])
	}
	// Worded as a live run would: the partitions added while kraftwatch was down.
	want := events.Reason{Kind: events.PartitionsAdded, Topic: "down-orders", TopicID: first["down-g"][0].Reason(t).TopicID, OldPartitions: 2, NewPartitions: 5}
	if r := e.Reason(t); !e2etest.SameReason(r, want) {
		t.Fatalf("event after the restart: %v; want reason %+v", e, want)
	}

	// Nothing already announced is announced again.
	if code, _ := kw.Stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("kraftwatch exited %d", code)
	}
	kw.Start()
	kw.WaitReady(ctx, time.Minute)
	if n := kw.Metric("kraftwatch_decisions_total"); n != 0 {
		t.Fatalf("third run decided %v events at start-up, want 0", n)
	}
	s.Watcher.Expect(ctx, t, map[string]int{"down-g": 2, "down-h": 1}, time.Minute)
	stream := s.Stream(t)
	e2etest.CheckStreamAndCore(t, stream, s.Watcher, "down-g", "down-h")
}

// TestSidecarNATSRestart kills the nats-server process (SIGKILL) after a first
// transition, adds partitions twice while it is gone (kraftwatch decides both and
// keeps retrying; /readyz fails), starts it again on the same port and store, and adds
// partitions once more: the stream ends with every transition exactly once, in order
// (1 + 4 events), /readyz recovers, and the core subscriber, reconnected, receives what
// is published after its return.
func TestSidecarNATSRestart(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "nr-orders", 1)
	kw := s.StartKraftwatch(ctx, t, "nr-.*")
	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"nr-g": "nr-orders"})
	s.Watcher.Expect(ctx, t, map[string]int{"nr-g": 1}, time.Minute)
	s.Admin.AlterPartitions(ctx, t, "nr-orders", 2)
	s.Watcher.Expect(ctx, t, map[string]int{"nr-g": 2}, time.Minute)

	s.NATS.Kill()
	start := time.Now()
	err := e2etest.Wait(ctx, 20*time.Second, func() error {
		if kw.Readyz() == http.StatusOK {
			return errors.New("/readyz still 200 after nats-server was killed")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/readyz failed %v after nats-server was killed", time.Since(start).Round(time.Millisecond))
	s.Admin.AlterPartitions(ctx, t, "nr-orders", 3)
	s.Admin.AlterPartitions(ctx, t, "nr-orders", 4)
	// A minute from the kill.
	err = e2etest.Wait(ctx, time.Until(start.Add(time.Minute)), func() error {
		if ds := kw.Decisions(1, "nr-g"); len(ds) < 4 {
			return fmt.Errorf("kraftwatch did not decide the changes made while NATS was down: %+v", ds)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if code := kw.Readyz(); code == http.StatusOK {
		t.Fatal("/readyz is 200 while nats-server is down")
	}
	time.Sleep(time.Second) // let the publisher retry a few times
	s.NATS.Start()
	t.Logf("nats-server restarted after %v down", time.Since(start).Round(time.Millisecond))
	kw.WaitReady(ctx, time.Minute)
	// The last event must reach the core subscriber: it is published once the
	// subscriber is back (nats.go reconnects every 50-150 ms).
	s.Watcher.Connected(ctx, t, time.Minute)
	s.Admin.AlterPartitions(ctx, t, "nr-orders", 5)

	err = e2etest.Wait(ctx, time.Minute, func() error {
		// The server has just restarted: a failed read is retried, not fatal.
		evs, err := e2etest.ReadStream(s.NATS.URL(), s.Cluster.ClusterID)
		if err != nil {
			return err
		}
		if evs := evs.Group("nr-g"); len(evs) < 5 {
			return fmt.Errorf("stream holds %d events of nr-g, want 5:\n%s", len(evs), evs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(e2etest.Quiet)
	evs := s.Stream(t).Group("nr-g")
	if len(evs) != 5 {
		t.Fatalf("stream holds %d events of nr-g, want exactly 5:\n%s", len(evs), evs)
	}
	e2etest.CheckChain(t, "nr-g", evs)
	fresh := e2etest.Hashes(t, s.Cluster)
	for i, e := range evs[1:] {
		want := events.Reason{Kind: events.PartitionsAdded, Topic: "nr-orders", TopicID: evs[0].Reason(t).TopicID,
			OldPartitions: int32(i + 1), NewPartitions: int32(i + 2)}
		if r := e.Reason(t); !e2etest.SameReason(r, want) {
			t.Fatalf("event %d: %v; want reason %+v", i+1, e, want)
		}
	}
	if h := int64(evs[4].Env.Data.NewHash); h != fresh["nr-g"] {
		t.Fatalf("last stored hash %d, kraftwatch hashes computes %d", h, fresh["nr-g"])
	}
	// The core subscriber missed what was published while it was reconnecting, at most;
	// it saw nothing twice and nothing that is not stored, and the last event.
	core := s.Watcher.All(t).Group("nr-g")
	if len(core) < 3 || core[len(core)-1].MsgID != evs[4].MsgID {
		t.Fatalf("core subscriber received:\n%swant at least the first two and the last of:\n%s", core, evs)
	}
	j := 0
	for _, e := range core {
		for j < len(evs) && evs[j].MsgID != e.MsgID {
			j++
		}
		if j == len(evs) {
			t.Fatalf("core subscriber received events not stored, or out of order:\n%sstored:\n%s", core, evs)
		}
		j++
	}
	s.Watcher.NoRepeats(t)
	t.Logf("core subscriber received %d of the 5 stored events, none twice; kraftwatch retried %v publishes",
		len(core), kw.Metric("kraftwatch_events_retried_total"))
}

// TestSidecarSIGTERM sends SIGTERM in the middle of a burst of five partition
// increases: kraftwatch exits 0 within 5 s, every decision it logged is in the stream
// and it dropped nothing; started again, it announces exactly what it had not decided
// (one event when the stream's last hash is not the fresh one, none otherwise), so the
// last stored hash is the fresh hash.
func TestSidecarSIGTERM(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "term-orders", 1)
	kw := s.StartKraftwatch(ctx, t, "term-.*")
	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"term-g": "term-orders"})
	s.Watcher.Expect(ctx, t, map[string]int{"term-g": 1}, time.Minute)

	// SIGTERM in the middle of the burst, once its third step is done.
	var step atomic.Int32
	burst := make(chan error, 1)
	go func() {
		for n := 2; n <= 6; n++ {
			if err := s.Admin.TryAlterPartitions(ctx, "term-orders", n); err != nil {
				burst <- err
				return
			}
			step.Store(int32(n))
		}
		burst <- nil
	}()
	waitStep(ctx, t, &step, 4)
	code, took := kw.Stop(syscall.SIGTERM)
	if err := <-burst; err != nil {
		t.Fatal(err)
	}
	if code != 0 || took > 5*time.Second {
		t.Fatalf("SIGTERM: exit code %d after %v, want 0 within 5s", code, took)
	}
	t.Logf("SIGTERM: exit 0 after %v", took.Round(time.Millisecond))
	if lines := kw.LogLines(1, "event dropped"); len(lines) > 0 {
		t.Fatalf("kraftwatch dropped %d event(s): %v", len(lines), lines)
	}
	if len(kw.LogLines(1, "publisher stopped")) != 1 {
		t.Fatal(`no "publisher stopped" line: the publisher did not drain`)
	}
	stream := s.Stream(t).Group("term-g")
	stored := map[e2etest.Decision]bool{}
	for _, e := range stream {
		stored[e2etest.Decision{Group: "term-g", NewHash: int64(e.Env.Data.NewHash), MetadataOffset: e.Env.Data.MetadataOffset}] = true
	}
	ds := kw.Decisions(1, "term-g")
	for _, d := range ds {
		if !stored[d] {
			t.Fatalf("decision %+v before SIGTERM is not in the stream:\n%s", d, stream)
		}
	}
	if len(ds) != len(stream) {
		t.Fatalf("%d decisions, %d events stored", len(ds), len(stream))
	}
	t.Logf("SIGTERM at step %d of the burst: %d of the 5 transitions decided before exit, all stored", 4, len(ds)-1)

	fresh := e2etest.Hashes(t, s.Cluster)["term-g"]
	want := len(stream)
	if int64(stream[len(stream)-1].Env.Data.NewHash) != fresh {
		want++
	}
	kw.Start()
	kw.WaitReady(ctx, time.Minute)
	got := s.Watcher.Expect(ctx, t, map[string]int{"term-g": want}, time.Minute)["term-g"]
	if h := int64(got[len(got)-1].Env.Data.NewHash); h != fresh {
		t.Fatalf("last hash %d, kraftwatch hashes computes %d", h, fresh)
	}
	stream = s.Stream(t).Group("term-g")
	e2etest.CheckChain(t, "term-g", stream)
	e2etest.SameEvents(t, "stream and core subscriber events", stream, got)
	s.Watcher.NoRepeats(t)
	if code, took := kw.Stop(syscall.SIGTERM); code != 0 || took > 5*time.Second {
		t.Fatalf("second SIGTERM: exit code %d after %v", code, took)
	}
}

// waitStep waits until a burst running in another goroutine has made step n.
func waitStep(ctx context.Context, t *testing.T, step *atomic.Int32, n int32) {
	t.Helper()
	err := e2etest.Wait(ctx, time.Minute, func() error {
		if s := step.Load(); s < n {
			return fmt.Errorf("the burst is stuck at step %d, waiting for %d", s, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
