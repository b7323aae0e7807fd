package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// process is the current run of a command started by the harness (a nats-server or a
// kraftwatch); its methods are for the goroutine of the test that owns it.
type process struct {
	cmd  *exec.Cmd     // nil when no run is going on
	done chan struct{} // closed once the run exited and its log file is closed
}

// start starts cmd with its output to logf and a parent-death signal.
func (p *process) start(t testing.TB, cmd *exec.Cmd, logf *os.File) {
	t.Helper()
	if p.running() {
		logf.Close()
		t.Fatalf("%s already running", filepath.Base(cmd.Path))
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("starting %s: %v", filepath.Base(cmd.Path), err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
}

// running reports whether a run was started and has not been stopped or killed.
func (p *process) running() bool { return p.cmd != nil }

// stop sends sig and waits for the run to exit, timeout at most; it returns how it
// exited, or nil when it did not (it is killed then).
func (p *process) stop(sig syscall.Signal, timeout time.Duration) *os.ProcessState {
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.kill()
		return nil
	}
	state := p.cmd.ProcessState
	p.cmd = nil
	return state
}

// kill ends the run with SIGKILL; it does nothing when there is none.
func (p *process) kill() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Kill()
	<-p.done
	p.cmd = nil
}

// tail returns the last lines of a file, or why it could not be read.
func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
