package publish_test

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// newServerProcess prepares the nats-server binary bin (natstest.Binary, BinaryAt).
func newServerProcess(t *testing.T, bin string) *serverProcess {
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
	s := &serverProcess{t: t, bin: bin, port: port, dir: t.TempDir(), log: logf}
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
// it is gone (Health says not connected), and afterwards every transition is stored
// exactly once, in order. The failures of hundreds of events log one line, then a
// summary per FailureLogEvery, then one line for the recovery.
func TestServerProcessRestart(t *testing.T) {
	srv := newServerProcess(t, natstest.Binary(t))
	srv.start()
	nc := connect(t, srv.url())
	cfg := baseConfig(t, nc)
	cfg.Replicas = 1
	cfg.BufferSize = 128
	cfg.PublishTimeout = time.Second
	cfg.FailureLogEvery = 500 * time.Millisecond
	logs := &syncLog{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
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
	killed := time.Now()
	waitFor(t, 10*time.Second, "not ready while the server is gone", func() bool { return !p.Ready() })
	t.Logf("not ready %v after the kill: %v", time.Since(killed).Round(time.Millisecond), p.Health())
	waitFor(t, 30*time.Second, "failed attempts", func() bool { return p.Stats().Failed > 0 })
	// Keep it down while events pile up in the buffer (until a worker's share is full
	// and Enqueue blocks the producer).
	waitFor(t, 30*time.Second, "events queued", func() bool { return p.Stats().Queued >= 32 })
	t.Logf("restarting with %d events queued", p.Stats().Queued)
	// Down long enough for summaries of the failures.
	waitFor(t, 10*time.Second, "the server down for 4 summary intervals", func() bool { return time.Since(killed) > 4*cfg.FailureLogEvery })
	downFor := time.Since(killed)
	if err := p.Health(); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("Health while the server is gone: %v, want not connected", err)
	}
	srv.start()
	restarted := time.Now()
	waitFor(t, 30*time.Second, "ready again", p.Ready)
	t.Logf("ready %v after the restart", time.Since(restarted).Round(time.Millisecond))
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
	out := logs.String()
	first, summaries, recovered := strings.Count(out, `msg="publish failed`), strings.Count(out, "publish still failing"), strings.Count(out, "publish recovered")
	t.Logf("%d failed attempts logged as %d first line(s), %d summaries, %d recovery line(s) over %v down", s.Failed, first, summaries, recovered, downFor.Round(time.Millisecond))
	// One spell of failures (a second may begin when an ack is lost after the restart).
	if first < 1 || first > 2 || recovered != first || summaries < 2 || uint64(first+summaries) >= s.Failed {
		t.Errorf("%d failed attempts logged as %d first lines, %d summaries, %d recoveries: want one first line and one recovery per spell and a summary per FailureLogEvery", s.Failed, first, summaries, recovered)
	}
	if max := int(downFor/cfg.FailureLogEvery) + 3; summaries > max {
		t.Errorf("%d summaries over %v, want at most %d", summaries, downFor, max)
	}
	msgs := readStream(t, connect(t, srv.url()), "kraftwatch")
	for g := range groups {
		checkTransitions(t, msgs, "kraftwatch", fmt.Sprintf("grp.%03d", g), steps)
	}
}

// TestMinimumServer runs TestJetStream's and TestTwoPublishers' checks (the streams
// kraftwatch creates, subject transform and republish, de-duplicated publishing with
// the expected last sequence, the events stream sourcing the stream) against the
// oldest nats-server kraftwatch supports, natstest.MinimumVersion, as a separate
// process built once into .cache/bin.
func TestMinimumServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server " + natstest.MinimumVersion + " once; make test runs it")
	}
	bin := natstest.BinaryAt(t, natstest.MinimumVersion)
	for _, c := range []struct {
		name  string
		check func(t *testing.T, url string)
	}{{"JetStream", checkJetStream}, {"TwoPublishers", checkTwoPublishers}} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServerProcess(t, bin)
			srv.start()
			if v := connect(t, srv.url()).ConnectedServerVersion(); "v"+v != natstest.MinimumVersion {
				t.Fatalf("connected to nats-server %s, want %s", v, natstest.MinimumVersion)
			}
			c.check(t, srv.url())
		})
	}
}
