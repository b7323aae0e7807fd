package engine

import (
	"context"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/publish"
)

// idlePublisher is what New needs of a publisher when Run does not run.
type idlePublisher struct{}

func (idlePublisher) Enqueue(context.Context, events.RebalanceNeeded) error           { return nil }
func (idlePublisher) EnqueueRebalanced(context.Context, events.GroupRebalanced) error { return nil }
func (idlePublisher) Ready() bool                                                     { return true }
func (idlePublisher) LoadLastPublished(context.Context) (map[events.GroupKey]publish.Last, error) {
	return nil, nil
}

// TestCoordinatorCheck: a group whose coordinator stored the kafka-scheme hash agrees;
// one whose stored hash differs counts once the grace period is over, and stops
// counting when the coordinator catches up; an empty group, a group the coordinator
// stored no hash for and a classic group are not compared; a disagreement while a
// topic's replica is on an unregistered broker is not counted. Both published schemes
// compare the kafka-scheme hash.
func TestCoordinatorCheck(t *testing.T) {
	for _, scheme := range []string{hashcache.SchemeMurmur3, hashcache.SchemeKafka} {
		t.Run(scheme, func(t *testing.T) {
			e, err := New(Config{ClusterID: "c", Scheme: scheme, GroupsCaughtUp: make(chan struct{}), Publisher: idlePublisher{},
				MismatchAfter: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			e.img = replay(t, image.Empty, 10,
				"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
				"TopicRecord Name=orders TopicID="+orders,
				"PartitionRecord TopicID="+orders+" PartitionID=0 Replicas=1 ISR=1 Leader=1").Image
			kafka, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
			right := kafka.GroupHash(hashcache.ImageCluster{Image: e.img}, []string{"orders"})
			stored := func(group string, offset int64, hash int64) {
				t.Helper()
				e.applyRecord(record(t, offset, &groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: group,
					Value: &groups.ConsumerGroupMetadataValue{Epoch: int32(offset), MetadataHash: hash}}))
			}
			for i, g := range []string{"agrees", "differs", "empty", "unhashed"} {
				if g != "empty" {
					e.applyRecord(member(t, g, int64(10*i), "orders"))
				}
			}
			stored("agrees", 1, right)
			stored("differs", 2, right+1)
			stored("empty", 3, right+1)
			e.applyRecord(record(t, 4, &groups.Record{Type: groups.GroupMetadata, GroupID: "classic",
				Value: &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 3}}))
			e.tracker.Sync(e.img)

			t0 := time.Now()
			for _, step := range []struct {
				at                  time.Duration
				checked, mismatches int
			}{{0, 2, 0}, {59 * time.Second, 2, 0}, {time.Minute, 2, 1}, {time.Hour, 2, 1}} {
				e.checkCoordinator(t0.Add(step.at))
				if e.coord.checked != step.checked || e.coord.mismatches != step.mismatches {
					t.Fatalf("at +%v: %d checked, %d mismatches; want %d, %d", step.at, e.coord.checked, e.coord.mismatches,
						step.checked, step.mismatches)
				}
			}
			stored("differs", 5, right) // the coordinator caught up
			e.checkCoordinator(t0.Add(2 * time.Hour))
			if e.coord.mismatches != 0 || len(e.coord.since) != 0 {
				t.Fatalf("after the coordinator caught up: %d mismatches, %d tracked", e.coord.mismatches, len(e.coord.since))
			}

			// Broker 1, orders' only replica, is unregistered: kraftwatch's hash loses
			// its rack, the coordinator keeps the stored one (it does not recompute for
			// an unregistration). Not counted, however long it lasts.
			u := replay(t, e.img, 20, "UnregisterBrokerRecord BrokerID=1 BrokerEpoch=1")
			e.img = u.Image
			e.tracker.Metadata(u.Image, u.Changes)
			fresh, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
			if h := fresh.GroupHash(hashcache.ImageCluster{Image: e.img}, []string{"orders"}); h == right {
				t.Fatal("unregistering the broker did not change the kafka-scheme hash")
			}
			for _, at := range []time.Duration{3 * time.Hour, 4 * time.Hour} {
				e.checkCoordinator(t0.Add(at))
				if e.coord.checked != 2 || e.coord.mismatches != 0 {
					t.Fatalf("broker unregistered, at +%v: %d checked, %d mismatches; want 2, 0", at, e.coord.checked, e.coord.mismatches)
				}
			}
		})
	}
}

func (idlePublisher) Superseded() <-chan struct{}                      { return nil }
func (idlePublisher) TakeSuperseded() map[events.GroupKey]publish.Last { return nil }
