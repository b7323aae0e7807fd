package hashcache

import (
	"encoding/binary"
	"strings"

	"github.com/spaolacci/murmur3"
)

// murmur3Version is the first byte of the murmur3 scheme's stream. Change it with
// any change of the layout, so old and new hashes never compare equal by accident.
const murmur3Version = 0x01

// Murmur3 is the default scheme; see the package doc for its bytes.
type Murmur3 struct {
	memo  rackMemo
	sink  sink
	racks []int32
}

// NewMurmur3 returns the murmur3 scheme.
func NewMurmur3() *Murmur3 {
	s := &Murmur3{}
	s.memo.compare = strings.Compare
	s.memo.encode = appendMurmur3String
	s.sink.stream = murmur3.New64()
	s.sink.oneShot = murmur3.Sum64
	return s
}

func appendMurmur3String(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// Name returns SchemeMurmur3.
func (s *Murmur3) Name() string { return SchemeMurmur3 }

// TopicHash implements Scheme.
func (s *Murmur3) TopicHash(t Topic, b Brokers) int64 {
	s.memo.reset(b)
	s.sink.reset()
	id := t.ID()
	buf := append(s.sink.buf, murmur3Version)
	buf = append(buf, id[:]...)
	buf = appendMurmur3String(buf, t.Name())
	n := t.NumPartitions()
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	for i := range n {
		racks := s.memo.partitionRacks(s.racks[:0], t.Replicas(i))
		// Keep distinct racks: equal racks are adjacent after sorting.
		w := 0
		for _, r := range racks {
			if w == 0 || racks[w-1] != r {
				racks[w] = r
				w++
			}
		}
		racks = racks[:w]
		buf = binary.BigEndian.AppendUint32(buf, uint32(i))
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(racks)))
		for _, r := range racks {
			buf = append(buf, s.memo.encoded(r)...)
		}
		s.racks = racks
		s.sink.buf = buf
		s.sink.maybeFlush()
		buf = s.sink.buf
	}
	s.sink.buf = buf
	return int64(s.sink.sum())
}

// GroupHash returns the wrapping sum of the topic hashes (AllTopicHash).
func (s *Murmur3) GroupHash(hs []NamedHash) int64 {
	var sum int64
	for _, h := range hs {
		sum += h.Hash
	}
	return sum
}

func (s *Murmur3) brokersSeen() []int32 { return s.memo.ids }
