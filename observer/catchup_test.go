package observer

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/kraftwatch/kraftwatch/internal/scripttest"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// published is an Update as a catch-up test keeps it: the Unit's records are only
// valid during the Handler, so they are kept as text.
type published struct {
	Update
	unit string // unitText, "" for a reset
}

// followLive loads dir, calls more (which writes the rest of the log), polls again
// and returns every update published, the metrics and what was logged (dir written
// DIR). The segments are read ahead (prefetchAbove 0) whether or not the live read is
// a catch-up.
func followLive(t *testing.T, dir string, more func(), catchUp bool, flush int64) ([]published, *Metrics, string) {
	t.Helper()
	defer func(above, ca, cf int64) { prefetchAbove, catchUpAbove, catchUpFlush = above, ca, cf }(prefetchAbove, catchUpAbove, catchUpFlush)
	prefetchAbove, catchUpAbove, catchUpFlush = 0, 1<<62, flush
	if catchUp {
		catchUpAbove = 0
	}
	var out []published
	var logs strings.Builder
	drop := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: drop}))
	o, err := New(Config{Dir: dir, Logger: log, Handler: func(u Update) {
		p := published{Update: u}
		if u.Unit != nil {
			p.unit = unitText(*u.Unit)
			p.Unit = nil
		}
		out = append(out, p)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.f.close()
	if err := o.poll(); err != nil {
		t.Fatal(err)
	}
	more()
	if err := o.poll(); err != nil {
		t.Fatal(err)
	}
	return out, o.Metrics(), strings.ReplaceAll(logs.String(), dir, "DIR")
}

// sameImage describes how b differs from a: their partitions, brokers and features
// (image.Diff), provenance, and when each topic and broker rack last changed.
func sameImage(a, b *image.Image) string {
	if d := image.Diff(a, b); !d.Empty() {
		return d.String()
	}
	text := func(im *image.Image) string {
		var s strings.Builder
		fmt.Fprintf(&s, "%+v\n", im.Provenance())
		for _, t := range im.SortedTopics() {
			fmt.Fprintf(&s, "%s %s %+v %+v %+v\n", t.Name(), t.ID(), t.Created(), t.PartitionsAdded(), t.ReplicasChanged())
		}
		for _, br := range im.Brokers() {
			st, _ := im.BrokerRackChanged(br.ID)
			fmt.Fprintf(&s, "broker %d %+v\n", br.ID, st)
		}
		return s.String()
	}
	if ta, tb := text(a), text(b); ta != tb {
		return fmt.Sprintf("%s\nvs\n%s", ta, tb)
	}
	return ""
}

// checkCatchUp checks the updates of a catch-up (got) against those of the same read
// unit by unit (want): each is published at the offset of one of want's, with the same
// image; one that is not a unit's own covers Units units of want, none with a
// transaction marker, and its Changes are the difference from the update before; the
// resets are the same. It returns how many updates were coalesced.
func checkCatchUp(t *testing.T, want, got []published, wantM, gotM *Metrics) int {
	t.Helper()
	coalesced, w := 0, 0
	for i, g := range got {
		first := w
		for w < len(want) && (want[w].Provenance.Offset < g.Provenance.Offset || want[w].Reset != g.Reset) {
			if want[w].Reset || strings.Contains(want[w].unit, " txn") || strings.Contains(want[w].unit, " aborted") {
				t.Fatalf("update %d at %d (%s) skips update %d at %d (%s)", i, g.Provenance.Offset, g.unit, w, want[w].Provenance.Offset, want[w].unit)
			}
			w++
		}
		if w == len(want) || want[w].Provenance != g.Provenance {
			t.Fatalf("update %d at %+v (reset=%v %s) is not published unit by unit", i, g.Provenance, g.Reset, g.unit)
		}
		wu := want[w]
		w++
		if d := sameImage(wu.Image, g.Image); d != "" {
			t.Fatalf("update %d at %+v: the image differs from the one published unit by unit:\n%s", i, g.Provenance, d)
		}
		switch {
		case g.Reset:
			why := func(u published) string { r, _, _ := strings.Cut(u.Reason, " ("); return r } // without the dir
			if g.Changes.String() != wu.Changes.String() || why(g) != why(wu) {
				t.Fatalf("reset %d at %+v: %q %s, unit by unit %q %s", i, g.Provenance, g.Reason, g.Changes, wu.Reason, wu.Changes)
			}
		case strings.Contains(g.unit, " coalesced"):
			coalesced++
			if g.Units != w-first {
				t.Fatalf("update %d at %+v says it covers %d units, unit by unit they are %d", i, g.Provenance, g.Units, w-first)
			}
			if want := image.Diff(got[i-1].Image, g.Image).String(); g.Changes.String() != want {
				t.Fatalf("update %d at %+v: changes\n%s\nnot the difference from the update before:\n%s", i, g.Provenance, g.Changes, want)
			}
		default:
			if g.unit != wu.unit || g.Units != 1 || g.Changes.String() != wu.Changes.String() {
				t.Fatalf("update %d: %s (%d units)\n%s\nunit by unit: %s\n%s", i, g.unit, g.Units, g.Changes, wu.unit, wu.Changes)
			}
		}
	}
	if w != len(want) {
		t.Fatalf("%d updates unit by unit after the last of the catch-up (at %+v)", len(want)-w, got[len(got)-1].Provenance)
	}
	for _, m := range []struct {
		name      string
		got, want int64
	}{
		{"batches", gotM.Batches.Load(), wantM.Batches.Load()}, {"records", gotM.Records.Load(), wantM.Records.Load()},
		{"units", gotM.Units.Load(), wantM.Units.Load()}, {"replay errors", gotM.ReplayErrors.Load(), wantM.ReplayErrors.Load()},
		{"aborted transactions", gotM.AbortedTransactions.Load(), wantM.AbortedTransactions.Load()},
		{"transaction errors", gotM.TransactionErrors.Load(), wantM.TransactionErrors.Load()},
		{"resets", gotM.Resets.Load(), wantM.Resets.Load()}, {"offset", gotM.Offset.Load(), wantM.Offset.Load()},
		{"unknown records", gotM.UnknownRecords.Load(), wantM.UnknownRecords.Load()},
		{"corrupt records", gotM.CorruptRecords.Load(), wantM.CorruptRecords.Load()},
	} {
		if m.got != m.want {
			t.Errorf("%s: %d in the catch-up, %d unit by unit", m.name, m.got, m.want)
		}
	}
	if n := gotM.CatchUpUpdates.Load(); n != int64(coalesced) {
		t.Errorf("CatchUpUpdates %d, %d coalesced updates", n, coalesced)
	}
	return coalesced
}

// catchUpFlushes are the release sizes a catch-up test runs with: after every batch,
// every few batches, and only at the end of what is readable (or a transaction).
var catchUpFlushes = []int64{1, 4 << 10, 1 << 62}

// compareCatchUp runs a live read of the log setup writes (setup returns the function
// that writes its rest) unit by unit and as a catch-up with each of catchUpFlushes,
// checks them against each other (and that they log the same lines), and returns
// the number of coalesced updates of each catch-up.
func compareCatchUp(t *testing.T, setup func(t *testing.T, dir string) func()) []int {
	t.Helper()
	run := func(catchUp bool, flush int64) ([]published, *Metrics, string) {
		dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
		more := setup(t, dir)
		return followLive(t, dir, more, catchUp, flush)
	}
	want, wantM, wantLog := run(false, 0)
	var n []int
	for _, flush := range catchUpFlushes {
		got, gotM, gotLog := run(true, flush)
		n = append(n, checkCatchUp(t, want, got, wantM, gotM))
		if gotLog != wantLog {
			t.Errorf("a catch-up released every %d bytes logged\n%s\nunit by unit:\n%s", flush, gotLog, wantLog)
		}
	}
	return n
}

// TestCatchUpRolling follows a rolling restart's leader changes (metagen's rolling
// order, a segment of about 200 KB) arriving after the snapshot was loaded, unit by
// unit and as a catch-up, and checks that every image the catch-up publishes is the
// one published unit by unit at its offset.
func TestCatchUpRolling(t *testing.T) {
	c, err := metagen.ForKafka("4.3.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions, c.ReplicationFactor, c.Brokers, c.Racks = 20, 50, 3, 6, 3
	c.Order = metagen.OrderRolling
	const changes = 5000
	files, err := metagen.WriteDir(filepath.Join(t.TempDir(), "__cluster_metadata-0"), c, changes)
	if err != nil {
		t.Fatal(err)
	}
	n := compareCatchUp(t, func(t *testing.T, dir string) func() { return stageSnapshot(t, dir, files) })
	// One release per batch, some, and one at the end: the leader change's control
	// batch and every batch of changes in one update.
	if batches := files.SegmentStats.Batches; n[0] != batches || n[1] <= 1 || n[1] >= batches || n[2] != 1 {
		t.Fatalf("coalesced updates %v, want %d, 2 to %d, 1", n, batches, batches-1)
	}
}

// TestCatchUpTransactions follows each log of the transaction script (its first batch
// loaded, the rest arriving live) unit by unit and as a catch-up: transactions and
// aborted ones are still their own updates, with the same images at the same offsets.
func TestCatchUpTransactions(t *testing.T) {
	script, err := scripttest.Parse(transactionScript)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range script.Cases {
		if c.Cmd != "log" {
			continue
		}
		sl := writeScriptLog(t, c)
		all, err := os.ReadFile(sl.segment)
		if err != nil {
			t.Fatal(err)
		}
		// The first batch: the metadata.version record every log starts with.
		first := int(binary.BigEndian.Uint32(all[8:])) + recordbatch.LogOverhead
		n := compareCatchUp(t, func(t *testing.T, dir string) func() {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			seg := filepath.Join(dir, filepath.Base(sl.segment))
			if err := os.WriteFile(seg, all[:first], 0o644); err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := os.WriteFile(seg, all, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
		total += n[len(n)-1]
	}
	if total == 0 {
		t.Fatal("no log of the transaction script made a coalesced update")
	}
}

// TestCatchUpBadRecords follows records of an unknown type or version and records
// that do not decode, in a catch-up (where the prefetcher decodes the records) and
// unit by unit, in batches of their own and inside a transaction: the same images,
// the same counts, and the same lines logged in the same order.
func TestCatchUpBadRecords(t *testing.T) {
	a := observertest.ID(1)
	unknown := []byte{1, 99, 0, 0}   // frame 1, apiKey 99, version 0
	newer := []byte{1, 2, 7, 0}      // TopicRecord version 7
	corrupt := []byte{1, 2, 0, 0xff} // TopicRecord that ends early
	n := compareCatchUp(t, func(t *testing.T, dir string) func() {
		l := observertest.New(t, dir)
		l.Append(observertest.Broker(1, "r1"), observertest.Topic("a", a), observertest.Partition(a, 0, 1))
		change := mustAppend(t, &metadata.PartitionChangeRecord{TopicID: a, PartitionID: 0, Leader: 1, LeaderRecoveryState: -1})
		return func() {
			for i := range 30 {
				switch i % 3 {
				case 0:
					l.AppendValues(unknown, change, corrupt)
				case 1:
					l.AppendValues(mustAppend(t, &metadata.BeginTransactionRecord{}), newer, change)
					l.AppendValues(corrupt, change, mustAppend(t, &metadata.EndTransactionRecord{}))
				default:
					l.AppendValues(change, newer, unknown)
				}
			}
		}
	})
	if n[len(n)-1] == 0 {
		t.Fatal("no coalesced update")
	}
}

// TestCatchUpReset follows a catch-up that runs into a newer segment that does not
// continue the log, while a newer snapshot covers the gap: the units read before it
// are published, then the rebuild from the snapshot, as unit by unit.
func TestCatchUpReset(t *testing.T) {
	a, b := observertest.ID(1), observertest.ID(2)
	n := compareCatchUp(t, func(t *testing.T, dir string) func() {
		l := observertest.New(t, dir)
		l.Append(observertest.Broker(1, "r1"), observertest.Broker(2, "r2"), observertest.Topic("a", a), observertest.Partition(a, 0, 1, 2))
		return func() {
			for i := range 20 {
				l.Append(&metadata.PartitionChangeRecord{TopicID: a, PartitionID: 0, Leader: int32(1 + i%2), LeaderRecoveryState: -1}, observertest.NoOp())
				if i == 10 {
					l.AppendLeaderChange(1)
				}
			}
			l.Next += 5 // a gap: the next segment does not continue this one
			l.Roll()
			l.Snapshot(observertest.Broker(1, "r1"), observertest.Topic("b", b), observertest.Partition(b, 0, 1))
			l.Append(observertest.Topic("c", observertest.ID(3)))
		}
	})
	if n[len(n)-1] != 1 {
		t.Fatalf("coalesced updates %v, want one before the reset", n)
	}
}

// TestCatchUpQuorum follows the network source through a burst the leader commits at
// once, after the initial load, unit by unit and as a catch-up: plain units before,
// between and after transactions (one aborted), and control batches.
func TestCatchUpQuorum(t *testing.T) {
	// run follows the burst in a subtest, whose cleanup stops the observer before the
	// next run sets the knobs.
	run := func(catchUp bool, flush int64) (out []published, m *Metrics) {
		t.Run(fmt.Sprintf("catchUp=%v,flush=%d", catchUp, flush), func(t *testing.T) { out, m = burstQuorum(t, catchUp, flush) })
		if m == nil {
			t.FailNow()
		}
		return out, m
	}
	want, wantM := run(false, 0)
	for _, flush := range catchUpFlushes {
		got, gotM := run(true, flush)
		n := checkCatchUp(t, want, got, wantM, gotM)
		if flush == 1<<62 && (n == 0 || len(got) >= len(want)) {
			t.Fatalf("%d coalesced updates, %d updates against %d unit by unit", n, len(got), len(want))
		}
	}
}

// burstQuorum runs TestCatchUpQuorum's burst.
func burstQuorum(t *testing.T, catchUp bool, flush int64) ([]published, *Metrics) {
	above, fl := catchUpAbove, catchUpFlush
	t.Cleanup(func() { catchUpAbove, catchUpFlush = above, fl }) // after the observer's own cleanup
	catchUpAbove, catchUpFlush = 1<<62, flush
	if catchUp {
		catchUpAbove = 0
	}
	c := observertest.NewController(t, 1)
	c.Append(observertest.Broker(1, "r1"), observertest.Broker(2, "r2"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1, 2))
	c.Commit()
	var mu sync.Mutex
	var out []published
	r := runQuorum(t, []string{c.Addr}, func(cfg *Config) {
		cfg.Handler = func(u Update) {
			p := published{Update: u}
			if u.Unit != nil {
				p.unit = unitText(*u.Unit)
				p.Unit = nil
			}
			mu.Lock()
			out = append(out, p)
			mu.Unlock()
		}
	})
	<-r.Ready()
	change := func(leader int32) {
		c.Append(&metadata.PartitionChangeRecord{TopicID: idA, PartitionID: 0, Leader: leader, LeaderRecoveryState: -1})
	}
	for i := range 6 {
		change(int32(1 + i%2))
	}
	c.Append(observertest.Begin(), observertest.Topic("b", idB))
	c.Append(observertest.Partition(idB, 0, 1), observertest.End(), observertest.NoOp())
	change(1)
	change(2)
	c.Append(observertest.Topic("c", idC), observertest.Begin(), observertest.RemoveTopic(idA))
	c.Append(observertest.Abort(), observertest.NoOp())
	for i := range 4 {
		change(int32(1 + i%2))
	}
	c.Append(observertest.RemoveTopic(idB))
	c.Commit()
	end := c.Next() - 1
	eventually(t, "the end of the log", func() bool { return r.Metrics().Offset.Load() == end })
	mu.Lock()
	defer mu.Unlock()
	return append([]published(nil), out...), r.Metrics()
}
