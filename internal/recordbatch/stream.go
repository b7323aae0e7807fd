package recordbatch

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Stream reads the records of one uncompressed batch a piece at a time, so that a large
// batch need not be held whole: NewStream takes its header, Next cuts each piece read
// after it into whole records, and Close checks that the records filled the batch
// exactly and that its CRC matches. Records handed out by Next have not been checked
// against the CRC yet: whatever is made of them must be dropped when Close fails.
type Stream struct {
	head Batch  // the header; Records nil
	crc  uint32 // of the bytes from the attributes on, so far
	left int64  // bytes of records not cut yet
	recs int32  // records not cut yet
}

// NewStream starts a Stream on the batch whose first HeaderSize bytes are header and
// returns the batch's size in bytes. It checks the header as Decode does, except the
// CRC, and refuses a compressed batch (ErrUnsupportedCodec).
func NewStream(header []byte) (*Stream, int64, error) {
	if len(header) < HeaderSize {
		return nil, 0, fmt.Errorf("%d bytes of a batch header: %w", len(header), ErrTruncated)
	}
	h := header[:HeaderSize:HeaderSize]
	if magic := int8(h[offsetMagic]); magic != Magic {
		return nil, 0, fmt.Errorf("magic %d, want %d: %w", magic, Magic, ErrCorrupt)
	}
	length := int32(binary.BigEndian.Uint32(h[offsetLength:]))
	if length < HeaderSize-LogOverhead {
		return nil, 0, fmt.Errorf("batch length %d is below the %d-byte header: %w", length, HeaderSize-LogOverhead, ErrCorrupt)
	}
	s := &Stream{crc: crc32.Update(0, castagnoli, h[offsetAttributes:])}
	s.head.CRC = binary.BigEndian.Uint32(h[offsetCRC:])
	decodeFields(&s.head, h)
	s.left = int64(length) + LogOverhead - HeaderSize
	s.recs = s.head.NumRecords
	switch {
	case s.head.Codec() != CodecNone:
		return nil, 0, fmt.Errorf("batch at offset %d: codec %s: %w", s.head.BaseOffset, s.head.Codec(), ErrUnsupportedCodec)
	case s.head.NumRecords < 0 || int64(s.head.NumRecords)*minRecordSize > s.left:
		return nil, 0, fmt.Errorf("batch at offset %d: %d records in %d bytes: %w", s.head.BaseOffset, s.head.NumRecords, s.left, ErrCorrupt)
	case s.head.LastOffsetDelta < 0:
		return nil, 0, fmt.Errorf("batch at offset %d: last offset delta %d: %w", s.head.BaseOffset, s.head.LastOffsetDelta, ErrCorrupt)
	}
	return s, int64(length) + LogOverhead, nil
}

// Header is the batch's header; its Records are nil.
func (s *Stream) Header() Batch { return s.head }

// Left is the number of bytes of records not cut yet: the bytes of the batch after
// those given to Next so far.
func (s *Stream) Left() int64 { return s.left }

// Next cuts the whole records b starts with (b continues where the last call's used
// bytes ended) and returns them as a batch of their own, with this batch's header,
// whose Iter reads them, and the number of bytes of b they take. used is 0 when b is
// shorter than its first record: read more. Bytes of b beyond the batch are ignored.
// It fails when b holds the rest of the batch and that is not whole records.
func (s *Stream) Next(b []byte) (piece Batch, used int, err error) {
	if int64(len(b)) > s.left {
		b = b[:s.left]
	}
	var n int32
	for n < s.recs {
		length, k := varint(b[used:])
		if k == 0 || length < minRecordSize-1 || length > int64(len(b)-used-k) {
			if k == 0 && len(b)-used >= 9 || k != 0 && length < minRecordSize-1 {
				return Batch{}, 0, fmt.Errorf("batch at offset %d: record length at byte %d: %w", s.head.BaseOffset, HeaderSize+used, ErrCorrupt)
			}
			break
		}
		used += k + int(length)
		n++
	}
	if int64(len(b)) == s.left && used != len(b) {
		return Batch{}, 0, fmt.Errorf("batch at offset %d: %d bytes after its whole records: %w", s.head.BaseOffset, s.left-int64(used), ErrCorrupt)
	}
	s.crc = crc32.Update(s.crc, castagnoli, b[:used])
	s.left -= int64(used)
	s.recs -= n
	piece = s.head
	piece.NumRecords = n
	piece.Records = b[:used:used]
	return piece, used, nil
}

// Close reports whether Next cut the whole batch into exactly its records and the
// batch's CRC matches its bytes: ErrTruncated when Next was not given all of them.
func (s *Stream) Close() error {
	switch {
	case s.left != 0:
		return fmt.Errorf("batch at offset %d: %d bytes not read: %w", s.head.BaseOffset, s.left, ErrTruncated)
	case s.recs != 0:
		return fmt.Errorf("batch at offset %d: %d records missing: %w", s.head.BaseOffset, s.recs, ErrCorrupt)
	case s.crc != s.head.CRC:
		return fmt.Errorf("batch at offset %d: crc %08x, computed %08x: %w", s.head.BaseOffset, s.head.CRC, s.crc, ErrCorrupt)
	}
	return nil
}
