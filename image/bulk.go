package image

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// bulk fills a topic created in the current delta with its partitions while they
// arrive in id order 0, 1, 2, ..., as Kafka writes them after the TopicRecord (in a
// snapshot, and for a new topic in the log): their slots go straight into leaves of
// 32, their lists into large shared chunks, and flush builds the radix trie over the
// leaves bottom up. The image is the same as replaying them one by one
// (TestBulkMatchesReplay), for a fraction of the allocations and copying.
//
// Any other record, and Apply, first flushes the buffered partitions into the topic,
// so nothing else ever sees a topic with partitions pending.
type bulk struct {
	t      *Topic        // the topic being filled; nil when nothing is buffered
	n      int           // partitions buffered
	leaves [][]partition // full leaves of 32 slots, then the one being filled
	fill   int           // slots of the last leaf filled
	tables [][]*int32    // the chunk table of each full leaf (pnode.chunks)
	// table is the table of the leaf being filled: the last table stored (prev),
	// then the chunks the leaf added; used marks the entries its slots use.
	table []*int32
	used  uint64
	prev  []*int32
	hint  int // partitions of the previous topic
}

// Lists are carved from chunks of listChunk int32s, shared by the partitions of
// consecutive topics and by the list changes of a delta; a list set larger than
// listChunk/4 gets an array of its own. A chunk is freed once no leaf's table points
// at it any more. A chunk is 512 bytes: a chunk that one list keeps alive wastes
// little, and it is the largest object Go's collector (Green Tea, Go 1.26) marks
// through its span without looking the object up (BenchmarkGCWithImage in
// image/bench_test.go guards this). The offset of a list in its chunk fits partition.off.
const listChunk = 128

// interner remembers list sets the delta stored (bulkAdd, packLists), so that
// partitions with the same replicas, ISR and directories (most of a large cluster's:
// 12 brokers in RF 3 make at most 1,320 replica lists) share one array: a
// direct-mapped table, so a list set not found is simply stored again. Apply empties
// it, so a Delta keeps no chunk alive that its images dropped.
//
// Hashing a partition's whole list set (72 bytes with three directories) with maphash
// is about half of intern's cost, so a second, smaller table is looked at first, by a
// hash of four of the set's int32s and its length (a few instructions): when the set
// it holds is the same, that is the answer; else the full hash decides, as it did
// without it, and both tables remember the set. The second table only finds sets
// already stored, so it never stores a set the full hash alone would not, at most
// fewer copies of one. BenchmarkLoadSnapshot in image/bench_test.go, and
// bench/metadata.sh's load CPU against its floor, guard this.
type interner struct {
	used  bool
	seed  maphash.Seed
	slots [internSlots]internSlot
	quick [quickSlots]internSlot
}

// internSlot is a list set stored: where, and how many int32s.
type internSlot struct {
	ref listRef
	n   uint16
}

const (
	internSlots = 1 << 12
	quickSlots  = 1 << 10
)

// quickIndex is buf's slot in interner.quick (len(buf) > 0): its first two int32s, the
// middle and the last one (with packed lists: the first replicas, then the ISR or a
// directory), and its length, mixed by multiplying.
func quickIndex(buf []int32) uint32 {
	n := len(buf)
	h := (uint32(n) ^ uint32(buf[0])) * 0x9e3779b1
	h = (h ^ uint32(buf[min(1, n-1)])) * 0x85ebca77
	h = (h ^ uint32(buf[n/2])) * 0xc2b2ae3d
	h = (h ^ uint32(buf[n-1])) * 0x27d4eb2f
	return (h >> 16) & (quickSlots - 1)
}

// holds reports whether s holds what raw (len(raw)/4 int32s) holds.
func (s *internSlot) holds(raw []byte) bool {
	return int(s.n) == len(raw)/4 && bytes.Equal(int32Bytes(unsafe.Slice(s.ref.data(), s.n)), raw)
}

// intern returns where an array holding what buf holds is, shared with earlier
// partitions of the delta when one had the same lists.
func (d *Delta) intern(buf []int32) listRef {
	if len(buf) == 0 {
		return listRef{}
	}
	if d.interned == nil {
		d.interned = &interner{seed: maphash.MakeSeed()}
	}
	// Hashed and compared as bytes: maphash and memequal take a few instructions per
	// 16 bytes, a loop over the int32s a few per element.
	raw := int32Bytes(buf)
	in := d.interned
	quick := &in.quick[quickIndex(buf)]
	if quick.holds(raw) {
		return quick.ref
	}
	slot := &in.slots[maphash.Bytes(in.seed, raw)&(internSlots-1)]
	if !slot.holds(raw) {
		data, ref := d.lists(len(buf))
		copy(data, buf)
		*slot = internSlot{ref: ref, n: uint16(len(buf))}
		in.used = true
	}
	*quick = *slot
	return slot.ref
}

