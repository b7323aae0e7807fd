package observer

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// BenchmarkLoadSnapshot loads a directory holding one snapshot of 10,000 topics of 10
// partitions (RF 3 over 12 brokers in 4 racks), as the observer's initial load does:
// read and check the file, decode every record, build the image.
func BenchmarkLoadSnapshot(b *testing.B) {
	recs := benchSnapshotRecords()
	dir := filepath.Join(b.TempDir(), "__cluster_metadata-0")
	l := observertest.New(b, dir)
	l.WriteSnapshot(1000, 1, observertest.SnapshotBytes(1, 0, recs, 1024, false))
	b.ReportAllocs()
	b.ResetTimer()
	var heap uint64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ld, err := Load(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		if ld.Image.NumPartitions() != topics*parts {
			b.Fatalf("%d partitions", ld.Image.NumPartitions())
		}
		runtime.KeepAlive(ld)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(topics*parts), "ns/partition")
	b.ReportMetric(float64(heap)/(topics*parts), "heap-B/partition")
}

// The snapshot benchmarks' cluster: topics of parts partitions.
const topics, parts = 10_000, 10

// benchSnapshotRecords are the records of the snapshot benchmarks: 10,000 topics of 10
// partitions, RF 3 over 12 brokers in 4 racks.
func benchSnapshotRecords() []metadata.Record {
	var recs []metadata.Record
	for i := range int32(12) {
		recs = append(recs, observertest.Broker(i, fmt.Sprintf("rack-%d", i%4)))
	}
	for t := range topics {
		id := observertest.ID(0)
		id[0], id[1], id[2] = byte(t>>16), byte(t>>8), byte(t)
		recs = append(recs, observertest.Topic(fmt.Sprintf("topic-%05d", t), id))
		for p := range int32(parts) {
			recs = append(recs, observertest.Partition(id, p, p%12, (p+1)%12, (p+2)%12))
		}
	}
	return recs
}

// benchLogDir writes a snapshot of 1,000 topics of 10 partitions (RF 3) and a segment
// of 2,000 batches of 50 PartitionChangeRecords after it; it returns the dir and the
// segment's path.
func benchLogDir(b *testing.B) (string, string) {
	dir := filepath.Join(b.TempDir(), "__cluster_metadata-0")
	l := observertest.New(b, dir)
	var recs []metadata.Record
	for i := range int32(3) {
		recs = append(recs, observertest.Broker(i, ""))
	}
	var ids []metadata.UUID
	for t := range 1000 {
		id := observertest.ID(0)
		id[0], id[1] = byte(t>>8), byte(t)
		ids = append(ids, id)
		recs = append(recs, observertest.Topic(fmt.Sprintf("topic-%04d", t), id))
		for p := range int32(10) {
			recs = append(recs, observertest.Partition(id, p, 0, 1, 2))
		}
	}
	l.WriteSnapshot(0, 1, observertest.SnapshotBytes(1, 0, recs, 1000, false))
	l.Next, l.Epoch = 0, 1
	for i := range 2000 {
		var batch []metadata.Record
		for j := range 50 {
			ch := metadata.NewPartitionChangeRecord(ids[(i*50+j)%1000], int32(j%10))
			ch.Leader = int32((i + j) % 3)
			batch = append(batch, ch)
		}
		l.Append(batch...)
	}
	return dir, l.SegmentPath(0)
}

// BenchmarkRebuildLog loads a snapshot and the 2,000 units of the log after it (Load):
// the units the disk source yields as it reads them, replayed into the rebuild's
// delta. It guards the per-item path of a rebuild (no allocation per item).
func BenchmarkRebuildLog(b *testing.B) {
	dir, _ := benchLogDir(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(dir, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCatchUp loads a snapshot, then reads the 2,000 batches of a segment that
// appears after it at once: a live catch-up (prefetched, predecoded, held and
// published every catchUpFlush bytes). Only the second read is timed.
func BenchmarkCatchUp(b *testing.B) {
	src, seg := benchLogDir(b)
	data, err := os.ReadFile(seg)
	if err != nil {
		b.Fatal(err)
	}
	snap, _ := filepath.Glob(filepath.Join(src, "*.checkpoint"))
	sdata, err := os.ReadFile(snap[0])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "__cluster_metadata-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(snap[0])), sdata, 0o644); err != nil {
			b.Fatal(err)
		}
		o, err := New(Config{Dir: dir, NoNotify: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Handler: func(Update) {}})
		if err != nil {
			b.Fatal(err)
		}
		if err := o.poll(); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(seg)), data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := o.poll(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		o.f.close()
		b.StartTimer()
	}
}
