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
	topicHasher
}

// NewMurmur3 returns the murmur3 scheme.
func NewMurmur3() *Murmur3 {
	s := &Murmur3{}
	s.memo.compare = strings.Compare
	s.memo.encodeRack = appendMurmur3String
	s.memo.encodeBlock = murmur3Block
	s.header = murmur3Header
	s.bigEndian = true
	s.sink.stream = murmur3.New64()
	s.sink.oneShot = murmur3.Sum64
	return s
}

func appendMurmur3String(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func murmur3Header(b []byte, t Topic) []byte {
	id := t.ID()
	b = append(b, murmur3Version)
	b = append(b, id[:]...)
	b = appendMurmur3String(b, t.Name())
	return binary.BigEndian.AppendUint32(b, uint32(t.NumPartitions()))
}

// murmur3Block writes the number of distinct racks, then each once.
func murmur3Block(b []byte, m *rackMemo, racks []int32) []byte {
	distinct := 0
	for i, r := range racks {
		if i == 0 || racks[i-1] != r {
			distinct++
		}
	}
	b = binary.BigEndian.AppendUint32(b, uint32(distinct))
	for i, r := range racks {
		if i == 0 || racks[i-1] != r {
			b = append(b, m.encoded(r)...)
		}
	}
	return b
}

// Name returns SchemeMurmur3.
func (s *Murmur3) Name() string { return SchemeMurmur3 }

// TopicHash implements Scheme.
func (s *Murmur3) TopicHash(t Topic, b Brokers) int64 { return s.topicHash(t, b) }

// GroupHash returns the wrapping sum of the topic hashes (AllTopicHash).
func (s *Murmur3) GroupHash(hs []NamedHash) int64 {
	var sum int64
	for _, h := range hs {
		sum += h.Hash
	}
	return sum
}
