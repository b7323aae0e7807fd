//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestVerify runs `kraftwatch verify` on the shared sidecar cluster after a change the
// coordinator has to recompute (partitions added to a group's topic): once the group's
// member has the new partition, kraftwatch's kafka-scheme hash of every consumer group
// equals the MetadataHash the coordinator stored, and verify exits 0 saying so.
func TestVerify(t *testing.T) {
	c, bin := sidecarSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := scKafka(c)
	scCreateTopic(ctx, t, cl, "vf-orders", 2)
	scMembers(ctx, t, c, map[string]string{"vf-g": "vf-orders"})
	scAddPartitions(ctx, t, cl, "vf-orders", 3)

	summary := regexp.MustCompile(`(\d+) group\(s\) checked against the coordinator's MetadataHash, (\d+) mismatch\(es\)`)
	var out, stderr bytes.Buffer
	for {
		out.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, bin, "verify", "--bootstrap", c.Bootstrap(), c.Nodes[0].LogDir)
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
		if err == nil && checked > 0 {
			t.Logf("kraftwatch verify: %s", bytes.TrimSpace(out.Bytes()))
			return
		}
		// The coordinator recomputes on the member's next heartbeat; try again.
		select {
		case <-ctx.Done():
			t.Fatalf("kraftwatch verify never agreed with the coordinator:\n%s", out.Bytes())
		case <-time.After(time.Second):
		}
	}
}
