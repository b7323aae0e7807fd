package image

import (
	"slices"
	"testing"
	"unsafe"
)

// TestInternQuickTable interns list sets that the quick table files under one slot
// (they differ only in int32s quickIndex does not read) and sets that are the same:
// each ref must hold exactly its set, and the same set must share one array.
func TestInternQuickTable(t *testing.T) {
	// Length 7: quickIndex reads [0], [1], [3] and [6]; these differ in [2], [4], [5].
	sets := [][]int32{
		{1, 2, 3, 4, 5, 6, 7},
		{1, 2, 9, 4, 9, 9, 7},
		{1, 2, 3, 4, 5, 8, 7},
	}
	for _, s := range sets[1:] {
		if quickIndex(s) != quickIndex(sets[0]) {
			t.Fatalf("quickIndex(%v) != quickIndex(%v): the test needs them in one slot", s, sets[0])
		}
	}
	d := NewDelta(Empty)
	refs := make([]listRef, len(sets))
	for round := range 3 {
		for i, s := range sets {
			ref := d.intern(slices.Clone(s))
			if got := unsafe.Slice(ref.data(), len(s)); !slices.Equal(got, s) {
				t.Fatalf("round %d: intern(%v) holds %v", round, s, got)
			}
			if round == 0 {
				refs[i] = ref
			}
		}
	}
	// The same set twice in a row: the second is found, not stored again.
	a, b := d.intern([]int32{4, 4, 4}), d.intern([]int32{4, 4, 4})
	if a != b {
		t.Errorf("the same set interned twice in a row got two arrays: %v, %v", a, b)
	}
	d.forget()
	if c := d.intern([]int32{4, 4, 4}); c == a {
		t.Errorf("after forget the set is still found: %v", c)
	}
}
