package hashcache

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"
	"weak"

	"github.com/kraftwatch/kraftwatch/image"
)

// rackMemo turns the replica list of a partition into the bytes a scheme writes
// for its racks. It remembers:
//   - each broker's rack, asked once per broker and topic (generation stamps instead
//     of clearing), so a broker's rack is never taken from an older image or an
//     earlier topic; when the racks come from the same image.Image as for the
//     previous topic (an ImageCluster), they are not asked again: an Image never
//     changes. racksGen moves on only when an answer differs from the one before,
//     so what was encoded with the racks stays valid across topics and images
//     whose racks are the same;
//   - across topics, each rack string's encoding and its rank in the scheme's rack
//     order (so sorting a partition's racks compares small integers): both depend on
//     the string alone;
//   - across topics, each distinct replica list with the racks of its brokers and its
//     encoded block, so the many partitions that share a replica list cost one table
//     lookup and one copy. The first time a topic uses a remembered list, the racks
//     of its brokers are asked again and the block is encoded again if one changed;
//     the block is only ever the one those racks give;
//   - in front of those, a direct-mapped table (hot) of lists of three brokers and
//     their blocks for the current racks, which hotLeaf and hotLists read in loops
//     that call nothing for most partitions: those of a large cluster mostly end
//     there. A partition found there is not checked against the racks: it notes
//     its brokers (seen: a bit each for the first 64 brokers the memo numbers;
//     used: the list, for a list with other brokers), and settle asks their racks
//     once at the end of the topic. When one of them changed, racksGen moved on and
//     the topic is written again (topicHasher.topicHash), now with every broker it
//     reads asked.
type rackMemo struct {
	// compare is the scheme's rack order. encodeRack appends the bytes of one
	// rack; encodeBlock appends the bytes of a partition given its racks as
	// indexes into racks, sorted by rank, duplicates kept.
	compare     func(a, b string) int
	encodeRack  func(b []byte, rack string) []byte
	encodeBlock func(b []byte, m *rackMemo, racks []int32) []byte

	src Brokers
	gen uint32 // the current topic
	// askGen stamps the brokers asked for their racks; it moves on with each topic
	// unless src is an ImageCluster of the same image as before (img).
	askGen uint32
	// racksGen counts the changes of racks: it moves on when a broker's rack
	// differs from the one it had when last asked, and racksChanged empties hot.
	racksGen uint32
	img      weak.Pointer[image.Image]

	// Brokers: ids below denseBrokers are in dense, at their index; others in far,
	// at the index brokers gives.
	dense   []brokerSlot
	far     []brokerSlot
	brokers map[int32]int32
	ids     []int32 // distinct brokers the current topic read, complete after settle

	racks      []memoRack // every rack string seen, until maxRacks
	rackIndex  map[string]int32
	enc        []byte // rack encodings
	racksEpoch uint32 // counts the times racks started afresh

	hot    [1 << hotBits]hotSlot
	hotGen [1 << hotBits]uint32 // see hotSlot.bits
	// seen holds the bits of the brokers the current topic read (those of the
	// lists it took from hot without asking them, and those rack saw), used the
	// lists it took from hot whose brokers do not all have bits; settle asks them
	// and adds them to ids. bitIDs are the brokers of the bits, nBits their number.
	seen    uint64
	done    uint64 // the bits settle added to ids for the current topic
	used    [1 << hotBits]usedList
	nUsed   int
	bitIDs  [64]int32
	nBits   int
	tuples  []tupleSlot // open addressing over replica lists
	nTuples int
	tIDs    []int32 // replica lists of the tuples
	tRacks  []int32 // the rack of each of those replicas when the block was encoded
	blocks  []byte  // encoded blocks of the tuples
	scratch []int32
	once    []byte // the block of a replica list not remembered
}

