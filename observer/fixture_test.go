package observer

import (
	"bufio"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/fixture"
)

// fixtureDirs are real metadata logs written by Kafka releases (see their README.md);
// each file's decoding by kafka-dump-log is beside it as <file>.dump.txt.
func fixtureDirs(t *testing.T) []string {
	t.Helper()
	return fixture.MetadataDirs(t)
}

// dumped is one record as kafka-dump-log printed it.
type dumped struct {
	offset int64
	typ    string // FEATURE_LEVEL_RECORD, ... or a control type (LeaderChange, ...)
}

var (
	dumpRecord  = regexp.MustCompile(`^\| offset: (\d+) .*?headerKeys: \[\] (?:payload: \{"type":"([A-Z_]+)"|(\w+):? \{)`)
	dumpMarkers = map[string]bool{"BEGIN_TRANSACTION_RECORD": true, "END_TRANSACTION_RECORD": true, "ABORT_TRANSACTION_RECORD": true}
)

// readDump returns the records of a kafka-dump-log output: data records (markers
// left out) and control records.
func readDump(t *testing.T, path string) (data, control []dumped) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| offset:") {
			continue
		}
		m := dumpRecord.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: cannot read %q", path, line)
		}
		off, _ := strconv.ParseInt(m[1], 10, 64)
		switch {
		case m[2] != "" && dumpMarkers[m[2]]:
		case m[2] != "":
			data = append(data, dumped{off, m[2]})
		default:
			control = append(control, dumped{off, m[3]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return data, control
}

func fixtureFiles(t *testing.T, fixtureDir, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureDir, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s fixtures in %s: %v", pattern, fixtureDir, err)
	}
	slices.Sort(files)
	return files
}

// collectSink keeps what a follower yields: the snapshot of the last rebuild and its
// records, and the units after it.
type collectSink struct {
	snapshot   SnapshotID
	snapshotAt []dumped
	units      []Unit
	build      *build // the rebuild in progress
	built      []Unit // its units
}

// poll polls f and keeps what it yields.
func (s *collectSink) poll(f *follower) error {
	for it, err := range f.poll() {
		if err != nil {
			return err
		}
		switch it.kind {
		case itemRebuild:
			s.build, s.built = it.build, nil
		case itemUnit:
			if s.build != nil {
				s.built = append(s.built, it.unit)
			} else {
				s.units = append(s.units, it.unit)
			}
		case itemRebuilt:
			s.snapshotAt = nil
			if _, err := snapshotEntries(s.build.snapshot, func(e Entry) {
				s.snapshotAt = append(s.snapshotAt, dumped{e.Offset, e.Record.Type().EnumName()})
			}); err != nil {
				return err
			}
			if s.build.snapshot != "none" {
				s.snapshot, _ = ParseSnapshotName(filepath.Base(s.build.snapshot))
			}
			s.units, s.build, s.built = s.built, nil, nil
		}
	}
	return nil
}

func (s *collectSink) entries() []dumped {
	var out []dumped
	for _, u := range s.units {
		for _, e := range u.Entries {
			out = append(out, dumped{e.Offset, e.Record.Type().EnumName()})
		}
	}
	return out
}

func quietFollower(dir string) *follower {
	return newFollower(dir, slog.New(slog.NewTextHandler(io.Discard, nil)), newMetrics())
}

// TestFixtureAgainstKafkaDumpLog loads the real log the way the observer does and
// checks every record it hands on (offset and type) against kafka-dump-log's decoding
// of the same files: the newest snapshot's records, then the log's records after it.
func TestFixtureAgainstKafkaDumpLog(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) { testFixtureAgainstKafkaDumpLog(t, dir) })
	}
}

