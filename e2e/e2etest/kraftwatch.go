package e2etest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// StreamName is the stream of the kraftwatch that Env configures (a fresh nats-server
// per test, so a fresh stream).
const StreamName = "KW_E2E"

// Quiet is how long a test waits after the expected events for unexpected ones.
const Quiet = 2 * time.Second

// Env is the configuration of a test's kraftwatch following node 1's metadata log
// dir: the cluster's brokers, a nats-server, the stream StreamName, the test's own
// groups (KRAFTWATCH_GROUP_INCLUDE, so groups left by earlier tests on a shared cluster
// are never announced) and debug logs. extra come last, so they override. A test of
// another source (KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS) gives StartKraftwatch an
// environment of its own.
func Env(c *kafkatest.Cluster, natsURL, include string, extra ...string) []string {
	return append([]string{
		"KRAFTWATCH_METADATA_LOG_DIR=" + c.Nodes[0].LogDir,
		"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.Bootstrap(),
		"KRAFTWATCH_NATS_URL=" + natsURL,
		"KRAFTWATCH_STREAM_NAME=" + StreamName,
		"KRAFTWATCH_STREAM_MAX_MSGS_PER_SUBJECT=-1",
		"KRAFTWATCH_GROUP_INCLUDE=" + include,
		"KRAFTWATCH_LOG_LEVEL=debug",
	}, extra...)
}

// Kraftwatch is one kraftwatch process (`kraftwatch run`, the Binary); it may be
// stopped and started again, each run logging to its own file. Its methods are for the
// goroutine of the test that started it.
type Kraftwatch struct {
	t    testing.TB
	name string
	env  []string
	dir  string
	addr string   // HTTP listen address of the current run
	logs []string // log file of each run
	proc process
}

// StartKraftwatch starts `kraftwatch run` configured by env alone: the caller's own
// KRAFTWATCH_* variables are left out, a free KRAFTWATCH_HTTP_ADDR is added. It does
// not wait for readiness (WaitReady). The process is killed at the end of the test,
// which fails if a run's log reports a data race, and logs each run's log tail when
// the test failed.
func StartKraftwatch(t testing.TB, name string, env []string) *Kraftwatch {
	t.Helper()
	k := &Kraftwatch{t: t, name: name, env: env, dir: t.TempDir()}
	Binary(t)
	t.Cleanup(func() {
		k.Kill()
		for i, l := range k.logs {
			if b, err := os.ReadFile(l); err == nil && bytes.Contains(b, []byte("WARNING: DATA RACE")) {
				t.Errorf("kraftwatch %s run %d: data race:\n%s", name, i+1, b[bytes.Index(b, []byte("WARNING: DATA RACE")):])
			}
		}
		if t.Failed() {
			for i, l := range k.logs {
				t.Logf("kraftwatch %s run %d log tail:\n%s", name, i+1, tail(l, 25))
			}
		}
	})
	k.Start()
	return k
}

// Name is the name the test gave the process.
func (k *Kraftwatch) Name() string { return k.name }

// Start starts a new run (after Stop or Kill) with the same environment and a new
// HTTP port.
func (k *Kraftwatch) Start() {
	k.t.Helper()
	if k.proc.running() {
		k.t.Fatalf("kraftwatch %s already running", k.name)
	}
	k.addr = fmt.Sprintf("127.0.0.1:%d", FreePort(k.t))
	path := filepath.Join(k.dir, fmt.Sprintf("run-%d.log", len(k.logs)+1))
	logf, err := os.Create(path)
	if err != nil {
		k.t.Fatal(err)
	}
	cmd := exec.Command(Binary(k.t), "run")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KRAFTWATCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, k.env...)
	cmd.Env = append(cmd.Env, "KRAFTWATCH_HTTP_ADDR="+k.addr)
	k.proc.start(k.t, cmd, logf)
	k.logs = append(k.logs, path)
}