type brokerSlot struct {
	seen  uint32 // the topic that last read the broker, when it has no bit
	asked uint32 // askGen when Rack was last asked
	rack  int32  // index in racks, -1 for none
	// name and ok are what Rack returned for the broker the last time it was
	// asked, in any topic, and rack its index then: asked again, the same answer
	// needs no lookup in rackIndex and leaves racksGen as it is.
	name  string
	ok    bool
	epoch uint32 // racks epoch of rack, 0 for never asked; see rackMemo.racksEpoch
	// bit is the broker's bit in seen, 0 when it has none (past the first 64
	// brokers the memo numbered).
	bit uint64
}

type memoRack struct {
	name     string
	off, end int32 // encoding in enc
	rank     int32 // position in sorted order among racks
}

// maxRacks bounds the racks kept across topics; past it they are forgotten at the
// next topic.
const maxRacks = 1 << 14

type tupleSlot struct {
	key              uint64 // packed replica list (see pack), 0 when it does not fit
	hash             uint32
	checked          uint32 // the topic whose racks the block was checked against
	idOff, idEnd     int32
	blockOff, blockE int32
	used             bool
}

// maxTuples bounds the replica lists remembered; past it, a topic's further lists
// are encoded each time, and the memo starts afresh at the next topic. maxBlocks
// bounds the bytes of their blocks the same way.
const (
	maxTuples = 1 << 14
	maxBlocks = 4 << 20
)

// denseBrokers bounds the directly indexed broker ids; Kafka broker ids are
// usually small. maxFar bounds the others remembered; past it they are forgotten at
// the next topic.
const (
	denseBrokers = 4096
	maxFar       = 1 << 14
)

// reset starts a new topic whose racks come from src.
func (m *rackMemo) reset(src Brokers) {
	m.src = src
	m.gen++
	same := false // the brokers already asked answered for src
	if ic, ok := src.(ImageCluster); ok && ic.Image != nil {
		// Value, not Make, which takes a lock: the same image is the common case.
		if same = m.img.Value() == ic.Image; !same {
			m.img = weak.Make(ic.Image)
		}
	} else {
		m.img = weak.Pointer[image.Image]{}
	}
	if len(m.racks) > maxRacks || m.rackIndex == nil {
		m.racks = m.racks[:0]
		m.enc = m.enc[:0]
		m.rackIndex = make(map[string]int32)
		m.racksEpoch++  // brokers' rack indexes are stale
		m.clearTuples() // so are theirs
		same = false
	}
	if len(m.far) > maxFar {
		m.far = m.far[:0]
		clear(m.brokers)
		m.racksChanged() // the racks of the blocks' far brokers are forgotten
		m.clearBits()    // and their bits
	}
	if !same {
		m.askGen++
	}
	// A new memo, or a stamp wrapped: old stamps could match again (a hot slot never
	// filled has stamp 0).
	if m.gen == 0 || m.askGen == 0 || m.racksGen == 0 || m.racksEpoch == 0 {
		clear(m.dense)
		m.far = m.far[:0]
		clear(m.brokers)
		m.clearTuples()
		clear(m.hotGen[:])
		m.nBits = 0
		m.gen, m.askGen, m.racksGen, m.racksEpoch = 1, 1, 1, 1
	}
	m.ids = m.ids[:0]
	m.seen, m.done, m.nUsed = 0, 0, 0
	if m.nTuples >= maxTuples || len(m.blocks) > maxBlocks {
		m.clearTuples()
	}
	if m.tuples == nil {
		m.tuples = make([]tupleSlot, 64)
	}
}

// clearBits takes every broker's bit away; the hot slots that hold them must be
// stale.
func (m *rackMemo) clearBits() {
	for i := range m.dense {
		m.dense[i].bit = 0
	}
	m.nBits = 0
}

func (m *rackMemo) clearTuples() {
	clear(m.hot[:])
	clear(m.tuples)
	m.nTuples = 0
	m.tIDs = m.tIDs[:0]
	m.tRacks = m.tRacks[:0]
	m.blocks = m.blocks[:0]
}

