package publish_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// serverProcess is a standalone nats-server with JetStream on a fixed port and store
// directory, so that it can be killed and started again with the same state.
type serverProcess struct {
	t    *testing.T
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
	log  *os.File
}

func newServerProcess(t *testing.T) *serverProcess {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logf, err := os.Create(filepath.Join(t.TempDir(), "nats-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	s := &serverProcess{t: t, bin: natstest.Binary(t), port: port, dir: t.TempDir(), log: logf}
	t.Cleanup(func() {
		s.kill()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("nats-server log:\n%s", b)
		}
	})
	return s
}

func (s *serverProcess) url() string { return "nats://127.0.0.1:" + strconv.Itoa(s.port) }

// start starts the process and waits until it answers.
func (s *serverProcess) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(s.port), "-js", "-sd", s.dir)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	waitFor(s.t, 30*time.Second, "nats-server process to accept clients", func() bool {
		nc, err := nats.Connect(s.url(), nats.Timeout(time.Second))
		if err != nil {
			return false
		}
		defer nc.Close()
		return nc.Flush() == nil
	})
	s.t.Logf("nats-server process %d at %s", s.cmd.Process.Pid, s.url())
}

// kill ends the process with SIGKILL: no shutdown, no flush beyond what it already wrote.
func (s *serverProcess) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// TestServerProcessRestart kills the nats-server process in the middle of a stream of
// events and starts it again on the same port and store: the publisher is not ready while
// it is gone, and afterwards every transition is stored exactly once, in order.
func TestServerProcessRestart(t *testing.T) {
	srv := newServerProcess(t)
	srv.start()
	nc := connect(t, srv.url())
	cfg := baseConfig(t, nc)
	cfg.Replicas = 1
	cfg.BufferSize = 128
	cfg.PublishTimeout = time.Second
	p := newPublisher(t, cfg)
	r := start(t, p)
	waitFor(t, 10*time.Second, "ready", p.Ready)

	const groups, steps = 400, 3
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for k := range steps {
			for g := range groups {
				if err := tryEnqueue(p, transition(fmt.Sprintf("grp.%03d", g), k)); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond) // a steady stream, not one burst
			}
		}
	}()

	waitFor(t, 30*time.Second, "some events published", func() bool { return p.Stats().Published >= 300 })
	srv.kill()
	before := p.Stats()
	t.Logf("server killed after %d events published", before.Published)
	waitFor(t, 10*time.Second, "not ready while the server is gone", func() bool { return !p.Ready() })
	waitFor(t, 30*time.Second, "failed attempts", func() bool { return p.Stats().Failed > 0 })
	// Keep it down while events pile up in the buffer (until a worker's share is full
	// and Enqueue blocks the producer).
	waitFor(t, 30*time.Second, "events queued", func() bool { return p.Stats().Queued >= 32 })
	t.Logf("restarting with %d events queued", p.Stats().Queued)
	srv.start()
	waitFor(t, 30*time.Second, "ready again", p.Ready)
	<-produced
	waitFor(t, 60*time.Second, "all events done", finished(p, groups*steps))
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	t.Logf("stats %+v", s)
	if s.Published+s.AlreadyPublished != groups*steps || s.Dropped != 0 || s.Superseded != 0 {
		t.Fatalf("stats %+v: want every event published (or found stored after a lost ack)", s)
	}
	if s.Published <= before.Published {
		t.Fatal("nothing was published after the restart")
	}
	msgs := readStream(t, connect(t, srv.url()), "kraftwatch")
	for g := range groups {
		checkTransitions(t, msgs, "kraftwatch", fmt.Sprintf("grp.%03d", g), steps)
	}
}
