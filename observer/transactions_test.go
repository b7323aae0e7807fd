package observer

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/scripttest"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata scripts")

// The transaction script, testdata/transactions.txt, holds two commands (see
// internal/scripttest for the file format):
//
//	log             write a new metadata log dir: the input lines are records in
//	                metadata text form (UUIDs as short names), one per line; a line
//	                "batch" starts a new record batch, "leader-change" writes a
//	                LeaderChange control batch. Prints the units the observer hands
//	                on, one per line, then the image they give.
//	kafka-metadata-shell [applies-aborted=a,b]
//	                the image Kafka's own loader gives for the last log, as
//	                kafka-metadata-shell shows it: provenance and topic names.
//	                applies-aborted names the topics of aborted transactions that
//	                Kafka applies and kraftwatch drops (docs/metadata-log.md#transactions).
//
// TestTransactionScript runs the log cases and checks that every
// kafka-metadata-shell case differs from the kraftwatch image before it only by its
// applies-aborted topics; TestTransactionsAgainstKafkaShell runs the real shell on
// each log. go test -update rewrites the output of the cases a test runs.
const transactionScript = "testdata/transactions.txt"

// scriptLog is what a log case wrote and what kraftwatch made of it.
type scriptLog struct {
	segment string // the segment file
	last    int64  // offset of the last record of the last data batch
	image   string // "image @offset eEpoch topics=a,b" as kraftwatch built it
	// txnErrors counts the markers out of place kraftwatch ignored.
	txnErrors int64
}

// writeScriptLog writes the log of a log case into a new dir.
func writeScriptLog(t *testing.T, c scripttest.Case) *scriptLog {
	t.Helper()
	l := observertest.New(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"))
	last := int64(-1)
	var batch []metadata.Record
	flush := func() {
		if len(batch) > 0 {
			last = l.Append(batch...) + int64(len(batch)) - 1
			batch = nil
		}
	}
	for i, line := range c.Input {
		switch line {
		case "batch":
			flush()
		case "leader-change":
			flush()
			l.AppendLeaderChange(1)
		default:
			rec, err := metadata.ParseText(line, metadata.ShortUUIDs)
			if err != nil {
				t.Fatalf("%s: input line %d: %v", c.Pos, i+1, err)
			}
			batch = append(batch, rec)
		}
	}
	flush()
	if last < 0 {
		t.Fatalf("%s: no data batch", c.Pos)
	}
	return &scriptLog{segment: l.SegmentPath(0), last: last}
}

func scriptUnitLine(u Unit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "unit @%d", u.Provenance.Offset)
	switch {
	case u.Control:
		b.WriteString(" control")
	case u.Aborted:
		b.WriteString(" aborted")
	case u.Transaction:
		b.WriteString(" txn")
	}
	for _, e := range u.Entries {
		fmt.Fprintf(&b, " | %d %s", e.Offset, metadata.FormatText(e.Record, metadata.ShortUUIDs))
	}
	return b.String()
}

// runScriptLog reads the case's log as the Observer does and returns its output: the
// units a follower hands on, the image the Observer builds from them, and the counts
// of transactions dropped and of markers out of place.
func runScriptLog(t *testing.T, c scripttest.Case) (*scriptLog, []string) {
	t.Helper()
	sl := writeScriptLog(t, c)
	dir := filepath.Dir(sl.segment)
	f := quietFollower(dir)
	var sink collectSink
	if err := sink.poll(f); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range sink.units {
		out = append(out, scriptUnitLine(u))
	}
	o, _ := loadOnce(t, dir)
	im := o.img.Load()
	p := im.Provenance()
	sl.image = fmt.Sprintf("image @%d e%d topics=%s", p.Offset, p.Epoch, topicNames(im))
	sl.txnErrors = f.m.TransactionErrors.Load()
	out = append(out, sl.image)
	if n := f.m.AbortedTransactions.Load(); n > 0 {
		out = append(out, fmt.Sprintf("aborted transactions: %d", n))
	}
	if sl.txnErrors > 0 {
		out = append(out, fmt.Sprintf("markers out of place: %d", sl.txnErrors))
	}
	return sl, out
}

var imageLine = regexp.MustCompile(`^image @(-?\d+) e(-?\d+) topics=(.*)$`)

