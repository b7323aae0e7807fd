package hashcache

import "slices"

// rackMemo turns the replica list of a partition into the bytes a scheme writes
// for its racks, while one topic is hashed. It remembers, for the current topic
// only:
//   - each distinct broker's rack, so Brokers.Rack is asked once per broker;
//   - each distinct replica list's encoded block, so the many partitions of a topic
//     that share a replica list cost one table lookup and one copy.
//
// These are forgotten at the next topic (generation stamps instead of clearing),
// so a broker's rack is never taken from an older image. Across topics it keeps
// each rack string's encoding and its rank in the scheme's rack order (so sorting
// a partition's racks compares small integers): both depend on the string alone.
type rackMemo struct {
	// compare is the scheme's rack order. encodeRack appends the bytes of one
	// rack; encodeBlock appends the bytes of a partition given its racks as
	// indexes into racks, sorted by rank, duplicates kept.
	compare     func(a, b string) int
	encodeRack  func(b []byte, rack string) []byte
	encodeBlock func(b []byte, m *rackMemo, racks []int32) []byte

	src Brokers
	gen uint32

	// Brokers: ids below len(dense) are looked up directly, others in brokers.
	dense   []brokerSlot
	brokers map[int32]int32
	ids     []int32 // distinct brokers seen, first-seen order

	racks     []memoRack // every rack string seen, until maxRacks
	rackIndex map[string]int32
	enc       []byte // rack encodings

	tuples  []tupleSlot // open addressing over replica lists
	nTuples int
	tIDs    []int32 // replica lists of the tuples
	blocks  []byte  // encoded blocks of the tuples
	scratch []int32
	once    []byte // the block of a replica list not remembered
}

type brokerSlot struct {
	gen  uint32
	rack int32 // index in racks, -1 for none
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
	gen              uint32
	hash             uint32
	idOff, idEnd     int32
	blockOff, blockE int32
}

// maxTuples bounds the replica lists remembered per topic, so a topic whose
// partitions all have different replica lists does not grow the memo without end.
const maxTuples = 1 << 14

// denseBrokers bounds the directly indexed broker ids; Kafka broker ids are
// usually small.
const denseBrokers = 4096

func (m *rackMemo) reset(src Brokers) {
	m.src = src
	m.gen++
	if m.gen == 0 { // wrapped: old stamps could match again
		clear(m.dense)
		clear(m.tuples)
		m.gen = 1
	}
	clear(m.brokers)
	m.ids = m.ids[:0]
	if len(m.racks) > maxRacks || m.rackIndex == nil {
		m.racks = m.racks[:0]
		m.enc = m.enc[:0]
		m.rackIndex = make(map[string]int32)
	}
	m.nTuples = 0
	m.tIDs = m.tIDs[:0]
	m.blocks = m.blocks[:0]
	if m.tuples == nil {
		m.tuples = make([]tupleSlot, 64)
	}
}

// rack returns the index in m.racks of broker id's rack, or -1 for none.
func (m *rackMemo) rack(id int32) int32 {
	if uint32(id) < denseBrokers {
		if int(id) >= len(m.dense) {
			m.dense = slices.Grow(m.dense, int(id)+1-len(m.dense))[:id+1]
		}
		if s := &m.dense[id]; s.gen == m.gen {
			return s.rack
		}
		r := m.resolve(id)
		m.dense[id] = brokerSlot{gen: m.gen, rack: r}
		return r
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

// partition returns the encoded racks block of a partition with these replicas.
// The result is valid until the next reset.
func (m *rackMemo) partition(replicas []int32) []byte {
	h := uint64(len(replicas))
	for _, id := range replicas {
		h = (h ^ uint64(uint32(id))) * 0x100000001b3
	}
	hash := uint32(h ^ h>>32)
	mask := uint32(len(m.tuples) - 1)
	s := hash & mask
	for ; m.tuples[s].gen == m.gen; s = (s + 1) & mask {
		e := &m.tuples[s]
		if e.hash == hash && equal(m.tIDs[e.idOff:e.idEnd], replicas) {
			return m.blocks[e.blockOff:e.blockE]
		}
	}
	return m.add(replicas, hash, s)
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

// add resolves, sorts and encodes a replica list not seen in this topic yet, and
// remembers its block in the free slot s.
func (m *rackMemo) add(replicas []int32, hash, s uint32) []byte {
	racks := m.scratch[:0]
	for _, id := range replicas {
		r := m.rack(id)
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
	if m.nTuples >= maxTuples {
		m.once = m.encodeBlock(m.once[:0], m, racks)
		return m.once
	}
	e := tupleSlot{gen: m.gen, hash: hash, idOff: int32(len(m.tIDs)), blockOff: int32(len(m.blocks))}
	m.tIDs = append(m.tIDs, replicas...)
	m.blocks = m.encodeBlock(m.blocks, m, racks)
	e.idEnd, e.blockE = int32(len(m.tIDs)), int32(len(m.blocks))
	m.tuples[s] = e
	m.nTuples++
	if 2*m.nTuples > len(m.tuples) {
		m.growTuples()
	}
	return m.blocks[e.blockOff:e.blockE]
}

func (m *rackMemo) growTuples() {
	old := m.tuples
	m.tuples = make([]tupleSlot, 2*len(old))
	mask := uint32(len(m.tuples) - 1)
	for _, e := range old {
		if e.gen != m.gen {
			continue
		}
		s := e.hash & mask
		for m.tuples[s].gen == m.gen {
			s = (s + 1) & mask
		}
		m.tuples[s] = e
	}
}
