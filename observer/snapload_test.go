package observer

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// observed is everything an observer shows of one poll: the error, the updates, the
// metrics and the log lines.
type observed struct {
	err     string
	updates []string
	metrics map[string]int64
	logs    string
}

// observe polls a new Observer of dir with the one-pass snapshot load on or off; when
// the poll worked it calls more (if not nil) and polls again, to see the observer carry
// on. Paths in the logs read DIR.
func observe(t *testing.T, dir string, oneShot bool, more func()) observed {
	t.Helper()
	var logs bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	var out observed
	o, err := New(Config{Dir: dir, Logger: lg, Handler: func(u Update) {
		out.updates = append(out.updates, describeUpdate(u))
	}})
	if err != nil {
		t.Fatal(err)
	}
	o.f.oneShot = oneShot
	err = o.poll()
	if err == nil && more != nil {
		more()
		err = o.poll()
	}
	o.f.close()
	out.err = strings.ReplaceAll(fmt.Sprint(err), dir, "DIR")
	out.metrics = metricValues(o.Metrics())
	out.logs = strings.ReplaceAll(logs.String(), dir, "DIR")
	return out
}

func describeUpdate(u Update) string {
	var b strings.Builder
	fmt.Fprintf(&b, "reset=%v reason=%q provenance=%+v unit=%v\n", u.Reset, u.Reason, u.Provenance, u.Unit != nil)
	b.WriteString(u.Changes.String())
	im := u.Image
	fmt.Fprintf(&b, "image %+v topics=%d partitions=%d features=%v\n", im.Provenance(), im.NumTopics(), im.NumPartitions(), im.Features())
	for _, br := range im.Brokers() {
		fmt.Fprintf(&b, "broker %+v\n", br)
	}
	for _, tp := range im.SortedTopics() {
		fmt.Fprintf(&b, "topic %s %s\n", tp.Name(), tp.ID())
		for p := range tp.Partitions() {
			fmt.Fprintf(&b, "  %d %v %v %v %v %v %v %d %d %d %d %v\n", p.ID(), p.Replicas(), p.ISR(), p.RemovingReplicas(),
				p.AddingReplicas(), p.ELR(), p.LastKnownELR(), p.Leader(), p.LeaderEpoch(), p.PartitionEpoch(),
				p.LeaderRecoveryState(), p.Directories())
		}
	}
	return b.String()
}

func metricValues(m *Metrics) map[string]int64 {
	out := map[string]int64{}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		out[v.Type().Field(i).Name] = v.Field(i).Addr().Interface().(*atomic.Int64).Load()
	}
	return out
}

// rewriteBatch applies f to the batch that starts at pos in data, then fixes its
// length and CRC so that the batch is valid as a batch.
func rewriteBatch(data []byte, pos int, f func(b []byte) []byte) []byte {
	b, err := recordbatch.Decode(data[pos:])
	if err != nil {
		panic(err)
	}
	nb := f(bytes.Clone(data[pos : pos+b.Size()]))
	binary.BigEndian.PutUint32(nb[8:], uint32(len(nb)-recordbatch.LogOverhead))
	binary.BigEndian.PutUint32(nb[17:], crc32.Checksum(nb[21:], crc32.MakeTable(crc32.Castagnoli)))
	return slices.Concat(data[:pos], nb, data[pos+b.Size():])
}

// batchStarts returns the byte position of every batch of data.
func batchStarts(data []byte) []int {
	var starts []int
	pos := 0
	recordbatch.Scan(data, func(b recordbatch.Batch) error {
		starts = append(starts, pos)
		pos += b.Size()
		return nil
	})
	return starts
}

