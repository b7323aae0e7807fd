package hashcache_test

import (
	"encoding/binary"
	"slices"
	"unicode/utf16"

	"github.com/spaolacci/murmur3"
	"github.com/zeebo/xxh3"

	"github.com/kraftwatch/kraftwatch/hashcache"
)

// Plain reference implementations of both schemes, written straight from the
// package doc with no buffer reuse, memo or streaming, for the fast code to be
// checked against.

func javaUnits(s string) []uint16 { return utf16.Encode([]rune(s)) }

func refJavaCompare(a, b string) int { return slices.Compare(javaUnits(a), javaUnits(b)) }

func refRacks(t hashcache.Topic, b hashcache.Brokers, i int) []string {
	var racks []string
	for _, id := range t.Replicas(i) {
		if r, ok := b.Rack(id); ok {
			racks = append(racks, r)
		}
	}
	return racks
}

func refKafkaTopicHash(t hashcache.Topic, b hashcache.Brokers) int64 {
	le32 := binary.LittleEndian.AppendUint32
	putString := func(buf []byte, s string) []byte {
		u := javaUnits(s)
		for _, c := range u {
			buf = binary.LittleEndian.AppendUint16(buf, c)
		}
		return le32(buf, uint32(len(u)))
	}
	id := t.ID()
	buf := []byte{0}
	buf = binary.LittleEndian.AppendUint64(buf, binary.BigEndian.Uint64(id[:8]))
	buf = binary.LittleEndian.AppendUint64(buf, binary.BigEndian.Uint64(id[8:]))
	buf = putString(buf, t.Name())
	buf = le32(buf, uint32(t.NumPartitions()))
	for i := range t.NumPartitions() {
		buf = le32(buf, uint32(i))
		racks := refRacks(t, b, i)
		slices.SortFunc(racks, refJavaCompare)
		for _, r := range racks {
			buf = le32(buf, uint32(len(javaUnits(r))))
			buf = putString(buf, r)
		}
	}
	return int64(xxh3.Hash(buf))
}

func refKafkaGroupHash(hs []hashcache.NamedHash) int64 {
	if len(hs) == 0 {
		return 0
	}
	hs = slices.Clone(hs)
	slices.SortFunc(hs, func(a, b hashcache.NamedHash) int { return refJavaCompare(a.Name, b.Name) })
	var buf []byte
	for _, h := range hs {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(h.Hash))
	}
	return int64(xxh3.Hash(buf))
}

func refMurmur3TopicHash(t hashcache.Topic, b hashcache.Brokers) int64 {
	be32 := binary.BigEndian.AppendUint32
	id := t.ID()
	buf := append([]byte{1}, id[:]...)
	buf = be32(buf, uint32(len(t.Name())))
	buf = append(buf, t.Name()...)
	buf = be32(buf, uint32(t.NumPartitions()))
	for i := range t.NumPartitions() {
		racks := refRacks(t, b, i)
		slices.Sort(racks)
		racks = slices.Compact(racks)
		buf = be32(buf, uint32(i))
		buf = be32(buf, uint32(len(racks)))
		for _, r := range racks {
			buf = be32(buf, uint32(len(r)))
			buf = append(buf, r...)
		}
	}
	return int64(murmur3.Sum64(buf))
}
