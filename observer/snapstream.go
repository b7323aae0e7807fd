package observer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// snapStream checks and replays a KRaft snapshot that arrives in chunks
// (FetchSnapshot), the network counterpart of reading a .checkpoint file: every batch
// CRC-checked by recordbatch.Decode, the first a control batch starting with a
// SnapshotHeader, the last a control batch with a SnapshotFooter, the records of data
// batches decoded and replayed into delta, a new delta on image.Empty, as they come;
// what Replay refuses is logged and counted. A batch may be split across chunks; only
// the bytes of that one incomplete batch are kept between chunks, so memory is one
// chunk plus one batch, whatever the size of the snapshot.
//
// An error leaves delta unusable: the caller drops it and starts again.
type snapStream struct {
	src      string // for log lines and errors
	dec      *decoder
	m        *Metrics
	delta    *image.Delta
	replayed int64 // records replayed (decoded), Replay's refusals included

	carry   []byte // the start of an incomplete batch
	pos     int64  // snapshot position of the next byte to decode (of carry[0])
	batches int
	footer  bool // the last batch read is a control batch with a SnapshotFooter
	header  recordbatch.SnapshotHeaderRecord
	records int64
}

// newSnapStream returns a snapStream of the snapshot src, decoded with dec.
func newSnapStream(src string, dec *decoder, m *Metrics) *snapStream {
	return &snapStream{src: src, dec: dec, m: m, delta: image.NewDelta(image.Empty)}
}

// write takes the next chunk of the snapshot. The chunk is not kept after it returns.
func (s *snapStream) write(chunk []byte) error {
	// Complete the batch begun in an earlier chunk, copying only its own bytes.
	for len(s.carry) > 0 && len(chunk) > 0 {
		if len(s.carry) < recordbatch.LogOverhead {
			take := min(recordbatch.LogOverhead-len(s.carry), len(chunk))
			s.carry = append(s.carry, chunk[:take]...)
			chunk = chunk[take:]
			continue
		}
		size := int64(int32(binary.BigEndian.Uint32(s.carry[8:]))) + recordbatch.LogOverhead
		if size > maxSnapshotBatch {
			return s.bad("batch of %d bytes, more than any KRaft batch", size)
		}
		need := max(int(size)-len(s.carry), 0)
		take := min(need, len(chunk))
		s.carry = append(s.carry, chunk[:take]...)
		chunk = chunk[take:]
		if take < need {
			return nil
		}
		// One whole batch, or bytes that Decode reports as corrupt.
		if _, err := s.decode(s.carry); err != nil {
			return err
		}
		s.carry = s.carry[:0]
	}
	if len(s.carry) > 0 {
		return nil // the chunk went into the carried batch, which is not complete yet
	}
	rest, err := s.decode(chunk)
	if err != nil {
		return err
	}
	s.carry = append(s.carry[:0], rest...)
	return nil
}

// maxSnapshotBatch bounds the size of one batch of a snapshot (KRaft writes batches
// of at most 8 MiB), so that a corrupt length cannot make the stream buffer more.
const maxSnapshotBatch = 64 << 20

// decode reads the complete batches at the start of buf and returns the bytes after
// them: the start of an incomplete batch.
func (s *snapStream) decode(buf []byte) ([]byte, error) {
	for len(buf) > 0 {
		b, err := recordbatch.Decode(buf)
		if errors.Is(err, recordbatch.ErrTruncated) {
			if len(buf) >= recordbatch.LogOverhead {
				if size := int64(int32(binary.BigEndian.Uint32(buf[8:]))) + recordbatch.LogOverhead; size > maxSnapshotBatch {
					return nil, s.bad("batch of %d bytes, more than any KRaft batch", size)
				}
			}
			return buf, nil
		}
		if err != nil {
			return nil, s.bad("%v", err)
		}
		if err := s.batch(&b); err != nil {
			return nil, err
		}
		buf = buf[b.Size():]
		s.pos += int64(b.Size())
	}
	return buf, nil
}

// finish checks that the snapshot ended where it should: after a whole batch, with a
// footer.
func (s *snapStream) finish() error {
	if len(s.carry) > 0 {
		return s.bad("snapshot ends inside a batch (%d bytes left)", len(s.carry))
	}
	if s.batches < 2 || !s.footer {
		return s.bad("no SnapshotFooter: the last batch is not a control batch with one")
	}
	return nil
}

func (s *snapStream) bad(format string, args ...any) error {
	return &PosError{File: s.src, Position: s.pos, Offset: -1,
		Err: fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrBadSnapshot)}
}

func (s *snapStream) batch(b *recordbatch.Batch) error {
	first := s.batches == 0
	s.batches++
	if first {
		if !b.IsControl() {
			return s.bad("first batch is not a control batch")
		}
		c, err := firstControl(b)
		if err != nil {
			return s.bad("first record: %v", err)
		}
		h, ok := c.(*recordbatch.SnapshotHeaderRecord)
		if !ok {
			return s.bad("first record is %s, want SNAPSHOT_HEADER", c.ControlType())
		}
		s.header = *h
	}
	// Check every record's framing before replaying any.
	it := b.Iter()
	footer := false
	for it.Next() {
		if b.IsControl() {
			if _, typ, err := recordbatch.ParseControlKey(it.Record().Key); err == nil && typ == recordbatch.ControlSnapshotFooter {
				footer = true
			}
		}
	}
	if err := it.Err(); err != nil {
		return s.bad("batch at offset %d: %v", b.BaseOffset, err)
	}
	s.footer = b.IsControl() && footer
	if b.IsControl() {
		return nil
	}
	it = b.Iter()
	for it.Next() {
		s.records++
		s.m.SnapshotRecords.Add(1)
		rec, _, ok := s.dec.decode(it.Value(), it.Offset(), s.src, true)
		if !ok {
			continue
		}
		s.replayed++
		if err := s.delta.Replay(rec); err != nil {
			replayFailed(s.dec.log, s.m, it.Offset(), rec.Type(), err, s.src)
		}
	}
	return nil
}
