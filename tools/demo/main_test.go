package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterrupt is Ctrl-C during `make demo KEEP=1`: SIGINT to the whole process group
// of a demo (a child process running runUntilSignal, its own group as a terminal's
// foreground job is) that has started a process with command and is showing events. The
// demo must exit 0 (so make prints no error), say that it stopped and nothing else, and
// its process must end by the demo's SIGTERM, not by the terminal's SIGINT.
func TestInterrupt(t *testing.T) {
	if os.Getenv("DEMO_TEST_CHILD") == "1" {
		os.Exit(runUntilSignal(func(ctx context.Context) error {
			cmd := command("sleep", "60")
			if err := cmd.Start(); err != nil {
				return err
			}
			defer func() {
				stop(cmd)
				fmt.Printf("sleep: %v\n", cmd.ProcessState)
			}()
			events := make(chan string, 1)
			events <- "e1"
			return show(ctx, events, -1, 0)
		}))
	}
	child := exec.Command(os.Args[0], "-test.run=^TestInterrupt$")
	child.Env = append(os.Environ(), "DEMO_TEST_CHILD=1")
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-child.Process.Pid, syscall.SIGKILL)
	lines := make(chan string, 16)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var got []string
	// SIGINT once the event is shown, as a user presses Ctrl-C while watching.
	for l := range lines {
		got = append(got, l)
		if strings.Contains(l, "event: e1") {
			break
		}
	}
	if syscall.Kill(-child.Process.Pid, syscall.SIGINT) != nil {
		t.Fatalf("child gone before SIGINT; it printed %q, stderr %s", got, stderr.String())
	}
	timeout := time.After(20 * time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				done = true
				break
			}
			got = append(got, l)
		case <-timeout:
			t.Fatalf("the demo did not stop within 20 s of SIGINT; it printed %q", got)
		}
	}
	werr := child.Wait()
	text := strings.Join(got, "\n")
	if werr != nil {
		t.Errorf("exit: %v, want 0 (make would print an error)\n%s\nstderr: %s", werr, text, stderr.String())
	}
	for _, want := range []string{"event: e1", "Stopped", "sleep: signal: terminated"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if stderr.Len() > 0 || len(got) > 5 {
		t.Errorf("want a quiet stop; stdout:\n%s\nstderr:\n%s", text, stderr.String())
	}
}
