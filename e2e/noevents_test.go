//go:build e2e

package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
)

// TestNoEventsStream runs the binary with KRAFTWATCH_EVENTS_STREAM=none: a group joins
// and partitions are added to its topic; kraftwatch's stream alone exists (no stream
// captures the public subjects), it holds the two events once, and the core
// subscriber received each once.
func TestNoEventsStream(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "ne-orders", 1)
	s.StartKraftwatch(ctx, t, "ne-.*", "KRAFTWATCH_EVENTS_STREAM=none")
	e2etest.StartConsumers(ctx, t, s.Cluster, map[string]string{"ne-billing": "ne-orders"})
	s.Watcher.Expect(ctx, t, map[string]int{"ne-billing": 1}, time.Minute)
	s.Admin.AlterPartitions(ctx, t, "ne-orders", 2)
	s.Watcher.Expect(ctx, t, map[string]int{"ne-billing": 2}, time.Minute)

	js := e2etest.JetStream(t, s.NATS.URL())
	var names []string
	l := js.StreamNames(ctx)
	for name := range l.Name() {
		names = append(names, name)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != e2etest.StreamName {
		t.Fatalf("streams %v, want only %s", names, e2etest.StreamName)
	}
	public := events.Subject(events.DefaultPrefix, s.Cluster.ClusterID, events.ConsumerGroup, "ne-billing")
	lookup, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if name, err := js.StreamNameBySubject(lookup, public); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("a lookup by %s found %q, %v; want no stream", public, name, err)
	}
	e2etest.CheckStreamAndCore(t, s.Stream(t), s.Watcher, "ne-billing")
}
