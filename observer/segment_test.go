package observer

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// TestSegmentReusedBufferSize: a segment read into a buffer it reuses (a rebuild)
// reads every batch, and batches larger than a chunk (readChunk) keep a buffer sized
// by them, not by a chunk read on past one (a rolling restart's large batches made
// buffers of almost twice their size).
func TestSegmentReusedBufferSize(t *testing.T) {
	const batches, records, value = 6, 100, 3000 // about 300 KB a batch: more than readChunk
	dir := t.TempDir()
	var file []byte
	largest := 0
	for i := range batches {
		recs := make([]recordbatch.Record, records)
		for j := range recs {
			recs[j] = recordbatch.Record{OffsetDelta: int32(j), Value: bytes.Repeat([]byte{byte(i)}, value)}
		}
		n := len(file)
		file = recordbatch.AppendBatch(file, recordbatch.NewBatchHeader(int64(i*records), 1, 0, false), recs)
		largest = max(largest, len(file)-n)
	}
	if largest <= readChunk {
		t.Fatalf("batches of %d bytes: the test needs them larger than readChunk (%d)", largest, readChunk)
	}
	if err := os.WriteFile(segmentPath(dir, 0), file, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := openSegment(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.recycle = true
	for i := range batches {
		b, _, err := s.read()
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if b.BaseOffset != int64(i*records) || b.NumRecords != records {
			t.Fatalf("batch %d: base offset %d, %d records", i, b.BaseOffset, b.NumRecords)
		}
	}
	if _, _, err := s.read(); !errors.Is(err, errWait) {
		t.Fatalf("after the last batch: %v, want errWait", err)
	}
	if c := cap(s.store); c > largest+largest/4 {
		t.Errorf("buffer of %d bytes for batches of %d", c, largest)
	}
}
