package image

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHmapAgainstMap runs random operations on an hmap and a Go map side by side,
// with hash functions that collide on purpose, and checks that images kept along
// the way never change.
func TestHmapAgainstMap(t *testing.T) {
	hashes := map[string]func(int) uint64{
		"real":          func(k int) uint64 { return hashInt32(int32(k)) },
		"low bits only": func(k int) uint64 { return uint64(k % 7) },
		"all collide":   func(k int) uint64 { return 42 },
		"high bits":     func(k int) uint64 { return uint64(k%3) << 62 },
	}
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var m hmap[int, int]
			ref := map[int]int{}
			type snap struct {
				m   hmap[int, int]
				ref map[int]int
			}
			var snaps []snap
			e := new(edit)
			for i := range 5000 {
				k := rng.IntN(300)
				switch rng.IntN(3) {
				case 0, 1:
					m = m.set(e, hash(k), k, i)
					ref[k] = i
				case 2:
					m = m.del(e, hash(k), k)
					delete(ref, k)
				}
				if i%250 == 0 {
					// Publish: freeze the current nodes and keep a copy to check later.
					snaps = append(snaps, snap{m, clone(ref)})
					e = new(edit)
				}
			}
			snaps = append(snaps, snap{m, ref})
			for i, s := range snaps {
				if s.m.Len() != len(s.ref) {
					t.Fatalf("snapshot %d: len %d, want %d", i, s.m.Len(), len(s.ref))
				}
				for k := range 300 {
					got, ok := s.m.get(hash(k), k)
					want, wok := s.ref[k]
					if ok != wok || got != want {
						t.Fatalf("snapshot %d key %d: %d,%v want %d,%v", i, k, got, ok, want, wok)
					}
				}
				n := 0
				s.m.each(func(k, v int) bool {
					n++
					if s.ref[k] != v {
						t.Fatalf("each: %d=%d", k, v)
					}
					return true
				})
				if n != len(s.ref) {
					t.Fatalf("each visited %d, want %d", n, len(s.ref))
				}
			}
		})
	}
}

func clone(m map[int]int) map[int]int {
	c := make(map[int]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestPvecAgainstMap sets partitions at random ids, each with a replica list [i, id]
// carved from shared chunks as Delta.lists carves them (or, one in 8, as a leader
// change that keeps the lists), and checks every version kept: their leaves share
// chunk tables, which refer renumbers and compacts as slots move to new chunks.
func TestPvecAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var v pvec
	var chunk []int32 // carved from the front, as Delta.lists does
	carved := 0
	store := func(l ...int32) listRef {
		if len(chunk)-carved < len(l) {
			chunk, carved = make([]int32, 2+rng.IntN(listChunk)), 0
		}
		copy(chunk[carved:], l)
		ref := listRef{base: &chunk[0], off: uint16(carved)}
		carved += len(l)
		return ref
	}
	stored := map[int32]int32{} // the i of each id's list
	ref := map[int32]int32{}
	type snap struct {
		v           pvec
		ref, stored map[int32]int32
	}
	var snaps []snap
	e := new(edit)
	for i := range 4000 {
		var id int32
		switch rng.IntN(3) {
		case 0:
			id = rng.Int32N(40)
		case 1:
			id = rng.Int32N(5000)
		default:
			id = rng.Int32N(1 << 30)
		}
		if _, ok := v.get(id); ok && rng.IntN(8) == 0 {
			v.slot(e, id).leader = int32(i) // the lists stay
		} else {
			v.set(e, partition{id: id, leader: int32(i), n: [nLists]uint8{2}}, store(int32(i), id))
			stored[id] = int32(i)
		}
		ref[id] = int32(i)
		if i%200 == 0 {
			snaps = append(snaps, snap{v, maps.Clone(ref), maps.Clone(stored)})
			e = new(edit)
		}
	}
	snaps = append(snaps, snap{v, ref, stored})
	for i, s := range snaps {
		if int(s.v.count) != len(s.ref) {
			t.Fatalf("snapshot %d: count %d want %d", i, s.v.count, len(s.ref))
		}
		for id, leader := range s.ref {
			p, ok := s.v.get(id)
			if !ok || p.p.leader != leader || p.p.id != id || !slices.Equal(p.Replicas(), []int32{s.stored[id], id}) {
				t.Fatalf("snapshot %d id %d: %+v %v, replicas %v want [%d %d]", i, id, p.p, ok, p.Replicas(), s.stored[id], id)
			}
		}
		prev, n := int32(-1), 0
		s.v.each(func(p Partition) bool {
			if p.p.id <= prev {
				t.Fatalf("each out of order: %d after %d", p.p.id, prev)
			}
			prev = p.p.id
			n++
			return true
		})
		if n != len(s.ref) {
			t.Fatalf("each visited %d want %d", n, len(s.ref))
		}
		checkTables(t, fmt.Sprintf("snapshot %d", i), s.v.root)
		for _, id := range []int32{-1, 41, 1<<31 - 1} {
			if _, ok := s.ref[id]; !ok {
				if _, got := s.v.get(id); got {
					t.Fatalf("absent id %d found", id)
				}
			}
		}
	}
}
