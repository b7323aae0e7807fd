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

// natspy makes a virtual environment with nats-py under the repository's .cache once and
// returns its python. Without python3 the test is skipped, except in CI (CI=true).
func natspy(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is missing (needed for the nats-py test)")
		}
		t.Skip("python3 is missing")
	}
	venv := filepath.Join(repoRoot(t), ".cache", "nats-py-"+natspyVersion)
	python := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(filepath.Join(venv, "ok")); err == nil {
		return python
	}
	start := time.Now()
	os.RemoveAll(venv)
	for _, args := range [][]string{
		{py, "-m", "venv", venv},
		{python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "nats-py==" + natspyVersion},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(venv, "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("installed nats-py %s in %v", natspyVersion, time.Since(start).Round(time.Second))
	return python
}

// TestNATSPy reads the events with nats-py (testdata/natspy_read.py): the stream is
// found by the subject kraftwatch.>, and a push subscription and a durable pull
// subscription with nats-py's defaults each receive every stored event once, in stream
// order.
func TestNATSPy(t *testing.T) {
	python := natspy(t)
	s := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/natspy_read.py", s.url(), fmt.Sprint(len(s.all)))
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
