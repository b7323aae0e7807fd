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
		for first := 0; first < n; first += image.LeafSize {
			h.leaf(first, t.t.Leaf(first/image.LeafSize), min(image.LeafSize, n-first))
		}
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
	buf := h.sink.buf
	for j := 0; j < len(lists); j++ {
		var done int
		buf, done = h.memo.appendHot(buf, first+j, lists[j:], h.bigEndian)
		if j += done; j == len(lists) {
			break
		}
		buf = h.partition(buf, first+j, lists[j])
	}
	h.sink.buf = buf
}

// leaf writes partitions first … first+m-1, whose replicas are in leaf's slots.
func (h *topicHasher) leaf(first int, leaf image.Leaf, m int) {
	buf := h.sink.buf
	for j := 0; j < m; j++ {
		var done int
		buf, done = h.memo.appendHotLeaf(buf, first, leaf, j, m, h.bigEndian)
		if j += done; j == m {
			break
		}
		var replicas []int32 // none in slots past Len
		if j < leaf.Len() {
			replicas = leaf.Replicas(j)
		}
		buf = h.partition(buf, first+j, replicas)
	}
	h.sink.buf = buf
}

// partition appends partition i, which the hot table does not hold, to buf, and
// returns buf; it hands buf to the hasher when it reaches flushAt.
func (h *topicHasher) partition(buf []byte, i int, replicas []int32) []byte {
	m := &h.memo
	if h.bigEndian {
		buf = binary.BigEndian.AppendUint32(buf, uint32(i))
	} else {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(i))
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
	return buf
}

func (h *topicHasher) brokersSeen() []int32 { return h.memo.ids }
