package observer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// readChunk is how many bytes a segment reads at once beyond what a batch needs.
const readChunk = 256 << 10

var (
	// errWait: the segment has no complete batch at the read position yet.
	errWait = errors.New("observer: no complete batch yet")
	// errShrunk: the segment file is now shorter than what was read from it.
	errShrunk = errors.New("observer: segment shrank")
)

// segment reads the batches of one log segment file from a position on, like tsdb's
// LiveReader: end of file, or a batch not yet complete, is errWait and the next call
// tries again with whatever was appended meanwhile. The file is opened read-only.
type segment struct {
	base int64
	path string
	f    *os.File
	pos  int64  // file position of buf[0]
	buf  []byte // bytes read from pos on and not consumed
	size int64  // file size seen by the last fill
	// recycle lets fill reuse its buffer: nothing handed out of it is used any more.
	recycle bool
	store   []byte // the buffer buf is part of
	// While a prefetcher reads the segment ahead of consume (prefetch.go), fill takes
	// its new buffer from spares (nil: make one) and appends the one it replaces to
	// released, which go back to consume with the next batch read.
	prefetching bool
	spares      [][]byte
	released    [][]byte
}

func openSegment(dir string, base int64) (*segment, error) {
	path := segmentPath(dir, base)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &segment{base: base, path: path, f: f}, nil
}

func (s *segment) close() {
	if s != nil && s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// rewind forgets the bytes read but not consumed, so the next read sees the file as
// it is now: between polls, the bytes after the last batch may have been cut off and
// written again.
func (s *segment) rewind() { s.buf = nil }

// pending is the number of bytes read but not yet part of a complete batch.
func (s *segment) pending() int { return len(s.buf) }

// fill reads bytes appended to the file since the last fill. It returns whether it
// read any, and errShrunk when the file is now shorter than what was read from it.
func (s *segment) fill() (bool, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return false, err
	}
	s.size = fi.Size()
	if s.size < s.pos {
		return false, errShrunk
	}
	if end := s.pos + int64(len(s.buf)); s.size < end {
		// Only bytes not yet part of a batch went away: a torn tail cut off by Kafka's
		// recovery. Forget them and read what replaces them.
		s.buf = nil
	}
	end := s.pos + int64(len(s.buf))
	if s.size == end {
		return false, nil
	}
	want := int64(readChunk)
	if s.prefetching {
		// As much as the next spare holds: once a batch larger than prefetchChunk made
		// the buffers that large, its successors are read in one fill, not a chunk and
		// then the rest into a buffer made for it.
		want = prefetchChunk
		if k := len(s.spares); k > 0 {
			want = max(want, int64(cap(s.spares[k-1])-len(s.buf)))
		}
	}
	var size, rest int64 // of the batch buf begins with, once its length is read
	if len(s.buf) >= recordbatch.LogOverhead {
		size = int64(int32(binary.BigEndian.Uint32(s.buf[8:]))) + recordbatch.LogOverhead
		if size > int64(len(s.buf)) {
			rest = size - int64(len(s.buf))
			want = max(want, rest)
		}
	}
	n := min(s.size-end, want)
	if s.recycle && !s.prefetching {
		// Into a buffer it reuses (a rebuild): as much as it holds, when that is the
		// rest of the batch and a quarter chunk at least; a batch larger than a
		// chunk that does not fit gets a buffer sized by it, not by a chunk read on
		// past it (TestSegmentReusedBufferSize).
		if room := int64(cap(s.store) - len(s.buf)); n > room {
			switch {
			case room >= max(rest, readChunk/4):
				n = room
			case rest > 0 && size > readChunk:
				n = min(n, rest)
			}
		}
	}
	// A new buffer each time, unless recycle is set: batches and records handed out
	// share memory with the old one, which is then never written again.
	var nb []byte
	need := len(s.buf) + int(n)
	switch {
	case s.prefetching:
		s.released = append(s.released, s.store)
		if k := len(s.spares); k > 0 {
			nb, s.spares = s.spares[k-1], s.spares[:k-1]
		}
		if cap(nb) < need {
			nb = make([]byte, 0, need+need/4)
		}
		// As much as the buffer holds, also when it was just made for a batch: a read
		// that ended where that batch ends would start the next one with no header to
		// size the buffer by, read a chunk into a spare and then the batch into yet
		// another buffer made for it (one more, each time, in a rolling restart's
		// shutdown batches; bench/burst.sh guards this).
		nb = nb[:min(int64(cap(nb)), int64(len(s.buf))+s.size-end)]
		s.store = nb
	case s.recycle && cap(s.store) >= need:
		nb = s.store[:need]
	default:
		// Room for the part of a batch that is left over when the next chunk is read.
		nb = make([]byte, need, need+need/4)
		s.store = nb
	}
	copy(nb, s.buf)
	got, err := s.f.ReadAt(nb[len(s.buf):], end)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	s.buf = nb[:len(s.buf)+got]
	return got > 0, nil
}

// read returns the next complete batch and its file position. At the end of what the
// file holds it returns errWait; for bytes that cannot be a batch, an error wrapping
// recordbatch.ErrCorrupt.
func (s *segment) read() (recordbatch.Batch, int64, error) {
	for {
		b, err := recordbatch.Decode(s.buf)
		if err == nil {
			pos := s.pos
			s.buf = s.buf[b.Size():]
			s.pos += int64(b.Size())
			return b, pos, nil
		}
		if !errors.Is(err, recordbatch.ErrTruncated) {
			return b, s.pos, err
		}
		grew, ferr := s.fill()
		if ferr != nil {
			return b, s.pos, ferr
		}
		if !grew {
			return b, s.pos, errWait
		}
	}
}

// corruptAtTail reports whether the undecodable bytes at the read position are the
// last bytes of the file: no batch can follow them (a torn tail), as opposed to a
// corrupt batch with more data after it.
func (s *segment) corruptAtTail() bool {
	for {
		grew, err := s.fill()
		if err != nil || !grew {
			break
		}
	}
	if len(s.buf) < recordbatch.LogOverhead {
		return true
	}
	length := int64(int32(binary.BigEndian.Uint32(s.buf[8:])))
	if length < recordbatch.HeaderSize-recordbatch.LogOverhead {
		// A length that cannot be right: no later batch can be found. Zeros to the end
		// are what a crash can leave; anything else is corrupt.
		for _, c := range s.buf {
			if c != 0 {
				return false
			}
		}
		return s.pos+int64(len(s.buf)) >= s.size
	}
	return s.pos+length+recordbatch.LogOverhead >= s.size
}

func (s *segment) String() string { return fmt.Sprintf("%s@%d", s.path, s.pos) }
