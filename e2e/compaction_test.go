//go:build e2e

package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestCompactedConversions replays a compacted __consumer_offsets that holds groups'
// conversions. Group cv is upgraded and downgraded online: two classic members (Java
// consumers, group.protocol=classic), a consumer-protocol member joining (the
// coordinator converts the group to a consumer group: group.consumer.migration.policy
// is bidirectional by default) and leaving (converted back). Group cu is upgraded
// offline, in the shape of KAFKA-20254: a classic member commits offsets and leaves, a
// consumer-protocol member reading another topic joins the empty group, so that once
// the classic group's tombstone is gone its offset commits precede the consumer
// group's records. The topic is made to compact within seconds (segment.ms,
// min.cleanable.dirty.ratio and delete.retention.ms on it, log.cleaner.backoff.ms on the
// broker), and the test waits until the cleaner removed cv's superseded consumer-group
// records and cu's classic group records, tombstone included. A fresh kraftwatch then
// reads the compacted log, and the broker is restarted so that Kafka's own loader
// replays it: each time each group's type, state and members in kraftwatch's API must
// be what kafka-consumer-groups describes.
func TestCompactedConversions(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	c := kafkatest.New(t, kafkatest.Options{Props: map[string]string{
		"offsets.topic.num.partitions": "1",
		"log.cleaner.backoff.ms":       "500",
	}})
	s := e2etest.StartSidecar(t, c)
	const group, topic, offline, other = "cv", "cv-in", "cu", "cu-in"
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the coordinator's log of group %s:\n%s", group, grepFile(filepath.Join(c.Nodes[0].Dir, "server.log"), "group "+group))
		}
	})
	s.Admin.CreateTopic(ctx, t, topic, 4)
	s.Admin.CreateTopic(ctx, t, other, 1)
	classic := e2etest.Join{Group: group, Kind: kafkatest.KindClassic, Topics: []string{topic}}
	members := e2etest.StartMembers(ctx, t, c, classic, classic, e2etest.Join{Group: offline, Kind: kafkatest.KindClassic, Topics: []string{topic}})
	// cu's member commits offsets (every 2 s) and leaves: cu is an empty classic group.
	err := e2etest.Wait(ctx, time.Minute, func() error {
		if l, err := readOffsetsLog(ctx, c, group, offline); err != nil || l.commits == 0 {
			return fmt.Errorf("no offset commit of %s yet (%v)", offline, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	members[2].Close()
	setTopicConfigs(ctx, t, c, "__consumer_offsets", map[string]string{
		"segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "0",
	})

	// Upgrade, then downgrade; cu upgraded offline.
	up := e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: group, Topics: []string{topic}}, e2etest.Join{Group: offline, Topics: []string{other}})[0]
	waitDescribed(ctx, t, c, group, "Consumer", 3)
	up.Close()
	t.Logf("downgraded: %+v", waitDescribed(ctx, t, c, group, "Classic", 2))
	converted := time.Now()

	// The members commit every 2 s, so segments roll; the cleaner then drops what the
	// downgrade's tombstones superseded.
	var log offsetsLog
	err = e2etest.Wait(ctx, time.Minute, func() error {
		var err error
		if log, err = readOffsetsLog(ctx, c, group, offline); err != nil {
			return err
		}
		if log.consumerValues > 0 || log.classicRecords > 0 || !log.commitsFirst || log.records >= int(log.end-log.start) {
			return fmt.Errorf("not compacted yet: %+v", log)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("__consumer_offsets-0 compacted %v after the downgrade: %+v", time.Since(converted).Round(100*time.Millisecond), log)

	// A fresh kraftwatch replays the compacted log, then Kafka's own loader does
	// (the broker restarted); each time kraftwatch must show what Kafka describes.
	kw := s.StartKraftwatch(ctx, t, group+"|"+offline)
	agree(ctx, t, c, kw, group, "Classic")
	agree(ctx, t, c, kw, offline, "Consumer")
	if err := c.Nodes[0].Restart(ctx, nil); err != nil {
		t.Fatal(err)
	}
	d := agree(ctx, t, c, kw, group, "Classic")
	u := agree(ctx, t, c, kw, offline, "Consumer")
	t.Logf("compacted conversions replayed alike by Kafka and kraftwatch (%s: %s, %s, %d members; %s: %s, %s, %d members) in %v",
		group, d.typ, d.state, len(d.members), offline, u.typ, u.state, len(u.members), time.Since(start).Round(100*time.Millisecond))
}

// agree waits until kafka-consumer-groups describes group as stable, of type typ, and
// kraftwatch's API shows it alike (type, state, member ids), and returns what Kafka
// describes.
func agree(ctx context.Context, t *testing.T, c *kafkatest.Cluster, kw *e2etest.Kraftwatch, group, typ string) described {
	t.Helper()
	var want described
	err := e2etest.Wait(ctx, time.Minute, func() error {
		var err error
		if want, err = describeGroup(ctx, c, group); err != nil {
			return err
		}
		if want.typ != typ || want.state != "Stable" {
			return fmt.Errorf("kafka-consumer-groups: %s %+v, want a stable %s group", group, want, typ)
		}
		d, err := getGroup(kw, strings.ToLower(typ), group)
		if err != nil {
			return err
		}
		var ids []string
		for _, m := range d.Members {
			ids = append(ids, m.MemberID)
		}
		slices.Sort(ids)
		if d.Type != strings.ToLower(typ) || d.State != "stable" || !slices.Equal(ids, want.members) {
			return fmt.Errorf("kraftwatch: %s %s group %s with members %v; kafka-consumer-groups: %+v", group, d.Type, d.State, ids, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// described is a group as kafka-consumer-groups describes it.
type described struct {
	typ, state string
	members    []string // member ids, sorted
}

// waitDescribed waits until kafka-consumer-groups shows group stable, of type typ,
// with n members, and returns what it shows.
func waitDescribed(ctx context.Context, t *testing.T, c *kafkatest.Cluster, group, typ string, n int) described {
	t.Helper()
	var d described
	err := e2etest.Wait(ctx, time.Minute, func() error {
		var err error
		if d, err = describeGroup(ctx, c, group); err != nil {
			return err
		}
		if d.typ != typ || d.state != "Stable" || len(d.members) != n {
			return fmt.Errorf("group %s: %+v, want stable, type %s, %d members", group, d, typ, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// describeGroup runs kafka-consumer-groups --list --type --state and --describe
// --members.
func describeGroup(ctx context.Context, c *kafkatest.Cluster, group string) (described, error) {
	const tool = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
	var d described
	list, err := c.Tool(ctx, tool, "--bootstrap-server", c.Bootstrap(), "--list", "--type", "--state")
	if err != nil {
		return d, err
	}
	for _, row := range toolRows(list) {
		if row["GROUP"] == group {
			d.typ, d.state = row["TYPE"], row["STATE"]
		}
	}
	members, err := c.Tool(ctx, tool, "--bootstrap-server", c.Bootstrap(), "--describe", "--members", "--group", group)
	if err != nil {
		return d, err
	}
	for _, row := range toolRows(members) {
		d.members = append(d.members, row["CONSUMER-ID"])
	}
	slices.Sort(d.members)
	return d, nil
}

// toolRows splits a Kafka tool's table (a header line of column names, then rows)
// into one map per row.
func toolRows(out string) []map[string]string {
	var header []string
	var rows []map[string]string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case header == nil || slices.Equal(f, header):
			header = f
		case len(f) == len(header):
			row := map[string]string{}
			for i, h := range header {
				row[h] = f[i]
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// offsetsLog is what __consumer_offsets-0 holds now.
type offsetsLog struct {
	start, end int64 // log start and end offsets
	records    int   // records read between them
	// consumerValues counts the online group's consumer-group metadata records that
	// are not tombstones: the upgrade wrote them, the downgrade superseded them.
	consumerValues int
	// classicRecords counts the offline group's classic group records, tombstones
	// included, commits its offset commits; commitsFirst is set when its first record
	// is an offset commit.
	classicRecords, commits int
	commitsFirst            bool
}

func readOffsetsLog(ctx context.Context, c *kafkatest.Cluster, online, offline string) (offsetsLog, error) {
	var l offsetsLog
	conn, err := kafka.DialLeader(ctx, "tcp", c.Nodes[0].BrokerAddr, "__consumer_offsets", 0)
	if err != nil {
		return l, err
	}
	l.start, l.end, err = conn.ReadOffsets()
	conn.Close()
	if err != nil || l.end == l.start {
		return l, err
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{c.Nodes[0].BrokerAddr}, Topic: "__consumer_offsets", Partition: 0,
		MaxWait: 200 * time.Millisecond})
	defer r.Close()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		return l, err
	}
	dec := groups.NewDecoder()
	seen := false
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return l, fmt.Errorf("reading __consumer_offsets-0: %w", err)
		}
		l.records++
		rec, err := dec.Decode(m.Key, m.Value)
		switch {
		case err != nil:
		case rec.Type.IsOffsetCommit():
			// groups does not decode offset commits; the key's group follows its
			// int16 version, an int16-length string.
			if n := len(offline); len(m.Key) >= 4+n && int(binary.BigEndian.Uint16(m.Key[2:])) == n && string(m.Key[4:4+n]) == offline {
				l.commitsFirst = l.commitsFirst || !seen
				seen = true
				l.commits++
			}
		case rec.GroupID == online && !rec.Tombstone && rec.Type == groups.ConsumerGroupMetadata:
			l.consumerValues++
		case rec.GroupID == offline:
			seen = true
			if rec.Type == groups.GroupMetadata {
				l.classicRecords++
			}
		}
		if m.Offset >= l.end-1 {
			return l, nil
		}
	}
}

// setTopicConfigs sets configs of topic, leaving its others (IncrementalAlterConfigs).
func setTopicConfigs(ctx context.Context, t *testing.T, c *kafkatest.Cluster, topic string, configs map[string]string) {
	t.Helper()
	res := kafka.IncrementalAlterConfigsRequestResource{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}
	for k, v := range configs {
		res.Configs = append(res.Configs, kafka.IncrementalAlterConfigsRequestConfig{Name: k, Value: v, ConfigOperation: kafka.ConfigOperationSet})
	}
	cl := &kafka.Client{Addr: kafka.TCP(c.Nodes[0].BrokerAddr), Timeout: 30 * time.Second}
	resp, err := cl.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{res}})
	if err == nil {
		for _, r := range resp.Resources {
			err = errors.Join(err, r.Error)
		}
	}
	if err != nil {
		t.Fatalf("set configs %v of %s: %v", configs, topic, err)
	}
}

// grepFile returns the lines of file that contain s.
func grepFile(file, s string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		if strings.Contains(strings.ToLower(line), strings.ToLower(s)) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}
