package image

import (
	"slices"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// TestLeaf: the leaves of a topic give, slot by slot, what Partition(id).Replicas()
// gives, nil for the ids the topic does not have, for dense topics (several trie
// levels), topics with holes and empty ones.
func TestLeaf(t *testing.T) {
	im := layouts(t)
	for tp := range im.Topics() {
		top := int32(0)
		for p := range tp.Partitions() {
			top = max(top, p.ID()+1)
		}
		for k := 0; k*LeafSize < int(top)+LeafSize; k++ {
			leaf := tp.Leaf(k)
			if leaf.Len() > LeafSize {
				t.Fatalf("%s leaf %d: %d slots", tp.Name(), k, leaf.Len())
			}
			for j := range LeafSize {
				id := int32(k*LeafSize + j)
				var got []int32
				if j < leaf.Len() {
					got = leaf.Replicas(j)
				}
				var want []int32
				if p, ok := tp.Partition(id); ok && len(p.Replicas()) > 0 {
					want = p.Replicas()
				}
				if !slices.Equal(got, want) || (got == nil) != (want == nil) {
					t.Fatalf("%s partition %d: %v, want %v", tp.Name(), id, got, want)
				}
			}
		}
		if l := tp.Leaf(-1); l.Len() != 0 {
			t.Fatalf("%s leaf -1: %d slots", tp.Name(), l.Len())
		}
	}
}

// TestLeafReplicas3: Replicas3 gives the replicas of the slots with three of them,
// and nil for other counts (none to five), empty slots and missing ids.
func TestLeafReplicas3(t *testing.T) {
	d := NewDelta(Empty)
	id := UUID{7}
	if err := d.Replay(&metadata.TopicRecord{TopicID: id, Name: "rf"}); err != nil {
		t.Fatal(err)
	}
	for p := range int32(70) {
		if p%7 == 6 {
			continue // a hole
		}
		replicas := []int32{p, p + 1000, p + 70000, 3, 4}[:p%6]
		if err := d.Replay(&metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: replicas, ISR: replicas}); err != nil {
			t.Fatal(err)
		}
	}
	im, _ := d.Apply(Provenance{})
	tp, _ := im.Topic(id)
	threes := 0
	for k := 0; k*LeafSize < tp.NumPartitions()+LeafSize; k++ {
		leaf := tp.Leaf(k)
		for j := range leaf.Len() {
			got, want := leaf.Replicas3(j), leaf.Replicas(j)
			if (got != nil) != (len(want) == 3) || got != nil && !slices.Equal(got[:], want) {
				t.Fatalf("partition %d: %v, want %v", k*LeafSize+j, got, want)
			}
			if got != nil {
				threes++
			}
		}
	}
	if threes != 10 { // p%6 == 3 and p%7 != 6, p < 70
		t.Fatalf("%d partitions with three replicas, want 10", threes)
	}
}
