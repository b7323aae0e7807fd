package observer

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// BenchmarkSnapshotDiskVsNetwork loads one snapshot of 10,000 topics of 10 partitions
// from a directory (Load) and from a fake controller on loopback (LoadQuorum:
// FetchSnapshot in 4 MiB chunks, streamed through the batch decoder), in one run, so
// that the two can be compared as a ratio.
func BenchmarkSnapshotDiskVsNetwork(b *testing.B) {
	const topics, parts = 10_000, 10
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
