//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
)

// TestVerify runs `kraftwatch verify` on the shared sidecar cluster after a change the
// coordinator has to recompute (partitions added to a group's topic): once the group's
// member has the new partition, kraftwatch's kafka-scheme hash of every consumer group
// equals the MetadataHash the coordinator stored, and verify exits 0 saying so.
func TestVerify(t *testing.T) {
	c := sidecarCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := e2etest.NewAdmin(c)
	admin.CreateTopic(ctx, t, "vf-orders", 2)
	e2etest.StartConsumers(ctx, t, c, map[string]string{"vf-g": "vf-orders"})
	admin.AlterPartitions(ctx, t, "vf-orders", 3)

	summary := regexp.MustCompile(`(\d+) group\(s\) checked against the coordinator's MetadataHash, (\d+) mismatch\(es\)`)
	var out, stderr bytes.Buffer
	// The coordinator recomputes on the member's next heartbeat: until then, try again.
	err := e2etest.Wait(ctx, 0, func() error {
		out.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, e2etest.Binary(t), "verify", "--bootstrap", c.Bootstrap(), c.Nodes[0].LogDir)
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("kraftwatch verify: %v\n%s", err, stderr.Bytes())
		}
		m := summary.FindSubmatch(out.Bytes())
		if m == nil {
			t.Fatalf("kraftwatch verify printed no summary (exit %v):\n%s\n%s", err, out.Bytes(), stderr.Bytes())
		}
		checked, _ := strconv.Atoi(string(m[1]))
		mismatches, _ := strconv.Atoi(string(m[2]))
		if (err == nil) != (mismatches == 0) {
			t.Fatalf("exit %v with %d mismatches:\n%s", err, mismatches, out.Bytes())
		}
		if err != nil || checked == 0 {
			return fmt.Errorf("kraftwatch verify never agreed with the coordinator:\n%s", out.Bytes())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kraftwatch verify: %s", bytes.TrimSpace(out.Bytes()))
}
