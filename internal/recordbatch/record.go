package recordbatch

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// minRecordSize is the smallest encoded record: a length varint and six one-byte fields.
const minRecordSize = 7

// Record is one record of a batch. Key and Value are nil when null; they and the
// headers share memory with the batch.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte
	Value          []byte
	// HeaderCount is the number of headers; Headers decodes them.
	HeaderCount int
	headers     []byte
}

// Header is one record header. Value is nil when null.
type Header struct {
	Key   []byte
	Value []byte
}

// Headers decodes the record's headers (nil when there are none). The record's
// framing was checked by the iterator, so this cannot fail on a record it returned.
func (r *Record) Headers() []Header {
	if r.HeaderCount == 0 {
		return nil
	}
	hs := make([]Header, 0, r.HeaderCount)
	var rd kbin.Reader
	rd.Reset(r.headers)
	for range r.HeaderCount {
		var h Header
		h.Key = rd.Raw(int(rd.Varint()))
		if n := rd.Varint(); n >= 0 {
			h.Value = rd.Raw(int(n))
		}
		hs = append(hs, h)
	}
	return hs
}

// RecordIter iterates the records of one batch:
//
//	it := batch.Iter()
//	for it.Next() {
//		rec := it.Record()
//	}
//	if err := it.Err(); err != nil { ... }
//
// Iteration stops at the first malformed record; Err then wraps ErrCorrupt (a batch
// whose CRC matched cannot be cut short, so record errors are never ErrTruncated).
type RecordIter struct {
	data  []byte // the records section
	pos   int    // start of the next record in data
	base  int64
	left  int32
	index int32
	rec   Record
	err   error
	slow  bool // tests: the careful path only
}

// Iter returns an iterator over the batch's records. Uncompressed batches are read
// in place; gzip batches are decompressed into a new buffer first; other codecs give
// an iterator whose Err wraps ErrUnsupportedCodec.
func (b *Batch) Iter() RecordIter {
	it := RecordIter{base: b.BaseOffset, left: b.NumRecords}
	data := b.Records
	switch b.Codec() {
	case CodecNone:
	case CodecGzip:
		zr, err := gzip.NewReader(bytes.NewReader(b.Records))
		if err == nil {
			data, err = io.ReadAll(zr)
		}
		if err != nil {
			it.err = fmt.Errorf("batch at offset %d: gzip: %v: %w", b.BaseOffset, err, ErrCorrupt)
			return it
		}
	default:
		it.err = fmt.Errorf("batch at offset %d: codec %s: %w", b.BaseOffset, b.Codec(), ErrUnsupportedCodec)
		return it
	}
	it.data = data
	return it
}

// Next decodes the next record; it returns false after the last one or on error.
func (it *RecordIter) Next() bool {
	if it.err != nil {
		return false
	}
	if it.left == 0 {
		if n := len(it.data) - it.pos; n != 0 {
			it.fail(fmt.Errorf("%d bytes after the last record", n))
		}
		return false
	}
	it.left--
	if !it.slow && it.nextFast() {
		return true
	}
	var r kbin.Reader
	r.Reset(it.data[it.pos:])
	defer func() { it.pos += r.Offset() }()
	length := r.Varint()
	if r.Err() != nil || length < minRecordSize-1 || length > int64(r.Len()) {
		it.fail(fmt.Errorf("record length %d with %d bytes left", length, r.Len()))
		return false
	}
	raw := r.Raw(int(length))
	var body kbin.Reader
	body.Reset(raw)
	rec := Record{}
	rec.Attributes = body.Int8()
	rec.TimestampDelta = body.Varint()
	od := body.Varint()
	if od < 0 || od > 1<<31-1 {
		it.fail(fmt.Errorf("offset delta %d", od))
		return false
	}
	rec.OffsetDelta = int32(od)
	rec.Key = it.bytes(&body, "key")
	rec.Value = it.bytes(&body, "value")
	nh := body.Varint()
	if body.Err() == nil && (nh < 0 || nh > int64(body.Len()/2)) {
		it.fail(fmt.Errorf("%d headers", nh))
		return false
	}
	start := body.Offset()
	for i := int64(0); i < nh && body.Err() == nil; i++ {
		kl := body.Varint()
		if kl < 0 {
			it.fail(fmt.Errorf("header key length %d", kl))
			return false
		}
		body.Raw(int(min(kl, 1<<31)))
		if vl := body.Varint(); vl >= 0 {
			body.Raw(int(min(vl, 1<<31)))
		} else if vl < -1 {
			it.fail(fmt.Errorf("header value length %d", vl))
			return false
		}
	}
	if it.err != nil {
		return false
	}
	if err := body.Err(); err != nil {
		it.fail(err)
		return false
	}
	if body.Len() != 0 {
		it.fail(fmt.Errorf("%d bytes after the headers", body.Len()))
		return false
	}
	rec.HeaderCount = int(nh)
	if nh > 0 {
		rec.headers = raw[start:]
	}
	it.rec = rec
	it.index++
	return true
}