// data is the array ref points at (ref.base not nil).
func (r listRef) data() *int32 {
	return (*int32)(unsafe.Add(unsafe.Pointer(r.base), 4*uintptr(r.off)))
}

// int32Bytes is the memory of s as bytes.
func int32Bytes(s []int32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}

// forget empties the interner and the bulk path's last chunk table.
func (d *Delta) forget() {
	if d.interned != nil && d.interned.used {
		clear(d.interned.slots[:])
		clear(d.interned.quick[:])
		d.interned.used = false
	}
	b := &d.bulk
	b.prev = nil
	clear(b.table)
	b.table = b.table[:0]
}

// bulkStart reports whether partition id of t (as returned by d.topic) can start a
// bulk load: t was created by this delta, holds no partitions, and id is 0.
func (d *Delta) bulkStart(t *Topic, id int32) bool {
	return !d.noBulk && id == 0 && !d.lastInBase && t.parts.root == nil && t.edit == d.edit
}

// lists returns room for n (> 0) int32s that no one else uses, and where it is.
func (d *Delta) lists(n int) ([]int32, listRef) {
	if n > listChunk/4 {
		s := make([]int32, n)
		return s, listRef{base: &s[0]}
	}
	if n > len(d.chunk)-d.carved {
		d.chunk, d.carved = make([]int32, listChunk), 0
	}
	at := d.carved
	d.carved += n
	return d.chunk[at:d.carved:d.carved], listRef{base: &d.chunk[0], off: uint16(at)}
}

// bulkScratch is room for the packed lists of any partition Replay accepts: six
// lists and the directories (4 int32 each), none longer than maxList.
const bulkScratch = (listDirs + 4) * maxList

// scratchLists is d.scratch, room for bulkScratch int32s.
func (d *Delta) scratchLists() []int32 {
	if len(d.scratch) < bulkScratch {
		d.scratch = make([]int32, bulkScratch)
	}
	return d.scratch[:bulkScratch]
}

// bulkAdd adds r, the next partition of d.bulk.t. r has been validated (no list
// longer than maxList, as many directories as replicas or none). The slot is written
// in place in the leaf being filled: a store of integers into a noscan array, where
// appending to the leaf stored its slice header, a pointer, for every partition.
func (d *Delta) bulkAdd(r *metadata.PartitionRecord) {
	b := &d.bulk
	k := len(b.leaves) - 1
	if k < 0 || b.fill == len(b.leaves[k]) {
		k = b.room()
	}
	p := &b.leaves[k][b.fill]
	*p = partition{id: r.PartitionID, leader: r.Leader, leaderEpoch: r.LeaderEpoch, partitionEpoch: r.PartitionEpoch,
		state: stateOf(r.LeaderRecoveryState)}
	data := d.scratchLists()
	at := packList(p, listReplicas, data, 0, r.Replicas)
	at = packList(p, listISR, data, at, r.ISR)
	at = packList(p, listRemoving, data, at, r.RemovingReplicas)
	at = packList(p, listAdding, data, at, r.AddingReplicas)
	at = packList(p, listELR, data, at, r.EligibleLeaderReplicas)
	at = packList(p, listLastKnownELR, data, at, r.LastKnownELR)
	if anyDirectory(r.Directories) {
		p.n[listDirs] = uint8(len(r.Directories))
		at += copyDirectories(data[at:], r.Directories)
	}
	if ref := d.intern(data[:at]); ref.base != nil {
		p.chunk, p.off = b.chunk(ref.base), ref.off
	}
	b.fill++
	b.n++
}

// room makes room for the next slot when the leaf being filled is full (or there is
// none) and returns the index of the leaf it goes to. A new leaf is as long as the
// previous topic suggests (the topics of a snapshot are often alike), else 32 slots,
// or 4 for the first (small topics are common); a leaf too short grows, up to the
// 32 slots of a leaf, and flush trims the last one.
func (b *bulk) room() int {
	k := len(b.leaves) - 1
	if k >= 0 && len(b.leaves[k]) < 32 {
		l := make([]partition, min(32, 2*len(b.leaves[k])))
		copy(l, b.leaves[k])
		b.leaves[k] = l
		return k
	}
	if k >= 0 {
		b.endLeaf(b.leaves[k])
	}
	c := 32
	switch {
	case b.hint > b.n:
		c = min(32, b.hint-b.n)
	case k < 0:
		c = 4
	}
	b.leaves = append(b.leaves, make([]partition, c))
	b.fill = 0
	return k + 1
}

