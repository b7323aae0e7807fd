package observer

import (
	"fmt"
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