// rack returns the index in m.racks of broker id's rack, or -1 for none, asking
// src when the broker was not asked for the current askGen.
func (m *rackMemo) rack(id int32) int32 {
	var s *brokerSlot
	if uint32(id) < denseBrokers {
		if int(id) >= len(m.dense) {
			m.dense = slices.Grow(m.dense, int(id)+1-len(m.dense))[:id+1]
		}
		s = &m.dense[id]
	} else {
		s = m.farSlot(id)
	}
	if s.bit == 0 && s.seen != m.gen {
		s.seen = m.gen
		if m.nBits < len(m.bitIDs) {
			s.bit = 1 << m.nBits
			m.bitIDs[m.nBits] = id
			m.nBits++
		} else {
			m.ids = append(m.ids, id)
		}
	}
	m.seen |= s.bit // settle adds the brokers with a bit to ids
	if s.asked != m.askGen {
		m.ask(s, id)
	}
	return s.rack
}

// slot returns the slot of broker id, which rack has seen.
func (m *rackMemo) slot(id int32) *brokerSlot {
	if uint32(id) < denseBrokers {
		return &m.dense[id]
	}
	return m.farSlot(id)
}

func (m *rackMemo) farSlot(id int32) *brokerSlot {
	if m.brokers == nil {
		m.brokers = make(map[int32]int32)
	}
	i, ok := m.brokers[id]
	if !ok {
		i = int32(len(m.far))
		m.brokers[id] = i
		m.far = append(m.far, brokerSlot{})
	}
	return &m.far[i]
}

// ask asks src for the rack of broker id, whose slot is s. A rack that differs
// from the one s had in the current racks epoch moves racksGen on: the blocks
// encoded with the old one are stale.
func (m *rackMemo) ask(s *brokerSlot, id int32) {
	s.asked = m.askGen
	name, ok := m.src.Rack(id)
	if s.epoch == m.racksEpoch {
		if ok == s.ok && name == s.name {
			return
		}
		m.racksChanged()
	}
	s.rack = -1
	if ok {
		s.rack = m.internRack(name)
	}
	s.name, s.ok, s.epoch = name, ok, m.racksEpoch
}

// racksChanged moves racksGen on and empties hot: its blocks are stale.
func (m *rackMemo) racksChanged() {
	m.racksGen++
	clear(m.hot[:])
}

func (m *rackMemo) internRack(name string) int32 {
	if r, ok := m.rackIndex[name]; ok {
		return r
	}
	rank := int32(0)
	for i := range m.racks {
		if m.compare(m.racks[i].name, name) < 0 {
			rank++
		} else {
			m.racks[i].rank++
		}
	}
	off := int32(len(m.enc))
	m.enc = m.encodeRack(m.enc, name)
	m.racks = append(m.racks, memoRack{name: name, off: off, end: int32(len(m.enc)), rank: rank})
	m.rackIndex[name] = int32(len(m.racks) - 1)
	return int32(len(m.racks) - 1)
}

func (m *rackMemo) encoded(r int32) []byte {
	return m.enc[m.racks[r].off:m.racks[r].end]
}

// pack returns a replica list of up to three ids below 1<<16 as one number, and 0
// for a list that does not fit. Different lists pack differently.
func pack(replicas []int32) uint64 {
	if len(replicas) == 3 { // the common case
		a, b, c := uint64(uint32(replicas[0])), uint64(uint32(replicas[1])), uint64(uint32(replicas[2]))
		if (a|b|c)>>16 != 0 {
			return 0
		}
		return 4<<60 | a | b<<16 | c<<32
	}
	return packShort(replicas)
}

//go:noinline
func packShort(replicas []int32) uint64 {
	if len(replicas) > 3 {
		return 0
	}
	key := uint64(len(replicas)+1) << 60
	for i, id := range replicas {
		if uint32(id) >= 1<<16 {
			return 0
		}
		key |= uint64(id) << (16 * i)
	}
	return key
}

