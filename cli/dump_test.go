package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The fixtures are real Kafka metadata logs (testdata/kafka-*/ at the root, written by
// `make fixtures`); the golden outputs are in cli/testdata/kafka-*/.
func fixtureDirs(t *testing.T) []string {
	t.Helper()
	return fixture.MetadataDirs(t)
}

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Dump(args, &out, &errb)
	return out.String(), errb.String(), code
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it); got:\n%s", path, got)
	}
}

func TestGolden(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		version := filepath.Base(filepath.Dir(dir))
		t.Run(version, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				args []string
			}{
				{"dir.txt", []string{dir}},
				{"dir.json", []string{"--json", dir}},
				{"dir-records.txt", []string{"--records", dir}},
			} {
				out, errs, code := run(t, tc.args...)
				if code != 0 || errs != "" {
					t.Fatalf("%v: exit %d, stderr %s", tc.args, code, errs)
				}
				golden(t, filepath.Join("testdata", version, tc.name), out)
			}
		})
	}
}

// dumpRecord reads a record line of kafka-dump-log --cluster-metadata-decoder.
var dumpRecord = regexp.MustCompile(`^\| offset: (\d+) .*?headerKeys: \[\] (?:payload: \{"type":"([A-Z_]+)"|(\w+):? \{)`)

// kafkaControl maps kafka-dump-log's names of control records to ours.
var kafkaControl = map[string]string{"LeaderChange": "LEADER_CHANGE", "SnapshotHeader": "SNAPSHOT_HEADER",
	"SnapshotFooter": "SNAPSHOT_FOOTER", "KRaftVersion": "KRAFT_VERSION", "KRaftVoters": "KRAFT_VOTERS"}

// TestFilesAgainstKafkaDumpLog dumps every fixture file with --records --json and
// checks offsets and record types, record by record, against kafka-dump-log's own
// decoding of the same file.
func TestFilesAgainstKafkaDumpLog(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		snaps, _ := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
		for _, f := range append(files, snaps...) {
			t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(f), func(t *testing.T) {
				var want []string
				df, err := os.Open(f + ".dump.txt")
				if err != nil {
					t.Fatal(err)
				}
				defer df.Close()
				sc := bufio.NewScanner(df)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					if m := dumpRecord.FindStringSubmatch(sc.Text()); m != nil {
						typ := m[2]
						if typ == "" {
							typ = kafkaControl[m[3]]
						}
						want = append(want, m[1]+" "+typ)
					} else if strings.HasPrefix(sc.Text(), "| offset") {
						t.Fatalf("cannot read %q", sc.Text())
					}
				}
				out, errs, code := run(t, "--records", "--json", f)
				if code != 0 {
					t.Fatalf("exit %d, stderr %s", code, errs)
				}
				// A segment alone changes partitions it never created: warnings only.
				for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
					if line != "" && !strings.Contains(line, "warning: offset") {
						t.Fatalf("stderr: %s", errs)
					}
				}
				var got []string
				for _, line := range strings.Split(out, "\n") {
					var r struct {
						Offset        int64
						Type, Control string
					}
					if !strings.HasPrefix(line, `{"`) || json.Unmarshal([]byte(line), &r) != nil {
						break // the summary follows the records
					}
					got = append(got, strconv.FormatInt(r.Offset, 10)+" "+r.Type+r.Control)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("records differ from kafka-dump-log:\nours:\n%s\nkafka:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if len(got) == 0 {
					t.Fatal("no records")
				}
			})
		}
	}
}

func TestBadInput(t *testing.T) {
	tmp := t.TempDir()
	l := observertest.New(t, filepath.Join(tmp, "log", "__cluster_metadata-0"))
	l.Append(observertest.Topic("a", observertest.ID(1)))
	l.Append(observertest.Topic("b", observertest.ID(2)))
	seg := l.SegmentPath(0)
	segBytes, _ := os.ReadFile(seg)

	write := func(name string, b []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corrupt := append([]byte(nil), segBytes...)
	corrupt[40] ^= 0xff
	noFooter := observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("a", observertest.ID(1))}, 0, true)
	os.MkdirAll(filepath.Join(tmp, "empty"), 0o755)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"usage", nil, 2, "usage"},
		{"missing path", []string{filepath.Join(tmp, "nope")}, 1, "no such file"},
		{"empty dir", []string{filepath.Join(tmp, "empty")}, 1, "no snapshot and no log segment"},
		{"garbage file", []string{write("00000000000000000000.log", bytes.Repeat([]byte("garbage!"), 20))}, 1, "corrupt"},
		{"corrupt crc", []string{write("c/00000000000000000000.log", corrupt)}, 1, "crc"},
		// A torn tail: the records before it are shown, with a warning, exit 0, whether a
		// file or a directory, with or without --records.
		{"torn file", []string{write("t/00000000000000000000.log", segBytes[:len(segBytes)-7])}, 0, "ends inside a batch"},
		{"torn file records", []string{"--records", filepath.Join(tmp, "t/00000000000000000000.log")}, 0, "ends inside a batch"},
		{"torn dir", []string{filepath.Dir(write("td/__cluster_metadata-0/00000000000000000000.log", segBytes[:len(segBytes)-7]))}, 0, "ends inside a batch"},
		{"torn dir records", []string{"--records", filepath.Join(tmp, "td/__cluster_metadata-0")}, 0, "ends inside a batch"},
		{"log dir root", []string{filepath.Join(tmp, "log")}, 0, ""},
		{"snapshot without footer", []string{write("00000000000000000001-0000000001.checkpoint", noFooter)}, 1, "SnapshotFooter"},
		{"not a log file", []string{write("x.txt", []byte("hello"))}, 1, "not a metadata log"},
		{"good dir", []string{l.Dir}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := run(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.want)
			}
			if code != 0 && out != "" {
				t.Fatalf("printed an image despite the error:\n%s", out)
			}
			if code == 0 && !strings.Contains(out, "topics") {
				t.Fatalf("exit 0 without an image:\n%s", out)
			}
			t.Logf("stderr: %s", strings.TrimSpace(errs))
		})
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{"TopicID": "topicId", "ISR": "isr", "LastKnownELR": "lastKnownElr",
		"KRaftVersion": "kRaftVersion", "Name": "name", "NextProducerID": "nextProducerId", "VoterDirectoryID": "voterDirectoryId"} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHashesVerifyUsage: --help exits 0 and lists the flags; bad usage exits 2; a
