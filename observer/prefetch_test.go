package observer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// TestPrefetch runs the follower's and the observer's tests with every segment read
// ahead on the prefetcher's goroutine (prefetchAbove 0), in its windows and in windows
// of at least 16 bytes (batches straddle reads and the buffers go round all the time):
// what they check must not depend on it.
func TestPrefetch(t *testing.T) {
	defer func(above, chunk int64) { prefetchAbove, prefetchChunk = above, chunk }(prefetchAbove, prefetchChunk)
	prefetchAbove = 0
	for _, chunk := range []int64{prefetchChunk, 16} {
		prefetchChunk = chunk
		t.Run(fmt.Sprintf("window=%d", chunk), prefetchedTests)
	}
}

func prefetchedTests(t *testing.T) {
	for name, test := range map[string]func(*testing.T){
		"FollowAppendsRollAndDeletion": TestFollowAppendsRollAndDeletion,
		"FollowTransactions":           TestFollowTransactions,
		"SnapshotThenLog":              TestSnapshotThenLog,
		"SnapshotAheadOfLog":           TestSnapshotAheadOfLog,
		"Truncation":                   TestTruncation,
		"BadInput":                     TestBadInput,
		"LiveCorruption":               TestLiveCorruption,
		"UnknownRecords":               TestUnknownRecords,
		"FixtureImages":                TestFixtureImages,
		"TransactionScript":            TestTransactionScript,
		"RunLive":                      TestRunLive,
		"CatchUpRolling":               TestCatchUpRolling, // the catch-ups decode there too
		"CatchUpTransactions":          TestCatchUpTransactions,
		"CatchUpBadRecords":            TestCatchUpBadRecords,
	} {
		t.Run(name, test)
	}
}

