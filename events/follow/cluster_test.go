package follow_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events/follow"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// TestFollowLeaderKill: a durable subscriber of a 3-node cluster (streams and consumer
// with 3 replicas) receives every event once while the node leading
// kraftwatch's stream (which Follow reads) is SIGKILLed.
func TestFollowLeaderKill(t *testing.T) {
	c := natstest.StartCluster(t, natstest.ClusterOptions{})
	p, err := publish.New(publish.Config{Conn: c.Connect(c.Nodes[0].URL(), "", ""), ClusterID: cluster, Replicas: 3,
		RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, PublishTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	js, _ := jetstream.New(c.Connect(c.URLs(), "", ""))
	var col collector
	stop := run(t, js, follow.Config{ClusterID: cluster, Durable: "ha", RetryDelay: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(tlog{t}, nil))}, col.handle)
	const n = 60
	for k := range n {
		announce(t, p, fmt.Sprintf("g%d", k%3), k)
		if k == 20 {
			waitFor(t, "20 events", func() bool { return col.len() >= 20 })
			s, err := js.Stream(ctx, "KRAFTWATCH_"+cluster)
			if err != nil {
				t.Fatal(err)
			}
			victim := c.Node(s.CachedInfo().Cluster.Leader)
			c.Kill(victim)
			t.Logf("killed %s, the leader of kraftwatch's stream (which Follow reads)", victim.Name)
			defer c.Start(victim)
		}
		time.Sleep(50 * time.Millisecond)
	}
	err = func() error {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if col.len() >= n {
				return nil
			}
		}
		return fmt.Errorf("received %d of %d", col.len(), n)
	}()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	stop()
	seen := map[string]bool{}
	for _, id := range col.ids {
		if seen[id] {
			t.Fatalf("%s received twice", id)
		}
		seen[id] = true
	}
	if len(col.ids) != n {
		t.Fatalf("received %d events, want %d", len(col.ids), n)
	}
}
