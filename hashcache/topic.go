package hashcache

import "encoding/binary"

// topicHasher is the part of a scheme that turns a topic into bytes and hashes
// them: the scheme's header, then per partition its index and its racks block.
type topicHasher struct {
	memo      rackMemo
	sink      sink
	header    func(b []byte, t Topic) []byte
	bigEndian bool      // partition indexes: big-endian, else little-endian
	lists     [][]int32 // replica lists of a ReplicaLister topic
}

func (h *topicHasher) topicHash(t Topic, b Brokers) int64 {
	h.memo.reset(b)
	h.sink.reset()
	h.sink.buf = h.header(h.sink.buf, t)
	n := t.NumPartitions()
	if rl, ok := t.(ReplicaLister); ok {
		h.lists = rl.AppendReplicas(h.lists[:0])
		if len(h.lists) == n {
			h.partitions(h.lists)
			clear(h.lists) // keep no image alive
			return int64(h.sink.sum())
		}
		clear(h.lists)
	}
	for i := range n {
		h.partition(i, t.Replicas(i))
	}
	return int64(h.sink.sum())
}

// partitions writes partitions 0 … len(lists)-1.
func (h *topicHasher) partitions(lists [][]int32) {
	buf := h.sink.buf
	for i, replicas := range lists {
		if h.bigEndian {
			buf = binary.BigEndian.AppendUint32(buf, uint32(i))
		} else {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(i))
		}
		buf = append(buf, h.memo.partition(replicas)...)
		if len(buf) >= flushAt {
			h.sink.buf = buf
			h.sink.flush()
			buf = h.sink.buf
		}
	}
	h.sink.buf = buf
}

// partition writes partition i.
func (h *topicHasher) partition(i int, replicas []int32) {
	buf := h.sink.buf
	if h.bigEndian {
		buf = binary.BigEndian.AppendUint32(buf, uint32(i))
	} else {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(i))
	}
	h.sink.buf = append(buf, h.memo.partition(replicas)...)
	if len(h.sink.buf) >= flushAt {
		h.sink.flush()
	}
}

func (h *topicHasher) brokersSeen() []int32 { return h.memo.ids }