// chunk is the index of base in the table of the leaf being filled, added when it
// is not there yet. The chunk last added is the likeliest (the lists stored last).
func (b *bulk) chunk(base *int32) uint8 {
	i := len(b.table) - 1
	for i >= 0 && b.table[i] != base {
		i--
	}
	if i < 0 {
		i = len(b.table)
		b.table = append(b.table, base)
	}
	b.used |= 1 << (uint(i) & 63) // i < 2*LeafSize: the mask only spares a check
	return uint8(i)
}

// endLeaf stores the chunk table of leaf, the leaf just filled, in b.tables: the
// previous leaf's when it used all of that one and no other (consecutive leaves
// often carve their lists from the same chunks, and each starts from the previous
// table, so they list them in the same order), else the entries it used, renumbering
// its slots. A table holds at most LeafSize entries (b.table up to twice that).
func (b *bulk) endLeaf(leaf []partition) {
	var t []*int32
	switch all := uint64(1)<<len(b.table) - 1; {
	case b.used == 0:
	case b.used == all && len(b.table) == len(b.prev):
		t = b.prev
	case b.used == all:
		t = slices.Clone(b.table)
	default:
		var renum [2 * LeafSize]uint8
		t = make([]*int32, 0, bits.OnesCount64(b.used))
		for i, c := range b.table {
			if b.used&(1<<i) != 0 {
				renum[i] = uint8(len(t))
				t = append(t, c)
			}
		}
		for i := range leaf {
			if p := &leaf[i]; p.hasLists() {
				p.chunk = renum[p.chunk]
			}
		}
	}
	b.tables = append(b.tables, t)
	if t != nil {
		b.prev = t
	}
	clear(b.table)
	b.table, b.used = append(b.table[:0], b.prev...), 0
}

// packList notes the length of list which of p and copies l to data[at:]; it returns
// where the next list goes.
func packList(p *partition, which int, data []int32, at int, l []int32) int {
	p.n[which] = uint8(len(l))
	// Most lists are empty or as long as the replication factor: those are moved
	// without a call to memmove (its call and the registers spilled around it cost
	// more than a few int32s).
	switch len(l) {
	case 0:
		return at
	case 1:
		data[at] = l[0]
	case 2:
		*(*[2]int32)(data[at:]) = [2]int32(l)
	case 3:
		*(*[3]int32)(data[at:]) = [3]int32(l)
	case 4:
		*(*[4]int32)(data[at:]) = [4]int32(l)
	default:
		return at + copy(data[at:], l)
	}
	return at + len(l)
}

// flush stores the buffered partitions in their topic and empties the buffer.
func (d *Delta) flush() {
	b := &d.bulk
	t := b.t
	if t == nil {
		return
	}
	b.t = nil
	if b.n == 0 {
		return
	}
	// The last leaf exactly as long as it needs to be.
	if k := len(b.leaves) - 1; b.fill < len(b.leaves[k]) {
		l := make([]partition, b.fill)
		copy(l, b.leaves[k])
		b.leaves[k] = l
	}
	b.endLeaf(b.leaves[len(b.leaves)-1])
	// Leaves, then interior levels of 32 kids up to a single root: the shape
	// pvec.set grows into.
	nodes := make([]*pnode, len(b.leaves))
	for i, l := range b.leaves {
		nodes[i] = &pnode{edit: d.edit, parts: l, chunks: b.tables[i]}
	}
	shift := uint(0)
	for len(nodes) > 1 {
		up := make([]*pnode, 0, (len(nodes)+31)/32)
		for i := 0; i < len(nodes); i += 32 {
			end := min(i+32, len(nodes))
			up = append(up, &pnode{edit: d.edit, kids: nodes[i:end:end]})
		}
		nodes = up
		shift += hbits
	}
	t.parts = pvec{root: nodes[0], shift: shift, count: int32(b.n)}
	d.cur.partitions += b.n
	clear(b.leaves) // the topic holds them now
	b.leaves = b.leaves[:0]
	clear(b.tables)
	b.tables = b.tables[:0]
	b.hint, b.n = b.n, 0
}
