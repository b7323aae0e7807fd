package clients_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
)

// natscliVersion is the NATS CLI the test builds from the Go module proxy.
const natscliVersion = "v0.5.0"

// natscli builds the NATS CLI once into the repository's .cache/bin and returns its path.
func natscli(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), ".cache", "bin", "natscli-"+natscliVersion)
	bin := filepath.Join(dir, "nats")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	start := time.Now()
	cmd := exec.Command("go", "install", "github.com/nats-io/natscli/nats@"+natscliVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building natscli %s: %v\n%s", natscliVersion, err, out)
	}
	t.Logf("built natscli %s in %v", natscliVersion, time.Since(start).Round(time.Second))
	return bin
}

// TestNATSCLI runs the NATS CLI as the README shows, with its defaults otherwise:
// `nats sub --all 'kraftwatch.<cluster>.>'` finds the cluster's events stream by the
// subject and prints every stored event of that cluster once, in stream order; `nats
// sub 'kraftwatch.<cluster>.>'` (core) receives each event published while it listens
// once; `nats stream ls` lists both clusters' streams.
func TestNATSCLI(t *testing.T) {
	bin := natscli(t)
	s := start(t)
	run := func(timeout time.Duration, args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--server", s.url(), "--no-context"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	byGroup := map[string]string{}
	for g, ids := range s.want {
		for _, id := range ids {
			byGroup[id] = g
		}
	}
	ids := func(out string) []string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if line == "" {
				continue
			}
			ev, err := events.DecodeRebalanceNeeded([]byte(line))
			if err != nil {
				t.Fatalf("natscli printed a line that is not an event: %v\n%s", err, line)
			}
			got = append(got, ev.ID)
		}
		return got
	}

	t.Run("sub --all", func(t *testing.T) {
		out, stderr, err := run(30*time.Second, "sub", subject, "--all", "--raw", "--count", fmt.Sprint(len(s.all)))
		if err != nil {
			t.Fatalf("nats sub --all: %v\nstderr:\n%s", err, stderr)
		}
		got := ids(out)
		s.checkIDs(t, "nats sub --all", got, byGroup, true)
		if strings.Join(got, ",") != strings.Join(s.all, ",") {
			t.Fatalf("nats sub --all printed the events in another order than the stream's")
		}
	})

	t.Run("sub core", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--server", s.url(), "--no-context", "sub", subject, "--raw", "--count", "1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Publish one more event once the CLI listens: a core subscriber receives only
		// what is published while it is subscribed.
		time.Sleep(time.Second)
		err := s.p.Enqueue(ctx, s.next("orders"))
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("nats sub: %v\nstderr:\n%s", err, stderr.String())
		}
		if got := ids(stdout.String()); len(got) != 1 {
			t.Fatalf("nats sub printed %d events, want 1", len(got))
		}
	})

	t.Run("stream ls", func(t *testing.T) {
		out, stderr, err := run(30*time.Second, "stream", "ls", "--names")
		if err != nil {
			t.Fatalf("nats stream ls: %v\n%s", err, stderr)
		}
		for _, name := range []string{"KRAFTWATCH_" + cluster, "KRAFTWATCH_" + cluster + "_EVENTS", "KRAFTWATCH_" + other, "KRAFTWATCH_" + other + "_EVENTS"} {
			if !strings.Contains(out, name) {
				t.Fatalf("nats stream ls does not list %s:\n%s", name, out)
			}
		}
	})
}