// URL is the address of path (such as "/readyz") on the current run's HTTP server.
func (k *Kraftwatch) URL(path string) string { return "http://" + k.addr + path }

// Readyz returns /readyz's status code, or 0 when it does not answer.
func (k *Kraftwatch) Readyz() int {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + k.addr + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// WaitReady waits until /readyz answers 200 and returns how long it took; it fails t
// at once if the process exits meanwhile.
func (k *Kraftwatch) WaitReady(ctx context.Context, timeout time.Duration) time.Duration {
	k.t.Helper()
	start := time.Now()
	err := Wait(ctx, timeout, func() error {
		select {
		case <-k.proc.done:
			k.t.Fatalf("kraftwatch %s exited before it was ready: %v\n%s", k.name, k.proc.cmd.ProcessState, tail(k.logs[len(k.logs)-1], 30))
		default:
		}
		if code := k.Readyz(); code != http.StatusOK {
			return fmt.Errorf("/readyz answers %d", code)
		}
		return nil
	})
	if err != nil {
		k.t.Fatalf("kraftwatch %s not ready: %v\n%s", k.name, err, tail(k.logs[len(k.logs)-1], 30))
	}
	return time.Since(start)
}

// Stop sends sig and waits for the process (20 s at most); it returns the exit code
// and how long the process took to exit.
func (k *Kraftwatch) Stop(sig syscall.Signal) (code int, took time.Duration) {
	k.t.Helper()
	start := time.Now()
	state := k.proc.stop(sig, 20*time.Second)
	if state == nil {
		k.t.Fatalf("kraftwatch %s did not exit within 20s of %v", k.name, sig)
	}
	return state.ExitCode(), time.Since(start)
}

// Pause stops the current run with SIGSTOP, as a hung process or a stuck VM looks.
func (k *Kraftwatch) Pause() { k.signal(syscall.SIGSTOP) }

// Resume continues a run Pause stopped.
func (k *Kraftwatch) Resume() { k.signal(syscall.SIGCONT) }

func (k *Kraftwatch) signal(sig syscall.Signal) {
	k.t.Helper()
	if !k.proc.running() {
		k.t.Fatalf("kraftwatch %s is not running", k.name)
	}
	if err := k.proc.cmd.Process.Signal(sig); err != nil {
		k.t.Fatalf("kraftwatch %s: %v: %v", k.name, sig, err)
	}
}

// Kill ends the process with SIGKILL, as a crash would; it does nothing when the
// process is not running.
func (k *Kraftwatch) Kill() { k.proc.kill() }

// Metric returns the value of a metric on /metrics. Until kraftwatch has built its
// stages (the first moments of the process; in network mode, while it waits for the
// controllers to tell the cluster id) /metrics has kraftwatch_ready (0) and the Go and
// process metrics only, so a metric not there yet is asked for again, for up to 10 s:
// the stages' metrics cannot exist before the stages do.
func (k *Kraftwatch) Metric(name string) float64 {
	k.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, ok := k.scrape(name)
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("kraftwatch %s /metrics has no %s", k.name, name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scrape reads name's value from /metrics once; ok is false when it is not there.
func (k *Kraftwatch) scrape(name string) (float64, bool) {
	k.t.Helper()
	resp, err := http.Get("http://" + k.addr + "/metrics")
	if err != nil {
		k.t.Fatalf("kraftwatch %s /metrics: %v", k.name, err)
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				k.t.Fatalf("kraftwatch %s /metrics: %s: %v", k.name, s.Text(), err)
			}
			return f, true
		}
	}
	return 0, false
}

// LogLine is one JSON log line of kraftwatch, numbers kept as json.Number.
type LogLine map[string]any

// Str returns the string value of key, "" when it is absent or not a string.
func (l LogLine) Str(key string) string {
	s, _ := l[key].(string)
	return s
}

// Int returns the integer value of key (a number or a string of one), 0 when it is
// absent or not an integer.
func (l LogLine) Int(key string) int64 {
	switch v := l[key].(type) {
	case json.Number:
		n, _ := v.Int64()
		return n
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

// LogLines returns the log lines with message msg of one run (1-based), failing t on a
// line that starts like JSON but is not.
func (k *Kraftwatch) LogLines(run int, msg string) []LogLine {
	k.t.Helper()
	b, err := os.ReadFile(k.logs[run-1])
	if err != nil {
		k.t.Fatal(err)
	}
	var out []LogLine
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var l LogLine
		if err := d.Decode(&l); err != nil {
			k.t.Fatalf("kraftwatch %s run %d: log line is not JSON: %v: %s", k.name, run, err, line)
		}
		if l.Str("msg") == msg {
			out = append(out, l)
		}
	}
	return out
}

// Decision is a "rebalance needed" log line: a decision the engine handed to the
// publisher.
type Decision struct {
	Group          string
	NewHash        int64
	MetadataOffset int64
}

// Decisions returns the decisions of one run (1-based) for group, in log order.
func (k *Kraftwatch) Decisions(run int, group string) []Decision {
	k.t.Helper()
	var ds []Decision
	for _, l := range k.LogLines(run, "rebalance needed") {
		if l.Str("group") == group {
			ds = append(ds, Decision{Group: group, NewHash: l.Int("new_hash"), MetadataOffset: l.Int("metadata_offset")})
		}
	}
	return ds
}

// Hashes computes every group's hash from scratch with `kraftwatch hashes --bootstrap`,
// which loads node 1's metadata log and reads __consumer_offsets anew; it returns group
// id -> hash.
func Hashes(t testing.TB, c *kafkatest.Cluster) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), "hashes", "--bootstrap", c.Bootstrap(), c.Nodes[0].LogDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kraftwatch hashes: %v\n%s", err, stderr.Bytes())
	}
	hashes := map[string]int64{}
	groupRows := false
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "GROUP_TYPE" {
			groupRows = true
			continue
		}
		if !groupRows || len(f) < 4 {
			continue
		}
		for i := 2; i+1 < len(f); i++ {
			if strings.HasSuffix(f[i], "]") {
				h, err := strconv.ParseInt(f[i+1], 10, 64)
				if err != nil {
					t.Fatalf("kraftwatch hashes: row %q: %v", line, err)
				}
				hashes[f[1]] = h
				break
			}
		}
	}
	return hashes
}

