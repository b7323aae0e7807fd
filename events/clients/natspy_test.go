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
)

// natspyVersion is the nats-py the test installs from PyPI.
const natspyVersion = "2.16.0"

// natspy installs nats-py under the repository's .cache once (pip install --target, so no
// virtual environment module is needed) and returns python3 and the PYTHONPATH to run
// with. Without python3 the test is skipped, except in CI (CI=true).
func natspy(t *testing.T) (python, pythonPath string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is missing (needed for the nats-py test)")
		}
		t.Skip("python3 is missing")
	}
	dir := filepath.Join(repoRoot(t), ".cache", "nats-py-"+natspyVersion)
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return py, dir
	}
	start := time.Now()
	os.RemoveAll(dir)
	args := []string{"-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-warn-script-location",
		"--target", dir, "nats-py==" + natspyVersion}
	if out, err := exec.Command(py, args...).CombinedOutput(); err != nil {
		t.Fatalf("python3 %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("installed nats-py %s in %v", natspyVersion, time.Since(start).Round(time.Second))
	return py, dir
}

// TestNATSPy reads the events with nats-py (testdata/natspy_read.py): the stream is
// found by the subject kraftwatch.<cluster>.> with a second cluster's streams beside it, and a push subscription and a durable pull
// subscription with nats-py's defaults each receive every stored event once, in stream
// order.
func TestNATSPy(t *testing.T) {
	python, pythonPath := natspy(t)
	s := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/natspy_read.py", s.url(), subject, fmt.Sprint(len(s.all)))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("natspy_read.py: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	byMode := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("unexpected line %q", line)
		}
		byMode[f[0]] = append(byMode[f[0]], f[1])
	}
	if got := byMode["find"]; len(got) != 1 || got[0] != "KRAFTWATCH_"+cluster+"_EVENTS" {
		t.Fatalf("find_stream_name_by_subject found %v", got)
	}
	for _, mode := range []string{"push", "pull"} {
		if got := strings.Join(byMode[mode], ","); got != strings.Join(s.all, ",") {
			t.Fatalf("nats-py %s received %v, stored %v", mode, byMode[mode], s.all)
		}
	}
}
