//go:build fixtures

package kafkatest

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestGenerateFixtures drives a real cluster through a scripted scenario and copies what
// Kafka wrote into the repository's testdata/kafka-<version>/, which every decoder test
// reads (internal/fixture):
//
//	__cluster_metadata-0/  segments and snapshots of node 1, with kafka-dump-log's
//	    decoding of each file beside it (<file>.dump.txt)
//	consumer-offsets.txt   every __consumer_offsets record
//
// Run it with `make fixtures` (KAFKA_VERSION selects the release), which also runs
// TestGenerateFixturesStreams for streams-offsets.txt.
func TestGenerateFixtures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c := New(t, Options{
		Rack:    "rack-a",
		Brokers: []string{"rack-b"},
		Props: map[string]string{
			// Small segments and frequent snapshots, so a short scenario leaves several
			// segments and at least one snapshot of its own.
			"internal.metadata.log.segment.bytes":             "8192",
			"metadata.log.max.record.bytes.between.snapshots": "4096",
		},
	})
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("fixture step: %s", what)
	}
	step("create orders (3 partitions, RF 2)", c.CreateTopic(ctx, "orders", 3, 2))
	step("create payments (2 partitions, RF 1)", c.CreateTopic(ctx, "payments", 2, 1))
	step("create audit-log (1 partition, RF 2)", c.CreateTopic(ctx, "audit-log", 1, 2))
	step("create events.v1 (4 partitions, RF 2)", c.CreateTopic(ctx, "events.v1", 4, 2))
	step("alter orders to 5 partitions", c.AlterPartitions(ctx, "orders", 5))

	var members []*Member
	member := func(group, kind string, topics []string, regex, want string) {
		t.Helper()
		m, err := c.StartMember(ctx, group, kind, topics, regex)
		step(fmt.Sprintf("start %s member of %s", kind, group), err)
		if _, err := m.WaitFor(ctx, want); err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	member("g-list", KindConsumer, []string{"orders", "payments"}, "", "assigned ")
	member("g-regex", KindConsumer, nil, `events\..*`, "assigned events.v1-")
	member("g-classic", KindClassic, []string{"orders"}, "", "assigned orders-")
	if c.versionAtLeast(4, 1) {
		member("g-share", KindShare, []string{"payments"}, "", "subscribed")
	}
	step("create events.v2 (2 partitions, RF 1), matched by g-regex", c.CreateTopic(ctx, "events.v2", 2, 1))
	if _, err := members[1].WaitFor(ctx, "events.v2-"); err != nil {
		t.Fatal(err)
	}
	step("produce to orders", produce(ctx, c.Bootstrap(), "orders", 20))
	time.Sleep(3 * time.Second) // let commits and share-group state land
	rackC := "rack-c"
	step("restart broker 2 with rack rack-c", c.Nodes[1].Restart(ctx, &rackC))
	step("delete audit-log", c.DeleteTopic(ctx, "audit-log"))
	step("delete payments", c.DeleteTopic(ctx, "payments"))
	time.Sleep(2 * time.Second)
	step("recreate payments (3 partitions, RF 2)", c.CreateTopic(ctx, "payments", 3, 2))
	step("set retention.ms on orders", c.AlterTopicConfig(ctx, "orders", "retention.ms=3600000"))
	time.Sleep(3 * time.Second)
	for _, m := range members {
		m.Close()
	}
	step("members left their groups", nil)
	time.Sleep(2 * time.Second)

	offsets := readAllRecords(ctx, t, c.Bootstrap(), "__consumer_offsets")
	c.Close()

	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	version := "kafka-" + c.Version
	regen := fmt.Sprintf("KAFKA_VERSION=%s make fixtures", c.Version)

	out := filepath.Join(root, "testdata", version)
	metaOut := filepath.Join(out, "__cluster_metadata-0")
	os.RemoveAll(metaOut) // README.md and other hand-kept files stay
	files := copyMetadataLog(t, c.Nodes[0].MetadataLogDir(), metaOut)
	for _, f := range files {
		dump, err := c.DumpLog(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, f+".dump.txt", dump)
	}
	write(t, filepath.Join(out, "consumer-offsets.txt"), offsets)
	if _, err := os.Stat(filepath.Join(out, "README.md")); err == nil {
		return
	}
	write(t, filepath.Join(out, "README.md"), fmt.Sprintf(`# Real Kafka %s fixtures: metadata log and __consumer_offsets

`+"`__cluster_metadata-0/`"+`: copied from node 1 (controller+broker, rack-a) of a two-node
cluster after the scenario in internal/kafkatest/fixtures_test.go: topics created, orders
altered to 5 partitions, broker 2 (rack-b) restarted with rack-c, audit-log deleted,
payments deleted and recreated with a new id, a topic config set, KIP-848, classic and
share groups joining and leaving. Small segments (internal.metadata.log.segment.bytes=8192)
and frequent snapshots (metadata.log.max.record.bytes.between.snapshots=4096). Each file's
decoding by Kafka's own kafka-dump-log --cluster-metadata-decoder is beside it as
<file>.dump.txt.

`+"`consumer-offsets.txt`"+`: every record of every partition of __consumer_offsets after
the scenario: KIP-848 groups g-list (topics orders, payments) and g-regex (regex
events\..*), classic group g-classic (orders), share group g-share (payments; from 4.2 on:
4.1 formats storage without share.version), their offset commits, the topic changes that
bumped their epochs, and the members leaving. One record per line, tab-separated:
partition, offset, key as hex, value as hex or "null" for a tombstone.

`+"`streams-offsets.txt`"+`: the same for another cluster after the test bed's Kafka
Streams application (java/streams/StreamsApp.java, group.protocol=streams) ran
(TestGenerateFixturesStreams).

Regenerate: %s (writes testdata/%s/).
`, c.Version, regen, version))
}

