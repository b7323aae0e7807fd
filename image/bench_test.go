package image

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// synthSnapshot encodes a snapshot-like run of batches (what Kafka writes in a
// .checkpoint): brokers in racks, then topics each followed by their partitions,
// RF 3, with a directory per replica as Kafka writes from MV 3.7-IV2.
func synthSnapshot(topics, partitions, brokers int) []byte {
	var recs []recordbatch.Record
	var out []byte
	off := int64(0)
	flush := func() {
		if len(recs) > 0 {
			out = recordbatch.AppendBatch(out, recordbatch.NewBatchHeader(off, 1, 1700000000000, false), recs)
			off += int64(len(recs))
			recs = recs[:0]
		}
	}
	add := func(r metadata.Record, v int16) {
		val, err := metadata.Append(nil, r, v)
		if err != nil {
			panic(err)
		}
		recs = append(recs, recordbatch.Record{OffsetDelta: int32(len(recs)), Value: val})
		if len(recs) == 1024 {
			flush()
		}
	}
	dir := func(b int32) UUID { var u UUID; u[0] = 0xd; binary.BigEndian.PutUint32(u[12:], uint32(b)); return u }
	add(&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33}, 0)
	for b := range int32(brokers) {
		rack := fmt.Sprintf("rack-%d", b%4)
		add(&metadata.RegisterBrokerRecord{BrokerID: b, BrokerEpoch: int64(b) + 10, Rack: &rack, LogDirs: []UUID{dir(b)}}, 3)
	}
	for t := range topics {
		var id UUID
		binary.BigEndian.PutUint64(id[:], uint64(t)+1)
		id[15] = 0x7
		add(&metadata.TopicRecord{Name: fmt.Sprintf("topic-%06d", t), TopicID: id}, 0)
		for p := range partitions {
			r := []int32{int32((t + p) % brokers), int32((t + p + 1) % brokers), int32((t + p + 2) % brokers)}
			add(&metadata.PartitionRecord{PartitionID: int32(p), TopicID: id, Replicas: r, ISR: r, Leader: r[0],
				LeaderEpoch: 1, PartitionEpoch: 1, Directories: []UUID{dir(r[0]), dir(r[1]), dir(r[2])}}, 2)
		}
	}
	flush()
	return out
}

// load decodes and replays a whole snapshot into a new image, as the observer does.
func load(tb testing.TB, snap []byte) *Image {
	d := NewDelta(Empty)
	var dec metadata.Decoder
	_, err := recordbatch.Scan(snap, func(b recordbatch.Batch) error {
		it := b.Iter()
		for it.Next() {
			rec, _, err := dec.Decode(it.Record().Value)
			if err != nil {
				return err
			}
			if err := d.Replay(rec); err != nil {
				return err
			}
		}
		return it.Err()
	})
	if err != nil {
		tb.Fatal(err)
	}
	im, _ := d.Apply(Provenance{Offset: 1})
	return im
}

var (
	bigOnce sync.Once
	bigSnap []byte
	bigImg  *Image
)

// big is 10,000 topics x 100 partitions = 1M partitions over 12 brokers in 4 racks.
func big(tb testing.TB) ([]byte, *Image) {
	bigOnce.Do(func() {
		bigSnap = synthSnapshot(10_000, 100, 12)
		bigImg = load(tb, bigSnap)
	})
	return bigSnap, bigImg
}

func BenchmarkLoadSnapshot(b *testing.B) {
	for _, size := range []struct {
		name             string
		topics, parts    int
		sharedSnapshotOK bool
	}{{"partitions=1k", 10, 100, false}, {"partitions=1M", 10_000, 100, true}} {
		b.Run(size.name, func(b *testing.B) {
			var snap []byte
			if size.sharedSnapshotOK {
				snap, _ = big(b)
			} else {
				snap = synthSnapshot(size.topics, size.parts, 12)
			}
			b.SetBytes(int64(len(snap)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				load(b, snap)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size.topics*size.parts), "ns/partition")
		})
	}
}

// BenchmarkApplyOneRecord applies a one-record delta (a leader change) to a 1k- and
// a 1M-partition image; the cost must not grow with the image.
func BenchmarkApplyOneRecord(b *testing.B) {
	_, im1M := big(b)
	im1k := load(b, synthSnapshot(10, 100, 12))
	for _, c := range []struct {
		name string
		im   *Image
	}{{"partitions=1k", im1k}, {"partitions=1M", im1M}} {
		b.Run(c.name, func(b *testing.B) {
			topics := c.im.SortedTopics()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t := topics[i%len(topics)]
				d := NewDelta(c.im)
				rec := metadata.NewPartitionChangeRecord(t.ID(), int32(i%100))
				rec.Leader = int32(i % 12)
				if err := d.Replay(rec); err != nil {
					b.Fatal(err)
				}
				_, ch := d.Apply(Provenance{Offset: int64(i)})
				if len(ch.Changed) != 1 {
					b.Fatal("no change reported")
				}
			}
		})
	}
}

// TestHeapPerPartition measures the heap a 1M-partition image holds, by partition.
func TestHeapPerPartition(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds a 1M-partition image; run without -short and -race to measure")
	}
	snap := synthSnapshot(10_000, 100, 12)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	im := load(t, snap)
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(im.NumPartitions())
	t.Logf("%d partitions, %.0f bytes of heap per partition (RF 3, with directories)", im.NumPartitions(), per)
	if im.NumPartitions() != 1_000_000 {
		t.Fatalf("%d partitions", im.NumPartitions())
	}
	if per > 200 {
		t.Fatalf("%.0f bytes per partition, budget 200", per)
	}
	runtime.KeepAlive(im)
	runtime.KeepAlive(snap)
}

// BenchmarkApplyLeaderChanges is a rolling restart's burst as the observer follows it
// live: units of 100 leader changes (a batch of metagen's segment, the partitions of
// one topic), each replayed and applied to the 1M-partition image. Reported per
// change.
func BenchmarkApplyLeaderChanges(b *testing.B) {
	_, im := big(b)
	topics := im.SortedTopics()
	d := NewDelta(im)
	rec := metadata.NewPartitionChangeRecord(UUID{}, 0) // as a metadata.BatchDecoder reuses it
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t := topics[i%len(topics)]
		for p := range int32(100) {
			rec.TopicID, rec.PartitionID, rec.Leader = t.ID(), p, int32((i+int(p))%12)
			d.At(int64(i*100)+int64(p), 1)
			if err := d.Replay(rec); err != nil {
				b.Fatal(err)
			}
		}
		if _, ch := d.Apply(Provenance{Offset: int64(i)}); len(ch.Changed) != 1 {
			b.Fatal("no change reported")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/change")
}

// BenchmarkGCWithImage is a whole collection (runtime.GC) with the 1M-partition image
// alive: what each GC cycle of a running sidecar spends marking the image. Reported
// per cycle in CPU time of the process (every mark worker) besides the wall time.
func BenchmarkGCWithImage(b *testing.B) {
	_, im := big(b)
	runtime.GC()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for range b.N {
		runtime.GC()
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	runtime.KeepAlive(im)
}

// processCPU is the user and system time of the process so far.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
