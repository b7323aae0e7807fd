package observer

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// BenchmarkSnapshotDiskVsNetwork loads one snapshot of 10,000 topics of 10 partitions
// from a directory (Load) and from a fake controller on loopback (LoadQuorum:
// FetchSnapshot in 4 MiB chunks, streamed through the batch decoder), in one run, so
// that the two can be compared as a ratio.
func BenchmarkSnapshotDiskVsNetwork(b *testing.B) {
	recs := benchSnapshotRecords()
	data := observertest.SnapshotBytes(1, 0, recs, 1024, false)
	b.Run("disk", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "__cluster_metadata-0")
		observertest.New(b, dir).WriteSnapshot(1000, 1, data)
		b.ReportAllocs()
		for b.Loop() {
			ld, err := Load(dir, nil)
			if err != nil || ld.Image.NumPartitions() != topics*parts {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(topics*parts), "ns/partition")
	})
	b.Run("network", func(b *testing.B) {
		c := observertest.NewController(b, 1)
		c.SetSnapshot(1000, 1, data)
		b.ReportAllocs()
		for b.Loop() {
			ld, err := LoadQuorum(context.Background(), Config{Controllers: []string{c.Addr}})
			if err != nil || ld.Image.NumPartitions() != topics*parts {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(topics*parts), "ns/partition")
	})
}
