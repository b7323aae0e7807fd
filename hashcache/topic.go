package hashcache

import (
	"encoding/binary"
	"unsafe"

	"github.com/kraftwatch/kraftwatch/image"
)

// topicHasher is the part of a scheme that turns a topic into bytes and hashes
// them: the scheme's header, then per partition its index and its racks block.
type topicHasher struct {
	memo      rackMemo
	sink      sink
	header    func(b []byte, t Topic) []byte
	bigEndian bool // partition indexes: big-endian, else little-endian
	chunk     [image.LeafSize][]int32
}

func (h *topicHasher) topicHash(t Topic, b Brokers) int64 {
	h.memo.reset(b)
	for {
		racks := h.memo.racksGen
		h.sink.reset()
		h.sink.buf = h.header(h.sink.buf, t)
		h.partitions(t)
		// The hot loops took lists without asking their brokers (use). When asking
		// them, or anything else in this topic, found a rack that changed, a block
		// written before may be stale: write the topic again, with every broker it
		// reads asked now, so that racksGen stays (each broker is asked once per
		// askGen).
		if h.memo.settle(); h.memo.racksGen == racks {
			return int64(h.sink.sum())
		}
	}
}

// partitions writes every partition of t: its index and its racks block.
func (h *topicHasher) partitions(t Topic) {
	n := t.NumPartitions()
	switch t := t.(type) {
	case imageTopic:
		for first := 0; first < n; first += image.LeafSize {
			h.leaf(first, t.t.Leaf(first/image.LeafSize), min(image.LeafSize, n-first))
		}
		return
	case ReplicaLister:
		if lists := t.ReplicaLists(); len(lists) == n {
			for first := 0; first < n; first += image.LeafSize {
				h.lists32(first, lists[first:min(n, first+image.LeafSize)])
			}
			return
		}
	}
	chunk := h.chunk[:]
	for first := 0; first < n; first += len(chunk) {
		m := min(len(chunk), n-first)
		for j := range m {
			chunk[j] = t.Replicas(first + j)
		}
		h.lists32(first, chunk[:m])
	}
	clear(chunk)
}

// lists32 writes partitions first … first+len(lists)-1 (first a multiple of
// LeafSize, at most LeafSize lists), whose replicas lists holds: runs of hot
// partitions (rackMemo.hotLists), and each other one by partition.
func (h *topicHasher) lists32(first int, lists [][]int32) {
	for j := 0; j < len(lists); {
		out, end := h.room(), unsafe.Pointer(nil)
		j, end = h.memo.hotLists(out, first, lists, j, h.bigEndian)
		h.wrote(out, end)
		if j < len(lists) {
			h.partition(first+j, lists[j])
			j++
		}
	}
}

// leaf writes partitions first … first+m-1 (first a multiple of LeafSize), whose
// replicas are in leaf's slots: runs of hot partitions (rackMemo.hotLeaf), and each
// other one by partition.
func (h *topicHasher) leaf(first int, leaf image.Leaf, m int) {
	for j := 0; j < m; {
		out, end := h.room(), unsafe.Pointer(nil)
		j, end = h.memo.hotLeaf(out, first, leaf, j, m, h.bigEndian)
		h.wrote(out, end)
		if j < m {
			var replicas []int32 // none in slots past Len
			if j < leaf.Len() {
				replicas = leaf.Replicas(j)
			}
			h.partition(first+j, replicas)
			j++
		}
	}
}

// room hands the sink's buffer to the hasher when it reached flushAt, and returns
// the end of the buffer, which has hotRoom bytes of room: the buffer holds
// flushAt+hotRoom bytes or more (sink.reset).
func (h *topicHasher) room() unsafe.Pointer {
	if len(h.sink.buf) >= flushAt {
		h.sink.flush()
	}
	b := h.sink.buf
	return unsafe.Pointer(&b[len(b) : len(b)+hotRoom][0])
}

// wrote extends the sink's buffer by what hotLeaf or hotLists wrote from out (room)
// to end.
func (h *topicHasher) wrote(out, end unsafe.Pointer) {
	h.sink.buf = h.sink.buf[:len(h.sink.buf)+int(uintptr(end)-uintptr(out))]
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
	block, k, ok := m.hotBlock(replicas)
	if !ok {
		block = m.partition(replicas, pack(replicas), k)
	}
	h.sink.buf = append(buf, block...)
}

func (h *topicHasher) brokersSeen() []int32 { return h.memo.ids }
