//go:build e2e

// Package e2e tests kraftwatch against real Kafka and NATS processes started by the
// tests themselves (internal/kafkatest, internal/natstest).
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// TestSmoke checks the test bed itself: a topic created and altered with kafka-go grows
// the metadata log on disk, a KIP-848 group writes __consumer_offsets records that
// kafka-go reads back, and JetStream stores a message.
func TestSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := kafkatest.New(t, kafkatest.Options{})
	if got := c.Nodes[0].KafkaVersion(); got != c.Version {
		t.Fatalf("broker logged Kafka version %q, want %q", got, c.Version)
	}
	metaDir := c.Nodes[0].MetadataLogDir()
	size0 := segmentBytes(t, metaDir)

	conn, err := kafka.DialContext(ctx, "tcp", c.Nodes[0].BrokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.CreateTopics(kafka.TopicConfig{Topic: "smoke", NumPartitions: 3, ReplicationFactor: 1}); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	waitPartitions(ctx, t, c.Bootstrap(), "smoke", 3)
	size1 := segmentBytes(t, metaDir)
	if size1 <= size0 {
		t.Fatalf("metadata log did not grow on topic creation: %d -> %d bytes", size0, size1)
	}

	client := &kafka.Client{Addr: kafka.TCP(c.Bootstrap()), Timeout: 30 * time.Second}
	res, err := client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: "smoke", Count: 6}},
	})
	if err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	if err := res.Errors["smoke"]; err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	waitPartitions(ctx, t, c.Bootstrap(), "smoke", 6)
	size2 := segmentBytes(t, metaDir)
	if size2 <= size1 {
		t.Fatalf("metadata log did not grow on partition increase: %d -> %d bytes", size1, size2)
	}
	t.Logf("__cluster_metadata-0 segments: %d -> %d -> %d bytes", size0, size1, size2)

	m, err := c.StartMember(ctx, "smoke-group", kafkatest.KindConsumer, []string{"smoke"}, "")
	if err != nil {
		t.Fatal(err)
	}
	line, err := m.WaitFor(ctx, "assigned smoke-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("KIP-848 member: %s", line)
	m.Close()

	records := readConsumerOffsets(ctx, t, c.Bootstrap())
	if records == 0 {
		t.Fatal("kafka-go read no records from __consumer_offsets")
	}
	t.Logf("kafka-go read %d records from __consumer_offsets", records)

	js := e2etest.JetStream(t, natstest.Start(t).ClientURL())
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SMOKE", Subjects: []string{"smoke.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "smoke.hello", []byte("hi"), jetstream.WithMsgID("smoke-1")); err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, "smoke.hello")
	if err != nil {
		t.Fatalf("JetStream did not store the message: %v", err)
	}
	if string(msg.Data) != "hi" {
		t.Fatalf("JetStream stored %q, want %q", msg.Data, "hi")
	}
	t.Logf("JetStream stored %q at sequence %d", msg.Data, msg.Sequence)
}

// segmentBytes is the total size of the .log segments of a metadata log dir.
func segmentBytes(t *testing.T, dir string) int64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no segments in %s: %v", dir, err)
	}
	var n int64
	for _, l := range logs {
		fi, err := os.Stat(l)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// waitPartitions waits until the brokers' metadata shows topic with n partitions.
func waitPartitions(ctx context.Context, t *testing.T, bootstrap, topic string, n int) {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(strings.Split(bootstrap, ",")...), Timeout: 10 * time.Second}
	err := e2etest.Wait(ctx, 0, func() error {
		md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err == nil && len(md.Topics) == 1 && md.Topics[0].Error == nil && len(md.Topics[0].Partitions) == n {
			return nil
		}
		return fmt.Errorf("topic %s never had %d partitions (last: %v)", topic, n, err)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readConsumerOffsets reads every record of __consumer_offsets that exists now.
func readConsumerOffsets(ctx context.Context, t *testing.T, bootstrap string) int {
	t.Helper()
	conn, err := kafka.DialContext(ctx, "tcp", strings.Split(bootstrap, ",")[0])
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions("__consumer_offsets")
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, p := range parts {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: strings.Split(bootstrap, ","), Topic: p.Topic, Partition: p.ID, MaxWait: 200 * time.Millisecond})
		pc, err := kafka.DialLeader(ctx, "tcp", strings.Split(bootstrap, ",")[0], p.Topic, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		last, err := pc.ReadLastOffset()
		pc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < last; {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatalf("reading %s-%d: %v", p.Topic, p.ID, err)
			}
			if len(m.Key) < 2 {
				t.Fatalf("record at %d has a %d-byte key", m.Offset, len(m.Key))
			}
			total++
			off = m.Offset + 1
		}
		r.Close()
	}
	return total
}