// hotSlot remembers where the block of one list of three replicas is, with the
// bits of its brokers: a direct-mapped table in front of tuples, so that most
// partitions cost one probe and one copy (hotLeaf, hotLists). The list is lo and
// hi, as hotKey gives them. Every block in hot is the one of the current racks:
// racksChanged empties the table.
type hotSlot struct {
	lo uint64
	// bits holds the bits of the list's brokers (brokerSlot.bit), 0 when one of
	// them has none: then hotGen has the topic that last used the slot.
	bits uint64
	// block is the block's first byte in blocks, its length <= blockPad; there
	// are blockPad bytes of capacity from there (encode). blocks only grows until
	// clearTuples, which clears hot too, so the bytes stay those of the block even
	// when blocks has moved since.
	block unsafe.Pointer
	hi    uint32
	step  uint32 // 4 + the block's length: an index and the block; 0 in an empty slot
}

const hotBits = 8

// hotKey returns a list of three replicas as two numbers: lo holds the first two
// ids as they lie in memory, hi the third.
func hotKey(r *[3]int32) (lo uint64, hi uint32) {
	return *(*uint64)(unsafe.Pointer(r)), uint32(r[2])
}

func hotIndex(lo uint64, hi uint32) uint8 {
	return uint8((lo ^ uint64(hi)<<16) * 0x9e3779b97f4a7c15 >> (64 - hotBits))
}

// hotBlock returns the block of replicas when the hot table holds it, with ok
// true; else the index of the hot slot for replicas, -1 for a list not of three.
func (m *rackMemo) hotBlock(replicas []int32) (block []byte, k int, ok bool) {
	if len(replicas) != 3 {
		return nil, -1, false
	}
	lo, hi := hotKey((*[3]int32)(replicas))
	k = int(hotIndex(lo, hi))
	s := &m.hot[k]
	if s.lo != lo || s.hi != hi || s.step == 0 {
		return nil, k, false // another list, or an empty slot
	}
	if m.seen |= s.bits; s.bits == 0 {
		m.use(uintptr(k) * unsafe.Sizeof(*s))
	}
	return unsafe.Slice((*byte)(s.block), s.step-4), k, true
}

// usedList is the list of three replicas of a hot slot, as hotKey gives it, that
// the current topic took from the hot table without asking its brokers (settle).
type usedList struct {
	lo uint64
	hi uint32
}

// use notes, once per topic, the list of the hot slot at byte offset off in hot
// (the loops keep the offset, not the index), whose brokers do not all have
// bits, for settle to ask them; it returns false when the slot is empty. The
// slot's block is the one of the racks when it was filled: when settle finds that
// one of them changed, the topic's bytes are written again (topicHasher.topicHash).
// A slot's list is noted at most once per topic (hotGen), so used, as large as
// hot, never overflows. Not inlined, so that hotLeaf and hotLists keep their
// registers for the partitions that do not need it.
//
//go:noinline
func (m *rackMemo) use(off uintptr) bool {
	k := uint8(off / unsafe.Sizeof(hotSlot{}))
	s := &m.hot[k]
	if s.step == 0 {
		return false
	}
	if m.hotGen[k] != m.gen {
		m.hotGen[k] = m.gen
		m.used[m.nUsed] = usedList{s.lo, s.hi}
		m.nUsed++
	}
	return true
}

// settle asks the racks of the brokers of the lists in used and of the brokers in
// seen where the current askGen has not (rack, ask), adds those brokers to ids once
// per topic, and empties used and seen. A rack that changed moves racksGen on.
func (m *rackMemo) settle() {
	for _, u := range m.used[:m.nUsed] {
		// The ids in any order (hotKey): the list's on either byte order.
		m.rack(int32(u.lo))
		m.rack(int32(u.lo >> 32))
		m.rack(int32(u.hi))
	}
	m.nUsed = 0
	ids, ask, dense := m.ids, m.askGen, m.dense
	for b := m.seen &^ m.done; b != 0; b &= b - 1 {
		id := m.bitIDs[bits.TrailingZeros64(b)]
		ids = append(ids, id)
		var s *brokerSlot
		if uint32(id) < uint32(len(dense)) {
			s = &dense[id]
		} else {
			s = m.farSlot(id)
		}
		if s.asked != ask {
			m.ask(s, id)
		}
	}
	m.ids = ids
	m.done |= m.seen
	m.seen = 0
}

