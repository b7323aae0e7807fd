package hashcache

import (
	"encoding/binary"
	"slices"
	"unsafe"
	"weak"

	"github.com/kraftwatch/kraftwatch/image"
)

// rackMemo turns the replica list of a partition into the bytes a scheme writes
// for its racks. It remembers:
//   - for the current topic only, each distinct broker's rack, so Brokers.Rack is
//     asked once per broker and topic, and a broker's rack is never taken from an
//     older image (generation stamps instead of clearing). When the racks come from
//     the same image.Image as for the previous topic (an ImageCluster), they are
//     kept: an Image never changes;
//   - across topics, each rack string's encoding and its rank in the scheme's rack
//     order (so sorting a partition's racks compares small integers): both depend on
//     the string alone;
//   - across topics, each distinct replica list with the racks of its brokers and its
//     encoded block, so the many partitions that share a replica list cost one table
//     lookup and one copy. The first time a topic uses a remembered list, the racks
//     of its brokers are asked again and the block is encoded again if one changed;
//     the block is only ever the one those racks give;
//   - in front of those, a direct-mapped table (hot) of the lists of three brokers
//     seen while the racks stayed the same (the same image), which appendHot reads
//     without a call: the partitions of a large cluster mostly end there, and a
//     list's brokers are only marked as read once per topic.
type rackMemo struct {
	// compare is the scheme's rack order. encodeRack appends the bytes of one
	// rack; encodeBlock appends the bytes of a partition given its racks as
	// indexes into racks, sorted by rank, duplicates kept.
	compare     func(a, b string) int
	encodeRack  func(b []byte, rack string) []byte
	encodeBlock func(b []byte, m *rackMemo, racks []int32) []byte

	src Brokers
	gen uint32 // the current topic
	// racksGen stamps the racks read from src; it moves on with each topic unless src
	// is an ImageCluster of the same image as before (img).
	racksGen uint32
	img      weak.Pointer[image.Image]

	// Brokers: ids below len(dense) are looked up directly, others in brokers.
	dense   []brokerSlot
	brokers map[int32]int32
	ids     []int32 // distinct brokers seen, first-seen order

	racks      []memoRack // every rack string seen, until maxRacks
	rackIndex  map[string]int32
	enc        []byte // rack encodings
	racksEpoch uint32 // counts the times racks started afresh

	hot     [1 << hotBits]hotSlot
	tuples  []tupleSlot // open addressing over replica lists
	nTuples int
	tIDs    []int32 // replica lists of the tuples
	tRacks  []int32 // the rack of each of those replicas when the block was encoded
	blocks  []byte  // encoded blocks of the tuples
	scratch []int32
	once    []byte // the block of a replica list not remembered
}

