package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// discard is a Publisher that accepts every event.
type discard struct{}

func (discard) Enqueue(context.Context, events.RebalanceNeeded) error           { return nil }
func (discard) EnqueueRebalanced(context.Context, events.GroupRebalanced) error { return nil }
func (discard) Ready() bool                                                     { return true }
func (discard) LoadLastPublished(context.Context) (map[events.GroupKey]publish.Last, error) {
	return nil, nil
}

// BenchmarkRecordsWhileQueried measures the engine's hot path, records applied and
// decided live, with nothing reading its state, and with a reader that queries it
// without pause (what a dashboard polling the API at full speed would cost): the
// records/s of the cases compare the hot path with and without readers in one run.
// The reader's query is the size of one group (a detail) or walks every group (a
// count by state, as /metrics and a list do).
//
//	go test ./engine -run '^$' -bench RecordsWhileQueried
func BenchmarkRecordsWhileQueried(b *testing.B) {
	log := groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 1000, Members: 3, Topics: 500, TopicsPerMember: 3, Assignments: true, OffsetCommits: 20})
	last := events.GroupKey{Type: events.ClassicGroup, ID: "classic-group-00999"}
	for _, bc := range []struct {
		name  string
		query func(*View)
	}{
		{"no-reader", nil},
		{"detail-reader", func(v *View) { v.State.Group(events.GroupKey{Type: events.ConsumerGroup, ID: "group-00500"}) }},
		{"walk-every-group-reader", func(v *View) {
			n := 0
			for g := range v.State.All() {
				if g.State() == groups.StateStable {
					n++
				}
			}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var records int
			var busy time.Duration
			for range b.N {
				caughtUp := make(chan struct{})
				close(caughtUp)
				e, err := New(Config{ClusterID: "c", Scheme: "murmur3", GroupsCaughtUp: caughtUp, Publisher: discard{}})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- e.Run(ctx) }()
				e.OnMetadata(observer.Update{Image: image.Empty})
				for e.Ready() != nil {
					time.Sleep(time.Millisecond)
				}
				var readers sync.WaitGroup
				if bc.query != nil {
					readers.Go(func() {
						for ctx.Err() == nil {
							e.Query(ctx, bc.query)
						}
					})
				}
				start := time.Now()
				for i, kv := range log {
					if err := e.OnGroupRecord(groups.Message{Offset: int64(i), Key: kv.Key, Value: kv.Value}); err != nil {
						b.Fatal(err)
					}
				}
				// The last record creates the last group: once a query sees it, every
				// record is applied (records are applied in order).
				for {
					var seen bool
					e.Query(ctx, func(v *View) { _, seen = v.State.Group(last) })
					if seen {
						break
					}
				}
				busy += time.Since(start)
				records += len(log)
				cancel()
				readers.Wait()
				<-done
			}
			b.ReportMetric(float64(records)/busy.Seconds(), "records/s")
		})
	}
}

func (discard) Superseded() <-chan struct{}                      { return nil }
func (discard) TakeSuperseded() map[events.GroupKey]publish.Last { return nil }
