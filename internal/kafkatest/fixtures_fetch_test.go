//go:build fixtures

package kafkatest

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// TestGenerateFixturesFetch writes testdata/kafka-<version>/consumer-offsets-fetch.bin:
// the answer of a real broker to one Fetch (v11, read_committed, every partition of
// __consumer_offsets from offset 0), after a KIP-848 group, a classic group and
// member-less offset commits; without its size and correlation id. Beside it,
// consumer-offsets-fetch.txt holds the same records as kafka-go's reader reads them
// (the format of consumer-offsets.txt). groups' TestFetchFixture checks its Fetch
// answer parser against them.
//
//	KAFKA_VERSION=4.3.1 go test -tags fixtures -run TestGenerateFixturesFetch ./internal/kafkatest/
func TestGenerateFixturesFetch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := New(t, Options{})
	if err := c.CreateTopic(ctx, "orders", 3, 1); err != nil {
		t.Fatal(err)
	}
	var members []*Member
	for _, m := range []struct{ group, kind string }{{"f-consumer", KindConsumer}, {"f-classic", KindClassic}} {
		mem, err := c.StartMember(ctx, m.group, m.kind, []string{"orders"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mem.WaitFor(ctx, "assigned orders-"); err != nil {
			t.Fatal(err)
		}
		members = append(members, mem)
	}
	if err := produce(ctx, c.Bootstrap(), "orders", 20); err != nil {
		t.Fatal(err)
	}
	client := &kafka.Client{Addr: kafka.TCP(c.Bootstrap())}
	for i := range 30 { // member-less commits, several per batch
		_, err := client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: fmt.Sprintf("f-bare-%d", i%3), GenerationID: -1,
			Topics: map[string][]kafka.OffsetCommit{"orders": {{Partition: 0, Offset: int64(i)}, {Partition: 1, Offset: int64(i)}, {Partition: 2, Offset: int64(i)}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(6 * time.Second) // the members' automatic commits
	for _, m := range members {
		m.Close()
	}
	time.Sleep(2 * time.Second)

	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"__consumer_offsets"}})
	if err != nil {
		t.Fatal(err)
	}
	req := &fetch.Request{ReplicaID: -1, MaxWaitTime: 500, MinBytes: 1, MaxBytes: 8 << 20, IsolationLevel: 1, SessionEpoch: -1,
		Topics: []fetch.RequestTopic{{Topic: "__consumer_offsets"}}}
	for _, p := range md.Topics[0].Partitions {
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, fetch.RequestPartition{Partition: int32(p.ID),
			CurrentLeaderEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: 1 << 20})
	}
	conn, err := net.Dial("tcp", c.Bootstrap())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := protocol.WriteRequest(conn, 11, 1, "kraftwatch-fixtures", req); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	var size [4]byte
	if _, err := io.ReadFull(rd, size[:]); err != nil {
		t.Fatal(err)
	}
	answer := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(rd, answer); err != nil {
		t.Fatal(err)
	}
	records := readAllRecords(ctx, t, c.Bootstrap(), "__consumer_offsets")
	c.Close()

	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "testdata", "kafka-"+c.Version)
	if err := os.WriteFile(filepath.Join(out, "consumer-offsets-fetch.bin"), answer[4:], 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(out, "consumer-offsets-fetch.txt"), records)
	t.Logf("wrote a Fetch answer of %d bytes and its records to %s", len(answer)-4, out)
}
