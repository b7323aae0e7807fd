//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events/follow"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// Users of the cluster's nats-servers.
const (
	kwUser, kwPassword   = "kraftwatch", "kw-secret-1"
	subUser, subPassword = "subscriber", "sub-secret-2"
)

// TestNATSCluster: a 3-node nats-server cluster (TLS, user/password), kraftwatch's
// streams created with 3 replicas (KRAFTWATCH_STREAM_REPLICAS=3), two kraftwatch
// replicas each connected to another node, a durable follow.Run subscriber. During a
// burst of eight partition increases the node leading kraftwatch's stream is SIGKILLed;
// it is started again after the burst. Afterwards kraftwatch's stream holds every
// transition once (1 + 9 per group, consistent chains, the last hash the one computed
// from scratch), the subscriber (which reads that stream) received each once, and the
// events stream, once its sourcing resumed, holds the same events in the same order.
func TestNATSCluster(t *testing.T) {
	c := sidecarCluster(t)
	nc := natstest.StartCluster(t, natstest.ClusterOptions{TLS: true, Users: map[string]string{kwUser: kwPassword, subUser: subPassword}})
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	admin := e2etest.NewAdmin(c)
	admin.CreateTopic(ctx, t, "nc-orders", 1)
	e2etest.StartConsumers(ctx, t, c, map[string]string{"nc-a": "nc-orders", "nc-b": "nc-orders"})

	// A wrong password is refused: the cluster does check credentials.
	if bad, err := nats.Connect(nc.Nodes[0].URL(), nats.UserInfo(kwUser, "wrong"), nats.RootCAs(nc.CA)); err == nil {
		bad.Close()
		t.Fatal("connected with a wrong password")
	}

	auth := []string{"KRAFTWATCH_NATS_USER=" + kwUser, "KRAFTWATCH_NATS_PASSWORD=" + kwPassword,
		"KRAFTWATCH_NATS_TLS_CA_FILE=" + nc.CA, "KRAFTWATCH_STREAM_REPLICAS=3"}
	kws := []*e2etest.Kraftwatch{
		e2etest.StartKraftwatch(t, "kw1", e2etest.Env(c, nc.Nodes[0].URL(), "nc-.*", auth...)),
		e2etest.StartKraftwatch(t, "kw2", e2etest.Env(c, nc.Nodes[1].URL(), "nc-.*", auth...)),
	}
	for _, k := range kws {
		t.Logf("kraftwatch %s ready in %v", k.Name(), k.WaitReady(ctx, time.Minute).Round(time.Millisecond))
	}

	sub := nc.Connect(nc.URLs(), subUser, subPassword)
	js, err := jetstream.New(sub)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []follow.Delivery
	fctx, stopFollow := context.WithCancel(ctx)
	followDone := make(chan error, 1)
	go func() {
		followDone <- follow.Run(fctx, js, follow.Config{ClusterID: c.ClusterID, Durable: "e2e-cluster", RetryDelay: 200 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))},
			func(_ context.Context, d follow.Delivery) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, d)
				return nil
			})
	}()
	received := func() []follow.Delivery {
		mu.Lock()
		defer mu.Unlock()
		return append([]follow.Delivery(nil), got...)
	}
	waitEvents := func(n int, timeout time.Duration) {
		t.Helper()
		err := e2etest.Wait(ctx, timeout, func() error {
			if k := len(received()); k < n {
				return fmt.Errorf("subscriber received %d events, want %d", k, n)
			}
			return nil
		})
		if err != nil {
			streamStates(t, js)
			t.Fatal(err)
		}
	}
	waitEvents(2, time.Minute) // each group's first event

	for _, name := range []string{e2etest.StreamName, e2etest.StreamName + "_EVENTS"} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Fatalf("stream %s has %d replicas, want 3", name, r)
		}
	}
	leader := func() string {
		// A short timeout of its own: a request sent just before its node died is never
		// answered.
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, e2etest.StreamName)
		if err != nil || s.CachedInfo().Cluster == nil {
			return ""
		}
		return s.CachedInfo().Cluster.Leader
	}
	victim := nc.Node(leader())
	t.Logf("stream %s: leader %s; kw1 on n1, kw2 on n2", e2etest.StreamName, victim.Name)

	const last = 9
	var step atomic.Int32
	burst := make(chan error, 1)
	go func() {
		for n := 2; n <= last; n++ {
			if err := admin.TryAlterPartitions(ctx, "nc-orders", n); err != nil {
				burst <- err
				return
			}
			step.Store(int32(n))
			time.Sleep(300 * time.Millisecond)
		}
		burst <- nil
	}()
	waitEvents(2+2*2, time.Minute) // the burst's first two steps announced
	killedAt := step.Load()
	nc.Kill(victim)
	killed := time.Now()
	var newLeader string
	err = e2etest.Wait(ctx, time.Minute, func() error {
		if l := leader(); l == "" || l == victim.Name {
			return fmt.Errorf("no new leader of %s after %s was killed", e2etest.StreamName, victim.Name)
		} else {
			newLeader = l
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	elected := time.Since(killed)
	if err := <-burst; err != nil {
		t.Fatal(err)
	}
	if killedAt >= last {
		t.Fatal("the burst was over when the leader's node was killed")
	}
	waitEvents(2*last, 2*time.Minute)
	restarted := time.Now()
	nc.Start(victim)
	t.Logf("SIGKILL of %s (leader) after the burst's step to %d partitions; new leader %s in %v; %s started again %v after the kill",
		victim.Name, killedAt, newLeader, elected.Round(time.Millisecond), victim.Name, restarted.Sub(killed).Round(time.Millisecond))

	// One more change after the restart: the cluster goes on, once.
	admin.AlterPartitions(ctx, t, "nc-orders", last+1)
	waitEvents(2*(last+1), 2*time.Minute)
	time.Sleep(e2etest.Quiet)
	stopFollow()
	<-followDone

	fresh := e2etest.Hashes(t, c)
	store := readStreamEvents(ctx, t, js, e2etest.StreamName, c.ClusterID)
	// The events stream copies kraftwatch's by sourcing, which nats-server resumes after a
	// retry backoff when the leader of kraftwatch's stream changed.
	caughtUp := time.Now()
	err = e2etest.Wait(ctx, 3*time.Minute, func() error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, e2etest.StreamName+"_EVENTS")
		if err != nil {
			return err
		}
		if n := s.CachedInfo().State.Msgs; n < uint64(len(store)) {
			return fmt.Errorf("events stream holds %d events, kraftwatch's %d", n, len(store))
		}
		return nil
	})
	if err != nil {
		streamStates(t, js)
		t.Fatal(err)
	}
	t.Logf("events stream caught up %v after the last event was delivered (%v after the kill)",
		time.Since(caughtUp).Round(time.Millisecond), time.Since(killed).Round(time.Second))
	copyOf := readStreamEvents(ctx, t, js, e2etest.StreamName+"_EVENTS", c.ClusterID)
	deliveredIDs := map[string]int{}
	for _, d := range received() {
		deliveredIDs[d.Event.ID]++
	}
	for _, g := range []string{"nc-a", "nc-b"} {
		var evs e2etest.Events
		for _, e := range store {
			if e.Env.Data.GroupID == g {
				evs = append(evs, e)
			}
		}
		if len(evs) != last+1 {
			t.Fatalf("group %s: %d events stored, want %d (1 + %d partition increases):\n%s", g, len(evs), last+1, last, evs)
		}
		e2etest.CheckChain(t, g, evs)
		if h := int64(evs[len(evs)-1].Env.Data.NewHash); h != fresh[g] {
			t.Fatalf("group %s: last stored hash %d, kraftwatch hashes computes %d", g, h, fresh[g])
		}
	}
	if len(copyOf) != len(store) {
		t.Fatalf("events stream holds %d events, kraftwatch's stream %d", len(copyOf), len(store))
	}
	for i := range store {
		if copyOf[i].MsgID != store[i].MsgID {
			t.Fatalf("event %d: events stream %s, kraftwatch's stream %s", i, copyOf[i].MsgID, store[i].MsgID)
		}
	}
	for _, e := range store {
		if deliveredIDs[e.MsgID] != 1 {
			t.Fatalf("subscriber received event %s %d times, want once (%d deliveries, %d stored)", e.MsgID, deliveredIDs[e.MsgID], len(received()), len(store))
		}
	}
	if len(received()) != len(store) {
		t.Fatalf("subscriber received %d events, %d stored", len(received()), len(store))
	}
	for _, k := range kws {
		t.Logf("kraftwatch %s: %v events published, %v found already published, %v publish attempts retried", k.Name(),
			k.Metric("kraftwatch_events_published_total"), k.Metric("kraftwatch_events_already_published_total"), k.Metric("kraftwatch_events_retried_total"))
	}
	t.Logf("%d transitions stored once in both streams (3 replicas) and delivered once to the durable subscriber", len(store))
}

