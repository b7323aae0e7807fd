package observer

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// TestRawRecordSize: a framed record is 16 bytes, not the 32 of an int64 and a slice,
// so the records framed ahead of a large batch take half the memory.
func TestRawRecordSize(t *testing.T) {
	if s := unsafe.Sizeof(rawRecord{}); s > 16 {
		t.Fatalf("rawRecord is %d bytes, want <= 16", s)
	}
}

// TestFrame: frame gives each record's offset and value as the batch's iterator does,
// a null value as nil and an empty one as empty, for offset deltas up to int32's.
func TestFrame(t *testing.T) {
	recs := []recordbatch.Record{
		{OffsetDelta: 0, Value: []byte("first")},
		{OffsetDelta: 1, Value: nil},
		{OffsetDelta: 2, Value: []byte{}},
		{OffsetDelta: 1 << 30, Value: bytes.Repeat([]byte{7}, 300)},
	}
	raw := recordbatch.AppendBatch(nil, recordbatch.NewBatchHeader(1<<40, 3, 0, false), recs)
	b, err := recordbatch.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := frame(&b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d records framed, want %d", len(got), len(recs))
	}
	for i, r := range got {
		want := recs[i]
		if off := r.offset(&b); off != 1<<40+int64(want.OffsetDelta) {
			t.Errorf("record %d: offset %d, want %d", i, off, 1<<40+int64(want.OffsetDelta))
		}
		if v := r.value(); !bytes.Equal(v, want.Value) || (v == nil) != (want.Value == nil) {
			t.Errorf("record %d: value %q (nil %v), want %q (nil %v)", i, v, v == nil, want.Value, want.Value == nil)
		}
	}
}
