// Package natstest runs real NATS servers for tests: an in-process nats-server with
// JetStream on a random 127.0.0.1 port, or the standalone nats-server binary built from
// the module's own nats-server dependency for tests that need a separate process.
package natstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// Start runs an in-process nats-server with JetStream storing under a temporary
// directory; it is shut down at the end of the test.
func Start(t testing.TB) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("natstest: nats-server not ready after 10s")
	}
	t.Logf("natstest: nats-server %s with JetStream at %s", server.VERSION, s.ClientURL())
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

var buildMu sync.Mutex

// Binary builds the standalone nats-server at the version go.mod requires, once, into
// the repository's .cache/bin, and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/nats-io/nats-server/v2" {
				version = d.Version
			}
		}
	}
	root, err := kafkatest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, ".cache", "bin", "nats-server-"+version)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "github.com/nats-io/nats-server/v2")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("natstest: building nats-server: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}