// Sidecar is what a sidecar test runs kraftwatch beside: a Kafka cluster, a nats-server
// process of the test's own (so the stream starts empty), a Watcher on it and an Admin
// of the cluster. Like its parts, it belongs to the test's goroutine.
type Sidecar struct {
	Cluster *kafkatest.Cluster
	NATS    *NATS
	Watcher *Watcher
	Admin   *Admin
}

// StartSidecar starts a nats-server process for the test and watches it.
func StartSidecar(t testing.TB, c *kafkatest.Cluster) *Sidecar {
	t.Helper()
	ns := StartNATS(t)
	return &Sidecar{Cluster: c, NATS: ns, Watcher: Watch(t, ns.URL(), c.ClusterID), Admin: NewAdmin(c)}
}

// StartKraftwatch starts a kraftwatch called "kw", configured by Env for the sidecar's
// cluster and nats-server, the groups matching include and extra, and waits a minute
// at most until it is ready.
func (s *Sidecar) StartKraftwatch(ctx context.Context, t testing.TB, include string, extra ...string) *Kraftwatch {
	t.Helper()
	k := StartKraftwatch(t, "kw", Env(s.Cluster, s.NATS.URL(), include, extra...))
	t.Logf("kraftwatch ready in %v", k.WaitReady(ctx, time.Minute).Round(time.Millisecond))
	return k
}

// Stream reads the stream of the sidecar's nats-server (Stream).
func (s *Sidecar) Stream(t testing.TB) Events {
	t.Helper()
	return Stream(t, s.NATS.URL(), s.Cluster.ClusterID)
}