func (it *RecordIter) bytes(body *kbin.Reader, what string) []byte {
	n := body.Varint()
	if body.Err() != nil || it.err != nil {
		return nil
	}
	if n < -1 || n > int64(body.Len()) {
		it.fail(fmt.Errorf("%s length %d with %d bytes left", what, n, body.Len()))
		return nil
	}
	if n == -1 {
		return nil
	}
	return body.Raw(int(n))
}

func (it *RecordIter) fail(err error) {
	if it.err == nil {
		it.err = fmt.Errorf("batch at offset %d, record %d: %w: %w", it.base, it.index, err, ErrCorrupt)
	}
}

// nextFast decodes the next record when it is in the form Kafka writes for metadata
// (no headers, varints of at most nine bytes, every length in range) and reports
// whether it did; Next takes the careful path, which explains what is wrong, for
// anything else. The record is the one the careful path would decode
// (TestNextFastMatchesSlow, FuzzRecordIter).
func (it *RecordIter) nextFast() bool {
	b := it.data[it.pos:]
	length, n := varint(b)
	if n == 0 || length < minRecordSize-1 || length > int64(len(b)-n) {
		return false
	}
	raw := b[n : n+int(length)]
	attrs := int8(raw[0])
	p := 1
	// The timestamp delta and a null key are one byte in nearly every record of a
	// snapshot (a delta of 0, a length of -1): read here, without the loop.
	var ts int64
	if c := raw[p]; c < 0x80 { // raw holds at least minRecordSize-1 bytes
		ts = int64(c>>1) ^ -int64(c&1)
		p++
	} else {
		var k int
		if ts, k = varint(raw[p:]); k == 0 {
			return false
		}
		p += k
	}
	od, k := varint(raw[p:])
	if k == 0 || od < 0 || od > 1<<31-1 {
		return false
	}
	p += k
	var key []byte
	if p < len(raw) && raw[p] == 1 { // zigzag -1: a null key
		p++
	} else {
		if key, k = lengthPrefixed(raw[p:]); k == 0 {
			return false
		}
		p += k
	}
	value, k := lengthPrefixed(raw[p:])
	if k == 0 {
		return false
	}
	p += k
	// No headers, and nothing after them.
	if p != len(raw)-1 || raw[p] != 0 {
		return false
	}
	// Field by field: a Record built aside and copied in is moved in 16-byte loads
	// over the smaller stores that built it, which stall (bench/burst.sh).
	r := &it.rec
	r.Attributes, r.TimestampDelta, r.OffsetDelta, r.Key, r.Value = attrs, ts, int32(od), key, value
	r.HeaderCount, r.headers = 0, nil
	it.index++
	it.pos += n + int(length)
	return true
}

// varint decodes a zigzag varint of at most nine bytes as binary.Varint does; n is 0
// for anything else (an empty or unterminated input, or ten bytes).
func varint(b []byte) (v int64, n int) {
	var u uint64
	for i := 0; i < len(b) && i < 9; i++ {
		c := b[i]
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i + 1
		}
	}
	return 0, 0
}

// lengthPrefixed reads a varint length and that many bytes (nil for -1), as the
// careful path reads keys and values; n is 0 when it cannot.
func lengthPrefixed(b []byte) (s []byte, n int) {
	l, k := varint(b)
	switch {
	case k == 0 || l < -1 || l > int64(len(b)-k):
		return nil, 0
	case l == -1:
		return nil, k
	}
	end := k + int(l)
	return b[k:end:end], end
}

// Record returns the record Next decoded. It is valid until the next call to Next.
func (it *RecordIter) Record() Record { return it.rec }

// Value is Record().Value without copying the whole Record, which the CPU moves in
// loads it cannot forward from the stores of Next, a stall per record
// (bench/metadata.sh, bench/burst.sh).
func (it *RecordIter) Value() []byte { return it.rec.Value }

// Offset is the absolute offset of the record Next decoded.
func (it *RecordIter) Offset() int64 { return it.base + int64(it.rec.OffsetDelta) }

// Err returns the error that stopped the iteration, or nil.
func (it *RecordIter) Err() error { return it.err }
