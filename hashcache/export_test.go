package hashcache

import "slices"

// Internals for the external tests.

var (
	JavaCompare = javaCompare
	UTF16Len    = utf16Len
	FlushAt     = flushAt
)

// recorder is a streamHasher that keeps what it hashed.
type recorder struct {
	streamHasher
	b *[]byte
}

func (r recorder) Write(p []byte) (int, error) {
	*r.b = append(*r.b, p...)
	return r.streamHasher.Write(p)
}

// Reset starts the stream again, as a topic whose racks changed while it was
// written is written again.
func (r recorder) Reset() {
	*r.b = (*r.b)[:0]
	r.streamHasher.Reset()
}

// TopicBytes returns the byte stream that s hashes for t, and the hash.
func TopicBytes(s Scheme, t Topic, b Brokers) ([]byte, int64) {
	var sk *sink
	switch s := s.(type) {
	case *Murmur3:
		sk = &s.sink
	case *Kafka:
		sk = &s.sink
	}
	var got []byte
	oneShot, stream := sk.oneShot, sk.stream
	defer func() { sk.oneShot, sk.stream = oneShot, stream }()
	sk.oneShot = func(p []byte) uint64 {
		got = append(got, p...)
		return oneShot(p)
	}
	sk.stream = recorder{stream, &got}
	h := s.TopicHash(t, b)
	return got, h
}

// CachedNames returns the names of the cached entries, sorted.
func CachedNames(c *Cache) []string {
	var names []string
	for name := range c.entries {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// BrokersSeen returns the brokers the last TopicHash of s read, sorted.
func BrokersSeen(s Scheme) []int32 {
	ids := slices.Clone(s.brokersSeen())
	slices.Sort(ids)
	return ids
}
