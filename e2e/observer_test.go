//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/cli"
	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/observer"
)

// observerCluster is the Kafka of the observer tests: node 1 controller+broker in
// rack-a, node 2 a broker in rack-b. Small segments, frequent snapshots and a tiny
// retention make Kafka roll segments, write snapshots and delete old segments within a
// test.
func observerCluster(t *testing.T) *kafkatest.Cluster {
	t.Helper()
	return e2etest.Shared(t, "observer", kafkatest.Options{
		Rack:    "rack-a",
		Brokers: []string{"rack-b"},
		Props: map[string]string{
			"internal.metadata.log.segment.bytes":             "8192",
			"metadata.log.max.record.bytes.between.snapshots": "4096",
			"metadata.max.retention.bytes":                    "1",
		},
	})
}

// running is an observer of one node's metadata log dir.
type running struct {
	name  string
	o     *observer.Observer
	snaps int64 // snapshots loaded by the initial load (0 when the log starts at 0)
	mu    sync.Mutex
	lat   []time.Duration // wall time from the batch's append time to the update
}

func startObserver(ctx context.Context, t *testing.T, name, dir string) *running {
	t.Helper()
	r := &running{name: name}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("observer", name)
	o, err := observer.New(observer.Config{Dir: dir, Logger: logger, Handler: func(u observer.Update) {
		if u.Unit != nil && u.Provenance.Timestamp > 0 {
			r.mu.Lock()
			r.lat = append(r.lat, time.Since(time.UnixMilli(u.Provenance.Timestamp)))
			r.mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	r.o = o
	go o.Run(ctx)
	select {
	case <-o.Ready():
	case <-time.After(30 * time.Second):
		t.Fatalf("observer of %s not ready: %v", name, o.LastError())
	}
	r.snaps = o.Metrics().SnapshotsLoaded.Load()
	return r
}

// TestObserverLive follows the metadata logs of both nodes of a live cluster through
// scripted changes and checks after each that the observers' images agree with
// Kafka: kafka-go's metadata for topics, partitions, replicas and broker racks, and
// kafka-dump-log's decoding of the same files for topic ids and racks.
func TestObserverLive(t *testing.T) {
	c := observerCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	obs := []*running{
		startObserver(ctx, t, "node-1", c.Nodes[0].MetadataLogDir()),
		startObserver(ctx, t, "node-2", c.Nodes[1].MetadataLogDir()),
	}
	client := &kafka.Client{Addr: kafka.TCP(strings.Split(c.Bootstrap(), ",")...), Timeout: 10 * time.Second}

	check := func(step string) {
		t.Helper()
		start := time.Now()
		for _, r := range obs {
			agreeWithKafkaGo(ctx, t, step, r, client)
		}
		agreedAfter := time.Since(start)
		for i, r := range obs {
			agreeWithDumpLog(ctx, t, step, r, c, c.Nodes[i].MetadataLogDir())
		}
		for _, r := range obs {
			m := r.o.Metrics()
			if err := r.o.LastError(); err != nil {
				t.Fatalf("%s: observer of %s: %v", step, r.name, err)
			}
			if n := m.ReplayErrors.Load() + m.CorruptBatches.Load() + m.UnknownRecords.Load() + m.CorruptRecords.Load(); n != 0 {
				t.Fatalf("%s: observer of %s: %d replay errors, corrupt or unknown records", step, r.name, n)
			}
		}
		t.Logf("step %q: both observers agree with Kafka (kafka-go's view and theirs matched after %v); node-1 at offset %d",
			step, agreedAfter.Round(time.Millisecond), obs[0].o.Image().Provenance().Offset)
	}
	check("start")

	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("create orders", c.CreateTopic(ctx, "orders", 3, 2))
	must("create payments", c.CreateTopic(ctx, "payments", 2, 1))
	check("topics created")

	must("alter orders", c.AlterPartitions(ctx, "orders", 5))
	check("partitions added")

	rackC := "rack-c"
	must("restart broker 2", c.Nodes[1].Restart(ctx, &rackC))
	check("broker 2 restarted in rack-c")
	if b, ok := obs[0].o.Image().Broker(2); !ok || b.Rack != "rack-c" {
		t.Fatalf("broker 2: %+v", b)
	}

	old, _ := obs[0].o.Image().TopicByName("payments")
	oldID := old.ID()
	must("delete payments", c.DeleteTopic(ctx, "payments"))
	check("topic deleted")

	must("recreate payments", c.CreateTopic(ctx, "payments", 3, 2))
	check("topic recreated")
	if nt, _ := obs[0].o.Image().TopicByName("payments"); nt.ID() == oldID {
		t.Fatalf("payments kept its id %s", oldID)
	}

	// A new snapshot: Kafka writes one every 4 KiB of records.
	snaps := func() []string {
		s, _ := filepath.Glob(filepath.Join(c.Nodes[0].MetadataLogDir(), "*.checkpoint"))
		return s
	}
	before := snaps()
	for i := 0; slices.Equal(snaps(), before); i++ {
		if i == 20 {
			t.Fatalf("no new snapshot after creating %d topics", i)
		}
		must("create bulk topic", c.CreateTopic(ctx, fmt.Sprintf("bulk-%d", i), 24, 2))
	}
	check("new snapshot")
	t.Logf("snapshots now: %v", baseNames(snaps()))
	newest := snaps()[len(snaps())-1]
	agreeWithMetadataShell(ctx, t, c, newest)

	// Old segments deleted: Kafka cleans every 60 s; with a retention of 1 byte it
	// deletes every segment below the newest snapshot.
	first := filepath.Join(c.Nodes[0].MetadataLogDir(), "00000000000000000000.log")
	err := e2etest.Wait(ctx, 3*time.Minute, func() error {
		if _, err := os.Stat(first); os.IsNotExist(err) {
			return nil
		}
		// Keep the log moving so that the newest snapshot moves past whole segments,
		// a topic every five seconds or so.
		must("create filler topic", c.CreateTopic(ctx, fmt.Sprintf("filler-%d", time.Now().UnixNano()), 1, 1))
		time.Sleep(5 * time.Second)
		return fmt.Errorf("Kafka did not delete %s", first)
	})
	if err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(c.Nodes[0].MetadataLogDir(), "*.log"))
	t.Logf("old segments deleted; segments now: %v", baseNames(segs))
	check("old segments deleted")

	for _, r := range obs {
		m := r.o.Metrics()
		if m.SnapshotsLoaded.Load() != r.snaps || m.Resets.Load() != 0 {
			t.Fatalf("observer of %s loaded %d snapshots (%d at start) and rebuilt %d times; want no reload of a snapshot it was past",
				r.name, m.SnapshotsLoaded.Load(), r.snaps, m.Resets.Load())
		}
		r.mu.Lock()
		lat := slices.Clone(r.lat)
		r.mu.Unlock()
		slices.Sort(lat)
		if len(lat) > 0 {
			t.Logf("observer of %s: %d batches, %d units; append time to update: median %v, p99 %v, max %v",
				r.name, m.Batches.Load(), m.Units.Load(), lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
		}
	}
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// agreeWithKafkaGo waits until the observer's image has the same topics, partitions,
// replicas and broker racks as the cluster's metadata seen through kafka-go.
func agreeWithKafkaGo(ctx context.Context, t *testing.T, step string, r *running, client *kafka.Client) {
	t.Helper()
	start := time.Now()
	var first string
	err := e2etest.Wait(ctx, 30*time.Second, func() error {
		md, err := client.Metadata(ctx, &kafka.MetadataRequest{})
		diff := ""
		if err != nil {
			diff = err.Error()
		} else if diff = compareKafkaGo(md, r.o.Image()); diff == "" {
			return nil
		}
		if first == "" {
			first = diff
		}
		return errors.New(diff)
	})
	if err != nil {
		t.Fatalf("%s: observer of %s disagrees with kafka-go metadata: %v", step, r.name, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("%s: observer of %s agreed with kafka-go after %v; first difference: %s", step, r.name, d.Round(time.Millisecond), first)
	}
}

func compareKafkaGo(md *kafka.MetadataResponse, im *image.Image) string {
	var diffs []string
	want := map[string]string{}
	for _, tp := range md.Topics {
		if tp.Error != nil {
			return fmt.Sprintf("topic %s: %v", tp.Name, tp.Error)
		}
		parts := slices.Clone(tp.Partitions)
		sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
		var b strings.Builder
		for _, p := range parts {
			fmt.Fprintf(&b, " %d:", p.ID)
			for _, rep := range p.Replicas {
				fmt.Fprintf(&b, "%d,", rep.ID)
			}
		}
		want[tp.Name] = b.String()
	}
	got := map[string]string{}
	for tp := range im.Topics() {
		var b strings.Builder
		for i := range int32(tp.NumPartitions()) {
			p, ok := tp.Partition(i)
			if !ok {
				fmt.Fprintf(&b, " %d:missing", i)
				continue
			}
			fmt.Fprintf(&b, " %d:", i)
			for _, rep := range p.Replicas() {
				fmt.Fprintf(&b, "%d,", rep)
			}
		}
		got[tp.Name()] = b.String()
	}
	for name, w := range want {
		if got[name] != w {
			diffs = append(diffs, fmt.Sprintf("topic %s: kafka-go%s, observer%s", name, w, got[name]))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("topic %s: only in the observer", name))
		}
	}
	for _, b := range md.Brokers {
		ib, ok := im.Broker(int32(b.ID))
		if !ok {
			diffs = append(diffs, fmt.Sprintf("broker %d: not in the observer", b.ID))
		} else if ib.Rack != b.Rack {
			diffs = append(diffs, fmt.Sprintf("broker %d: rack %q in kafka-go, %q in the observer", b.ID, b.Rack, ib.Rack))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "\n")
}

var dumpPayload = regexp.MustCompile(`^\| offset: (\d+) .*payload: (\{.*\})$`)

// agreeWithDumpLog decodes the node's newest snapshot and its segments with Kafka's
// kafka-dump-log, replays the topic and broker records it prints (ids, names,
// racks), and compares them with the observer's image.
func agreeWithDumpLog(ctx context.Context, t *testing.T, step string, r *running, c *kafkatest.Cluster, dir string) {
	t.Helper()
	var diff string
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Second)
		}
		ids, racks, err := dumpLogState(ctx, c, dir)
		if err != nil {
			diff = err.Error() // a file deleted meanwhile: try again
			continue
		}
		im := r.o.Image()
		var diffs []string
		for name, id := range ids {
			tp, ok := im.TopicByName(name)
			if !ok || tp.ID().String() != id {
				diffs = append(diffs, fmt.Sprintf("topic %s: id %s in kafka-dump-log, observer %v", name, id, tp))
			}
		}
		if im.NumTopics() != len(ids) {
			diffs = append(diffs, fmt.Sprintf("%d topics in kafka-dump-log, %d in the observer", len(ids), im.NumTopics()))
		}
		for id, rack := range racks {
			b, ok := im.Broker(id)
			if !ok || b.Rack != rack {
				diffs = append(diffs, fmt.Sprintf("broker %d: rack %q in kafka-dump-log, observer %+v", id, rack, b))
			}
		}
		if im.NumBrokers() != len(racks) {
			diffs = append(diffs, fmt.Sprintf("%d brokers in kafka-dump-log, %d in the observer", len(racks), im.NumBrokers()))
		}
		if diff = strings.Join(diffs, "\n"); diff == "" {
			return
		}
	}
	t.Fatalf("%s: observer of %s disagrees with kafka-dump-log on %s:\n%s", step, r.name, dir, diff)
}

// dumpLogState returns topic name -> id and broker -> rack from kafka-dump-log's
// decoding of the newest snapshot of dir and the segments after it.
func dumpLogState(ctx context.Context, c *kafkatest.Cluster, dir string) (map[string]string, map[int32]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var newest observer.SnapshotID
	snap := ""
	var files []string
	for _, e := range ents {
		if id, ok := observer.ParseSnapshotName(e.Name()); ok && (snap == "" || id.Compare(newest) > 0) {
			newest, snap = id, e.Name()
		}
		if _, ok := observer.ParseSegmentName(e.Name()); ok {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if snap != "" {
		files = append([]string{filepath.Join(dir, snap)}, files...)
	}
	out, err := c.DumpLog(ctx, files...)
	if err != nil {
		return nil, nil, err
	}
	ids := map[string]string{}
	names := map[string]string{}
	racks := map[int32]string{}
	inSnapshot := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Dumping ") {
			inSnapshot = strings.HasSuffix(line, ".checkpoint")
			continue
		}
		m := dumpPayload.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		off, _ := strconv.ParseInt(m[1], 10, 64)
		if !inSnapshot && off < newest.EndOffset {
			continue
		}
		var p struct {
			Type string
			Data struct {
				Name     string
				TopicID  string `json:"topicId"`
				BrokerID int32  `json:"brokerId"`
				Rack     *string
			}
		}
		if err := json.Unmarshal([]byte(m[2]), &p); err != nil {
			return nil, nil, fmt.Errorf("kafka-dump-log payload %s: %v", m[2], err)
		}
		switch p.Type {
		case "TOPIC_RECORD":
			ids[p.Data.Name] = p.Data.TopicID
			names[p.Data.TopicID] = p.Data.Name
		case "REMOVE_TOPIC_RECORD":
			delete(ids, names[p.Data.TopicID])
			delete(names, p.Data.TopicID)
		case "REGISTER_BROKER_RECORD":
			racks[p.Data.BrokerID] = ""
			if p.Data.Rack != nil {
				racks[p.Data.BrokerID] = *p.Data.Rack
			}
		case "UNREGISTER_BROKER_RECORD":
			delete(racks, p.Data.BrokerID)
		}
	}
	return ids, racks, nil
}

// agreeWithMetadataShell compares `kraftwatch dump --json` of one snapshot file with
// kafka-metadata-shell's tree of the same file: topic names, ids and replicas, broker
// racks.
func agreeWithMetadataShell(ctx context.Context, t *testing.T, c *kafkatest.Cluster, snap string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Dump([]string{"--json", snap}, &out, &errb); code != 0 {
		t.Fatalf("kraftwatch dump %s: exit %d: %s", snap, code, errb.String())
	}
	var ours cli.Summary
	if err := json.Unmarshal(out.Bytes(), &ours); err != nil {
		t.Fatal(err)
	}
	// The snapshot holds several batches: a non-interactive shell may answer from its
	// empty image before its publisher has the file's (its waitUntilCaughtUp waits for
	// the loader only), so ask one shell once its image reached the file's last record.
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "__cluster_metadata-0", filepath.Base(snap))
	if err := os.MkdirAll(filepath.Dir(cp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	last := int64(-1) // the in-file offset of its last metadata record, as the shell counts
	if err := observer.ReadFile(cp, func(r observer.FileRecord) error {
		if r.Record != nil {
			last = r.Offset
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sh, err := c.StartShell(ctx, nil, cp)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := sh.WaitImage(wait, last); err != nil {
		t.Fatalf("kafka-metadata-shell on %s: %v\n%s", snap, err, sh.Stderr(20))
	}
	topics, err := sh.Run(ctx, "tree /image/topics/byName")
	if err != nil {
		t.Fatal(err)
	}
	brokers, err := sh.Run(ctx, "tree /image/cluster/brokers")
	if err != nil {
		t.Fatal(err)
	}
	kafkaTopics := shellTree(topics)
	kafkaBrokers := shellTree(brokers)
	replicasRE := regexp.MustCompile(`replicas=\[([0-9, ]*)\]`)
	rackRE := regexp.MustCompile(`rack=(Optional\[(.*?)\]|Optional\.empty)`)
	var diffs []string
	names := map[string]bool{}
	for path := range kafkaTopics {
		names[strings.Split(path, "/")[0]] = true
	}
	if len(names) != len(ours.Topics) {
		diffs = append(diffs, fmt.Sprintf("%d topics in the shell, %d in kraftwatch dump", len(names), len(ours.Topics)))
	}
	for _, tp := range ours.Topics {
		base := tp.Name
		if got := kafkaTopics[base+"/id"]; got != tp.ID {
			diffs = append(diffs, fmt.Sprintf("topic %s: id %s in the shell, %s in kraftwatch dump", tp.Name, got, tp.ID))
		}
		for _, p := range tp.Partitions {
			reg := kafkaTopics[fmt.Sprintf("%s/%d", base, p.Partition)]
			m := replicasRE.FindStringSubmatch(reg)
			if m == nil || strings.ReplaceAll(m[1], " ", "") != strings.Trim(ints(p.Replicas), "[]") {
				diffs = append(diffs, fmt.Sprintf("topic %s partition %d: shell %q, kraftwatch dump replicas %v", tp.Name, p.Partition, reg, p.Replicas))
			}
		}
	}
	for _, b := range ours.Brokers {
		reg := kafkaBrokers[strconv.Itoa(int(b.ID))]
		m := rackRE.FindStringSubmatch(reg)
		want := "<none>"
		if b.Rack != nil {
			want = *b.Rack
		}
		got := "<none>"
		if m != nil && m[1] != "Optional.empty" {
			got = m[2]
		}
		if m == nil || got != want {
			diffs = append(diffs, fmt.Sprintf("broker %d: shell %q, kraftwatch dump rack %s", b.ID, reg, want))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("kraftwatch dump of %s disagrees with kafka-metadata-shell:\n%s", snap, strings.Join(diffs, "\n"))
	}
	t.Logf("kraftwatch dump of %s agrees with kafka-metadata-shell: %d topics, %d brokers",
		filepath.Base(snap), len(ours.Topics), len(ours.Brokers))
}

// shellTree reads kafka-metadata-shell's `tree` output (the node's children, two
// spaces of indent per level, "name:" for a node, a value line under each leaf) into
// path -> value, paths relative to the node given to tree.
func shellTree(out string) map[string]string {
	vals := map[string]string{}
	var stack []string
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || strings.Contains(line, "] ERROR ") || strings.Contains(line, "] WARN ") {
			continue
		}
		depth := (len(line) - len(trimmed)) / 2
		if depth > len(stack) {
			continue
		}
		stack = stack[:depth]
		if strings.HasSuffix(trimmed, ":") && !strings.Contains(trimmed, " ") {
			stack = append(stack, strings.TrimSuffix(trimmed, ":"))
			continue
		}
		vals[strings.Join(stack, "/")] = trimmed
	}
	return vals
}

func ints(s []int32) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(int(v))
	}
	return "[" + strings.Join(parts, ",") + "]"
}
