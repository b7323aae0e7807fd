//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestGroupsReader reads __consumer_offsets of a live broker into groups.State: the
// initial catch-up sees a KIP-848 group's subscription, a member that joins afterwards
// is seen live, and reading goes on across a broker restart. Each batch holds one
// partition's records and no offset commit.
func TestGroupsReader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := kafkatest.New(t, kafkatest.Options{})
	for _, topic := range []string{"r-orders", "r-payments"} {
		if err := c.CreateTopic(ctx, topic, 2, 1); err != nil {
			t.Fatal(err)
		}
	}
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: "r-list", Topics: []string{"r-orders"}})

	r, err := groups.NewReader(groups.ReaderConfig{Brokers: []string{c.Bootstrap()}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	state := groups.NewState()
	decodeErrors := 0
	var badBatches []string // batches handed on with an offset commit or another partition's record
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- r.Run(runCtx, func(batch []groups.Message) error {
			mu.Lock()
			defer mu.Unlock()
			if len(batch) == 0 {
				badBatches = append(badBatches, "an empty batch")
			}
			for _, m := range batch {
				if typ, _ := groups.PeekType(m.Key); typ.IsOffsetCommit() || m.Partition != batch[0].Partition {
					badBatches = append(badBatches, fmt.Sprintf("partition %d offset %d: %v in a batch of partition %d", m.Partition, m.Offset, typ, batch[0].Partition))
				}
				if _, err := state.Replay(m.Key, m.Value); err != nil {
					decodeErrors++
					t.Logf("partition %d offset %d: %v", m.Partition, m.Offset, err)
				}
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
		g, ok := state.Group(events.GroupKey{Type: events.ConsumerGroup, ID: group})
		if !ok {
			return nil
		}
		return g.SubscribedTopicNames()
	}
	if got := subscribed("r-list"); !slices.Equal(got, []string{"r-orders"}) {
		t.Fatalf("after catch-up, r-list subscribes to %v, want [r-orders]", got)
	}
	t.Logf("caught up after %d records", r.Records())

	second := e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: "r-live", Topics: []string{"r-orders", "r-payments"}})
	err = e2etest.Wait(ctx, 0, func() error {
		if !slices.Equal(subscribed("r-live"), []string{"r-orders", "r-payments"}) {
			return errors.New("r-live not in state")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	second[0].Close()

	if err := c.Nodes[0].Restart(ctx, nil); err != nil {
		t.Fatal(err)
	}
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: "r-after-restart", Regex: `r-.*`})
	err = e2etest.Wait(ctx, 0, func() error {
		mu.Lock()
		defer mu.Unlock()
		if g, ok := state.Group(events.GroupKey{Type: events.ConsumerGroup, ID: "r-after-restart"}); !ok || !slices.Equal(g.SubscribedRegexes(), []string{"r-.*"}) {
			return errors.New("r-after-restart not in state")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if decodeErrors != 0 {
		t.Fatalf("%d records failed to decode", decodeErrors)
	}
	if len(badBatches) != 0 {
		t.Fatalf("the reader handed on %v", badBatches)
	}
}
