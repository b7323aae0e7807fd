package publish_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// TestClusterLeaderKill: two publishers, each connected to another node of a 3-node
// nats-server cluster (TLS, user and password), streams with 3 replicas. While both
// announce the same transitions of several groups, the node leading kraftwatch's stream
// is SIGKILLed, and started again later. Every transition is stored once and in order,
// and the events stream holds the same events.
func TestClusterLeaderKill(t *testing.T) {
	c := natstest.StartCluster(t, natstest.ClusterOptions{TLS: true, Users: map[string]string{"kw": "kw-secret"}})
	sameEventsWait = 4 * time.Minute
	defer func() { sameEventsWait = 30 * time.Second }()
	const groups, steps = 20, 12
	var ps []*publish.Publisher
	for i := range 2 {
		cfg := baseConfig(t, c.Connect(c.Nodes[i].URL(), "kw", "kw-secret"))
		cfg.Replicas = 3
		cfg.PublishTimeout = 2 * time.Second
		p := newPublisher(t, cfg)
		start(t, p)
		ps = append(ps, p)
	}
	nc := c.Connect(c.URLs(), "kw", "kw-secret")
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	leader := func() string {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, "KRAFTWATCH_"+clusterID)
		if err != nil || s.CachedInfo().Cluster == nil {
			return ""
		}
		return s.CachedInfo().Cluster.Leader
	}
	var step atomic.Int32
	done := make(chan error, 1)
	go func() {
		for k := range steps {
			for _, p := range ps {
				for g := range groups {
					if err := tryEnqueue(p, transition(fmt.Sprintf("g%02d", g), k)); err != nil {
						done <- err
						return
					}
				}
			}
			step.Store(int32(k + 1))
			time.Sleep(150 * time.Millisecond)
		}
		done <- nil
	}()
	waitFor(t, 30*time.Second, "a stream leader", func() bool { return leader() != "" && step.Load() >= 3 })
	victim := c.Node(leader())
	c.Kill(victim)
	killed, at := time.Now(), step.Load()
	waitFor(t, 30*time.Second, "a new leader", func() bool { l := leader(); return l != "" && l != victim.Name })
	t.Logf("killed %s (leader) at step %d; new leader %s after %v", victim.Name, at, leader(), time.Since(killed).Round(time.Millisecond))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		waitFor(t, time.Minute, "both publishers done", finished(p, groups*steps))
	}
	c.Start(victim)
	waitFor(t, 30*time.Second, "the stream served again", func() bool { return leader() != "" })
	msgs := readStream(t, nc, "kraftwatch")
	for g := range groups {
		checkTransitions(t, msgs, "kraftwatch", fmt.Sprintf("g%02d", g), steps)
	}
	sameEvents(t, nc, "kraftwatch", msgs)
	for i, p := range ps {
		t.Logf("publisher %d: %+v", i+1, p.Stats())
	}
}
