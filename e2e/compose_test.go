//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestComposeEventScript runs deploy/compose/event.sh, compose.yaml's event one-shot,
// against the sidecar tests' Kafka, with the release's own tool classes standing in
// for the image's /opt/kafka/bin (kafkatest WriteBinScripts): kraftwatch announces the
// group the script starts (subscription_changed), the partition it adds
// (partitions_added 1 -> 2), and its member leaving, as docs/operations.md says.
func TestComposeEventScript(t *testing.T) {
	s, ctx := sidecar(t)
	s.StartKraftwatch(ctx, t, "orders-[0-9]+-app")
	bin := t.TempDir()
	if err := s.Cluster.WriteBinScripts(bin); err != nil {
		t.Fatal(err)
	}
	root, err := kafkatest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "deploy", "compose", "event.sh"))
	cmd.Env = append(os.Environ(), "KAFKA_BIN="+bin, "BOOTSTRAP="+s.Cluster.Bootstrap())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("event.sh: %v\n%s", err, out)
	}
	t.Logf("event.sh took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	m := regexp.MustCompile(`group (orders-[0-9]+-app) reads (orders-[0-9]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("event.sh did not name its group:\n%s", out)
	}
	group, topic := string(m[1]), string(m[2])
	got := s.Watcher.Expect(ctx, t, map[string]int{group: 3}, time.Minute)[group]
	for i, want := range []events.Reason{
		{Kind: events.SubscriptionChanged, Topic: topic, NewPartitions: 1},
		{Kind: events.PartitionsAdded, Topic: topic, OldPartitions: 1, NewPartitions: 2},
		{Kind: events.SubscriptionChanged, Topic: topic, OldPartitions: 2}, // its member left
	} {
		r := got[i].Reason(t)
		want.TopicID = r.TopicID
		if !e2etest.SameReason(r, want) {
			t.Errorf("event %d: %v; want reason %+v", i, got[i], want)
		}
	}
	e2etest.CheckChain(t, group, got)
}
