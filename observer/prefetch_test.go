package observer

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/image"
)

// TestPrefetch runs the follower's and the observer's tests with every segment read
// ahead on the prefetcher's goroutine (prefetchAbove 0): what they check must not
// depend on it.
func TestPrefetch(t *testing.T) {
	defer func(v int64) { prefetchAbove = v }(prefetchAbove)
	prefetchAbove = 0
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
	} {
		t.Run(name, test)
	}
}

// TestPrefetchMatchesRead follows a burst of leader changes (a segment of several
// prefetch windows) with and without the prefetcher: the same updates, the same image
// and the same metrics.
func TestPrefetchMatchesRead(t *testing.T) {
	c, err := metagen.ForKafka("4.3.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions, c.ReplicationFactor, c.Brokers, c.Racks = 20, 50, 3, 6, 3
	const changes = 6000 // about 230 KB of segment: several prefetch windows (prefetchChunk)
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	if _, err := metagen.WriteDir(dir, c, changes); err != nil {
		t.Fatal(err)
	}
	run := func(above int64) ([]string, *image.Image, *Metrics) {
		t.Helper()
		defer func(v int64) { prefetchAbove = v }(prefetchAbove)
		prefetchAbove = above
		o, ups := loadOnce(t, dir)
		var out []string
		for _, u := range ups {
			out = append(out, fmt.Sprintf("%+v reset=%v units=%v\n%s", u.Provenance, u.Reset, u.Unit != nil, u.Changes))
		}
		return out, o.Image(), o.Metrics()
	}
	want, wantIm, wantM := run(1 << 62)
	got, gotIm, gotM := run(0)
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
