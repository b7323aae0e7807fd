package hashcache

// rackMemo resolves the replica brokers of one topic to racks while its hash is
// computed. Each distinct broker is asked once per topic; each distinct rack is
// encoded once and given a rank in the scheme's rack order, so sorting a partition's
// racks compares small integers. The memo is reset for every topic and therefore
// never serves a rack from an older image.
type rackMemo struct {
	// compare is the scheme's rack order; encode appends a rack's bytes as the
	// scheme writes them for one replica.
	compare func(a, b string) int
	encode  func(b []byte, rack string) []byte

	src    Brokers
	ids    []int32    // distinct brokers seen, first-seen order
	rackOf []int32    // rackOf[k] = index in racks of ids[k]'s rack, -1 for none
	racks  []memoRack // distinct racks seen, first-seen order
	arena  []byte     // encoded racks
	table  []int32    // open addressing over ids: 1+index, 0 = empty
	shift  uint
}

type memoRack struct {
	name     string
	off, end int32 // encoding in arena
	rank     int32 // position in sorted order among racks seen so far
}

func (m *rackMemo) reset(src Brokers) {
	m.src = src
	m.ids = m.ids[:0]
	m.rackOf = m.rackOf[:0]
	m.racks = m.racks[:0]
	m.arena = m.arena[:0]
	if m.table == nil {
		m.table = make([]int32, 64)
		m.shift = 32 - 6
	} else {
		clear(m.table)
	}
}

func (m *rackMemo) slot(id int32) uint32 {
	return (uint32(id) * 0x9e3779b1) >> m.shift
}

// rack returns the index in m.racks of broker id's rack, or -1 for none.
func (m *rackMemo) rack(id int32) int32 {
	mask := uint32(len(m.table) - 1)
	for s := m.slot(id); ; s = (s + 1) & mask {
		k := m.table[s]
		if k == 0 {
			return m.add(id, s)
		}
		if m.ids[k-1] == id {
			return m.rackOf[k-1]
		}
	}
}

func (m *rackMemo) add(id int32, s uint32) int32 {
	r := int32(-1)
	if name, ok := m.src.Rack(id); ok {
		r = m.internRack(name)
	}
	m.ids = append(m.ids, id)
	m.rackOf = append(m.rackOf, r)
	m.table[s] = int32(len(m.ids))
	if 2*len(m.ids) > len(m.table) {
		m.grow()
	}
	return r
}

func (m *rackMemo) grow() {
	m.table = make([]int32, 2*len(m.table))
	m.shift--
	mask := uint32(len(m.table) - 1)
	for k, id := range m.ids {
		s := m.slot(id)
		for m.table[s] != 0 {
			s = (s + 1) & mask
		}
		m.table[s] = int32(k + 1)
	}
}

func (m *rackMemo) internRack(name string) int32 {
	rank := int32(0)
	for i := range m.racks {
		if m.racks[i].name == name {
			return int32(i)
		}
	}
	for i := range m.racks {
		if m.compare(m.racks[i].name, name) < 0 {
			rank++
		} else {
			m.racks[i].rank++
		}
	}
	off := int32(len(m.arena))
	m.arena = m.encode(m.arena, name)
	m.racks = append(m.racks, memoRack{name: name, off: off, end: int32(len(m.arena)), rank: rank})
	return int32(len(m.racks) - 1)
}

// partitionRacks appends to dst the memo indexes of the racks of replicas, sorted
// by rank, duplicates kept.
func (m *rackMemo) partitionRacks(dst []int32, replicas []int32) []int32 {
	for _, id := range replicas {
		r := m.rack(id)
		if r < 0 {
			continue
		}
		// Insertion sort: replication factors are small.
		dst = append(dst, r)
		rank := m.racks[r].rank
		j := len(dst) - 1
		for j > 0 && m.racks[dst[j-1]].rank > rank {
			dst[j] = dst[j-1]
			j--
		}
		dst[j] = r
	}
	return dst
}

func (m *rackMemo) encoded(r int32) []byte {
	return m.arena[m.racks[r].off:m.racks[r].end]
}
