//go:build e2e

package e2e

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestGroupsReader reads __consumer_offsets of a live broker into groups.State: the
// initial catch-up sees a KIP-848 group's subscription, a member that joins afterwards
// is seen live, and reading goes on across a broker restart.
func TestGroupsReader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := kafkatest.New(t, kafkatest.Options{})
	for _, topic := range []string{"r-orders", "r-payments"} {
		if err := c.CreateTopic(ctx, topic, 2, 1); err != nil {
			t.Fatal(err)
		}
	}
	first := startMember(ctx, t, c, "r-list", []string{"r-orders"}, "")
	defer first.Close()

	r, err := groups.NewReader(groups.ReaderConfig{Brokers: []string{c.Bootstrap()}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	state := groups.NewState()
	decodeErrors := 0
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- r.Run(runCtx, func(m groups.Message) error {
			mu.Lock()
			defer mu.Unlock()
			if _, err := state.Replay(m.Key, m.Value); err != nil {
				decodeErrors++
				t.Logf("partition %d offset %d: %v", m.Partition, m.Offset, err)
			}
			return nil
		})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("reader: %v", err)
		}
	}()
	select {
	case <-r.CaughtUp():
	case <-ctx.Done():
		t.Fatal("reader never caught up")
	}
	subscribed := func(group string) []string {
		mu.Lock()
		defer mu.Unlock()
		g, ok := state.Group(groups.GroupKey{Type: groups.ConsumerGroup, ID: group})
		if !ok {
			return nil
		}
		return g.SubscribedTopicNames()
	}
	if got := subscribed("r-list"); !slices.Equal(got, []string{"r-orders"}) {
		t.Fatalf("after catch-up, r-list subscribes to %v, want [r-orders]", got)
	}
	t.Logf("caught up after %d records", r.Records())

	second := startMember(ctx, t, c, "r-live", []string{"r-orders", "r-payments"}, "")
	waitFor(ctx, t, "r-live in state", func() bool {
		return slices.Equal(subscribed("r-live"), []string{"r-orders", "r-payments"})
	})
	second.Close()

	if err := c.Nodes[0].Restart(ctx, nil); err != nil {
		t.Fatal(err)
	}
	third := startMember(ctx, t, c, "r-after-restart", nil, `r-.*`)
	defer third.Close()
	waitFor(ctx, t, "r-after-restart in state", func() bool {
		mu.Lock()
		defer mu.Unlock()
		g, ok := state.Group(groups.GroupKey{Type: groups.ConsumerGroup, ID: "r-after-restart"})
		return ok && slices.Equal(g.SubscribedRegexes(), []string{"r-.*"})
	})
	mu.Lock()
	defer mu.Unlock()
	if decodeErrors != 0 {
		t.Fatalf("%d records failed to decode", decodeErrors)
	}
}

func startMember(ctx context.Context, t *testing.T, c *kafkatest.Cluster, group string, topics []string, regex string) *kafkatest.Member {
	t.Helper()
	m, err := c.StartMember(ctx, group, kafkatest.KindConsumer, topics, regex)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitFor(ctx, "assigned "); err != nil {
		m.Close()
		t.Fatal(err)
	}
	return m
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
