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
	memo  rackMemo
	sink  sink
	racks []int32
}

// NewKafka returns the kafka scheme.
func NewKafka() *Kafka {
	s := &Kafka{}
	s.memo.compare = javaCompare
	s.memo.encode = appendKafkaRack
	s.sink.stream = xxh3.New()
	s.sink.oneShot = xxh3.Hash
	return s
}

// appendKafkaRack appends putInt(rack.length()) then putString(rack).
func appendKafkaRack(b []byte, rack string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(utf16Len(rack)))
	return appendJavaString(b, rack)
}

// Name returns SchemeKafka.
func (s *Kafka) Name() string { return SchemeKafka }

// TopicHash implements Scheme: Kafka's Utils.computeTopicHash for an existing
// topic.
func (s *Kafka) TopicHash(t Topic, b Brokers) int64 {
	s.memo.reset(b)
	s.sink.reset()
	id := t.ID()
	buf := append(s.sink.buf, kafkaTopicMagic)
	// putLong(msb), putLong(lsb): the wire form is big-endian, hash4j writes
	// little-endian.
	buf = binary.LittleEndian.AppendUint64(buf, binary.BigEndian.Uint64(id[0:8]))
	buf = binary.LittleEndian.AppendUint64(buf, binary.BigEndian.Uint64(id[8:16]))
	buf = appendJavaString(buf, t.Name())
	n := t.NumPartitions()
	buf = binary.LittleEndian.AppendUint32(buf, uint32(n))
	for i := range n {
		s.racks = s.memo.partitionRacks(s.racks[:0], t.Replicas(i))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(i))
		for _, r := range s.racks {
			buf = append(buf, s.memo.encoded(r)...)
		}
		s.sink.buf = buf
		s.sink.maybeFlush()
		buf = s.sink.buf
	}
	s.sink.buf = buf
	return int64(s.sink.sum())
}

// GroupHash implements Scheme: Kafka's Utils.computeGroupHash. It sorts hs by
// name in Java String order.
func (s *Kafka) GroupHash(hs []NamedHash) int64 {
	if len(hs) == 0 {
		return 0
	}
	slices.SortFunc(hs, func(a, b NamedHash) int { return javaCompare(a.Name, b.Name) })
	s.sink.reset()
	for _, h := range hs {
		s.sink.buf = binary.LittleEndian.AppendUint64(s.sink.buf, uint64(h.Hash))
		s.sink.maybeFlush()
	}
	return int64(s.sink.sum())
}

func (s *Kafka) brokersSeen() []int32 { return s.memo.ids }
