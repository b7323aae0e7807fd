package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/image/imagetest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// nopPublisher takes events and drops them: the benchmark measures the engine's part.
type nopPublisher struct{}

func (nopPublisher) Enqueue(context.Context, events.RebalanceNeeded) error { return nil }
func (nopPublisher) EnqueueRebalanced(context.Context, events.GroupRebalanced) error {
	return nil
}
func (nopPublisher) Ready() bool { return true }
func (nopPublisher) LoadLastPublished(context.Context) (map[events.GroupKey]publish.Last, error) {
	return nil, nil
}

// BenchmarkCoveredTopics measures what listing the covered topics adds to each event
// of a group reading n topics: the list (image and cache look-ups), its cut, and its
// share of the event's JSON.
func BenchmarkCoveredTopics(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("topics=%d", n), func(b *testing.B) {
			d := image.NewDelta(image.Empty)
			var names []string
			for i := range n {
				var id image.UUID
				id[14], id[15] = byte(i>>8), byte(i)+1
				name := fmt.Sprintf("orders.eu-west-%05d.v2", i)
				names = append(names, name)
				recs := []string{fmt.Sprintf("TopicRecord Name=%s TopicID=%s", name, id),
					fmt.Sprintf("PartitionRecord TopicID=%s PartitionID=0 Replicas=1 ISR=1 Leader=1", id)}
				for _, l := range recs {
					imagetest.Lines(b, d, nil, l)
				}
			}
			imagetest.Lines(b, d, nil, "RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a")
			img, _ := d.Apply(image.Provenance{Offset: 1, Epoch: 1, Timestamp: time.Now().UnixMilli()})
			e, err := New(Config{ClusterID: "c", Scheme: "murmur3", GroupsCaughtUp: make(chan struct{}), Publisher: nopPublisher{}})
			if err != nil {
				b.Fatal(err)
			}
			e.img = img
			e.applyRecord(member(b, "g", 1, names...))
			e.tracker.Sync(img)
			k := events.GroupKey{Type: events.ConsumerGroup, ID: "g"}
			ts, _ := events.FitTopics(e.coveredTopics(k), events.MaxTopicsBytes)
			if len(ts) != n {
				b.Fatalf("%d topics listed, want %d", len(ts), n)
			}
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				ts, _ := events.FitTopics(e.coveredTopics(k), events.MaxTopicsBytes)
				js, err := json.Marshal(ts)
				if err != nil {
					b.Fatal(err)
				}
				size = len(js)
			}
			b.ReportMetric(float64(size), "json-bytes")
		})
	}
	// The same events' whole JSON body, without the list and with it, for the ratio.
	for _, n := range []int{1, 100} {
		ev := events.RebalanceNeeded{ClusterID: "c", GroupID: "g", GroupType: events.ConsumerGroup, HashScheme: events.SchemeMurmur3,
			NewHash: 1, Cause: events.Cause{MetadataOffset: 1}, CoordinatorEpoch: -1,
			Reasons: []events.Reason{{Kind: events.PartitionsAdded, Topic: "orders.eu-west-00000.v2", TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ",
				OldPartitions: 1, NewPartitions: 2, MetadataOffset: 1, Time: time.Now()}}}
		for i := range n {
			ev.Topics = append(ev.Topics, events.CoveredTopic{Name: fmt.Sprintf("orders.eu-west-%05d.v2", i),
				TopicID: "b2KQm1tqRBCzb0Y5bXy2WQ", Partitions: 12, Hash: -4611686018427387904})
		}
		for _, with := range []bool{false, true} {
			e := ev
			if !with {
				e.Topics = nil
			}
			b.Run(fmt.Sprintf("event/topics=%d/listed=%v", n, with), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					env, err := e.Wrap(time.Time{})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := json.Marshal(env); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func (nopPublisher) Superseded() <-chan struct{}                      { return nil }
func (nopPublisher) TakeSuperseded() map[events.GroupKey]publish.Last { return nil }
