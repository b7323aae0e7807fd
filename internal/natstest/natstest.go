// Package natstest runs real NATS servers for tests: an in-process nats-server with
// JetStream on a random 127.0.0.1 port, or the standalone nats-server binary built from
// the module's own nats-server dependency for tests that need a separate process.
package natstest

import (
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

const serverPkg = "github.com/nats-io/nats-server/v2"

// Binary builds the standalone nats-server at the version go.mod requires, once, into
// the repository's .cache/bin, and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == serverPkg {
				version = d.Version
			}
		}
	}
	return build(t, version, func(dir string) *exec.Cmd {
		return exec.Command("go", "build", "-o", filepath.Join(dir, "nats-server"), serverPkg)
	})
}

// MinimumVersion is the oldest nats-server kraftwatch is tested against
// (publish.TestMinimumServer); docs/operations.md states it.
const MinimumVersion = "v2.10.27"

// BinaryAt builds the standalone nats-server at version (with that version's own
// go.mod, not kraftwatch's), once, into the repository's .cache/bin, and returns its
// path.
func BinaryAt(t testing.TB, version string) string {
	t.Helper()
	return build(t, version, func(dir string) *exec.Cmd {
		cmd := exec.Command("go", "install", serverPkg+"@"+version)
		cmd.Env = append(os.Environ(), "GOBIN="+dir)
		return cmd
	})
}

// build makes .cache/bin/nats-server-<version> once, with the command that writes
// nats-server into the directory it is given.
func build(t testing.TB, version string, command func(dir string) *exec.Cmd) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	root, err := kafkatest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, ".cache", "bin", "nats-server-"+version)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(bin), "nats-server-build-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd := command(dir)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("natstest: building nats-server %s: %v\n%s", version, err, out)
	}
	if err := os.Rename(filepath.Join(dir, "nats-server"), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}
