package recordbatch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

// iterate walks a records section of n records, through the fast path or the
// careful path only, and describes every record, the offsets and the error.
func iterate(data []byte, n int32, slow bool) string {
	it := RecordIter{data: data, left: n, base: 100, slow: slow}
	var b bytes.Buffer
	for it.Next() {
		r := it.Record()
		fmt.Fprintf(&b, "%d attrs=%d ts=%d od=%d key=%q/%v/%d value=%q/%v/%d headers=%d %v pos=%d\n",
			it.Offset(), r.Attributes, r.TimestampDelta, r.OffsetDelta, r.Key, r.Key == nil, cap(r.Key),
			r.Value, r.Value == nil, cap(r.Value), r.HeaderCount, r.Headers(), it.pos)
	}
	fmt.Fprintf(&b, "err=%v", it.Err())
	return b.String()
}

// rawRecord encodes a record body field by field, so tests can write forms the
// encoder never does (non-canonical varints, lengths out of range).
func rawRecord(fields ...[]byte) []byte {
	body := bytes.Join(fields, nil)
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

func vi(v int64) []byte { return binary.AppendVarint(nil, v) }

// TestNextFastMatchesSlow: records the fast path takes, and ones it leaves to the
// careful path, give the same records, offsets and errors either way.
func TestNextFastMatchesSlow(t *testing.T) {
	value := bytes.Repeat([]byte{7}, 200)
	cases := map[string][][]byte{
		"plain": {AppendRecord(nil, &Record{OffsetDelta: 0, Value: []byte{1, 3, 2}}, nil),
			AppendRecord(nil, &Record{OffsetDelta: 1, TimestampDelta: 1 << 40, Key: []byte("k"), Value: value}, nil)},
		"null and empty": {AppendRecord(nil, &Record{Key: []byte{}, Value: nil}, nil)},
		"headers":        {AppendRecord(nil, &Record{Value: []byte{1}}, []Header{{Key: []byte("h"), Value: nil}})},
		"big deltas": {AppendRecord(nil, &Record{OffsetDelta: math.MaxInt32, TimestampDelta: math.MinInt64, Value: []byte{1}}, nil),
			AppendRecord(nil, &Record{OffsetDelta: 1 << 30, TimestampDelta: math.MaxInt64, Value: []byte{1}}, nil)},
		"non-canonical varint":  {{0x8e, 0x00, 0, 0, 0, 0x00, 0x02, 1, 2, 0}},
		"negative offset delta": {rawRecord([]byte{0}, vi(0), vi(-1), vi(-1), vi(1), []byte{5}, vi(0))},
		"offset delta too big":  {rawRecord([]byte{0}, vi(0), vi(1<<31), vi(-1), vi(1), []byte{5}, vi(0))},
		"key too long":          {rawRecord([]byte{0}, vi(0), vi(0), vi(9), vi(1), []byte{5}, vi(0))},
		"key length -2":         {rawRecord([]byte{0}, vi(0), vi(0), vi(-2), vi(1), []byte{5}, vi(0))},
		"value too long":        {rawRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(3), []byte{5}, vi(0))},
		"bytes after headers":   {rawRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(1), []byte{5}, vi(0), []byte{9})},
		"no header count":       {rawRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(1), []byte{5})},
		"negative headers":      {rawRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(1), []byte{5}, vi(-1))},
		"length too short":      {{vi(5)[0], 0, 0, 0, 0, 0}},
		"length beyond input":   {{vi(50)[0], 0, 0, 0, 0, 0, 0, 0}},
		"ten-byte varint":       {rawRecord([]byte{0}, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, vi(0), vi(-1), vi(1), []byte{5}, vi(0))},
		"overlong varint":       {rawRecord([]byte{0}, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, vi(0), vi(-1), vi(1), []byte{5}, vi(0))},
		"unterminated":          {{0x80}},
		"empty":                 {{}},
	}
	for name, recs := range cases {
		data := bytes.Join(recs, nil)
		for _, n := range []int32{int32(len(recs)), int32(len(recs)) + 1, int32(len(recs)) - 1} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				fast, slow := iterate(data, n, false), iterate(data, n, true)
				if fast != slow {
					t.Fatalf("fast:\n%s\nslow:\n%s", fast, slow)
				}
			})
		}
	}
}

// FuzzRecordIter: the fast path and the careful path agree on any records section.
func FuzzRecordIter(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		Scan(s, func(b Batch) error {
			if len(b.Records) < 1<<12 && b.Codec() == CodecNone {
				f.Add(byte(b.NumRecords), b.Records)
			}
			return nil
		})
	}
	f.Add(byte(2), bytes.Join([][]byte{AppendRecord(nil, &Record{Value: []byte{1}}, nil), {0x80}}, nil))
	f.Fuzz(func(t *testing.T, n byte, data []byte) {
		if fast, slow := iterate(data, int32(n), false), iterate(data, int32(n), true); fast != slow {
			t.Fatalf("fast:\n%s\nslow:\n%s", fast, slow)
		}
	})
}