func testFixtureAgainstKafkaDumpLog(t *testing.T, fixtureDir string) {
	var logData []dumped
	var lastOffset int64
	for _, seg := range fixtureFiles(t, fixtureDir, "*.log") {
		data, control := readDump(t, seg+".dump.txt")
		logData = append(logData, data...)
		for _, d := range append(data, control...) {
			lastOffset = max(lastOffset, d.offset)
		}
	}
	snaps := fixtureFiles(t, fixtureDir, "*.checkpoint")
	newest := snaps[len(snaps)-1] // all of one epoch here, so name order is Kafka's order
	snapData, _ := readDump(t, newest+".dump.txt")
	id, _ := ParseSnapshotName(filepath.Base(newest))

	f := quietFollower(fixtureDir)
	s := &collectSink{}
	if err := s.poll(f); err != nil {
		t.Fatal(err)
	}
	if s.snapshot != id {
		t.Fatalf("loaded snapshot %s, want the newest, %s", s.snapshot, id)
	}
	if !slices.Equal(s.snapshotAt, snapData) {
		t.Fatalf("snapshot records differ from kafka-dump-log's:\nours  %v\nkafka %v", s.snapshotAt, snapData)
	}
	var want []dumped
	for _, d := range logData {
		if d.offset >= id.EndOffset {
			want = append(want, d)
		}
	}
	if got := s.entries(); !slices.Equal(got, want) {
		t.Fatalf("log records after the snapshot differ from kafka-dump-log's:\nours  %v\nkafka %v", got, want)
	}
	checkUnits(t, s.units, id.EndOffset, lastOffset)
	t.Logf("snapshot %s: %d records; log after it: %d records in %d units, up to offset %d",
		id, len(snapData), len(want), len(s.units), lastOffset)

	// The whole log from offset 0, without snapshots.
	dir := t.TempDir()
	for _, seg := range fixtureFiles(t, fixtureDir, "*.log") {
		copyFile(t, seg, filepath.Join(dir, filepath.Base(seg)))
	}
	f = quietFollower(dir)
	s = &collectSink{}
	if err := s.poll(f); err != nil {
		t.Fatal(err)
	}
	if got := s.entries(); !slices.Equal(got, logData) {
		t.Fatalf("log records differ from kafka-dump-log's:\nours  %v\nkafka %v", got, logData)
	}
	checkUnits(t, s.units, 0, lastOffset)
	txns := 0
	for _, u := range s.units {
		if u.Transaction {
			txns++
		}
	}
	if txns == 0 {
		t.Fatal("the bootstrap transaction was not handed on as one unit")
	}
}

// checkUnits checks that units cover the log from start to last without gaps or
// overlaps, one after the other.
func checkUnits(t *testing.T, units []Unit, start, last int64) {
	t.Helper()
	prev := start - 1
	for i, u := range units {
		if u.Provenance.Offset <= prev {
			t.Fatalf("unit %d ends at %d, not after %d", i, u.Provenance.Offset, prev)
		}
		for _, e := range u.Entries {
			if e.Offset > u.Provenance.Offset || (!u.Transaction && e.Offset <= prev) {
				t.Fatalf("unit %d (%d..%d) holds offset %d", i, prev+1, u.Provenance.Offset, e.Offset)
			}
		}
		prev = u.Provenance.Offset
	}
	if prev != last {
		t.Fatalf("units end at %d, the log at %d", prev, last)
	}
}

// TestFixtureSnapshots checks every real snapshot file: header first, footer last.
func TestFixtureSnapshots(t *testing.T) {
	for _, fixtureDir := range fixtureDirs(t) {
		testFixtureSnapshots(t, fixtureDir)
	}
}

func testFixtureSnapshots(t *testing.T, fixtureDir string) {
	for _, path := range fixtureFiles(t, fixtureDir, "*.checkpoint") {
		id, ok := ParseSnapshotName(filepath.Base(path))
		if !ok {
			t.Fatalf("%s: not a snapshot name", path)
		}
		s, err := readSnapshot(path, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkRecords(s); err != nil {
			t.Fatal(err)
		}
		want, _ := readDump(t, path+".dump.txt")
		var got []dumped
		f := quietFollower(fixtureDir)
		if err := f.snapshotRecords(s, func(e Entry) error {
			got = append(got, dumped{e.Offset, e.Record.Type().EnumName()})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: records differ:\nours  %v\nkafka %v", path, got, want)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
