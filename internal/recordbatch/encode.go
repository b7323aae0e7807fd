package recordbatch

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// BatchHeader holds the header fields a writer chooses. AppendBatch computes Length,
// CRC, LastOffsetDelta and NumRecords. Use NewBatchHeader for KRaft's values.
type BatchHeader struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Attributes           int16
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
}

// NewBatchHeader returns the header KRaft writes: no producer, CreateTime, no
// compression; control sets the control bit.
func NewBatchHeader(baseOffset int64, epoch int32, timestamp int64, control bool) BatchHeader {
	h := BatchHeader{
		BaseOffset:           baseOffset,
		PartitionLeaderEpoch: epoch,
		BaseTimestamp:        timestamp,
		MaxTimestamp:         timestamp,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
	}
	if control {
		h.Attributes = AttrControl
	}
	return h
}

// AppendBatch appends an uncompressed batch holding recs to b. Each record's
// OffsetDelta is used as given; LastOffsetDelta is the largest of them.
// Headers' Key and Value may be nil (a nil Value is written as null).
func AppendBatch(b []byte, h BatchHeader, recs []Record) []byte {
	start := len(b)
	b = kbin.AppendInt64(b, h.BaseOffset)
	b = kbin.AppendInt32(b, 0) // length, patched below
	b = kbin.AppendInt32(b, h.PartitionLeaderEpoch)
	b = append(b, Magic)
	b = kbin.AppendUint32(b, 0) // crc, patched below
	b = kbin.AppendInt16(b, h.Attributes&^AttrCodecMask)
	var last int32
	for _, r := range recs {
		last = max(last, r.OffsetDelta)
	}
	b = kbin.AppendInt32(b, last)
	b = kbin.AppendInt64(b, h.BaseTimestamp)
	b = kbin.AppendInt64(b, h.MaxTimestamp)
	b = kbin.AppendInt64(b, h.ProducerID)
	b = kbin.AppendInt16(b, h.ProducerEpoch)
	b = kbin.AppendInt32(b, h.BaseSequence)
	b = kbin.AppendInt32(b, int32(len(recs)))
	for i := range recs {
		b = AppendRecord(b, &recs[i], nil)
	}
	binary.BigEndian.PutUint32(b[start+offsetLength:], uint32(len(b)-start-LogOverhead))
	binary.BigEndian.PutUint32(b[start+offsetCRC:], crc32.Checksum(b[start+offsetAttributes:], castagnoli))
	return b
}

// AppendRecord appends one record (length-prefixed) with the given headers.
func AppendRecord(b []byte, r *Record, headers []Header) []byte {
	var body [64]byte
	x := body[:0]
	x = append(x, byte(r.Attributes))
	x = kbin.AppendVarint(x, r.TimestampDelta)
	x = kbin.AppendVarint(x, int64(r.OffsetDelta))
	x = appendVarBytes(x, r.Key)
	// Write the value straight into b when possible to avoid copying it twice.
	n := len(x) + varintLen(valueLen(r.Value)) + len(r.Value) + varintLen(int64(len(headers)))
	for _, h := range headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + varintLen(valueLen(h.Value)) + len(h.Value)
	}
	b = kbin.AppendVarint(b, int64(n))
	b = append(b, x...)
	b = appendVarBytes(b, r.Value)
	b = kbin.AppendVarint(b, int64(len(headers)))
	for _, h := range headers {
		b = kbin.AppendVarint(b, int64(len(h.Key)))
		b = append(b, h.Key...)
		b = appendVarBytes(b, h.Value)
	}
	return b
}

func valueLen(v []byte) int64 {
	if v == nil {
		return -1
	}
	return int64(len(v))
}

func appendVarBytes(b, v []byte) []byte {
	b = kbin.AppendVarint(b, valueLen(v))
	return append(b, v...)
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// AppendControlBatch appends a control batch holding recs, one control record each,
// at consecutive offset deltas.
func AppendControlBatch(b []byte, h BatchHeader, recs ...ControlRecord) []byte {
	h.Attributes |= AttrControl
	rs := make([]Record, len(recs))
	for i, c := range recs {
		rs[i] = Record{
			OffsetDelta: int32(i),
			Key:         AppendControlKey(nil, c.ControlType()),
			Value:       AppendControlValue(nil, c),
		}
	}
	return AppendBatch(b, h, rs)
}