// TestPrefetchMatchesRead follows a burst of leader changes (a segment of several
// prefetch windows) with and without the prefetcher, replayed in a rebuild and
// arriving after the snapshot was loaded: the same updates, the same image and the
// same metrics.
func TestPrefetchMatchesRead(t *testing.T) {
	c, err := metagen.ForKafka("4.3.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions, c.ReplicationFactor, c.Brokers, c.Racks = 20, 50, 3, 6, 3
	const changes = 6000 // about 230 KB of segment: more than one prefetch window (prefetchChunk)
	files, err := metagen.WriteDir(filepath.Join(t.TempDir(), "__cluster_metadata-0"), c, changes)
	if err != nil {
		t.Fatal(err)
	}
	// follow loads the snapshot and the segment (live: the snapshot, then the segment)
	// and returns the updates published.
	follow := func(t *testing.T, live bool) ([]string, *Observer) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
		seg := stageSnapshot(t, dir, files)
		if !live {
			seg()
		}
		var out []string
		o, err := New(Config{Dir: dir, Handler: func(u Update) {
			out = append(out, fmt.Sprintf("%+v reset=%v unit=%v\n%s", u.Provenance, u.Reset, u.Unit != nil, u.Changes))
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer o.f.close()
		if err := o.poll(); err != nil {
			t.Fatal(err)
		}
		if live {
			seg()
			if err := o.poll(); err != nil {
				t.Fatal(err)
			}
		}
		return out, o
	}
	run := func(t *testing.T, above int64) ([]string, *image.Image, *Metrics) {
		t.Helper()
		defer func(v int64) { prefetchAbove = v }(prefetchAbove)
		prefetchAbove = above
		rebuilt, r := follow(t, false)
		followed, o := follow(t, true)
		if d := image.Diff(r.Image(), o.Image()); !d.Empty() || len(followed) != 1+changes/metagen.SegmentBatchRecords+1 {
			t.Fatalf("%d updates followed; rebuilt and followed images differ:\n%s", len(followed), d)
		}
		return append(rebuilt, followed...), o.Image(), o.Metrics()
	}
	want, wantIm, wantM := run(t, 1<<62)
	for _, chunk := range []int64{prefetchChunk, 100} {
		t.Run(fmt.Sprintf("window=%d", chunk), func(t *testing.T) {
			defer func(v int64) { prefetchChunk = v }(prefetchChunk)
			prefetchChunk = chunk
			compareRuns(t, c, changes, want, wantIm, wantM, run)
		})
	}
	// Each batch takes all the room for framed records: one is framed at a time.
	t.Run("room=1 batch", func(t *testing.T) {
		defer func(r, p int) { recordRoom, prefetchRoom = r, p }(recordRoom, prefetchRoom)
		recordRoom, prefetchRoom = 10, 3
		compareRuns(t, c, changes, want, wantIm, wantM, run)
	})
}

// TestRecPool: a batch gets the smallest free slice that holds its records and is at
// most 4 times its size, else a new one of its size; the pool keeps the largest.
func TestRecPool(t *testing.T) {
	var q recPool
	for _, n := range []int{10000, 1000, 100} {
		q.put(make([]rawRecord, 0, n))
	}
	for _, tc := range []struct{ n, want int }{
		{900, 1000},   // the smallest that fits
		{5000, 10000}, // the 1,000 is gone
		{200, 200},    // 100 is too small and 10,000 is gone: a new one
		{50, 100},
		{3000, 3000},
	} {
		if got := cap(q.get(tc.n)); got != tc.want {
			t.Errorf("get(%d): a slice of %d, want %d", tc.n, got, tc.want)
		}
	}
	for i := range prefetchItems + 2 {
		q.put(make([]rawRecord, 0, 100+i))
	}
	q.put(make([]rawRecord, 0, 99))    // smaller than all: dropped
	q.put(make([]rawRecord, 0, 10000)) // replaces the smallest, 100
	if got := cap(q.get(5000)); got != 10000 {
		t.Errorf("get(5000) from a full pool: %d, want 10000", got)
	}
	if got := cap(q.get(99)); got != 101 {
		t.Errorf("get(99) from a full pool: %d, want 101 (100 was dropped for 10,000)", got)
	}
	if len(q.free) != prefetchItems {
		t.Errorf("%d slices kept, want %d", len(q.free), prefetchItems)
	}
}

func compareRuns(t *testing.T, c metagen.Config, changes int, want []string, wantIm *image.Image, wantM *Metrics,
	run func(*testing.T, int64) ([]string, *image.Image, *Metrics)) {
	t.Helper()
	got, gotIm, gotM := run(t, 0)
	if len(got) != len(want) {
		t.Fatalf("%d updates with the prefetcher, %d without", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("update %d with the prefetcher:\n%s\nwithout:\n%s", i, got[i], want[i])
		}
	}
	if d := image.Diff(wantIm, gotIm); !d.Empty() || gotIm.Provenance() != wantIm.Provenance() {
		t.Fatalf("images differ at %+v / %+v:\n%s", gotIm.Provenance(), wantIm.Provenance(), d)
	}
	if err := c.Check(gotIm, changes); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name      string
		got, want int64
	}{{"batches", gotM.Batches.Load(), wantM.Batches.Load()}, {"records", gotM.Records.Load(), wantM.Records.Load()},
		{"units", gotM.Units.Load(), wantM.Units.Load()}} {
		if m.got != m.want || m.got == 0 {
			t.Errorf("%s: %d with the prefetcher, %d without", m.name, m.got, m.want)
		}
	}
}

// TestRebuildPieces runs the tests whose rebuilds replay a log after the snapshot
// with a streamed rebuild's pieces (pieceRecords) of one record and of three: the same
// updates, images, logs and metrics as with a batch handed on whole.
func TestRebuildPieces(t *testing.T) {
	defer func(n int) { pieceRecords = n }(pieceRecords)
	for _, n := range []int{1, 3} {
		pieceRecords = n
		t.Run(fmt.Sprintf("piece=%d", n), func(t *testing.T) {
			for name, test := range map[string]func(*testing.T){
				"SnapshotThenLog":     TestSnapshotThenLog,
				"FollowTransactions":  TestFollowTransactions,
				"TransactionScript":   TestTransactionScript,
				"FixtureImages":       TestFixtureImages,
				"UnknownRecords":      TestUnknownRecords,
				"BadInput":            TestBadInput,
				"PrefetchMatchesRead": TestPrefetchMatchesRead,
				"CatchUpTransactions": TestCatchUpTransactions,
			} {
				t.Run(name, test)
			}
		})
	}
}

// TestRebuildReadsInline: a rebuild reads its segments on its own goroutine, however
// long they are, framing each batch into one slice of its size; a live read of the
// same segment after the snapshot reads it ahead.
func TestRebuildReadsInline(t *testing.T) {
	defer func(v int64) { prefetchAbove = v }(prefetchAbove)
	prefetchAbove = 0
	c, err := metagen.ForKafka("4.3.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions, c.ReplicationFactor, c.Brokers, c.Racks = 5, 10, 3, 6, 3
	files, err := metagen.WriteDir(filepath.Join(t.TempDir(), "__cluster_metadata-0"), c, 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, live := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
		seg := stageSnapshot(t, dir, files)
		if !live {
			seg()
		}
		o, err := New(Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.poll(); err != nil {
			t.Fatal(err)
		}
		if live {
			seg()
			if err := o.poll(); err != nil {
				t.Fatal(err)
			}
		}
		o.f.close()
		if want := map[bool]int{false: 0, true: 1}[live]; o.f.prefetches != want {
			t.Errorf("live %v: %d prefetchers started, want %d", live, o.f.prefetches, want)
		}
		// Framed into one slice made at a batch's size, not grown by append.
		if !live && cap(o.f.framed) != metagen.SegmentBatchRecords {
			t.Errorf("records framed into a slice of %d, want %d", cap(o.f.framed), metagen.SegmentBatchRecords)
		}
		if got := o.Image().Provenance().Offset; got != files.SegmentStats.LastOffset {
			t.Errorf("live %v: image at offset %d, want %d", live, got, files.SegmentStats.LastOffset)
		}
	}
}

// stageSnapshot makes dir holding the snapshot of files and returns what adds their
// segment to it.
func stageSnapshot(t *testing.T, dir string, files metagen.Files) (addSegment func()) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, files.Snapshot, filepath.Join(dir, filepath.Base(files.Snapshot)))
	return func() { copyFile(t, files.Segment, filepath.Join(dir, filepath.Base(files.Segment))) }
}

// TestPrefetchGroups: the prefetcher hands on several small batches at a time, as many
// as hold at most groupRecords records between them (a larger batch alone), framed
// and decoded as consume would frame and decode each; a batch whose records do not
// frame, or one that does not read (its CRC), ends the group it falls in and the
// prefetch, after the batches before it in the group are handed on whole.
func TestPrefetchGroups(t *testing.T) {
	defer func(n int) { groupRecords = n }(groupRecords)
	groupRecords = 10
	a := observertest.ID(1)
	change := func(i int) metadata.Record {
		r := &metadata.PartitionChangeRecord{TopicID: a, PartitionID: int32(i), Leader: int32(i % 3), LeaderRecoveryState: -1}
		if i%4 == 0 { // not a metadata.LeaderChange: decoded whole
			r.ISR = []int32{1, 2}
		}
		return r
	}
	for _, bad := range []string{"", "frame", "crc"} {
		t.Run("bad="+bad, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
			l := observertest.New(t, dir)
			// Batches of 3 records (three to a group), the fourth of 12 (alone, and
			// ending the group before it), then of 3 again; the bad batch, if any, is
			// the third of the fourth group.
			var sizes []int
			for i := range 14 {
				n := 3
				if i == 3 {
					n = 12
				}
				recs := make([]metadata.Record, n)
				for j := range recs {
					recs[j] = change(10*i + j)
				}
				b := l.Encode(recs...)
				if i == 9 && bad != "" {
					corrupt(t, b, bad)
				}
				l.AppendRaw(b, int64(n))
				sizes = append(sizes, n)
			}
			seg, err := openSegment(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer seg.close()
			f := quietFollower(dir)
			f.setReuse(true)
			p := startPrefetch(seg, true)
			defer p.close()
			var groups []int // batches per group
			for i := 0; ; i++ {
				r, err := p.next(f.reuse && f.txn == nil, f.txn != nil)
				b, pos, recs, pre, ferr := r.b, r.pos, r.recs, r.pre, r.ferr
				if p.at == 1 {
					groups = append(groups, 0)
				}
				groups[len(groups)-1]++
				if i == 9 && bad != "" {
					if bad == "frame" && (ferr == nil || err != nil) || bad == "crc" && !errors.Is(err, recordbatch.ErrCorrupt) {
						t.Fatalf("bad batch: frame error %v, read error %v", ferr, err)
					}
					if !p.done {
						t.Fatal("the prefetch goes on after a bad batch")
					}
					break
				}
				if errors.Is(err, errWait) && i == len(sizes) {
					break
				}
				if err != nil || ferr != nil {
					t.Fatalf("batch %d at %d: %v, %v", i, pos, err, ferr)
				}
				want, err := frame(&b, nil)
				if err != nil || len(recs) != sizes[i] || len(pre) != sizes[i] {
					t.Fatalf("batch %d: %d records framed (%v), %d handed on, %d decoded, want %d", i, len(want), err, len(recs), len(pre), sizes[i])
				}
				for j, r := range recs {
					if r != want[j] {
						t.Fatalf("batch %d record %d: %+v, want %+v", i, j, r, want[j])
					}
					got := pre[j].rec
					if pre[j].isLeader {
						r := pre[j].leader.Record()
						got = &r
					}
					if pre[j].err != nil || pre[j].isLeader != ((10*i+j)%4 != 0) || fmt.Sprint(got) != fmt.Sprint(change(10*i+j)) {
						t.Fatalf("batch %d record %d decoded as %v (%v), want %v", i, j, got, pre[j].err, change(10*i+j))
					}
				}
			}
			want := []int{3, 1, 3, 3, 3, 2} // the end of the segment (errWait) in the last group
			if bad != "" {
				want = []int{3, 1, 3, 3} // the bad batch ends its group and the prefetch
			}
			if !slices.Equal(groups, want) {
				t.Errorf("batches per group %v, want %v", groups, want)
			}
		})
	}
}

// corrupt makes the encoded batch b one whose records do not frame though its CRC
// holds (frame: it claims a record more than it holds), or one whose CRC is wrong.
func corrupt(t *testing.T, b []byte, how string) {
	t.Helper()
	switch how {
	case "frame":
		const numRecords = 57 // after base offset, length, epoch, magic, CRC, attributes, ... producer fields
		binary.BigEndian.PutUint32(b[numRecords:], binary.BigEndian.Uint32(b[numRecords:])+1)
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	case "crc":
		b[len(b)-1] ^= 0x55
	}
}
