package hashcache

import "encoding/binary"

// topicHasher is the part of a scheme that turns a topic into bytes and hashes
// them: the scheme's header, then per partition its index and its racks block.
type topicHasher struct {
	memo      rackMemo
	sink      sink
	header    func(b []byte, t Topic) []byte
	bigEndian bool // partition indexes: big-endian, else little-endian
}

func (h *topicHasher) topicHash(t Topic, b Brokers) int64 {
	h.memo.reset(b)
	h.sink.reset()
	buf := h.header(h.sink.buf, t)
	for i := range t.NumPartitions() {
		if h.bigEndian {
			buf = binary.BigEndian.AppendUint32(buf, uint32(i))
		} else {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(i))
		}
		buf = append(buf, h.memo.partition(t.Replicas(i))...)
		if len(buf) >= flushAt {
			h.sink.buf = buf
			h.sink.flush()
			buf = h.sink.buf
		}
	}
	h.sink.buf = buf
	return int64(h.sink.sum())
}

func (h *topicHasher) brokersSeen() []int32 { return h.memo.ids }