type brokerSlot struct {
	seen uint32 // the topic that last read the broker
	gen  uint32 // racksGen when rack was read
	rack int32  // index in racks, -1 for none
	// name and ok are what Rack returned for the broker the last time it was
	// asked, in any topic, and rack its index then: asked again, the same answer
	// needs no lookup in rackIndex.
	name  string
	ok    bool
	epoch uint32 // racks epoch of rack; see rackMemo.racksEpoch
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
// usually small.
const denseBrokers = 4096

// reset starts a new topic whose racks come from src.
func (m *rackMemo) reset(src Brokers) {
	m.src = src
	m.gen++
	same := false // racks already read are src's
	if ic, ok := src.(ImageCluster); ok && ic.Image != nil {
		w := weak.Make(ic.Image)
		same = w == m.img
		m.img = w
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
	if !same {
		m.racksGen++
	}
	if m.gen == 0 || m.racksGen == 0 { // wrapped: old stamps could match again
		clear(m.dense)
		m.racksEpoch++
		m.clearTuples()
		m.gen, m.racksGen = 1, 1
	}
	clear(m.brokers)
	m.ids = m.ids[:0]
	if m.nTuples >= maxTuples || len(m.blocks) > maxBlocks {
		m.clearTuples()
	}
	if m.tuples == nil {
		m.tuples = make([]tupleSlot, 64)
	}
}

func (m *rackMemo) clearTuples() {
	clear(m.hot[:])
	clear(m.tuples)
	m.nTuples = 0
	m.tIDs = m.tIDs[:0]
	m.tRacks = m.tRacks[:0]
	m.blocks = m.blocks[:0]
}

// rack returns the index in m.racks of broker id's rack, or -1 for none.
func (m *rackMemo) rack(id int32) int32 {
	if uint32(id) < denseBrokers {
		if int(id) >= len(m.dense) {
			m.dense = slices.Grow(m.dense, int(id)+1-len(m.dense))[:id+1]
		}
		s := &m.dense[id]
		if s.seen != m.gen {
			s.seen = m.gen
			m.ids = append(m.ids, id)
		}
		if s.gen == m.racksGen {
			return s.rack
		}
		name, ok := m.src.Rack(id)
		if s.epoch != m.racksEpoch || ok != s.ok || name != s.name {
			s.rack = -1
			if ok {
				s.rack = m.internRack(name)
			}
			s.name, s.ok, s.epoch = name, ok, m.racksEpoch
		}
		s.gen = m.racksGen
		return s.rack
	}
	if r, ok := m.brokers[id]; ok {
		return r
	}
	r := m.resolve(id)
	if m.brokers == nil {
		m.brokers = make(map[int32]int32)
	}
	m.brokers[id] = r
	return r
}

func (m *rackMemo) resolve(id int32) int32 {
	m.ids = append(m.ids, id)
	if name, ok := m.src.Rack(id); ok {
		return m.internRack(name)
	}
	return -1
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

// hotSlot remembers where the block of one packed replica list is, while the racks
// are those it was encoded with: a direct-mapped table in front of tuples, so that
// most partitions cost one probe and one copy (appendHot).
type hotSlot struct {
	key          uint64 // pack of the list; 0 in a slot never filled
	stamp        uint64 // racksGen<<32 | the topic that last used the slot
	off, n       int32  // block in blocks, n <= blockPad
	idOff, idEnd int32  // replica ids in tIDs
}

const hotBits = 8

func hotIndex(key uint64) uint64 { return key * 0x9e3779b97f4a7c15 >> (64 - hotBits) }

func (m *rackMemo) stamp() uint64 { return uint64(m.racksGen)<<32 | uint64(m.gen) }

// blockPad bounds the blocks that hotSlots hold. blocks keeps this many bytes of
// capacity past its end, so that appendHot can copy up to 31 bytes past a block's end.
const blockPad = 128

// appendHot appends partitions first, first+1, … with the replicas in lists to buf,
// index then racks block, for as long as each one's list is in the hot table for
// the current racks and topic and fits in pack, and buf has room below flushAt. It
// returns buf and the number of partitions appended. It calls nothing, so that the
// compiler keeps its loop in registers: most partitions of a large cluster end here.
func (m *rackMemo) appendHot(buf []byte, first int, lists [][]int32, bigEndian bool) ([]byte, int) {
	stamp, blocks := m.stamp(), m.blocks
	l, limit := len(buf), min(flushAt, cap(buf)-4-blockPad)
	for j, replicas := range lists {
		if len(replicas) != 3 || l >= limit {
			return buf[:l], j
		}
		a, b, c := uint64(uint32(replicas[0])), uint64(uint32(replicas[1])), uint64(uint32(replicas[2]))
		key := 4<<60 | a | b<<16 | c<<32 // pack
		s := &m.hot[hotIndex(key)]
		if (a|b|c)>>16 != 0 || s.key != key || s.stamp != stamp {
			return buf[:l], j
		}
		out := unsafe.Pointer(&buf[l : l+4+blockPad][0])
		if bigEndian {
			binary.BigEndian.PutUint32((*[4]byte)(out)[:], uint32(first+j))
		} else {
			binary.LittleEndian.PutUint32((*[4]byte)(out)[:], uint32(first+j))
		}
		// The block in 32-byte moves, as many as it needs.
		n, src, dst := int(s.n), unsafe.Pointer(&blocks[s.off : s.off+blockPad][0]), unsafe.Add(out, 4)
		move32(dst, src, 0)
		if n > 32 {
			move32(dst, src, 32)
			if n > 64 {
				move32(dst, src, 64)
				if n > 96 {
					move32(dst, src, 96)
				}
			}
		}
		l += 4 + n
	}
	return buf[:l], len(lists)
}

// appendHotLeaf is appendHot for partitions first+j, j = from … to-1, whose replicas
// are in slot j of leaf: it reads them in place (image.Leaf.Replicas3). A list in
// the hot table for the current racks that this topic has not used yet does not end
// the loop: it marks the list's brokers as read (see) and goes on, as the racks of an
// ImageCluster stay the same from topic to topic. (appendHot stops there: the racks
// of other Brokers change with every topic, and the call would only cost its loop
// registers; cachegrind.)
func (m *rackMemo) appendHotLeaf(buf []byte, first int, leaf image.Leaf, from, to int, bigEndian bool) ([]byte, int) {
	stamp, blocks := m.stamp(), m.blocks
	l, limit := len(buf), min(flushAt, cap(buf)-4-blockPad)
	to = min(to, leaf.Len()) // the slots past Len have no replicas
	for j := from; j < to; j++ {
		r := leaf.Replicas3(j)
		if r == nil || l >= limit {
			return buf[:l], j - from
		}
		a, b, c := uint64(uint32(r[0])), uint64(uint32(r[1])), uint64(uint32(r[2]))
		key := 4<<60 | a | b<<16 | c<<32 // pack
		s := &m.hot[hotIndex(key)]
		if (a|b|c)>>16 != 0 || s.key != key || s.stamp>>32 != stamp>>32 {
			return buf[:l], j - from
		}
		if s.stamp != stamp {
			m.see(s) // the first partition of this topic with the list
		}
		out := unsafe.Pointer(&buf[l : l+4+blockPad][0])
		if bigEndian {
			binary.BigEndian.PutUint32((*[4]byte)(out)[:], uint32(first+j))
		} else {
			binary.LittleEndian.PutUint32((*[4]byte)(out)[:], uint32(first+j))
		}
		// The block in 32-byte moves, as many as it needs.
		n, src, dst := int(s.n), unsafe.Pointer(&blocks[s.off : s.off+blockPad][0]), unsafe.Add(out, 4)
		move32(dst, src, 0)
		if n > 32 {
			move32(dst, src, 32)
			if n > 64 {
				move32(dst, src, 64)
				if n > 96 {
					move32(dst, src, 96)
				}
			}
		}
		l += 4 + n
	}
	return buf[:l], to - from
}

// move32 copies 32 bytes from src+off to dst+off in two 16-byte moves, which the
// compiler makes inline vector loads and stores (copy would call memmove). Both
// have room for it: every block is followed by blockPad bytes of capacity (encode),
// and appendHot writes a block into 4+blockPad bytes of buf.
func move32(dst, src unsafe.Pointer, off uintptr) {
	*(*[16]byte)(unsafe.Add(dst, off)) = *(*[16]byte)(unsafe.Add(src, off))
	*(*[16]byte)(unsafe.Add(dst, off+16)) = *(*[16]byte)(unsafe.Add(src, off+16))
}

// see marks the brokers of the list in s as read by the current topic. A broker
// whose rack is known for the current racks is marked here, without asking rack.
func (m *rackMemo) see(s *hotSlot) {
	s.stamp = m.stamp()
	for _, id := range m.tIDs[s.idOff:s.idEnd] {
		if uint32(id) < uint32(len(m.dense)) {
			if d := &m.dense[id]; d.gen == m.racksGen {
				if d.seen != m.gen { // as rack does
					d.seen = m.gen
					m.ids = append(m.ids, id)
				}
				continue
			}
		}
		m.rack(id)
	}
}

// partition returns the encoded racks block of a partition with these replicas
// (key is pack(replicas)) and, when the block is remembered and key is not 0, notes
// it in the hot slot s. The result is valid until the next call.
func (m *rackMemo) partition(replicas []int32, key uint64, s *hotSlot) []byte {
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
		return m.remember(e, s)
	}
	e, ok := m.add(replicas, key, hash, i)
	if !ok {
		return m.once
	}
	return m.remember(&e, s)
}

// remember notes e's block in the hot slot s, and returns it.
func (m *rackMemo) remember(e *tupleSlot, s *hotSlot) []byte {
	if e.key != 0 && e.blockE-e.blockOff <= blockPad {
		*s = hotSlot{key: e.key, stamp: m.stamp(), off: e.blockOff, n: e.blockE - e.blockOff,
			idOff: e.idOff, idEnd: e.idEnd}
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