// blockPad bounds the blocks that hotSlots hold. blocks keeps this many bytes of
// capacity past its end, so that hotLeaf and hotLists can copy up to 63 bytes past a
// block's end. hotRoom is the room in buf that hotLeaf and hotLists need: a
// run of LeafSize partitions, each its index and up to blockPad bytes.
const (
	blockPad = 128
	hotRoom  = image.LeafSize * (4 + blockPad)
)

// hotStart returns the index of partition first+j in the scheme's byte order, and
// what adding a partition adds to it: first is a multiple of LeafSize and j below
// it, so first+j is first|j and never carries into first's bits.
func hotStart(first, j int, bigEndian bool) (i, next uint32) {
	if bigEndian {
		return bits.ReverseBytes32(uint32(first + j)), 1 << 24
	}
	return uint32(first + j), 1
}

// hotLists is hotLeaf for partitions first+j, first+j+1, … whose replicas are
// lists[j], lists[j+1], … (up to LeafSize lists).
func (m *rackMemo) hotLists(dst unsafe.Pointer, first int, lists [][]int32, j int, bigEndian bool) (int, unsafe.Pointer) {
	hot := &m.hot
	lists = lists[:min(len(lists), image.LeafSize)]
	i, next := hotStart(first, j, bigEndian)
	if j < 0 { // as in hotLeaf
		return j, dst
	}
	for ; j < len(lists); j++ {
		r := lists[j]
		if len(r) != 3 {
			break
		}
		lo, hi := *(*uint64)(unsafe.Pointer(&r[0])), uint32(r[2]) // as in hotLeaf
		off := uintptr((lo^uint64(hi)<<16)*0x9e3779b97f4a7c15>>(64-hotBits)) * unsafe.Sizeof(hotSlot{})
		s := (*hotSlot)(unsafe.Add(unsafe.Pointer(hot), off))
		if s.lo != lo || s.hi != hi {
			break
		}
		b := s.bits
		if b == 0 {
			if !m.use(off) {
				break // an empty slot
			}
		}
		m.seen |= b
		// As in hotLeaf.
		d, src, step := (*[4 + blockPad]byte)(dst), (*[blockPad]byte)(s.block), s.step
		binary.LittleEndian.PutUint32(d[:4], i)
		*(*[16]byte)(d[4:]) = *(*[16]byte)(src[0:])
		*(*[16]byte)(d[20:]) = *(*[16]byte)(src[16:])
		*(*[16]byte)(d[36:]) = *(*[16]byte)(src[32:])
		*(*[16]byte)(d[52:]) = *(*[16]byte)(src[48:])
		if step > 4+64 {
			*(*[16]byte)(d[68:]) = *(*[16]byte)(src[64:])
			*(*[16]byte)(d[84:]) = *(*[16]byte)(src[80:])
			if step > 4+96 {
				*(*[16]byte)(d[100:]) = *(*[16]byte)(src[96:])
				*(*[16]byte)(d[116:]) = *(*[16]byte)(src[112:])
			}
		}
		dst = unsafe.Add(dst, step)
		i += next
	}
	return j, dst
}

