package hashcache

// streamHasher is a streaming 64-bit hash whose result equals the one-shot hash of
// everything written since Reset.
type streamHasher interface {
	Write(p []byte) (int, error)
	Sum64() uint64
	Reset()
}

// flushAt bounds the sink's buffer: a topic's bytes are hashed in one shot when they
// fit, and streamed in chunks of about this size when they do not, so the buffer
// does not grow with the number of partitions of the largest topic.
const flushAt = 32 << 10

// sink collects a topic's byte stream and hashes it.
type sink struct {
	buf     []byte
	flushed bool
	stream  streamHasher
	oneShot func([]byte) uint64
}

func (s *sink) reset() {
	if s.buf == nil {
		s.buf = make([]byte, 0, flushAt+hotRoom) // below flushAt, room for a run of hot partitions
	}
	s.buf = s.buf[:0]
	s.flushed = false
}

// flush hands the buffer to the streaming hasher.
func (s *sink) flush() {
	if !s.flushed {
		s.stream.Reset()
		s.flushed = true
	}
	s.stream.Write(s.buf) //nolint:errcheck // hash writers never fail
	s.buf = s.buf[:0]
}

func (s *sink) sum() uint64 {
	if !s.flushed {
		return s.oneShot(s.buf)
	}
	s.stream.Write(s.buf) //nolint:errcheck // hash writers never fail
	s.buf = s.buf[:0]
	return s.stream.Sum64()
}