// withAborted is kraftwatch's image line with the topics of applies-aborted added, as
// Kafka's loader shows it.
func withAborted(t *testing.T, c scripttest.Case, kraftwatch string) string {
	t.Helper()
	m := imageLine.FindStringSubmatch(kraftwatch)
	if m == nil {
		t.Fatalf("%s: no image line %q", c.Pos, kraftwatch)
	}
	topics := splitTopics(m[3])
	for _, a := range c.Args {
		k, v, _ := strings.Cut(a, "=")
		if k != "applies-aborted" {
			t.Fatalf("%s: unknown argument %q", c.Pos, a)
		}
		for _, n := range splitTopics(v) {
			if slices.Contains(topics, n) {
				t.Fatalf("%s: applies-aborted=%s: kraftwatch keeps %s", c.Pos, v, n)
			}
			topics = append(topics, n)
		}
	}
	slices.Sort(topics)
	return fmt.Sprintf("image @%s e%s topics=%s", m[1], m[2], strings.Join(topics, ","))
}

func splitTopics(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// TestTransactionScript shows, case by case, the units the observer hands on for
// metadata transactions and the image they give, and checks that each recorded
// answer of kafka-metadata-shell is that image plus exactly its applies-aborted
// topics.
func TestTransactionScript(t *testing.T) {
	var last *scriptLog
	scripttest.Run(t, transactionScript, *update, func(c scripttest.Case) []string {
		switch c.Cmd {
		case "log":
			var out []string
			last, out = runScriptLog(t, c)
			return out
		case "kafka-metadata-shell":
			if last == nil {
				t.Fatalf("%s: no log before", c.Pos)
			}
			if want := withAborted(t, c, last.image); len(c.Want) == 0 || c.Want[0] != want {
				t.Errorf("%s: kafka-metadata-shell's recorded image %q is not kraftwatch's with the topics of applies-aborted: %q",
					c.Pos, c.Want, want)
			}
			if n := int64(len(c.Want) - 1); n != last.txnErrors {
				t.Errorf("%s: Kafka's loader faulted %d times, kraftwatch found %d markers out of place", c.Pos, n, last.txnErrors)
			}
			return c.Want // run by TestTransactionsAgainstKafkaShell
		}
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		return nil
	})
}

// TestTransactionsAgainstKafkaShell runs Kafka's own loader (kafka-metadata-shell of
// KAFKA_VERSION, default 4.3.1, one JVM per log) on every log of the transaction
// script and checks the image it shows: the provenance, and the topics, which are
// kraftwatch's plus the applies-aborted ones. It skips without Java and Maven
// unless CI=true.
func TestTransactionsAgainstKafkaShell(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM per case")
	}
	kafkatest.RequireTools(t)
	tools, err := kafkatest.Tools(kafkatest.Version())
	if err != nil {
		t.Fatal(err)
	}
	if !tools.HasShell() {
		t.Skipf("no kafka-metadata-shell for Kafka %s", tools.Version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var last *scriptLog
	scripttest.Run(t, transactionScript, *update, func(c scripttest.Case) []string {
		switch c.Cmd {
		case "log":
			last, _ = runScriptLog(t, c)
			return c.Want // checked by TestTransactionScript
		case "kafka-metadata-shell":
			got, err := shellImage(ctx, tools, last)
			if err != nil {
				t.Fatalf("%s: %v", c.Pos, err)
			}
			if want := withAborted(t, c, last.image); got[0] != want {
				t.Errorf("%s: Kafka %s's loader shows %q; kraftwatch with applies-aborted %q", c.Pos, tools.Version, got[0], want)
			}
			return got
		}
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		return nil
	})
}

var (
	shellProvenance = regexp.MustCompile(`offset (-?\d+), epoch (-?\d+)`)
	shellLogLine    = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d+ \[[^\]]*\] (ERROR|WARN) .*$`)
	shellFault      = regexp.MustCompile(`Encountered shell fault: ([^\n]*)\n[\w.$]+: ([^\n]*)`)
)

// shellImage loads sl's segment into kafka-metadata-shell and returns the image it
// shows, as an image line, then one line per fault its loader logged.
func shellImage(ctx context.Context, tools *kafkatest.Offline, sl *scriptLog) ([]string, error) {
	sh, err := tools.StartShell(ctx, nil, sl.segment)
	if err != nil {
		return nil, err
	}
	defer sh.Close()
	if _, err := sh.WaitImage(ctx, sl.last); err != nil {
		return nil, err
	}
	prov, err := sh.Run(ctx, "tree /image/provenance")
	if err != nil {
		return nil, err
	}
	m := shellProvenance.FindStringSubmatch(prov)
	if m == nil {
		return nil, fmt.Errorf("provenance %q", prov)
	}
	tree, err := sh.Run(ctx, "tree /image/topics/byName")
	if err != nil {
		return nil, err
	}
	var names []string
	lines := strings.Split(tree, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "name:" {
			names = append(names, strings.TrimSpace(lines[i+1]))
		}
	}
	slices.Sort(names)
	out := []string{fmt.Sprintf("image @%s e%s topics=%s", m[1], m[2], strings.Join(names, ","))}
	transcript := sh.Transcript()
	for _, f := range shellFault.FindAllStringSubmatch(transcript, -1) {
		out = append(out, fmt.Sprintf("fault: %s: %s", f[1], f[2]))
	}
	// Any other error or warning is not what the case is about.
	for _, l := range shellLogLine.FindAllString(transcript, -1) {
		if !strings.Contains(l, "Ignoring control record") && !strings.Contains(l, "Encountered shell fault") {
			return nil, fmt.Errorf("shell log: %s", l)
		}
	}
	return out, nil
}

// TestTransactionUnitsAgainstKafkaLoader compares, unit by unit, the images kraftwatch
// publishes for each log of the transaction script with the images Kafka's own
// MetadataBatchLoader publishes for it, fed as kafka-metadata-shell feeds it
// (testdata/LoaderPublishes.java, one JVM for every log): the same images at the same
// offsets, but for the topics of aborted transactions Kafka applies (applies-aborted
// of the case's kafka-metadata-shell line), and a fault where kraftwatch counts a
// marker out of place. Control batches are not compared: the shell does not hand
// them to the loader. It skips without Java and Maven unless CI=true.
func TestTransactionUnitsAgainstKafkaLoader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	kafkatest.RequireTools(t)
	home, err := kafkatest.Fetch(kafkatest.Version())
	if err != nil {
		t.Fatal(err)
	}
	s, err := scripttest.Parse(transactionScript)
	if err != nil {
		t.Fatal(err)
	}
	type logCase struct {
		pos     string
		segment string
		units   []string // kraftwatch's image after each unit, as the Java side prints it
		errors  int64
		aborted []string
	}
	var logs []*logCase
	for _, c := range s.Cases {
		switch c.Cmd {
		case "log":
			sl := writeScriptLog(t, c)
			f := quietFollower(filepath.Dir(sl.segment))
			var sink collectSink
			if err := sink.poll(f); err != nil {
				t.Fatal(err)
			}
			lc := &logCase{pos: c.Pos, segment: sl.segment, errors: f.m.TransactionErrors.Load()}
			d := image.NewDelta(image.Empty)
			for _, u := range sink.units {
				for _, e := range u.Entries {
					if err := d.Replay(e.Record); err != nil {
						t.Fatalf("%s: replay %d: %v", c.Pos, e.Offset, err)
					}
				}
				im, _ := d.Apply(u.Provenance)
				if u.Control {
					continue
				}
				lc.units = append(lc.units, fmt.Sprintf("publish @%d e%d topics=%s", u.Provenance.Offset, u.Provenance.Epoch, topicNames(im)))
			}
			logs = append(logs, lc)
		case "kafka-metadata-shell":
			for _, a := range c.Args {
				if v, ok := strings.CutPrefix(a, "applies-aborted="); ok {
					logs[len(logs)-1].aborted = splitTopics(v)
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", filepath.Join(home, "libs", "*"),
		filepath.Join("testdata", "LoaderPublishes.java")}
	for _, lc := range logs {
		args = append(args, lc.segment)
	}
	out, err := exec.CommandContext(ctx, "java", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("LoaderPublishes: %v\n%s", err, out)
	}
	kafka := map[string][]string{} // segment -> publish and fault lines
	var cur string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "log "):
			cur = strings.TrimPrefix(l, "log ")
		case strings.HasPrefix(l, "publish "), strings.HasPrefix(l, "fault: "):
			kafka[cur] = append(kafka[cur], l)
		}
	}
	for _, lc := range logs {
		var publishes []string
		var faults int64
		for _, l := range kafka[lc.segment] {
			if strings.HasPrefix(l, "fault: ") {
				faults++
				continue
			}
			// Take out the topics of aborted transactions Kafka applies.
			head, topics, _ := strings.Cut(l, "topics=")
			kept := slices.DeleteFunc(splitTopics(topics), func(n string) bool { return slices.Contains(lc.aborted, n) })
			publishes = append(publishes, head+"topics="+strings.Join(kept, ","))
		}
		if !slices.Equal(publishes, lc.units) {
			t.Errorf("%s: Kafka's MetadataBatchLoader published (applies-aborted %v taken out):\n%s\nkraftwatch:\n%s\nKafka's output:\n%s",
				lc.pos, lc.aborted, strings.Join(publishes, "\n"), strings.Join(lc.units, "\n"), strings.Join(kafka[lc.segment], "\n"))
		}
		if faults != lc.errors {
			t.Errorf("%s: Kafka's loader faulted %d times, kraftwatch found %d markers out of place", lc.pos, faults, lc.errors)
		}
	}
}
