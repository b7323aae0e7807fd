package observer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// textSink records what a follower yields as text lines: a rebuild, once it ends, as
// a line naming its snapshot and how many records that holds, then its units.
type textSink struct {
	lines []string
	build *build   // the rebuild in progress
	built []string // its units
}

// poll polls f and records what it yields.
func (s *textSink) poll(f *follower) error {
	for it, err := range f.poll() {
		if err != nil {
			return err
		}
		switch it.kind {
		case itemRebuild:
			s.build, s.built = it.build, nil
		case itemUnit:
			if s.build != nil {
				s.built = append(s.built, unitText(it.unit))
			} else {
				s.lines = append(s.lines, unitText(it.unit))
			}
		case itemRebuilt:
			n := 0
			snap, err := snapshotEntries(s.build.snapshot, func(Entry) { n++ })
			if err != nil {
				return err
			}
			s.lines = append(s.lines, fmt.Sprintf("rebuild snapshot=%s records=%d (%s)", snap, n, s.build.why))
			s.lines = append(s.lines, s.built...)
			s.build, s.built = nil, nil
		}
	}
	return nil
}

// snapshotEntries calls fn for every metadata record of the snapshot file at path (a
// build's snapshot, "none" for none) and returns its id ("none").
func snapshotEntries(path string, fn func(Entry)) (string, error) {
	if path == "none" {
		return "none", nil
	}
	id, _ := ParseSnapshotName(filepath.Base(path))
	sn, err := readSnapshot(path, id)
	if err != nil {
		return "", err
	}
	return id.String(), quietFollower("").snapshotRecords(sn, func(e Entry) error { fn(e); return nil })
}

func unitText(u Unit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "unit @%d e%d", u.Provenance.Offset, u.Provenance.Epoch)
	switch {
	case u.Control:
		b.WriteString(" control")
	case u.Aborted:
		b.WriteString(" aborted")
	case u.Transaction:
		b.WriteString(" txn")
	case u.Coalesced:
		b.WriteString(" coalesced")
	}
	for _, e := range u.Entries {
		fmt.Fprintf(&b, " | %d %s", e.Offset, metadata.FormatText(e.Record, shortUUID))
	}
	return b.String()
}

var shortUUID = &metadata.TextUUID{Format: func(u metadata.UUID) string { return fmt.Sprintf("t%d", u[15]) }}

func (s *textSink) take() string {
	out := strings.Join(s.lines, "\n")
	s.lines = nil
	return out
}

type harness struct {
	t    *testing.T
	log  *observertest.Log
	f    *follower
	sink *textSink
	logs *bytes.Buffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	logs := &bytes.Buffer{}
	lg := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &harness{t: t, log: observertest.New(t, dir), f: newFollower(dir, lg, newMetrics()), sink: &textSink{}, logs: logs}
}

// poll polls and returns what was handed on, failing on an error.
func (h *harness) poll() string {
	h.t.Helper()
	if err := h.sink.poll(h.f); err != nil {
		h.t.Fatalf("poll: %v", err)
	}
	return h.sink.take()
}

