package whatif_test

import (
	"fmt"
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/whatif"
)

// benchCluster is 9 brokers in 3 racks (broker b in rack b%3), topics×parts
// partitions with one replica per rack, and groups consumer groups each reading two
// topics.
func benchCluster(b *testing.B, topics, parts, ngroups int) (*image.Image, *groups.State) {
	b.Helper()
	d := image.NewDelta(image.Empty)
	for id := int32(0); id < 9; id++ {
		rack := fmt.Sprintf("r%d", id%3)
		if err := d.Replay(&metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1, Rack: &rack}); err != nil {
			b.Fatal(err)
		}
	}
	for t := range topics {
		var id image.UUID
		id[0], id[1], id[2] = 1, byte(t>>8), byte(t)
		if err := d.Replay(&metadata.TopicRecord{Name: fmt.Sprintf("t%04d", t), TopicID: id}); err != nil {
			b.Fatal(err)
		}
		for p := range parts {
			rs := []int32{int32(p % 3), int32(3 + (p+1)%3), int32(6 + (p+2)%3)}
			if err := d.Replay(&metadata.PartitionRecord{PartitionID: int32(p), TopicID: id, Replicas: rs, ISR: rs, Leader: rs[0]}); err != nil {
				b.Fatal(err)
			}
		}
	}
	img, _ := d.Apply(image.Provenance{})
	st := groups.NewState()
	for g := range ngroups {
		rec, err := groupstest.ParseText(fmt.Sprintf("member consumer g%05d m1 topics=t%04d,t%04d", g, g%topics, (g+1)%topics))
		if err != nil {
			b.Fatal(err)
		}
		st.Apply(&rec)
	}
	return img, st
}

// crossRackPlan moves every partition's first replica to a broker of the next
// rack: each move changes the partition's racks at the start and the completion.
func crossRackPlan(img *image.Image) whatif.Plan {
	var p whatif.Plan
	for t := range img.Topics() {
		for part := range t.Partitions() {
			rs := append([]int32(nil), part.Replicas()...)
			rs[0] = (rs[0] + 1) % 3 // a broker of the next rack, not in the list: the partition leaves rack r(x)
			p.Moves = append(p.Moves, whatif.Move{Topic: t.Name(), Partition: part.ID(), Replicas: rs})
		}
	}
	return p
}

// BenchmarkEvaluate is the goal of the what-if: a plan moving 100 000 partitions
// (1 000 topics of 100) read by 10 000 groups, under 1 s.
func BenchmarkEvaluate(b *testing.B) {
	img, st := benchCluster(b, 1000, 100, 10000)
	plan := crossRackPlan(img)
	b.ReportAllocs()
	b.ResetTimer()
	var res *whatif.Result
	for b.Loop() {
		var err error
		if res, err = whatif.Evaluate(img, st, hashcache.SchemeKafka, plan); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(res.Groups) != 10000 || res.MaxRebalances() != 201 {
		b.Fatalf("%d groups, max %d rebalances; want 10000 and 201 (the start, then 200 completions)", len(res.Groups), res.MaxRebalances())
	}
	b.ReportMetric(float64(len(plan.Moves)), "partitions")
}

// BenchmarkSyncBaseline hashes every group of the same cluster once, as the
// engine's Tracker does at start-up: the cost of one full pass, for comparison.
func BenchmarkSyncBaseline(b *testing.B) {
	img, st := benchCluster(b, 1000, 100, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c, err := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
		if err != nil {
			b.Fatal(err)
		}
		tr := groups.NewTracker(st, c)
		tr.Sync(img)
	}
}