// TestFastSnapshotMatchesCareful loads clean and broken snapshots with the one-pass
// load on and off: the errors, updates, images, metrics and log lines must be the
// same, and the one-pass load must have been used exactly for the clean ones.
func TestFastSnapshotMatchesCareful(t *testing.T) {
	idA, idB := observertest.ID(1), observertest.ID(2)
	var recs []metadata.Record
	recs = append(recs, &metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 27},
		observertest.Broker(1, "r1"), observertest.Broker(2, ""), observertest.Broker(3, "r2"))
	for i, id := range []metadata.UUID{idA, idB} {
		recs = append(recs, observertest.Topic(fmt.Sprint("topic-", i), id))
		for p := range int32(2500) { // several chunks and batches
			pr := observertest.Partition(id, p, 1+p%3, 1+(p+1)%3)
			if p%7 == 0 {
				pr.Directories = []metadata.UUID{{1}, {}}
			}
			if p%11 == 0 {
				pr.EligibleLeaderReplicas, pr.LastKnownELR = []int32{2}, []int32{}
			}
			recs = append(recs, pr)
		}
	}
	recs = append(recs, &metadata.ConfigRecord{ResourceType: 2, ResourceName: "topic-0", Name: "x", Value: new(string)})
	clean := observertest.SnapshotBytes(3, 1_700_000_000_000, recs, 1000, false)
	with := func(extra ...metadata.Record) []byte {
		return observertest.SnapshotBytes(3, 1_700_000_000_000, append(slices.Clone(recs), extra...), 1000, false)
	}
	starts := batchStarts(clean)
	second := starts[2] // a data batch after the first
	gz := rewriteBatch(clean, second, func(b []byte) []byte {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b[recordbatch.HeaderSize:])
		zw.Close()
		b[22] |= byte(recordbatch.CodecGzip)
		return append(b[:recordbatch.HeaderSize], z.Bytes()...)
	})
	framing := rewriteBatch(clean, second, func(b []byte) []byte {
		b[recordbatch.HeaderSize] = 0x01 // the first record's length: -1
		return b
	})
	badCRC := bytes.Clone(clean)
	badCRC[second+100] ^= 0x55
	noHeader := rewriteBatch(clean, 0, func(b []byte) []byte {
		b[22] &^= recordbatch.AttrControl
		return b
	})
	controlInside := slices.Concat(clean[:second],
		recordbatch.AppendControlBatch(nil, recordbatch.NewBatchHeader(2, 3, 1, true), &recordbatch.KRaftVersionRecord{KRaftVersion: 1}),
		clean[second:])

	for _, tc := range []struct {
		name  string
		data  []byte
		fast  bool // the one-pass load takes it
		log   bool // the log goes on after the snapshot
		older bool // an older clean snapshot is there too
	}{
		{"clean", clean, true, false, false},
		{"clean, log after it", clean, true, true, false},
		{"clean, older one too", clean, true, true, true},
		{"header and footer only", observertest.SnapshotBytes(3, 5, nil, 0, false), true, true, false},
		{"transaction inside", with(observertest.Begin(), observertest.Topic("txn", observertest.ID(9)), observertest.End()), true, true, false},
		{"control batch inside", controlInside, true, false, false},
		{"no footer", observertest.SnapshotBytes(3, 5, recs, 1000, true), false, true, true},
		{"no header", noHeader, false, true, true},
		{"bad crc", badCRC, false, true, true},
		{"bad record framing", framing, false, true, true},
		{"truncated", clean[:len(clean)-7], false, true, true},
		{"bytes after the footer", append(bytes.Clone(clean), 0, 0, 0), false, true, true},
		{"empty file", nil, false, true, true},
		{"gzip batch", gz, false, true, false},
		{"records the image does not model", with(&metadata.NoOpRecord{}), true, false, false},
		{"records that share the batch's bytes", with(&metadata.UserScramCredentialRecord{Name: "u", Mechanism: 1,
			Salt: []byte("salt"), StoredKey: bytes.Repeat([]byte{1}, 32), ServerKey: bytes.Repeat([]byte{2}, 32), Iterations: 4096}), true, false, false},
		{"record for an unknown topic", with(observertest.Partition(observertest.ID(77), 0, 1)), false, true, false},
		{"partition change", with(metadata.NewPartitionChangeRecord(idA, 3)), true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(oneShot bool) observed {
				dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
				l := observertest.New(t, dir)
				// The older snapshot ends at offset 4, the newer at 6; the log runs from 4.
				l.Next, l.Epoch = 4, 3
				if tc.older {
					l.WriteSnapshot(4, 3, observertest.SnapshotBytes(3, 1, recs[:10], 0, false))
				}
				path := l.WriteSnapshot(6, 3, tc.data)
				if tc.log {
					l.Append(observertest.Topic("after", observertest.ID(5)), observertest.Partition(observertest.ID(5), 0, 2))
					l.Append(observertest.Partition(idA, 2500, 3))
				}
				id, _ := ParseSnapshotName(filepath.Base(path))
				if fast := loadSnapshot(path, id, false) != nil; fast != tc.fast {
					t.Fatalf("one-pass load taken: %v, want %v", fast, tc.fast)
				}
				return observe(t, dir, oneShot, func() {
					if l.Active() < 0 {
						l.Next = 6
					}
					ch := metadata.NewPartitionChangeRecord(idA, 1)
					ch.Leader = 2
					l.Append(ch, observertest.Topic("later", observertest.ID(6)), observertest.Partition(observertest.ID(6), 0, 1),
						observertest.Partition(observertest.ID(6), 1, 1))
				})
			}
			careful := run(false)
			// Also a window smaller than a batch (the batches are about 80 kB) and than
			// some records, which the window grows for: for the snapshots the one-pass
			// load takes, and those it gives up on only at a batch's end.
			windows := []int{loadWindow}
			if tc.fast || tc.name == "bad crc" || tc.name == "bad record framing" {
				windows = append(windows, 100)
			}
			defer func(w int) { loadWindow = w }(loadWindow)
			for _, w := range windows {
				loadWindow = w
				if oneShot := run(true); !reflect.DeepEqual(careful, oneShot) {
					t.Fatalf("careful:\n%+v\none pass, window %d:\n%+v", careful, w, oneShot)
				}
			}
			if len(careful.updates) == 0 && careful.err == "<nil>" {
				t.Fatal("nothing published")
			}
			t.Logf("error %s, %d updates, %d log bytes", careful.err, len(careful.updates), len(careful.logs))
		})
	}
}

