package groups_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// TestTrackerMatchesSync: after any sequence of metadata updates (reassignments,
// topics created, deleted and grown, brokers changing rack or going away), every
// group's hash that Metadata kept up to date is the hash a fresh Tracker computes
// from scratch (Sync) on the same image, in both schemes.
func TestTrackerMatchesSync(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		scheme := rapid.SampledFrom([]string{hashcache.SchemeKafka, hashcache.SchemeMurmur3}).Draw(rt, "scheme")
		const topics, brokers = 6, 5
		// Topic i has id ids[i]; a topic created again gets a new id, as Kafka
		// never reuses one.
		ids, created := map[int]image.UUID{}, 0
		tid := func(i int) image.UUID { return ids[i] }
		create := func(i int) image.UUID {
			created++
			ids[i] = image.UUID{byte(created), byte(created >> 8)}
			return ids[i]
		}
		name := func(i int) string { return fmt.Sprintf("t%d", i) }
		replicas := func(label string) []int32 {
			return rapid.SliceOfNDistinct(rapid.Int32Range(0, brokers), 1, 3, rapid.ID[int32]).Draw(rt, label)
		}
		exists := map[int]int32{} // topic -> partitions
		d := image.NewDelta(image.Empty)
		for id := range int32(brokers) {
			rack := fmt.Sprint("r", id%3)
			d.Replay(&metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1, Rack: &rack})
		}
		for i := range topics - 2 {
			d.Replay(&metadata.TopicRecord{TopicID: create(i), Name: name(i)})
			for p := range int32(3) {
				d.Replay(&metadata.PartitionRecord{TopicID: tid(i), PartitionID: p, Replicas: replicas("replicas")})
			}
			exists[i] = 3
		}
		im, _ := d.Apply(image.Provenance{Offset: 1})

		s := groups.NewState()
		for g := range rapid.IntRange(1, 12).Draw(rt, "groups") {
			v := &groups.ConsumerGroupMemberMetadataValue{}
			for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, topics-1), 0, 3, rapid.ID[int]).Draw(rt, "names") {
				v.SubscribedTopicNames = append(v.SubscribedTopicNames, name(i))
			}
			if rapid.IntRange(0, 3).Draw(rt, "regex") == 0 {
				v.SubscribedTopicRegex = `t[0-2]`
			}
			s.Apply(&groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: fmt.Sprint("g", g), MemberID: "m", Value: v})
		}
		newTracker := func() *groups.Tracker {
			c, err := hashcache.New(hashcache.Config{Scheme: scheme})
			if err != nil {
				rt.Fatal(err)
			}
			return groups.NewTracker(s, c)
		}
		tr := newTracker()
		tr.Sync(im)
		for step := range rapid.IntRange(1, 15).Draw(rt, "steps") {
			d := image.NewDelta(im)
			for range rapid.IntRange(1, 3).Draw(rt, "records") {
				i := rapid.IntRange(0, topics-1).Draw(rt, "topic")
				n, ok := exists[i]
				switch op := rapid.IntRange(0, 4).Draw(rt, "op"); {
				case op == 0 && ok: // reassign a partition
					ch := metadata.NewPartitionChangeRecord(tid(i), rapid.Int32Range(0, n-1).Draw(rt, "partition"))
					ch.Replicas = replicas("new replicas")
					d.Replay(ch)
				case op == 1 && ok: // add a partition
					d.Replay(&metadata.PartitionRecord{TopicID: tid(i), PartitionID: n, Replicas: replicas("replicas")})
					exists[i] = n + 1
				case op == 2 && ok:
					d.Replay(&metadata.RemoveTopicRecord{TopicID: tid(i)})
					delete(exists, i)
				case op == 2:
					d.Replay(&metadata.TopicRecord{TopicID: create(i), Name: name(i)})
					d.Replay(&metadata.PartitionRecord{TopicID: tid(i), Replicas: replicas("replicas")})
					exists[i] = 1
				case op == 3:
					id := rapid.Int32Range(0, brokers).Draw(rt, "broker")
					rack := rapid.SampledFrom([]string{"r0", "r1", "r2", "r3"}).Draw(rt, "rack")
					d.Replay(&metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: int64(step + 2), Rack: &rack})
				case op == 4:
					d.Replay(&metadata.UnregisterBrokerRecord{BrokerID: rapid.Int32Range(0, brokers).Draw(rt, "broker")})
				}
			}
			next, ch := d.Apply(image.Provenance{Offset: int64(step + 2)})
			tr.Metadata(next, ch)
			im = next
			fresh := newTracker()
			fresh.Sync(im)
			for _, k := range s.Keys() {
				got, ok1 := tr.Hash(k)
				want, ok2 := fresh.Hash(k)
				if got != want || ok1 != ok2 {
					rt.Fatalf("step %d %s: hash %x (%v), from scratch %x (%v)", step, k, got, ok1, want, ok2)
				}
			}
		}
	})
}