func (h *harness) expect(want string) {
	h.t.Helper()
	if got := h.poll(); got != strings.TrimSpace(want) {
		h.t.Fatalf("got:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
}

var (
	idA = observertest.ID(1)
	idB = observertest.ID(2)
	idC = observertest.ID(3)
)

func TestFollowAppendsRollAndDeletion(t *testing.T) {
	h := newHarness(t)
	l := h.log
	l.AppendLeaderChange(1)
	l.Append(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1))
	h.expect(`
rebuild snapshot=none records=0 (initial load)
unit @0 e1 control
unit @3 e1 | 1 RegisterBrokerRecord BrokerID=1 IncarnationID=t0 BrokerEpoch=10 Rack=r1 | 2 TopicRecord Name=a TopicID=t1 | 3 PartitionRecord TopicID=t1 Replicas=[1] ISR=[1] Leader=1`)
	h.expect(``)

	// A batch written in two steps: nothing until it is whole.
	b := l.Encode(observertest.Partition(idA, 1, 1))
	l.AppendPart(b, 0, 30)
	h.expect(``)
	l.AppendPart(b, 30, len(b))
	l.Commit(1, len(b))
	h.expect(`unit @4 e1 | 4 PartitionRecord PartitionID=1 TopicID=t1 Replicas=[1] ISR=[1] Leader=1`)

	// Roll: the next batch goes to a new segment.
	l.Roll()
	l.Append(observertest.NoOp())
	l.Append(observertest.Topic("b", idB))
	h.expect(`
unit @5 e1 | 5 NoOpRecord
unit @6 e1 | 6 TopicRecord Name=b TopicID=t2`)

	// A snapshot, then the old segment goes: nothing to reload, no rebuild.
	l.Snapshot(observertest.Topic("a", idA))
	l.DeleteSegment(0)
	l.Append(observertest.NoOp())
	h.expect(`unit @7 e1 | 7 NoOpRecord`)
	if n := h.f.m.Resets.Load(); n != 0 {
		t.Fatalf("%d resets", n)
	}
	// Roll and delete the segment just finished while reading is still in it.
	l.Roll()
	l.Append(observertest.NoOp())
	l.Snapshot()
	l.DeleteSegment(5)
	h.expect(`unit @8 e1 | 8 NoOpRecord`)
	if n := h.f.m.Resets.Load(); n != 0 {
		t.Fatalf("%d resets", n)
	}
}

func TestFollowTransactions(t *testing.T) {
	h := newHarness(t)
	l := h.log
	l.Append(observertest.Topic("a", idA), observertest.Begin(), observertest.Topic("b", idB))
	l.Append(observertest.Partition(idB, 0, 1))
	h.expect(`
rebuild snapshot=none records=0 (initial load)
unit @0 e1 | 0 TopicRecord Name=a TopicID=t1`)
	// The records after the End in its batch join the transaction's unit, as Kafka's
	// loader publishes them in one image (testdata/transactions.txt has more cases).
	l.Append(observertest.Partition(idB, 1, 1), observertest.End(), observertest.Topic("c", idC))
	h.expect(`
unit @6 e1 txn | 2 TopicRecord Name=b TopicID=t2 | 3 PartitionRecord TopicID=t2 Replicas=[1] ISR=[1] Leader=1 | 4 PartitionRecord PartitionID=1 TopicID=t2 Replicas=[1] ISR=[1] Leader=1 | 6 TopicRecord Name=c TopicID=t3`)
	// Aborted: dropped, but the log moved on; a new leader's batch inside is not a unit.
	l.Append(observertest.Begin(), observertest.RemoveTopic(idA))
	l.Epoch = 2
	l.AppendLeaderChange(1)
	l.Append(observertest.Abort(), observertest.Begin(), observertest.RemoveTopic(idC), observertest.End())
	h.expect(`
unit @10 e2 aborted
unit @13 e2 txn | 12 RemoveTopicRecord TopicID=t3`)
	// Markers out of place are ignored and counted.
	l.Append(observertest.End(), observertest.NoOp())
	h.expect(`unit @15 e2 | 15 NoOpRecord`)
	if n := h.f.m.TransactionErrors.Load(); n != 1 {
		t.Fatalf("transaction errors %d", n)
	}
}

func TestSnapshotThenLog(t *testing.T) {
	h := newHarness(t)
	l := h.log
	l.Append(observertest.Topic("a", idA))
	l.Append(observertest.Topic("b", idB), observertest.NoOp())
	l.Snapshot(observertest.Topic("a", idA), observertest.Topic("b", idB))
	l.Append(observertest.Topic("c", idC))
	// Junk that must be ignored.
	for _, name := range []string{"00000000000000000003.snapshot", "00000000000000000003.index",
		"00000000000000000000.log.deleted", "00000000000000000009-0000000001.checkpoint.deleted",
		"00000000000000000009-0000000001-777.checkpoint.part", "00000000000000000000.log.dump.txt"} {
		os.WriteFile(filepath.Join(l.Dir, name), []byte("garbage garbage garbage garbage"), 0o644)
	}
	h.expect(`
rebuild snapshot=3-1 records=2 (initial load)
unit @3 e1 | 3 TopicRecord Name=c TopicID=t3`)

	// A newer snapshot while we are past it: no reload.
	l.Snapshot(observertest.Topic("a", idA), observertest.Topic("b", idB), observertest.Topic("c", idC))
	l.Append(observertest.NoOp())
	h.expect(`unit @4 e1 | 4 NoOpRecord`)
	if n := h.f.m.SnapshotsLoaded.Load(); n != 1 {
		t.Fatalf("snapshots loaded %d", n)
	}
}

func TestSnapshotAheadOfLog(t *testing.T) {
	h := newHarness(t)
	l := h.log
	l.Append(observertest.Topic("a", idA))
	l.WriteSnapshot(5, 1, observertest.SnapshotBytes(1, 0, nil, 0, false))
	h.expect(`rebuild snapshot=5-1 records=0 (initial load)`)
	l.Append(observertest.NoOp()) // offset 1: below the snapshot, skipped
	h.expect(``)
	// Kafka truncates the log to the snapshot and starts a new segment there.
	l.DeleteSegment(0)
	l.Next = 5
	l.Roll()
	l.Append(observertest.NoOp())
	h.expect(`unit @5 e1 | 5 NoOpRecord`)
}

func TestTruncation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(l *observertest.Log)
	}{
		{"same size batches appended again", func(l *observertest.Log) {
			l.Truncate(2)
			l.Epoch = 2
			l.Append(observertest.Topic("x", idC))
			l.Append(observertest.NoOp())
		}},
		{"file shrank", func(l *observertest.Log) { l.Truncate(2) }},
		{"later segment deleted", func(l *observertest.Log) {
			l.Truncate(1)
			l.Epoch = 2
			l.Append(observertest.Topic("x", idC))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			l := h.log
			l.Append(observertest.Topic("a", idA))
			l.Append(observertest.Topic("b", idB))
			l.Roll()
			l.Append(observertest.NoOp())
			l.Append(observertest.NoOp())
			l.Append(observertest.Topic("c", idC)) // offset 4, in the new segment
			h.poll()
			tc.cut(l)
			got := h.poll()
			if !strings.HasPrefix(got, "rebuild snapshot=none records=0") {
				t.Fatalf("no rebuild after truncation:\n%s", got)
			}
			if strings.Contains(got, "Name=c") {
				t.Fatalf("truncated record still there:\n%s", got)
			}
			if h.f.m.Resets.Load() != 1 {
				t.Fatalf("resets %d", h.f.m.Resets.Load())
			}
			t.Logf("\n%s", got)
			// And it follows on.
			l.Append(observertest.Topic("z", observertest.ID(9)))
			if got := h.poll(); !strings.Contains(got, "Name=z") {
				t.Fatalf("after the rebuild: %q", got)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(l *observertest.Log)
		want  error  // nil: no error, no rebuild yet or a rebuild as described by out
		out   string // prefix of the output when want is nil; else what the error must say
	}{
		{"empty dir", func(l *observertest.Log) {}, ErrNoLog, ""},
		{"missing dir", func(l *observertest.Log) { os.Remove(l.Dir) }, fs.ErrNotExist, ""},
		{"corrupt crc mid-log", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			fi, _ := os.Stat(l.SegmentPath(0))
			l.Append(observertest.Topic("b", idB))
			l.Append(observertest.Topic("c", idC))
			flip(t, l.SegmentPath(0), fi.Size()+40) // inside the second batch's CRC range
		}, ErrCorrupt, ""},
		{"corrupt crc at the tail", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			l.Append(observertest.Topic("b", idB))
			fi, _ := os.Stat(l.SegmentPath(0))
			flip(t, l.SegmentPath(0), fi.Size()-3)
		}, ErrCorrupt, ""},
		{"half-written tail", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			b := l.Encode(observertest.Topic("b", idB))
			l.AppendPart(b, 0, len(b)-1)
		}, nil, "rebuild snapshot=none records=0 (initial load)\nunit @0 e1 | 0 TopicRecord Name=a TopicID=t1"},
		{"segment cut short before a newer one", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			l.Append(observertest.Topic("b", idB))
			l.Roll()
			l.Append(observertest.Topic("c", idC))
			fi, _ := os.Stat(l.SegmentPath(0))
			os.Truncate(l.SegmentPath(0), fi.Size()-5)
		}, ErrCorrupt, ""},
		{"garbage segment", func(l *observertest.Log) {
			os.WriteFile(l.SegmentPath(0), bytes.Repeat([]byte("garbage!"), 100), 0o644)
		}, ErrCorrupt, ""},
		{"offset gap between segments", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			l.Next = 5
			l.Roll()
			l.Append(observertest.Topic("b", idB))
		}, ErrCorrupt, ""},
		{"snapshot without footer, log from 0", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			l.WriteSnapshot(1, 1, observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("wrong", idB)}, 0, true))
		}, nil, "rebuild snapshot=none records=0 (initial load)\nunit @0 e1 | 0 TopicRecord Name=a TopicID=t1"},
		{"snapshot without footer, older snapshot", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			l.Snapshot(observertest.Topic("a", idA))
			l.Append(observertest.Topic("b", idB))
			l.WriteSnapshot(2, 1, observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("wrong", idC)}, 0, true))
		}, nil, "rebuild snapshot=1-1 records=1 (initial load)\nunit @1 e1 | 1 TopicRecord Name=b TopicID=t2"},
		{"snapshot without footer, older snapshot the log does not reach", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			l.Snapshot(observertest.Topic("a", idA))
			l.Append(observertest.Topic("b", idB))
			l.WriteSnapshot(2, 1, observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("wrong", idC)}, 0, true))
			l.DeleteSegment(0)
			l.Roll()
		}, ErrNoStart, ""},
		{"snapshot without footer, no log from 0", func(l *observertest.Log) {
			l.Next = 10
			l.Append(observertest.Topic("a", idA))
			l.WriteSnapshot(10, 1, observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("a", idA)}, 0, true))
		}, ErrNoStart, "no SnapshotFooter"}, // why the snapshot was skipped
		{"snapshot with a bad crc", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			p := l.WriteSnapshot(1, 1, observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("a", idA)}, 0, false))
			flip(t, p, 120)
		}, nil, "rebuild snapshot=none"},
		{"truncated snapshot", func(l *observertest.Log) {
			l.Append(observertest.Topic("a", idA))
			b := observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("a", idA)}, 0, false)
			l.WriteSnapshot(1, 1, b[:len(b)-10])
		}, nil, "rebuild snapshot=none"},
		{"log starts after the snapshot", func(l *observertest.Log) {
			l.Next = 10
			l.Append(observertest.Topic("a", idA))
			l.WriteSnapshot(5, 1, observertest.SnapshotBytes(1, 0, nil, 0, false))
		}, ErrNoStart, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.setup(h.log)
			err := h.sink.poll(h.f)
			out := h.sink.take()
			if tc.want != nil {
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.out) {
					t.Fatalf("error %v, want %v saying %q", err, tc.want, tc.out)
				}
				if out != "" || h.f.loaded {
					t.Fatalf("published despite the error: %q", out)
				}
				t.Logf("error: %v", err)
				var pe *PosError
				if errors.Is(err, ErrCorrupt) && !errors.As(err, &pe) {
					t.Fatalf("corruption error without a position: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out, tc.out) {
				t.Fatalf("got:\n%s\nwant prefix:\n%s", out, tc.out)
			}
			if strings.Contains(out, "wrong") {
				t.Fatalf("records of a bad snapshot were used:\n%s", out)
			}
		})
	}
}

