package recordbatch

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Layout of the v2 batch header (DefaultRecordBatch in Kafka).
const (
	// HeaderSize is the size of a v2 batch header; the records follow it.
	HeaderSize = 61
	// LogOverhead is the size of BaseOffset and Length, which Length does not count.
	LogOverhead = 12
	// headerSizeUpToMagic is how many bytes hold BaseOffset, Length, epoch and magic.
	headerSizeUpToMagic = 17

	offsetLength     = 8
	offsetEpoch      = 12
	offsetMagic      = 16
	offsetCRC        = 17
	offsetAttributes = 21

	// Magic is the only batch format this package reads.
	Magic = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Attribute bits (the low byte of Attributes).
const (
	AttrCodecMask     = 0x07
	AttrLogAppendTime = 0x08
	AttrTransactional = 0x10
	AttrControl       = 0x20
	AttrDeleteHorizon = 0x40
)

// Codec is a batch's compression codec (attribute bits 0-2).
type Codec int8

// Codecs Kafka defines; 5-7 are invalid.
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

// String returns the codec name Kafka's tools print.
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Batch is one decoded v2 record batch. Records holds the records section exactly as
// stored (compressed when Codec is not none) and shares memory with the input.
type Batch struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
	Records              []byte
}

// Size is the number of bytes the batch takes on disk (Length + 12).
func (b *Batch) Size() int { return HeaderSize + len(b.Records) }

// Length is the header's Length field: the bytes after it.
func (b *Batch) Length() int32 { return int32(b.Size() - LogOverhead) }

// LastOffset is the offset of the last record (BaseOffset + LastOffsetDelta).
func (b *Batch) LastOffset() int64 { return b.BaseOffset + int64(b.LastOffsetDelta) }

// NextOffset is the offset that follows the batch.
func (b *Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// Codec is the compression codec.
func (b *Batch) Codec() Codec { return Codec(b.Attributes & AttrCodecMask) }

// IsControl reports whether the batch holds control records.
func (b *Batch) IsControl() bool { return b.Attributes&AttrControl != 0 }

// IsTransactional reports the producer-transaction bit (never set by KRaft).
func (b *Batch) IsTransactional() bool { return b.Attributes&AttrTransactional != 0 }

// LogAppendTime reports whether timestamps are log-append times.
func (b *Batch) LogAppendTime() bool { return b.Attributes&AttrLogAppendTime != 0 }

// HasDeleteHorizon reports whether BaseTimestamp holds a compaction delete horizon.
func (b *Batch) HasDeleteHorizon() bool { return b.Attributes&AttrDeleteHorizon != 0 }

// Decode decodes and checks the batch that starts at b[0]; bytes after it are ignored.
// The batch's Size says how many bytes it took. Errors wrap ErrTruncated when b ends
// before the batch does, and ErrCorrupt when the bytes cannot be a valid batch. A
// compressed batch is returned without error whatever its codec, except an invalid
// codec (5-7), which is corrupt; RecordIter reports codecs it cannot read.
func Decode(b []byte) (Batch, error) {
	var bt Batch
	if len(b) >= headerSizeUpToMagic {
		if magic := int8(b[offsetMagic]); magic != Magic {
			return bt, fmt.Errorf("magic %d, want %d: %w", magic, Magic, ErrCorrupt)
		}
	}
	if len(b) < LogOverhead {
		return bt, fmt.Errorf("%d bytes of a batch header: %w", len(b), ErrTruncated)
	}
	length := int32(binary.BigEndian.Uint32(b[offsetLength:]))
	if length < HeaderSize-LogOverhead {
		return bt, fmt.Errorf("batch length %d is below the %d-byte header: %w", length, HeaderSize-LogOverhead, ErrCorrupt)
	}
	size := int64(length) + LogOverhead
	if size > int64(len(b)) {
		return bt, fmt.Errorf("batch of %d bytes, %d present: %w", size, len(b), ErrTruncated)
	}
	raw := b[:size:size]
	bt.BaseOffset = int64(binary.BigEndian.Uint64(raw))
	bt.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(raw[offsetEpoch:]))
	bt.Magic = Magic
	bt.CRC = binary.BigEndian.Uint32(raw[offsetCRC:])
	if got := crc32.Checksum(raw[offsetAttributes:], castagnoli); got != bt.CRC {
		return bt, fmt.Errorf("batch at offset %d: crc %08x, computed %08x: %w", bt.BaseOffset, bt.CRC, got, ErrCorrupt)
	}
	decodeFields(&bt, raw)
	bt.Records = raw[HeaderSize:]
	if c := bt.Codec(); c > CodecZstd {
		return bt, fmt.Errorf("batch at offset %d: invalid codec %d: %w", bt.BaseOffset, c, ErrCorrupt)
	}
	if bt.NumRecords < 0 {
		return bt, fmt.Errorf("batch at offset %d: %d records: %w", bt.BaseOffset, bt.NumRecords, ErrCorrupt)
	}
	if bt.LastOffsetDelta < 0 {
		return bt, fmt.Errorf("batch at offset %d: last offset delta %d: %w", bt.BaseOffset, bt.LastOffsetDelta, ErrCorrupt)
	}
	// Uncompressed, each record takes at least 7 bytes (a length and six fields).
	if bt.Codec() == CodecNone && int64(bt.NumRecords)*minRecordSize > int64(len(bt.Records)) {
		return bt, fmt.Errorf("batch at offset %d: %d records cannot fit in %d bytes: %w",
			bt.BaseOffset, bt.NumRecords, len(bt.Records), ErrCorrupt)
	}
	return bt, nil
}

// decodeFields sets the fields of b held in the header h (HeaderSize bytes) but CRC.
func decodeFields(b *Batch, h []byte) {
	b.BaseOffset = int64(binary.BigEndian.Uint64(h))
	b.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(h[offsetEpoch:]))
	b.Magic = Magic
	b.Attributes = int16(binary.BigEndian.Uint16(h[offsetAttributes:]))
	b.LastOffsetDelta = int32(binary.BigEndian.Uint32(h[23:]))
	b.BaseTimestamp = int64(binary.BigEndian.Uint64(h[27:]))
	b.MaxTimestamp = int64(binary.BigEndian.Uint64(h[35:]))
	b.ProducerID = int64(binary.BigEndian.Uint64(h[43:]))
	b.ProducerEpoch = int16(binary.BigEndian.Uint16(h[51:]))
	b.BaseSequence = int32(binary.BigEndian.Uint32(h[53:]))
	b.NumRecords = int32(binary.BigEndian.Uint32(h[57:]))
}

// Scan decodes the batches concatenated in b from its start, calling fn (when not nil)
// for each valid batch in order. It returns the number of bytes taken by the valid
// batches before the first that could not be decoded, and that batch's error (wrapping
// ErrTruncated or ErrCorrupt), or nil when b ends exactly after a batch. An error from
// fn stops the scan and is returned as is; the batch passed to it is not counted.
// Scan checks batch headers and CRCs, not the records inside them.
func Scan(b []byte, fn func(Batch) error) (valid int, err error) {
	for valid < len(b) {
		bt, err := Decode(b[valid:])
		if err != nil {
			return valid, fmt.Errorf("at byte %d: %w", valid, err)
		}
		if fn != nil {
			if err := fn(bt); err != nil {
				return valid, err
			}
		}
		valid += bt.Size()
	}
	return valid, nil
}
