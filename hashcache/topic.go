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
	for j := 0; j < len(lists); {
		h.room()
		var done int
		h.sink.buf, done = h.memo.appendHot(h.sink.buf, first+j, lists[j:], h.bigEndian)
		if j += done; j < len(lists) && done < image.LeafSize {
			h.partition(first+j, lists[j])
			j++
		}
	}
}

// leaf writes partitions first … first+m-1, whose replicas are in leaf's slots.
func (h *topicHasher) leaf(first int, leaf image.Leaf, m int) {
	for j := 0; j < m; {
		h.room()
		var done int
		h.sink.buf, done = h.memo.appendHotLeaf(h.sink.buf, first, leaf, j, m, h.bigEndian)
		if j += done; j < m {
			var replicas []int32 // none in slots past Len
			if j < leaf.Len() {
				replicas = leaf.Replicas(j)
			}
			h.partition(first+j, replicas)
			j++
		}
	}
}

// room hands the sink's buffer to the hasher when it reached flushAt, so that it
// has hotRoom bytes of room (sink.reset).
func (h *topicHasher) room() {
	if len(h.sink.buf) >= flushAt {
		h.sink.flush()
	}
}

// partition appends partition i, which the hot table does not hold, to the sink's
// buffer.
func (h *topicHasher) partition(i int, replicas []int32) {
	m, buf := &h.memo, h.sink.buf
	if h.bigEndian {
		buf = binary.BigEndian.AppendUint32(buf, uint32(i))
	} else {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(i))
	}
	block, s, ok := m.hotBlock(replicas)
	if !ok {
		block = m.partition(replicas, pack(replicas), s)
	}
	h.sink.buf = append(buf, block...)
}

func (h *topicHasher) brokersSeen() []int32 { return h.memo.ids }