// hotLeaf writes partitions first+j, first+j+1, …, first+to-1 (first a multiple of
// LeafSize, to at most LeafSize) at dst, which has room for hotRoom bytes, each its
// index and its block, for as long as each one's replicas (in slot j of leaf) are
// in the hot table: most partitions of a large cluster end here. It returns the
// slot where it stopped and the end of what it wrote. The brokers of the lists it
// took are noted for settle: their bits in seen, or the list in used (use).
func (m *rackMemo) hotLeaf(dst unsafe.Pointer, first int, leaf image.Leaf, j, to int, bigEndian bool) (int, unsafe.Pointer) {
	hot := &m.hot
	i, next := hotStart(first, j, bigEndian)
	if j < 0 { // so that the compiler drops Replicas3's bounds check
		return j, dst
	}
	for to = min(to, leaf.Len()); j < to; j++ {
		r := leaf.Replicas3(j)
		if r == nil {
			break
		}
		// hotKey and hotIndex, written out: the compiler leaves a NOP for each call
		// it inlines.
		lo, hi := *(*uint64)(unsafe.Pointer(r)), uint32(r[2])
		off := uintptr((lo^uint64(hi)<<16)*0x9e3779b97f4a7c15>>(64-hotBits)) * unsafe.Sizeof(hotSlot{})
		s := (*hotSlot)(unsafe.Add(unsafe.Pointer(hot), off)) // &hot[k] at k's offset, which use takes
		if s.lo != lo || s.hi != hi {
			break
		}
		b := s.bits
		if b == 0 { // not written as one condition: the compiler would
			if !m.use(off) { // materialize it as a bool on the hot path
				break // an empty slot
			}
		}
		m.seen |= b
		// The index, then the block: 64 bytes, and up to 64 more in 32-byte steps,
		// each two 16-byte moves that the compiler makes inline vector loads and
		// stores (copy would call memmove, and so would a larger array). hotLists
		// has the same lines: as a function, the compiler would not inline them.
		d, src, step := (*[4 + blockPad]byte)(dst), (*[blockPad]byte)(s.block), s.step
		binary.LittleEndian.PutUint32(d[:4], i)
		*(*[16]byte)(d[4:]) = *(*[16]byte)(src[0:])
		*(*[16]byte)(d[20:]) = *(*[16]byte)(src[16:])
		*(*[16]byte)(d[36:]) = *(*[16]byte)(src[32:])
		*(*[16]byte)(d[52:]) = *(*[16]byte)(src[48:])
		if step > 4+64 {
			*(*[16]byte)(d[68:]) = *(*[16]byte)(src[64:])
			*(*[16]byte)(d[84:]) = *(*[16]byte)(src[80:])
			if step > 4+96 {
				*(*[16]byte)(d[100:]) = *(*[16]byte)(src[96:])
				*(*[16]byte)(d[116:]) = *(*[16]byte)(src[112:])
			}
		}
		dst = unsafe.Add(dst, step)
		i += next
	}
	return j, dst
}

// partition returns the encoded racks block of a partition with these replicas
// (key is pack(replicas)) and, when the block is remembered and k is not -1, notes
// it in hot slot k, the one of replicas. The result is valid until the next call.
func (m *rackMemo) partition(replicas []int32, key uint64, k int) []byte {
	var hash uint32
	if key != 0 {
		h := key * 0x9e3779b97f4a7c15
		hash = uint32(h >> 32)
	} else {
		h := uint64(len(replicas))
		for _, id := range replicas {
			h = (h ^ uint64(uint32(id))) * 0x100000001b3
		}
		hash = uint32(h ^ h>>32)
	}
	mask := uint32(len(m.tuples) - 1)
	i := hash & mask
	for ; m.tuples[i].used; i = (i + 1) & mask {
		e := &m.tuples[i]
		if e.hash != hash || e.key != key || (key == 0 && !equal(m.tIDs[e.idOff:e.idEnd], replicas)) {
			continue
		}
		if e.checked != m.gen {
			m.check(e)
		}
		return m.remember(e, k)
	}
	e, ok := m.add(replicas, key, hash, i)
	if !ok {
		return m.once
	}
	return m.remember(&e, k)
}

