package hashcache

import (
	"encoding/binary"

	"github.com/kraftwatch/kraftwatch/image"
)

// topicHasher is the part of a scheme that turns a topic into bytes and hashes
// them: the scheme's header, then per partition its index and its racks block.
type topicHasher struct {
	memo      rackMemo
	sink      sink
	header    func(b []byte, t Topic) []byte
	bigEndian bool      // partition indexes: big-endian, else little-endian
	lists     [][]int32 // replica lists of a ReplicaLister topic
	chunk     [image.LeafSize][]int32
}

func (h *topicHasher) topicHash(t Topic, b Brokers) int64 {
	h.memo.reset(b)
	h.sink.reset()
	h.sink.buf = h.header(h.sink.buf, t)
	n := t.NumPartitions()
	switch t := t.(type) {
	case imageTopic:
		chunk := h.chunk[:]
		for k := 0; k*image.LeafSize < n; k++ {
			leaf := t.t.Leaf(k)
			m := min(image.LeafSize, n-k*image.LeafSize)
			for j := range m {
				chunk[j] = nil
				if j < leaf.Len() {
					chunk[j] = leaf.Replicas(j)
				}
			}
			h.partitions(k*image.LeafSize, chunk[:m])
		}
		clear(chunk) // keep no image alive
		return int64(h.sink.sum())
	case ReplicaLister:
		h.lists = t.AppendReplicas(h.lists[:0])
		if len(h.lists) == n {
			h.partitions(0, h.lists)
			clear(h.lists)
			return int64(h.sink.sum())
		}
		clear(h.lists)
	}
	chunk := h.chunk[:]
	for first := 0; first < n; first += len(chunk) {
		m := min(len(chunk), n-first)
		for j := range m {
			chunk[j] = t.Replicas(first + j)
		}
		h.partitions(first, chunk[:m])
	}
	clear(chunk)
	return int64(h.sink.sum())
}

// partitions writes partitions first … first+len(lists)-1, whose replicas lists
// holds.
func (h *topicHasher) partitions(first int, lists [][]int32) {
	m := &h.memo
	buf := h.sink.buf
	for j := 0; j < len(lists); j++ {
		var done int
		buf, done = m.appendHot(buf, first+j, lists[j:], h.bigEndian)
		if j += done; j == len(lists) {
			break
		}
		// Partition first+j, which appendHot could not take.
		replicas := lists[j]
		if h.bigEndian {
			buf = binary.BigEndian.AppendUint32(buf, uint32(first+j))
		} else {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(first+j))
		}
		key := pack(replicas)
		s := &m.hot[hotIndex(key)]
		if s.key == key && s.stamp>>32 == uint64(m.racksGen) {
			m.see(s)
			buf = append(buf, m.blocks[s.off:s.off+s.n]...)
		} else {
			buf = append(buf, m.partition(replicas, key, s)...)
		}
		if len(buf) >= flushAt {
			h.sink.buf = buf
			h.sink.flush()
			buf = h.sink.buf
		}
	}
	h.sink.buf = buf
}

func (h *topicHasher) brokersSeen() []int32 { return h.memo.ids }
