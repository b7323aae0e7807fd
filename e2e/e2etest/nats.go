package e2etest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// NATS is a nats-server process with JetStream on a fixed port and store, so it can be
// killed and started again with the same state. Its methods are for the goroutine of
// the test that started it.
type NATS struct {
	t    testing.TB
	bin  string
	port int
	dir  string
	proc process
}

// StartNATS starts a nats-server process (natstest.Binary) and waits until it serves
// clients; it is killed at the end of the test, which logs its log's tail on failure.
func StartNATS(t testing.TB) *NATS {
	t.Helper()
	n := &NATS{t: t, bin: natstest.Binary(t), port: FreePort(t), dir: t.TempDir()}
	t.Cleanup(func() {
		n.Kill()
		if t.Failed() {
			t.Logf("nats-server log tail:\n%s", tail(filepath.Join(n.dir, "nats-server.log"), 20))
		}
	})
	n.Start()
	return n
}

// URL is the server's client URL; it stays the same across restarts.
func (n *NATS) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// Start starts the process again (after Kill) on the same port and store, and waits
// until it serves clients.
func (n *NATS) Start() {
	n.t.Helper()
	logf, err := os.OpenFile(filepath.Join(n.dir, "nats-server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.Command(n.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(n.port), "-js", "-sd", filepath.Join(n.dir, "store"))
	n.proc.start(n.t, cmd, logf)
	err = Wait(context.Background(), 30*time.Second, func() error {
		nc, err := nats.Connect(n.URL(), nats.Timeout(time.Second))
		if err != nil {
			return err
		}
		defer nc.Close()
		return nc.Flush()
	})
	if err != nil {
		n.t.Fatalf("nats-server at %s not serving: %v", n.URL(), err)
	}
}

// Kill ends the process with SIGKILL; it does nothing when the process is not running.
func (n *NATS) Kill() { n.proc.kill() }