// remember notes e's block in hot slot k (-1 for a list not of three replicas),
// and returns it. e's brokers were asked for the current topic (rack).
func (m *rackMemo) remember(e *tupleSlot, k int) []byte {
	if k >= 0 && e.blockE-e.blockOff <= blockPad {
		ids := (*[3]int32)(m.tIDs[e.idOff:e.idEnd])
		lo, hi := hotKey(ids)
		s := hotSlot{lo: lo, hi: hi, step: uint32(4 + e.blockE - e.blockOff),
			block: unsafe.Pointer(&m.blocks[e.blockOff : e.blockOff+blockPad][0])}
		if a, b, c := m.slot(ids[0]).bit, m.slot(ids[1]).bit, m.slot(ids[2]).bit; a != 0 && b != 0 && c != 0 {
			s.bits = a | b | c
		}
		m.hot[uint8(k)], m.hotGen[uint8(k)] = s, m.gen // its brokers were asked (rack)
	}
	return m.blocks[e.blockOff:e.blockE]
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// check asks the racks of e's brokers for the current topic, and encodes e's block
// again if one of them is not the one it was encoded with.
func (m *rackMemo) check(e *tupleSlot) {
	e.checked = m.gen
	ids, was := m.tIDs[e.idOff:e.idEnd], m.tRacks[e.idOff:e.idEnd]
	same := true
	for i, id := range ids {
		if r := m.rack(id); r != was[i] {
			was[i] = r
			same = false
		}
	}
	if same {
		return
	}
	racks := m.sortedRacks(was)
	e.blockOff = int32(len(m.blocks))
	m.encode(racks)
	e.blockE = int32(len(m.blocks))
}

// sortedRacks returns the racks (indexes into m.racks, -1 for none) without the
// nones, sorted by rank, in m.scratch.
func (m *rackMemo) sortedRacks(rs []int32) []int32 {
	racks := m.scratch[:0]
	for _, r := range rs {
		if r < 0 {
			continue
		}
		// Insertion sort by rank: replication factors are small.
		racks = append(racks, r)
		rank := m.racks[r].rank
		j := len(racks) - 1
		for j > 0 && m.racks[racks[j-1]].rank > rank {
			racks[j] = racks[j-1]
			j--
		}
		racks[j] = r
	}
	m.scratch = racks
	return racks
}

// add resolves, sorts and encodes a replica list not remembered yet, and remembers
// it in the free slot s; past maxTuples it encodes it into once, and ok is false.
func (m *rackMemo) add(replicas []int32, key uint64, hash, s uint32) (e tupleSlot, ok bool) {
	start := len(m.tRacks)
	for _, id := range replicas {
		m.tRacks = append(m.tRacks, m.rack(id))
	}
	racks := m.sortedRacks(m.tRacks[start:])
	if m.nTuples >= maxTuples {
		m.tRacks = m.tRacks[:start]
		m.once = m.encodeBlock(m.once[:0], m, racks)
		return tupleSlot{}, false
	}
	e = tupleSlot{key: key, hash: hash, checked: m.gen, used: true,
		idOff: int32(len(m.tIDs)), blockOff: int32(len(m.blocks))}
	m.tIDs = append(m.tIDs, replicas...)
	m.encode(racks)
	e.idEnd, e.blockE = int32(len(m.tIDs)), int32(len(m.blocks))
	m.tuples[s] = e
	m.nTuples++
	if 2*m.nTuples > len(m.tuples) {
		m.growTuples()
	}
	return e, true
}

// encode appends the block of racks to blocks, and keeps blockPad bytes of
// capacity after it.
func (m *rackMemo) encode(racks []int32) {
	m.blocks = m.encodeBlock(m.blocks, m, racks)
	m.blocks = slices.Grow(m.blocks, blockPad)
}

func (m *rackMemo) growTuples() {
	old := m.tuples
	m.tuples = make([]tupleSlot, 2*len(old))
	mask := uint32(len(m.tuples) - 1)
	for _, e := range old {
		if !e.used {
			continue
		}
		s := e.hash & mask
		for m.tuples[s].used {
			s = (s + 1) & mask
		}
		m.tuples[s] = e
	}
}