// streamStates logs what the cluster's streams hold, their leaders and sources, and the
// consumers of the events stream.
func streamStates(t *testing.T, js jetstream.JetStream) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{e2etest.StreamName, e2etest.StreamName + "_EVENTS"} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Logf("stream %s: %v", name, err)
			continue
		}
		info := s.CachedInfo()
		t.Logf("stream %s: %d messages, last seq %d, cluster %+v", name, info.State.Msgs, info.State.LastSeq, info.Cluster)
		for _, src := range info.Sources {
			t.Logf("stream %s: source %s lag %d active %v error %v", name, src.Name, src.Lag, src.Active, src.Error)
		}
		for ci := range s.ListConsumers(ctx).Info() {
			t.Logf("stream %s: consumer %s delivered %+v ack floor %+v pending %d ack pending %d cluster %+v", name, ci.Name,
				ci.Delivered, ci.AckFloor, ci.NumPending, ci.NumAckPending, ci.Cluster)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// readStreamEvents reads every message of stream name by sequence, checking each with
// e2etest.Check against clusterID. Each read is retried for a while: right after a node
// came back the cluster may briefly have no responder for a request.
func readStreamEvents(ctx context.Context, t *testing.T, js jetstream.JetStream, name, clusterID string) e2etest.Events {
	t.Helper()
	retry := func(what string, f func(ctx context.Context) error) {
		t.Helper()
		err := e2etest.Wait(ctx, 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return f(ctx)
		})
		if err != nil {
			t.Fatalf("stream %s: %s: %v", name, what, err)
		}
	}
	var info *jetstream.StreamInfo
	retry("info", func(ctx context.Context) error {
		s, err := js.Stream(ctx, name)
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	var out e2etest.Events
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		var m *jetstream.RawStreamMsg
		retry(fmt.Sprintf("message %d", seq), func(ctx context.Context) error {
			s, err := js.Stream(ctx, name)
			if err != nil {
				return err
			}
			m, err = s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				m, err = nil, nil
			}
			return err
		})
		if m == nil {
			continue
		}
		env, err := e2etest.Check(clusterID, m.Subject, m.Header, m.Data)
		if err != nil {
			t.Fatalf("stream %s message %d: %v", name, seq, err)
		}
		out = append(out, e2etest.Event{Subject: m.Subject, MsgID: m.Header.Get(jetstream.MsgIDHeader), Seq: m.Sequence, Env: env})
	}
	return out
}