// TestFastSnapshotUnknownRecords: records the careful path skips with a log line send
// the load there.
func TestFastSnapshotUnknownRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	l := observertest.New(t, dir)
	values := [][]byte{{1, 99, 0, 0}, {1, 2, 0, 0xff}}
	var rs []recordbatch.Record
	for i, v := range values {
		rs = append(rs, recordbatch.Record{OffsetDelta: int32(i), Value: v})
	}
	data := observertest.SnapshotBytes(1, 1, nil, 0, true)
	data = recordbatch.AppendBatch(data, recordbatch.NewBatchHeader(2, 1, 1, false), rs)
	data = recordbatch.AppendControlBatch(data, recordbatch.NewBatchHeader(4, 1, 1, true), &recordbatch.SnapshotFooterRecord{})
	path := l.WriteSnapshot(5, 1, data)
	if loadSnapshot(path, SnapshotID{5, 1}, false) != nil {
		t.Fatal("one-pass load took a snapshot with records it cannot decode")
	}
	careful, oneShot := observe(t, dir, false, nil), observe(t, dir, true, nil)
	if !reflect.DeepEqual(careful, oneShot) {
		t.Fatalf("careful:\n%+v\none pass:\n%+v", careful, oneShot)
	}
	if careful.metrics["UnknownRecords"] != 1 || careful.metrics["CorruptRecords"] != 1 || !strings.Contains(careful.logs, "unknown type") {
		t.Fatalf("metrics %v logs %s", careful.metrics, careful.logs)
	}
}

// TestFastSnapshotImage: the one-pass load builds the image the careful path does.
func TestFastSnapshotImage(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		for _, path := range fixtureFiles(t, dir, "*.checkpoint") {
			id, _ := ParseSnapshotName(filepath.Base(path))
			s := loadSnapshot(path, id, false)
			if s == nil {
				t.Fatalf("%s: one-pass load failed", path)
			}
			c, err := readSnapshot(path, id)
			if err != nil {
				t.Fatal(err)
			}
			d := image.NewDelta(image.Empty)
			if err := quietFollower(dir).snapshotRecords(c, func(e Entry) error { return d.Replay(e.Record) }); err != nil {
				t.Fatal(err)
			}
			want, _ := d.Apply(image.Provenance{})
			got, _ := s.delta.Apply(image.Provenance{})
			if diff := image.Diff(want, got); !diff.Empty() || s.header != c.header {
				t.Fatalf("%s: differs:\n%s", path, diff)
			}
		}
	}
}

// TestLoadGC: Config.LoadGC, and only it, makes the one-pass load raise the GC
// percent.
func TestLoadGC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	l := observertest.New(t, dir)
	recs := []metadata.Record{observertest.Broker(1, ""), observertest.Topic("t", observertest.ID(1)),
		observertest.Partition(observertest.ID(1), 0, 1)}
	l.WriteSnapshot(4, 1, observertest.SnapshotBytes(1, 1, recs, 0, false))
	defer func(f func() func()) { relaxGC = f }(relaxGC)
	for _, on := range []bool{false, true} {
		relaxed := 0
		relaxGC = func() func() { relaxed++; return relaxGCPercent() }
		loaded, err := LoadConfig(Config{Dir: dir, LoadGC: on})
		if err != nil || loaded.Image.NumPartitions() != 1 {
			t.Fatalf("LoadGC %v: %v", on, err)
		}
		want := 0
		if on {
			want = 1
		}
		if relaxed != want {
			t.Fatalf("LoadGC %v: GC percent raised %d times, want %d", on, relaxed, want)
		}
	}
}

// TestRelaxGC: a load raises the GC percent to loadGCPercent and the last load to end
// sets back what was set before; a GC that is off, or set higher, stays as it is.
func TestRelaxGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, before := range []int{100, 50, -1, 800} {
		debug.SetGCPercent(before)
		want := loadGCPercent
		if before < 0 || before > loadGCPercent {
			want = before
		}
		outer := relaxGCPercent()
		inner := relaxGCPercent()
		if got := debug.SetGCPercent(want); got != want {
			t.Fatalf("GOGC %d, during two loads: %d, want %d", before, got, want)
		}
		inner()
		if got := debug.SetGCPercent(want); got != want {
			t.Fatalf("GOGC %d, during the outer load: %d, want %d", before, got, want)
		}
		outer()
		if got := debug.SetGCPercent(before); got != before {
			t.Fatalf("GOGC %d, after the loads: %d", before, got)
		}
	}
}