// bootstrap server that refuses connections is named within seconds, not after minutes.
func TestHashesVerifyUsage(t *testing.T) {
	defer func(d time.Duration) { readerStall = d }(readerStall)
	readerStall = time.Second // "verify refused" waits it out
	dir := fixture.MetadataDir(t, "4.4.0")
	for _, tc := range []struct {
		name string
		cmd  func([]string, io.Writer, io.Writer) int
		args []string
		code int
		want string
	}{
		{"hashes help", Hashes, []string{"--help"}, 0, "-scheme"},
		{"verify help", Verify, []string{"--help"}, 0, "-bootstrap"},
		{"hashes no dir", Hashes, nil, 2, "usage: kraftwatch hashes"},
		{"verify no bootstrap", Verify, []string{dir}, 2, "usage: kraftwatch verify"},
		{"verify refused", Verify, []string{"--bootstrap", "127.0.0.1:1", dir}, 1, "127.0.0.1:1: connect: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			start := time.Now()
			code := tc.cmd(tc.args, &out, &errb)
			if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
				t.Fatalf("exit %d (want %d), output %q, want %q", code, tc.code, out.String()+errb.String(), tc.want)
			}
			if took := time.Since(start); took > readerStall+20*time.Second {
				t.Fatalf("took %v", took)
			}
		})
	}
}

// TestDumpFromController loads the image from a fake controller quorum leader
// (--bootstrap-controller): its snapshot and the log up to the high watermark.
func TestDumpFromController(t *testing.T) {
	c := observertest.NewController(t, 1)
	c.SetSnapshot(10, 1, observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Broker(1, "rack-a"),
		observertest.Topic("from-snapshot", observertest.ID(1)), observertest.Partition(observertest.ID(1), 0, 1)}, 0, false))
	c.Append(observertest.Topic("from-log", observertest.ID(2)), observertest.Partition(observertest.ID(2), 0, 1))
	c.Commit()
	c.Append(observertest.Topic("uncommitted", observertest.ID(3)))
	out, errs, code := run(t, "--json", "--bootstrap-controller", c.Addr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tp := range s.Topics {
		names = append(names, tp.Name)
	}
	if strings.Join(names, ",") != "from-log,from-snapshot" || s.Offset != 11 || !strings.Contains(s.Source, "snapshot 10-1") {
		t.Errorf("topics %v at offset %d from %q", names, s.Offset, s.Source)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--records", "--bootstrap-controller", c.Addr}, 2, "--records prints files"},
		{[]string{"--bootstrap-controller", c.Addr, t.TempDir()}, 2, "not both"},
	} {
		if _, errs, code := run(t, tc.args...); code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	var eout, eerr bytes.Buffer
	if code := DumpEnv([]string{"--bootstrap-controller", c.Addr}, []string{"KRAFTWATCH_CONTROLLER_SASL_MECHANISM=PLAIN"}, &eout, &eerr); code != 1 ||
		!strings.Contains(eerr.String(), "KRAFTWATCH_CONTROLLER_SASL_USERNAME") || strings.Contains(eerr.String(), "KAFKA_") {
		t.Errorf("bad controller settings: exit %d, stderr %q", code, eerr.String())
	}
	var hout, herr bytes.Buffer
	if code := Hashes([]string{"--bootstrap-controller", c.Addr}, &hout, &herr); code != 0 || !strings.Contains(hout.String(), "from-snapshot") {
		t.Errorf("hashes: exit %d, %s%s", code, hout.String(), herr.String())
	}
}
