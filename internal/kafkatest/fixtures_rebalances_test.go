//go:build fixtures

package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestGenerateFixturesRebalances drives one KIP-848 group through the sequences whose
// epoch bumps groups.Rebalances attributes and the main fixture lacks, and writes every
// __consumer_offsets record to testdata/kafka-<version>/rebalances-offsets.txt, in the
// format of consumer-offsets.txt: member A joins g-rb (rb-orders), member B joins and is
// killed (fenced after the group's 3 s session), A subscribes to rb-events too,
// partitions are added to rb-orders, A leaves. `make fixtures` runs it after
// TestGenerateFixtures.
func TestGenerateFixturesRebalances(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := New(t, Options{})
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("fixture step: %s", what)
	}
	step("create rb-orders (2 partitions)", c.CreateTopic(ctx, "rb-orders", 2, 1))
	step("create rb-events (1 partition)", c.CreateTopic(ctx, "rb-events", 1, 1))
	cl := &kafka.Client{Addr: kafka.TCP(c.Nodes[0].BrokerAddr), Timeout: 30 * time.Second}
	res, err := cl.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{
		Resources: []kafka.IncrementalAlterConfigsRequestResource{{ResourceType: kafka.ResourceType(32), ResourceName: "g-rb", // GROUP
			Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "consumer.session.timeout.ms", Value: "3000", ConfigOperation: kafka.ConfigOperationSet}}}},
	})
	if err == nil {
		for _, r := range res.Resources {
			err = errors.Join(err, r.Error)
		}
	}
	step("set consumer.session.timeout.ms=3000 on g-rb", err)
	a, err := c.StartMember(ctx, "g-rb", KindConsumer, []string{"rb-orders"}, "")
	step("start member A", err)
	_, err = a.WaitFor(ctx, "assigned rb-orders-0,rb-orders-1")
	step("A assigned both partitions", err)
	b, err := c.StartMember(ctx, "g-rb", KindConsumer, []string{"rb-orders"}, "")
	step("start member B", err)
	_, err = b.WaitFor(ctx, "assigned rb-orders-")
	step("B assigned a partition", err)
	before := len(a.Lines())
	b.Kill()
	step("kill B", nil)
	step("B fenced: A has both partitions again", waitAfter(ctx, a, before, "assigned rb-orders-0,rb-orders-1"))
	step("A subscribes to rb-events too", a.Subscribe([]string{"rb-events", "rb-orders"}))
	_, err = a.WaitFor(ctx, "rb-events-0")
	step("A assigned rb-events", err)
	step("alter rb-orders to 3 partitions", c.AlterPartitions(ctx, "rb-orders", 3))
	_, err = a.WaitFor(ctx, "rb-orders-2")
	step("A assigned rb-orders-2", err)
	a.Close()
	step("A left", nil)
	time.Sleep(2 * time.Second)
	offsets := readAllRecords(ctx, t, c.Bootstrap(), "__consumer_offsets")
	c.Close()

	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "testdata", "kafka-"+c.Version, "rebalances-offsets.txt"), offsets)
}

// waitAfter waits until m printed a line containing substr after its first n lines.
func waitAfter(ctx context.Context, m *Member, n int, substr string) error {
	for {
		lines := m.Lines()
		for _, l := range lines[min(n, len(lines)):] {
			if strings.Contains(l, substr) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no line %q after line %d: %w (output %q)", substr, n, ctx.Err(), lines)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
