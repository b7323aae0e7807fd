package metagen

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestKafkaReadsGeneratedLog proves that what metagen writes is a valid KRaft metadata
// log for Kafka itself (KAFKA_VERSION, default 4.3.1): kafka-dump-log decodes every
// batch and record of the snapshot and of the segment after it without an error, with
// the record counts written; kafka-metadata-shell loads the snapshot into its image
// and shows exactly the brokers, racks, topics, ids, partitions, replicas and
// directories of the Config. It skips without Java and Maven unless CI=true.
func TestKafkaReadsGeneratedLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM; runs in make test")
	}
	kafkatest.RequireTools(t)
	version := kafkatest.Version()
	tools, err := kafkatest.Tools(version)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ForKafka(version)
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions, c.Brokers, c.Racks = 20, 3, 6, 3
	c.Order = OrderRolling // the record types of OrderSequential, in other orders and batch sizes
	const changes = 25
	files, err := WriteDir(filepath.Join(t.TempDir(), "__cluster_metadata-0"), c, changes)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("kafka-dump-log", func(t *testing.T) {
		out, err := tools.DumpLog(ctx, files.Snapshot, files.Segment)
		if err != nil {
			t.Fatal(err)
		}
		dumps := strings.Split(out, "Dumping ")
		if len(dumps) != 3 {
			t.Fatalf("want 2 files dumped, got:\n%s", out)
		}
		snap, seg := parseDump(t, dumps[1]), parseDump(t, dumps[2])
		if want := fmt.Sprintf("Snapshot end offset: %d, epoch: %d", c.SnapshotEndOffset(), c.Epoch); !strings.Contains(dumps[1], want) {
			t.Errorf("snapshot dump lacks %q", want)
		}
		if want := fmt.Sprintf("Log starting offset: %d", c.SnapshotEndOffset()); !strings.Contains(dumps[2], want) {
			t.Errorf("segment dump lacks %q", want)
		}
		snap.check(t, "snapshot", files.SnapshotStats,
			map[string]int{"SnapshotHeader": 1, "KRaftVersion": 1, "KRaftVoters": 1, "SnapshotFooter": 1})
		seg.check(t, "segment", files.SegmentStats, map[string]int{"LeaderChange": 1})
	})

	t.Run("kafka-metadata-shell", func(t *testing.T) {
		if !tools.HasShell() {
			t.Skipf("no kafka-metadata-shell for Kafka %s; kafka-dump-log checked the files", version)
		}
		sh, err := tools.StartShell(ctx, nil, files.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		defer sh.Close()
		// The last metadata record is the one before the footer.
		if _, err := sh.WaitImage(ctx, files.SnapshotStats.LastOffset-1); err != nil {
			t.Fatal(err)
		}
		run := func(cmd string) string {
			t.Helper()
			out, err := sh.Run(ctx, cmd)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		checkShellTopics(t, &c, run("tree /image/topics/byName"))
		checkShellBrokers(t, &c, run("tree /image/cluster/brokers"))
		checkShellFeatures(t, &c, run("tree /image/features"))
		// One partition by path, as an operator would look at it.
		p := run("cat /image/topics/byName/topic-00007/2")
		if got, want := parseRegistration(t, p), c.registration(7, 2); got != want {
			t.Errorf("cat topic-00007/2:\n got %s\nwant %s", got, want)
		}
		if ids := strings.Fields(run("ls /image/topics/byId")); len(ids) != c.Topics {
			t.Errorf("ls /image/topics/byId: %d ids, want %d", len(ids), c.Topics)
		}
		for _, line := range strings.Split(sh.Transcript(), "\n") {
			if logLine.MatchString(line) && !strings.Contains(line, "Ignoring control record") {
				t.Errorf("shell log: %s", line)
			}
		}
	})
}

// dump is what parseDump reads from one file's kafka-dump-log output.
type dump struct {
	batches, valid int
	types          map[string]int // metadata records by Kafka's enum name
	control        map[string]int // control records by the name kafka-dump-log prints
	offsets        []int64
}

var (
	payloadType = regexp.MustCompile(`payload: \{"type":"([A-Z_]+)"`)
	controlType = regexp.MustCompile(`headerKeys: \[\] (SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters|LeaderChange)`)
	recordOff   = regexp.MustCompile(`^\| offset: (\d+) `)
	logLine     = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d+ \[`)
)

func parseDump(t *testing.T, out string) dump {
	t.Helper()
	d := dump{types: map[string]int{}, control: map[string]int{}}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "baseOffset:"):
			d.batches++
			if strings.HasSuffix(line, "isvalid: true") {
				d.valid++
			}
		case strings.HasPrefix(line, "| offset:"):
			m := recordOff.FindStringSubmatch(line)
			off, _ := strconv.ParseInt(m[1], 10, 64)
			d.offsets = append(d.offsets, off)
			if m := payloadType.FindStringSubmatch(line); m != nil {
				d.types[m[1]]++
			} else if m := controlType.FindStringSubmatch(line); m != nil {
				d.control[m[1]]++
			} else {
				t.Errorf("record kafka-dump-log could not decode: %s", line)
			}
		case strings.Contains(line, "Error") || strings.Contains(line, "invalid bytes") ||
			strings.Contains(line, "Exception") || strings.Contains(line, "Mismatched") || strings.Contains(line, "non-consecutive"):
			t.Errorf("kafka-dump-log: %s", line)
		}
	}
	return d
}

func (d dump) check(t *testing.T, what string, st Stats, control map[string]int) {
	t.Helper()
	if d.batches != st.Batches || d.valid != d.batches {
		t.Errorf("%s: kafka-dump-log saw %d batches, %d valid; wrote %d", what, d.batches, d.valid, st.Batches)
	}
	want := map[string]int{}
	for typ, n := range st.ByType {
		want[typ.EnumName()] = int(n)
	}
	if !mapsEqual(d.types, want) {
		t.Errorf("%s: kafka-dump-log records %v, wrote %v", what, d.types, want)
	}
	if !mapsEqual(d.control, control) {
		t.Errorf("%s: kafka-dump-log control records %v, want %v", what, d.control, control)
	}
	for i, off := range d.offsets {
		if off != st.FirstOffset+int64(i) {
			t.Fatalf("%s: record %d at offset %d, want %d", what, i, off, st.FirstOffset+int64(i))
		}
	}
	if n := int64(len(d.offsets)); n != st.LastOffset-st.FirstOffset+1 {
		t.Errorf("%s: %d records, wrote offsets %d-%d", what, n, st.FirstOffset, st.LastOffset)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// registration is a partition as Kafka's PartitionRegistration.toString prints it,
// reduced to the fields compared.
type registration struct {
	replicas, isr, dirs, leader, leaderEpoch, partitionEpoch string
}

func (c *Config) registration(t, p int) registration {
	rs := c.Replicas(nil, t, p)
	var dirs []string
	for _, r := range rs {
		dirs = append(dirs, c.Directory(r).String())
	}
	list := fmt.Sprint(rs)
	list = strings.ReplaceAll(list, " ", ", ")
	return registration{replicas: list, isr: list, dirs: "[" + strings.Join(dirs, ", ") + "]",
		leader: strconv.Itoa(int(rs[0])), leaderEpoch: "0", partitionEpoch: "0"}
}

var registrationRE = regexp.MustCompile(`PartitionRegistration\(replicas=(\[[^]]*\]), directories=(\[[^]]*\]), isr=(\[[^]]*\]),.* leader=(-?\d+),.* leaderEpoch=(-?\d+), partitionEpoch=(-?\d+)\)`)

func parseRegistration(t *testing.T, s string) registration {
	t.Helper()
	m := registrationRE.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("not a PartitionRegistration: %q", s)
	}
	return registration{replicas: m[1], dirs: m[2], isr: m[3], leader: m[4], leaderEpoch: m[5], partitionEpoch: m[6]}
}

// checkShellTopics compares `tree /image/topics/byName` with the Config: each topic
// is "name:" followed by its partitions ("  N:" then the registration), "  id:" and
// "  name:", each value on the next line, indented.
func checkShellTopics(t *testing.T, c *Config, tree string) {
	t.Helper()
	type topic struct {
		id, name string
		parts    map[int]registration
	}
	topics := map[string]*topic{}
	var cur *topic
	var key string
	for _, line := range strings.Split(tree, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		text := strings.TrimSpace(line)
		switch {
		case text == "" || logLine.MatchString(line):
		case indent == 0 && strings.HasSuffix(text, ":"):
			cur = &topic{parts: map[int]registration{}}
			topics[strings.TrimSuffix(text, ":")] = cur
		case indent == 2 && strings.HasSuffix(text, ":") && cur != nil:
			key = strings.TrimSuffix(text, ":")
		case indent == 4 && cur != nil:
			switch key {
			case "id":
				cur.id = text
			case "name":
				cur.name = text
			default:
				p, err := strconv.Atoi(key)
				if err != nil {
					t.Fatalf("unexpected tree line %q", line)
				}
				cur.parts[p] = parseRegistration(t, text)
			}
		default:
			t.Fatalf("unexpected tree line %q", line)
		}
	}
	if len(topics) != c.Topics {
		t.Errorf("shell shows %d topics, want %d", len(topics), c.Topics)
	}
	for i := range c.Topics {
		name := c.TopicName(i)
		got := topics[name]
		if got == nil {
			t.Errorf("shell lacks topic %s", name)
			continue
		}
		if got.name != name || got.id != c.TopicID(i).String() || len(got.parts) != c.Partitions {
			t.Errorf("topic %s: shell shows name %q id %s with %d partitions; want id %s, %d", name, got.name, got.id,
				len(got.parts), c.TopicID(i), c.Partitions)
		}
		for p := range c.Partitions {
			if want := c.registration(i, p); got.parts[p] != want {
				t.Errorf("%s-%d: shell shows %+v, want %+v", name, p, got.parts[p], want)
			}
		}
	}
}

// mvNames are Kafka's names of the metadata.version levels the known releases write.
var mvNames = map[int16]string{27: "4.1-IV1", 30: "4.3-IV0", 33: "4.4-IV2"}

// checkShellFeatures compares `tree /image/features` with the Config: metadataVersion
// and one finalized_<name> node per other feature, each value on the next line.
func checkShellFeatures(t *testing.T, c *Config, tree string) {
	t.Helper()
	got := map[string]string{}
	var key string
	for _, line := range strings.Split(tree, "\n") {
		switch text := strings.TrimSpace(line); {
		case text == "" || logLine.MatchString(line):
		case !strings.HasPrefix(line, " ") && strings.HasSuffix(text, ":"):
			key = strings.TrimSuffix(text, ":")
		default:
			got[key] = text
		}
	}
	want := map[string]string{"metadataVersion": "Optional[" + mvNames[c.MetadataVersion] + "]"}
	for _, f := range c.Features {
		want["finalized_"+f.Name] = strconv.Itoa(int(f.Level))
	}
	for k, v := range want {
		if got[k] != v && (k != "metadataVersion" || mvNames[c.MetadataVersion] != "") {
			t.Errorf("shell feature %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

var brokerRE = regexp.MustCompile(`BrokerRegistration\(id=(\d+), epoch=(\d+), incarnationId=([\w-]+),.* rack=(Optional\[[^]]*\]|Optional.empty), fenced=(\w+),.* directories=\[([^]]*)\]`)

// checkShellBrokers compares `tree /image/cluster/brokers` with the Config.
func checkShellBrokers(t *testing.T, c *Config, tree string) {
	t.Helper()
	seen := 0
	for _, line := range strings.Split(tree, "\n") {
		m := brokerRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		seen++
		id64, _ := strconv.ParseInt(m[1], 10, 32)
		id := int32(id64)
		wantRack := "Optional[" + c.Rack(id) + "]"
		if c.Racks == 0 {
			wantRack = "Optional.empty"
		}
		got := []string{m[2], m[3], m[4], m[5], m[6]}
		want := []string{strconv.Itoa(int(100 + id)), c.Incarnation(id).String(), wantRack, "false", c.Directory(id).String()}
		if !slices.Equal(got, want) || id < 1 || int(id) > c.Brokers {
			t.Errorf("broker %d: shell shows epoch, incarnation, rack, fenced, dirs %v; want %v", id, got, want)
		}
	}
	if seen != c.Brokers {
		t.Errorf("shell shows %d brokers, want %d:\n%s", seen, c.Brokers, tree)
	}
}