func TestLiveCorruption(t *testing.T) {
	h := newHarness(t)
	l := h.log
	l.Append(observertest.Topic("a", idA))
	h.poll()
	// A batch whose last byte is wrong at the tail: a torn write, waited for.
	l.Append(observertest.Topic("b", idB))
	fi, _ := os.Stat(l.SegmentPath(0))
	flip(t, l.SegmentPath(0), fi.Size()-1)
	h.expect(``)
	h.expect(``)
	if n := h.f.m.TornTails.Load(); n != 1 {
		t.Fatalf("torn tails %d", n)
	}
	// More batches after it: now it is corruption in the middle of the log.
	l.Append(observertest.Topic("c", idC))
	err := h.sink.poll(h.f)
	var pe *PosError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &pe) || pe.File != l.SegmentPath(0) || pe.Position == 0 || pe.Offset != 1 {
		t.Fatalf("error %#v", err)
	}
	t.Logf("error: %v", err)
	// Kafka's recovery cuts the bad tail; new batches follow.
	l.Truncate(1)
	l.Append(observertest.Topic("d", observertest.ID(4)))
	h.expect(`unit @1 e1 | 1 TopicRecord Name=d TopicID=t4`)
}

func TestUnknownRecords(t *testing.T) {
	h := newHarness(t)
	l := h.log
	unknown := []byte{1, 99, 0, 0}   // frame 1, apiKey 99, version 0
	newer := []byte{1, 2, 7, 0}      // TopicRecord version 7
	corrupt := []byte{1, 2, 0, 0xff} // TopicRecord that ends early
	l.AppendValues(unknown, mustAppend(t, observertest.Topic("a", idA)), unknown, newer)
	l.AppendValues(unknown, corrupt)
	h.expect(`
rebuild snapshot=none records=0 (initial load)
unit @3 e1 | 1 TopicRecord Name=a TopicID=t1
unit @5 e1`)
	m := h.f.m
	if m.UnknownRecords.Load() != 4 || m.CorruptRecords.Load() != 1 {
		t.Fatalf("unknown %d corrupt %d", m.UnknownRecords.Load(), m.CorruptRecords.Load())
	}
	if n := strings.Count(h.logs.String(), "unknown type or version"); n != 2 {
		t.Fatalf("logged %d times, want once per (apiKey, version):\n%s", n, h.logs)
	}
}

