package hashcache

import (
	"encoding/binary"
	"slices"

	"github.com/zeebo/xxh3"
)

// kafkaTopicMagic is Kafka's TOPIC_HASH_MAGIC_BYTE.
const kafkaTopicMagic = 0x00

// Kafka is the scheme that reproduces Apache Kafka's MetadataHash (4.1+); see the
// package doc for its bytes.
type Kafka struct {
	topicHasher
}

// NewKafka returns the kafka scheme.
func NewKafka() *Kafka {
	s := &Kafka{}
	s.memo.compare = javaCompare
	s.memo.encodeRack = appendKafkaRack
	s.memo.encodeBlock = kafkaBlock
	s.header = kafkaHeader
	s.sink.stream = xxh3.New()
	s.sink.oneShot = xxh3.Hash
	return s
}

// appendKafkaRack appends putInt(rack.length()) then putString(rack).
func appendKafkaRack(b []byte, rack string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(utf16Len(rack)))
	return appendJavaString(b, rack)
}

func kafkaHeader(b []byte, t Topic) []byte {
	id := t.ID()
	b = append(b, kafkaTopicMagic)
	// putLong(msb), putLong(lsb): the wire form is big-endian, hash4j writes
	// little-endian.
	b = binary.LittleEndian.AppendUint64(b, binary.BigEndian.Uint64(id[0:8]))
	b = binary.LittleEndian.AppendUint64(b, binary.BigEndian.Uint64(id[8:16]))
	b = appendJavaString(b, t.Name())
	return binary.LittleEndian.AppendUint32(b, uint32(t.NumPartitions()))
}

// kafkaBlock writes every rack, duplicates kept.
func kafkaBlock(b []byte, m *rackMemo, racks []int32) []byte {
	for _, r := range racks {
		b = append(b, m.encoded(r)...)
	}
	return b
}

// Name returns SchemeKafka.
func (s *Kafka) Name() string { return SchemeKafka }

// TopicHash implements Scheme: Kafka's Utils.computeTopicHash for an existing
// topic.
func (s *Kafka) TopicHash(t Topic, b Brokers) int64 { return s.topicHash(t, b) }

// GroupHash implements Scheme: Kafka's Utils.computeGroupHash. It sorts hs by
// name in Java String order.
func (s *Kafka) GroupHash(hs []NamedHash) int64 {
	if len(hs) == 0 {
		return 0
	}
	byName := func(a, b NamedHash) int { return javaCompare(a.Name, b.Name) }
	if !slices.IsSortedFunc(hs, byName) { // callers mostly pass them sorted
		slices.SortFunc(hs, byName)
	}
	s.sink.reset()
	for _, h := range hs {
		s.sink.buf = binary.LittleEndian.AppendUint64(s.sink.buf, uint64(h.Hash))
		if len(s.sink.buf) >= flushAt {
			s.sink.flush()
		}
	}
	return int64(s.sink.sum())
}
