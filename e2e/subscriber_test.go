//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/events/follow"
)

// TestSidecarSubscriber runs the events package's Follow against a running kraftwatch: a
// durable subscriber receives the groups' first events, is stopped, misses two partition
// increases, and started again with the same name receives exactly those, each once;
// every event it got is one of kraftwatch's stream, in the same order, and decodes to
// the typed RebalanceNeeded.
func TestSidecarSubscriber(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "sub-orders", 1)
	s.StartKraftwatch(ctx, t, "sub-.*")
	nc, err := nats.Connect(s.NATS.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []follow.Delivery
	follow := func() (stop func()) {
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- follow.Run(fctx, js, follow.Config{ClusterID: s.Cluster.ClusterID, Durable: "e2e-sub"},
				func(_ context.Context, d follow.Delivery) error {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, d)
					return nil
				})
		}()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	wait := func(n int) {
		t.Helper()
		err := e2etest.Wait(ctx, time.Minute, func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(got) < n {
				return fmt.Errorf("subscriber received %d events, want %d", len(got), n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	stop := follow()
	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"sub-a": "sub-orders", "sub-b": "sub-orders"})
	wait(2)
	stop()
	s.Admin.AlterPartitions(ctx, t, "sub-orders", 2)
	s.Admin.AlterPartitions(ctx, t, "sub-orders", 3)
	s.Watcher.Expect(ctx, t, map[string]int{"sub-a": 3, "sub-b": 3}, time.Minute)
	stop = follow()
	wait(6)
	time.Sleep(e2etest.Quiet)
	stop()

	stream := s.Stream(t)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(stream) || len(stream) != 6 {
		t.Fatalf("subscriber received %d events, the stream holds %d, want 6", len(got), len(stream))
	}
	for i, d := range got {
		e, ok := d.Event.Data.(*events.RebalanceNeeded)
		if !ok || d.Event.ID != stream[i].MsgID || e.GroupID != stream[i].Env.Data.GroupID || e.NewHash != stream[i].Env.Data.NewHash {
			t.Fatalf("delivery %d: %+v; kraftwatch's stream has %v", i, d.Event, stream[i])
		}
		if d.Stream != e2etest.StreamName {
			t.Fatalf("delivery %d came from stream %s, not kraftwatch's", i, d.Stream)
		}
	}
	t.Logf("durable subscriber: %d events, each once, across a restart, the stream's order", len(got))
}
