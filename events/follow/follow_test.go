package follow_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/events/follow"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

const cluster = "MkU3OEVBNTcwNTJENDM2Qk"

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// startPublisher runs a kraftwatch publisher for cluster until the end of the test.
func startPublisher(t testing.TB, url string) *publish.Publisher {
	t.Helper()
	p, err := publish.New(publish.Config{Conn: connect(t, url), ClusterID: cluster, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

func announce(t testing.TB, p *publish.Publisher, group string, k int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.Enqueue(ctx, events.RebalanceNeeded{GroupID: group, GroupType: events.ConsumerGroup, NewHash: events.Hash(k + 1),
		Reasons: []events.Reason{{Kind: events.TopicCreated, Topic: "t", NewPartitions: 1}},
		Cause:   events.Cause{MetadataOffset: int64(k + 1)}, CoordinatorEpoch: -1})
	if err != nil {
		t.Fatal(err)
	}
}

type tlog struct{ t testing.TB }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(string(b)); return len(b), nil }

// collector records what a Follow handler received.
type collector struct {
	mu  sync.Mutex
	ids []string
	seq []uint64
}

func (c *collector) handle(_ context.Context, d follow.Delivery) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, d.Event.ID)
	c.seq = append(c.seq, d.Seq)
	return nil
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ids)
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// run runs Follow with cfg until stop is called; stop returns Follow's error.
func run(t testing.TB, js jetstream.JetStream, cfg follow.Config, h func(context.Context, follow.Delivery) error) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- follow.Run(ctx, js, cfg, h) }()
	var once sync.Once
	var err error
	stop = func() error { once.Do(func() { cancel(); err = <-done }); return err }
	t.Cleanup(func() { _ = stop() })
	return stop
}

// TestFollowResumes: a durable subscriber stopped after some events and started again
// receives the rest, each once, in stream order; the stream it found is kraftwatch's
// own; after a handler error the same event comes again before later ones.
func TestFollowResumes(t *testing.T) {
	srv := natstest.Start(t)
	p := startPublisher(t, srv.ClientURL())
	js, _ := jetstream.New(connect(t, srv.ClientURL()))
	for k := range 5 {
		announce(t, p, fmt.Sprintf("g%d", k%2), k)
	}
	waitFor(t, "the events stream", func() bool { return p.EventsStream() != "" })
	var c collector
	cfg := follow.Config{ClusterID: cluster, Durable: "test-subscriber", RetryDelay: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(tlog{t}, nil))}
	stop := run(t, js, cfg, c.handle)
	waitFor(t, "5 events", func() bool { return c.len() == 5 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for k := 5; k < 10; k++ { // published while the subscriber is down
		announce(t, p, fmt.Sprintf("g%d", k%2), k)
	}
	failed := false
	stop = run(t, js, cfg, func(ctx context.Context, d follow.Delivery) error {
		if !failed && d.Seq == 7 {
			failed = true
			return fmt.Errorf("not now")
		}
		return c.handle(ctx, d)
	})
	waitFor(t, "10 events", func() bool { return c.len() == 10 })
	time.Sleep(200 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if c.len() != 10 {
		t.Fatalf("received %d events, want 10: %v", c.len(), c.seq)
	}
	seen := map[string]bool{}
	for i, id := range c.ids {
		if seen[id] || c.seq[i] != uint64(i+1) {
			t.Fatalf("delivery %d: seq %d id %s (repeated %v); all: %v", i, c.seq[i], id, seen[id], c.seq)
		}
		seen[id] = true
	}
	if name, err := follow.FindStream(context.Background(), js, "", cluster); err != nil || name != "KRAFTWATCH_"+cluster {
		t.Fatalf("FindStream = %q, %v", name, err)
	}
}

// TestFollowSkipsInvalid: a message on the public subjects that is not a kraftwatch event
// is skipped (and not delivered again); the events around it are delivered.
func TestFollowSkipsInvalid(t *testing.T) {
	srv := natstest.Start(t)
	p := startPublisher(t, srv.ClientURL())
	nc := connect(t, srv.ClientURL())
	js, _ := jetstream.New(nc)
	announce(t, p, "g", 0)
	waitFor(t, "the events stream", func() bool { return p.EventsStream() != "" })
	if _, err := js.Publish(context.Background(), "_kraftwatch.kraftwatch."+cluster+".group.consumer.junk", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	announce(t, p, "g", 1)
	var c collector
	run(t, js, follow.Config{ClusterID: cluster, Durable: "d"}, c.handle)
	waitFor(t, "2 events", func() bool { return c.len() == 2 })
}