func mustAppend(t *testing.T, r metadata.Record) []byte {
	t.Helper()
	b, err := metadata.Append(nil, r, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func flip(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x55
	if _, err := f.WriteAt(b[:], at); err != nil {
		t.Fatal(err)
	}
}

// TestPollStopped: a consumer that stops ranging over a poll early stops the read;
// the next poll rebuilds and hands on the whole log once.
func TestPollStopped(t *testing.T) {
	h := newHarness(t)
	l := h.log
	l.Append(observertest.Topic("a", idA))
	h.expect(`
rebuild snapshot=none records=0 (initial load)
unit @0 e1 | 0 TopicRecord Name=a TopicID=t1`)
	l.Append(observertest.Topic("b", idB))
	l.Append(observertest.Topic("c", idC))
	units := 0
	for it, err := range h.f.poll() {
		if err != nil {
			t.Fatal(err)
		}
		if it.kind == itemUnit {
			units++
			break
		}
	}
	if units != 1 || h.f.loaded {
		t.Fatalf("%d units before the stop, loaded %v", units, h.f.loaded)
	}
	h.expect(`
rebuild snapshot=none records=0 (a read was stopped)
unit @0 e1 | 0 TopicRecord Name=a TopicID=t1
unit @1 e1 | 1 TopicRecord Name=b TopicID=t2
unit @2 e1 | 2 TopicRecord Name=c TopicID=t3`)
	h.expect(``)
}

// TestUnknownTaggedFields: a record with tagged fields this package does not know (a
// newer Kafka's) is used without them; the fields are counted and logged once per
// record type and version.
func TestUnknownTaggedFields(t *testing.T) {
	h := newHarness(t)
	withTags := func(r metadata.Record) []byte {
		b := mustAppend(t, r)
		// The record's last byte is its empty tag section: two unknown fields instead.
		return append(b[:len(b)-1], 0x02, 0x05, 0x01, 0xff, 0x09, 0x00)
	}
	h.log.AppendValues(withTags(observertest.Topic("a", idA)), withTags(observertest.Topic("b", idB)))
	h.expect(`
rebuild snapshot=none records=0 (initial load)
unit @1 e1 | 0 TopicRecord Name=a TopicID=t1 | 1 TopicRecord Name=b TopicID=t2`)
	m := h.f.m
	if m.UnknownTaggedFields.Load() != 4 || m.UnknownRecords.Load() != 0 || m.CorruptRecords.Load() != 0 {
		t.Fatalf("unknown tagged fields %d, unknown records %d, corrupt %d", m.UnknownTaggedFields.Load(), m.UnknownRecords.Load(), m.CorruptRecords.Load())
	}
	if n := strings.Count(h.logs.String(), "unknown tagged fields"); n != 1 {
		t.Fatalf("logged %d times, want once per record type and version:\n%s", n, h.logs)
	}
}
