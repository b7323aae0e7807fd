package image

import (
	"slices"
	"testing"
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