func (c *Cluster) versionAtLeast(major, minor int) bool {
	var ma, mi int
	fmt.Sscanf(c.Version, "%d.%d", &ma, &mi)
	return ma > major || (ma == major && mi >= minor)
}

func produce(ctx context.Context, bootstrap, topic string, n int) error {
	w := &kafka.Writer{Addr: kafka.TCP(strings.Split(bootstrap, ",")...), Topic: topic, BatchTimeout: 10 * time.Millisecond}
	defer w.Close()
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
	}
	return w.WriteMessages(ctx, msgs...)
}

// readAllRecords returns every record now in topic as lines of
// "partition offset key-hex value-hex|null".
func readAllRecords(ctx context.Context, t *testing.T, bootstrap, topic string) string {
	t.Helper()
	addr := strings.Split(bootstrap, ",")[0]
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
	var b strings.Builder
	for _, p := range parts {
		pc, err := kafka.DialLeader(ctx, "tcp", addr, topic, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		first, last, err := pc.ReadOffsets()
		pc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if first == last {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: p.ID, MaxWait: 200 * time.Millisecond})
		r.SetOffset(first)
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatalf("reading %s-%d: %v", topic, p.ID, err)
			}
			value := "null"
			if m.Value != nil {
				value = hex.EncodeToString(m.Value)
			}
			fmt.Fprintf(&b, "%d\t%d\t%s\t%s\n", p.ID, m.Offset, hex.EncodeToString(m.Key), value)
			if m.Offset+1 >= last {
				break
			}
		}
		r.Close()
	}
	return b.String()
}

// copyMetadataLog copies the segments and snapshots of a metadata log dir.
func copyMetadataLog(t *testing.T, from, to string) []string {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".log") && !strings.HasSuffix(name, ".checkpoint") {
			continue
		}
		dst := filepath.Join(to, name)
		if err := copyFile(filepath.Join(from, name), dst); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(dst)
		t.Logf("fixture file %s (%d bytes)", name, fi.Size())
		out = append(out, dst)
	}
	if len(out) < 2 {
		t.Fatalf("expected segments and snapshots in %s, got %v", from, out)
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGenerateFixturesStreams runs the test bed's Kafka Streams application
// (java/streams/StreamsApp.java, group.protocol=streams) on a real cluster and writes
// every __consumer_offsets record it leaves to testdata/kafka-<version>/streams-offsets.txt,
// in the format of consumer-offsets.txt. `make fixtures` runs it after
// TestGenerateFixtures.
func TestGenerateFixturesStreams(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := New(t, StreamsOptions(Options{Rack: "rack-a", Brokers: []string{"rack-b"}}))
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("fixture step: %s", what)
	}
	step("create s-orders (2 partitions, RF 2)", c.CreateTopic(ctx, "s-orders", 2, 2))
	step("create s-payments (1 partition, RF 1)", c.CreateTopic(ctx, "s-payments", 1, 1))
	app, err := c.StartStreamsApp(ctx, StreamsApp{ID: "kw-streams", Topics: []string{"s-orders", "s-payments"},
		Pattern: `s-pat\..*`, ReplicationFactor: 2})
	step("start Streams application kw-streams", err)
	_, err = app.WaitFor(ctx, "state RUNNING")
	step("kw-streams running", err)
	step("produce to s-orders", produce(ctx, c.Bootstrap(), "s-orders", 20))
	time.Sleep(3 * time.Second) // let commits land
	step("alter s-orders to 3 partitions", c.AlterPartitions(ctx, "s-orders", 3))
	time.Sleep(6 * time.Second) // a heartbeat or two: the coordinator bumps the epoch
	app.Close()
	step("kw-streams closed", nil)
	time.Sleep(2 * time.Second)
	offsets := readAllRecords(ctx, t, c.Bootstrap(), "__consumer_offsets")
	c.Close()

	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "testdata", "kafka-"+c.Version, "streams-offsets.txt"), offsets)
}

// copyFile copies from to to, making to's directory.
func copyFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
