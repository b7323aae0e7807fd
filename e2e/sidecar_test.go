//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// The sidecar tests run kraftwatch as an operator would: its own process (the binary
// built once per test binary), configured by KRAFTWATCH_* variables, beside a real
// Kafka (one node, shared by these tests, started on first use and stopped by
// TestMain) and a real nats-server process (one per test, so each test starts from an
// empty stream). Each test has its own topic and group names and sets
// KRAFTWATCH_GROUP_INCLUDE to its own groups, so groups left by earlier tests are
// never announced.
//
// Counts are exact: after each change the test waits for the events it causes, then
// for a quiet period, and compares. Events are read back from the JetStream stream (the
// durable record) and from a core NATS subscription; every event is checked with
// publish.Decode, the JSON Schema, its subject, its Nats-Msg-Id and Content-Type.

// scStreamName is the stream every sidecar test's kraftwatch uses (a fresh nats-server
// per test, so a fresh stream).
const scStreamName = "KW_E2E"

// scQuiet is how long a test waits after the expected events for unexpected ones.
const scQuiet = 2 * time.Second

var sidecarShared struct {
	once sync.Once
	dir  string
	bin  string
	c    *kafkatest.Cluster
	err  error
}

// sidecarSetup returns the shared Kafka of the sidecar tests and the kraftwatch binary,
// building and starting them (concurrently) on first use.
func sidecarSetup(t testing.TB) (*kafkatest.Cluster, string) {
	t.Helper()
	kafkatest.RequireTools(t)
	sidecarShared.once.Do(func() {
		start := time.Now()
		dir, err := os.MkdirTemp("", "kraftwatch-sidecar-")
		if err != nil {
			sidecarShared.err = err
			return
		}
		sidecarShared.dir = dir
		root, err := kafkatest.RepoRoot()
		if err != nil {
			sidecarShared.err = err
			return
		}
		bin := filepath.Join(dir, "kraftwatch")
		built := make(chan error, 1)
		go func() {
			args := []string{"build", "-o", bin}
			if scRace {
				args = append(args, "-race")
			}
			cmd := exec.Command("go", append(args, ".")...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				built <- fmt.Errorf("go build kraftwatch: %w\n%s", err, out)
				return
			}
			built <- nil
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		c, err := kafkatest.Start(ctx, filepath.Join(dir, "kafka"), kafkatest.Options{Rack: "rack-a"}, t.Logf)
		sidecarShared.c, sidecarShared.bin = c, bin
		sidecarShared.err = errors.Join(err, <-built)
		t.Logf("sidecar setup: Kafka and kraftwatch binary ready in %v", time.Since(start).Round(time.Millisecond))
	})
	if sidecarShared.err != nil {
		t.Fatalf("sidecar setup: %v", sidecarShared.err)
	}
	return sidecarShared.c, sidecarShared.bin
}

// closeSidecarShared stops the shared Kafka of the sidecar tests; TestMain calls it.
func closeSidecarShared() {
	if sidecarShared.c != nil {
		sidecarShared.c.Close()
	}
	if sidecarShared.dir != "" {
		os.RemoveAll(sidecarShared.dir)
	}
}

func scFreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scNATS is a nats-server process with JetStream on a fixed port and store, so it can
// be killed and started again with the same state.
type scNATS struct {
	t    testing.TB
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

func scStartNATS(t testing.TB) *scNATS {
	t.Helper()
	n := &scNATS{t: t, bin: natstest.Binary(t), port: scFreePort(t), dir: t.TempDir()}
	t.Cleanup(func() {
		n.kill()
		if t.Failed() {
			t.Logf("nats-server log tail:\n%s", scTail(filepath.Join(n.dir, "nats-server.log"), 20))
		}
	})
	n.start()
	return n
}

func (n *scNATS) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// start starts the process and waits until it serves clients.
func (n *scNATS) start() {
	n.t.Helper()
	logf, err := os.OpenFile(filepath.Join(n.dir, "nats-server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.Command(n.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(n.port), "-js", "-sd", filepath.Join(n.dir, "store"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		n.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	n.cmd, n.done = cmd, done
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect(n.url(), nats.Timeout(time.Second))
		if err == nil {
			err = nc.Flush()
			nc.Close()
			if err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nats-server at %s not serving after 30s: %v", n.url(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the process with SIGKILL.
func (n *scNATS) kill() {
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Kill()
	<-n.done
	n.cmd = nil
}

// scKW is one kraftwatch, run as a process; it may be stopped and started again, each
// run logging to its own file.
type scKW struct {
	t    testing.TB
	name string
	bin  string
	env  []string
	dir  string
	addr string // HTTP listen address of the current run
	logs []string
	cmd  *exec.Cmd
	done chan struct{}
}

// scEnv is the configuration of a test's kraftwatch: node 1's metadata log, a
// nats-server process, the test's own stream and groups, debug logs.
func scEnv(c *kafkatest.Cluster, natsURL, include string, extra ...string) []string {
	return append([]string{
		"KRAFTWATCH_METADATA_LOG_DIR=" + c.Nodes[0].LogDir,
		"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.Bootstrap(),
		"KRAFTWATCH_NATS_URL=" + natsURL,
		"KRAFTWATCH_STREAM_NAME=" + scStreamName,
		"KRAFTWATCH_STREAM_MAX_MSGS_PER_SUBJECT=-1",
		"KRAFTWATCH_GROUP_INCLUDE=" + include,
		"KRAFTWATCH_LOG_LEVEL=debug",
	}, extra...)
}

// scStartKW starts kraftwatch run with env (plus a free HTTP port); it is killed at the
// end of the test.
func scStartKW(t testing.TB, name, bin string, env []string) *scKW {
	t.Helper()
	k := &scKW{t: t, name: name, bin: bin, env: env, dir: t.TempDir()}
	t.Cleanup(func() {
		k.kill()
		for i, l := range k.logs {
			if b, err := os.ReadFile(l); err == nil && bytes.Contains(b, []byte("WARNING: DATA RACE")) {
				t.Errorf("kraftwatch %s run %d: data race:\n%s", name, i+1, b[bytes.Index(b, []byte("WARNING: DATA RACE")):])
			}
		}
		if t.Failed() {
			for i, l := range k.logs {
				t.Logf("kraftwatch %s run %d log tail:\n%s", name, i+1, scTail(l, 25))
			}
		}
	})
	k.start()
	return k
}

func (k *scKW) start() {
	k.t.Helper()
	if k.cmd != nil {
		k.t.Fatalf("kraftwatch %s already running", k.name)
	}
	k.addr = fmt.Sprintf("127.0.0.1:%d", scFreePort(k.t))
	path := filepath.Join(k.dir, fmt.Sprintf("run-%d.log", len(k.logs)+1))
	logf, err := os.Create(path)
	if err != nil {
		k.t.Fatal(err)
	}
	cmd := exec.Command(k.bin, "run")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KRAFTWATCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, k.env...)
	cmd.Env = append(cmd.Env, "KRAFTWATCH_HTTP_ADDR="+k.addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		k.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	k.cmd, k.done = cmd, done
	k.logs = append(k.logs, path)
}

// readyz returns /readyz's status code, or 0 when it does not answer.
func (k *scKW) readyz() int {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + k.addr + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitReady waits until /readyz answers 200 and returns how long it took.
func (k *scKW) waitReady(timeout time.Duration) time.Duration {
	k.t.Helper()
	start := time.Now()
	for k.readyz() != http.StatusOK {
		select {
		case <-k.done:
			k.t.Fatalf("kraftwatch %s exited before it was ready: %v\n%s", k.name, k.cmd.ProcessState, scTail(k.logs[len(k.logs)-1], 30))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Since(start) > timeout {
			k.t.Fatalf("kraftwatch %s not ready after %v\n%s", k.name, timeout, scTail(k.logs[len(k.logs)-1], 30))
		}
	}
	return time.Since(start)
}

// stop sends sig and waits for the process (20 s at most); it returns the exit code and
// how long the process took to exit.
func (k *scKW) stop(sig syscall.Signal) (code int, took time.Duration) {
	k.t.Helper()
	start := time.Now()
	k.cmd.Process.Signal(sig)
	select {
	case <-k.done:
	case <-time.After(20 * time.Second):
		k.kill()
		k.t.Fatalf("kraftwatch %s did not exit within 20s of %v", k.name, sig)
	}
	took = time.Since(start)
	code = k.cmd.ProcessState.ExitCode()
	k.cmd = nil
	return code, took
}

// kill ends the process with SIGKILL, as a crash would.
func (k *scKW) kill() {
	if k.cmd == nil {
		return
	}
	k.cmd.Process.Kill()
	<-k.done
	k.cmd = nil
}

// metric returns the value of an unlabelled metric on /metrics.
func (k *scKW) metric(name string) float64 {
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
			return f
		}
	}
	k.t.Fatalf("kraftwatch %s /metrics has no %s", k.name, name)
	return 0
}

// scLogLine is one JSON log line of kraftwatch.
type scLogLine map[string]any

func (l scLogLine) str(key string) string {
	s, _ := l[key].(string)
	return s
}

func (l scLogLine) int(key string) int64 {
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

// logLines returns the lines with message msg of one run (1-based).
func (k *scKW) logLines(run int, msg string) []scLogLine {
	k.t.Helper()
	b, err := os.ReadFile(k.logs[run-1])
	if err != nil {
		k.t.Fatal(err)
	}
	var out []scLogLine
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var l scLogLine
		if err := d.Decode(&l); err != nil {
			k.t.Fatalf("kraftwatch %s run %d: log line is not JSON: %v: %s", k.name, run, err, line)
		}
		if l.str("msg") == msg {
			out = append(out, l)
		}
	}
	return out
}

// scDecision is a "rebalance needed" log line: a decision the engine handed to the
// publisher.
type scDecision struct {
	Group          string
	NewHash        int64
	MetadataOffset int64
}

func (k *scKW) decisions(run int, group string) []scDecision {
	var ds []scDecision
	for _, l := range k.logLines(run, "rebalance needed") {
		if l.str("group") == group {
			ds = append(ds, scDecision{Group: group, NewHash: l.int("new_hash"), MetadataOffset: l.int("metadata_offset")})
		}
	}
	return ds
}

// scEvent is one event as a subscriber or the stream saw it.
type scEvent struct {
	Subject string
	MsgID   string    // Nats-Msg-Id header
	Seq     uint64    // stream sequence (core deliveries: Nats-Sequence of the republish)
	At      time.Time // arrival at the core subscriber
	Env     publish.Envelope
}

func (e scEvent) String() string {
	d := e.Env.Data
	prev := "null"
	if d.PreviousHash.Valid {
		prev = strconv.FormatInt(int64(d.PreviousHash.Hash), 10)
	}
	var rs []string
	for _, r := range d.Reasons {
		rs = append(rs, fmt.Sprintf("%s %s %d->%d", r.Kind, r.Topic, r.OldPartitions, r.NewPartitions))
	}
	return fmt.Sprintf("%s %q %s -> %d at metadata offset %d [%s] (%s)", d.GroupType, d.GroupID, prev, int64(d.NewHash),
		d.MetadataOffset, strings.Join(rs, "; "), e.MsgID)
}

var (
	scSchemaOnce sync.Once
	scSchema     *jsonschema.Schema
	scSchemaErr  error
)

// scCheck validates one message: publish.Decode, the JSON Schema, the cluster, the
// subject derived from the group, and the Nats-Msg-Id and Content-Type headers.
func scCheck(clusterID, subject string, hdr nats.Header, data []byte) (publish.Envelope, error) {
	env, err := publish.Decode(data)
	if err != nil {
		return env, fmt.Errorf("%s: publish.Decode: %w", subject, err)
	}
	scSchemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(publish.Schema))
		if err != nil {
			scSchemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		const url = "https://github.com/kraftwatch/kraftwatch/publish/schema/rebalance_needed.v1.json"
		if scSchemaErr = c.AddResource(url, doc); scSchemaErr == nil {
			scSchema, scSchemaErr = c.Compile(url)
		}
	})
	if scSchemaErr != nil {
		return env, fmt.Errorf("compiling the event schema: %w", scSchemaErr)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return env, fmt.Errorf("%s: %w", subject, err)
	}
	if err := scSchema.Validate(doc); err != nil {
		return env, fmt.Errorf("%s: event does not satisfy the schema: %w\n%s", subject, err, data)
	}
	d := env.Data
	want := publish.DefaultPrefix + "." + publish.EscapeToken(clusterID) + ".group." + d.GroupType.String() + "." + publish.EscapeToken(d.GroupID)
	switch {
	case d.ClusterID != clusterID || env.Source != "kraftwatch/"+clusterID:
		return env, fmt.Errorf("%s: cluster %q, source %q; want %q", subject, d.ClusterID, env.Source, clusterID)
	case subject != want:
		return env, fmt.Errorf("event of %s group %q on subject %s, want %s", d.GroupType, d.GroupID, subject, want)
	case hdr.Get(jetstream.MsgIDHeader) != env.ID:
		return env, fmt.Errorf("%s: Nats-Msg-Id %q, CloudEvent id %q", subject, hdr.Get(jetstream.MsgIDHeader), env.ID)
	case hdr.Get("Content-Type") != publish.ContentType:
		return env, fmt.Errorf("%s: Content-Type %q", subject, hdr.Get("Content-Type"))
	case d.HashScheme != publish.SchemeMurmur3:
		return env, fmt.Errorf("%s: hash scheme %q", subject, d.HashScheme)
	}
	return env, nil
}

// scWatcher is a core NATS subscriber to every kraftwatch subject; it reconnects
// forever. kraftwatch publishes on internal subjects and the stream republishes only
// what it stores, so every message must come from the stream's republish (Nats-Stream,
// Nats-Sequence) and each event must arrive once; a later delivery of an id already
// received (a refused or de-duplicated publish leaking through) is kept apart for
// noRepeats to fail on.
type scWatcher struct {
	clusterID string
	nc        *nats.Conn
	mu        sync.Mutex
	events    []scEvent       // first delivery of each event id, in order
	repeats   []scEvent       // later deliveries of an id already received
	seen      map[string]bool // ids received
	errs      []error
}

func scWatch(t testing.TB, url, clusterID string) *scWatcher {
	t.Helper()
	w := &scWatcher{clusterID: clusterID, seen: map[string]bool{}}
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w.nc = nc
	if _, err := nc.Subscribe(publish.DefaultPrefix+".>", func(m *nats.Msg) {
		at := time.Now()
		env, err := scCheck(clusterID, m.Subject, m.Header, m.Data)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			w.errs = append(w.errs, err)
			return
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if stream := m.Header.Get(jetstream.StreamHeader); stream != scStreamName || err != nil || seq == 0 {
			w.errs = append(w.errs, fmt.Errorf("%s: event %s is not a republish of stream %s (Nats-Stream %q, Nats-Sequence %q)",
				m.Subject, env.ID, scStreamName, stream, m.Header.Get(jetstream.SequenceHeader)))
			return
		}
		e := scEvent{Subject: m.Subject, MsgID: m.Header.Get(jetstream.MsgIDHeader), Seq: seq, At: at, Env: env}
		if w.seen[e.MsgID] {
			w.repeats = append(w.repeats, e)
			return
		}
		w.seen[e.MsgID] = true
		w.events = append(w.events, e)
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// all returns the events received so far, each id once, and fails t on any invalid
// message.
func (w *scWatcher) all(t testing.TB) []scEvent {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) > 0 {
		t.Fatalf("core subscriber received %d invalid message(s); first: %v", len(w.errs), w.errs[0])
	}
	return slices.Clone(w.events)
}

// repeated returns the deliveries of ids already received.
func (w *scWatcher) repeated() []scEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.repeats)
}

// noRepeats fails t if the core subscriber received any event twice.
func (w *scWatcher) noRepeats(t testing.TB) {
	t.Helper()
	if r := w.repeated(); len(r) > 0 {
		t.Fatalf("core subscriber received %d event(s) more than once:\n%s", len(r), scList(r))
	}
}

func scGroup(evs []scEvent, group string) []scEvent {
	var out []scEvent
	for _, e := range evs {
		if e.Env.Data.GroupID == group {
			out = append(out, e)
		}
	}
	return out
}

// scCounts counts events per group id.
func scCounts(evs []scEvent) map[string]int {
	n := map[string]int{}
	for _, e := range evs {
		n[e.Env.Data.GroupID]++
	}
	return n
}

// expect waits until the subscriber has received want events per group (every group
// not named must have none), then for scQuiet, and fails unless the counts are exactly
// want. It returns the events by group.
func (w *scWatcher) expect(t testing.TB, want map[string]int, timeout time.Duration) map[string][]scEvent {
	t.Helper()
	reached := func(got map[string]int) bool {
		for g, n := range want {
			if got[g] < n {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(timeout)
	for !reached(scCounts(w.all(t))) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: events per group %v, want %v; events:\n%s", timeout, scCounts(w.all(t)), want, scList(w.all(t)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(scQuiet)
	evs := w.all(t)
	got := scCounts(evs)
	for g := range want {
		if want[g] == 0 {
			delete(want, g)
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("events per group %v, want exactly %v; events:\n%s", got, want, scList(evs))
	}
	out := map[string][]scEvent{}
	for g := range want {
		out[g] = scGroup(evs, g)
	}
	return out
}

func scList(evs []scEvent) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %v\n", e)
	}
	return b.String()
}

// scStream reads every message of the test's stream, validating each.
func scStream(t testing.TB, url, clusterID string) []scEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, scStreamName)
	if err != nil {
		t.Fatalf("stream %s: %v", scStreamName, err)
	}
	st := s.CachedInfo().State
	var out []scEvent
	for seq := st.FirstSeq; st.Msgs > 0 && seq <= st.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("stream %s message %d: %v", scStreamName, seq, err)
		}
		env, err := scCheck(clusterID, m.Subject, m.Header, m.Data)
		if err != nil {
			t.Fatalf("stream %s message %d: %v", scStreamName, seq, err)
		}
		out = append(out, scEvent{Subject: m.Subject, MsgID: m.Header.Get(jetstream.MsgIDHeader), Seq: m.Sequence, Env: env})
	}
	return out
}

// scSameEvents fails unless a and b hold the same events (by id and stream sequence)
// in the same order.
func scSameEvents(t testing.TB, what string, a, b []scEvent) {
	t.Helper()
	ids := func(evs []scEvent) []string {
		out := make([]string, len(evs))
		for i, e := range evs {
			out[i] = e.MsgID + "@" + strconv.FormatUint(e.Seq, 10)
		}
		return out
	}
	if !slices.Equal(ids(a), ids(b)) {
		t.Fatalf("%s differ:\nfirst:\n%ssecond:\n%s", what, scList(a), scList(b))
	}
}

// scCheckStreamAndCore checks, per group, that the core subscriber saw exactly the
// stream's events and that they form a chain, and that nothing was delivered twice.
func scCheckStreamAndCore(t testing.TB, stream []scEvent, w *scWatcher, groups ...string) {
	t.Helper()
	for _, g := range groups {
		scSameEvents(t, "stream and core subscriber events of "+g, scGroup(stream, g), scGroup(w.all(t), g))
		scCheckChain(t, g, scGroup(stream, g))
	}
	w.noRepeats(t)
}

// scCheckChain checks one group's events in order: the first has no previous hash,
// each later one's previous hash is the new hash before it, no two consecutive events
// announce the same hash, no id repeats, and metadata offsets never go back.
func scCheckChain(t testing.TB, group string, evs []scEvent) {
	t.Helper()
	ids := map[string]bool{}
	for i, e := range evs {
		d := e.Env.Data
		if ids[e.MsgID] {
			t.Fatalf("group %s: event %d repeats id %s:\n%s", group, i, e.MsgID, scList(evs))
		}
		ids[e.MsgID] = true
		if i == 0 {
			if d.PreviousHash.Valid {
				t.Fatalf("group %s: first event has a previous hash:\n%s", group, scList(evs))
			}
			continue
		}
		p := evs[i-1].Env.Data
		switch {
		case !d.PreviousHash.Valid || d.PreviousHash.Hash != p.NewHash:
			t.Fatalf("group %s: event %d's previous hash is not the hash announced before it:\n%s", group, i, scList(evs))
		case d.NewHash == p.NewHash:
			t.Fatalf("group %s: events %d and %d announce the same hash (a duplicate):\n%s", group, i-1, i, scList(evs))
		case d.MetadataOffset < p.MetadataOffset:
			t.Fatalf("group %s: event %d goes back in the metadata log:\n%s", group, i, scList(evs))
		}
	}
}

// scFreshHashes computes every group's hash from scratch with `kraftwatch hashes
// --bootstrap`, which loads the metadata log and reads __consumer_offsets anew.
func scFreshHashes(t testing.TB, bin string, c *kafkatest.Cluster) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "hashes", "--bootstrap", c.Bootstrap(), c.Nodes[0].LogDir)
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

func scKafka(c *kafkatest.Cluster) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(strings.Split(c.Bootstrap(), ",")...), Timeout: 30 * time.Second}
}

func scCreateTopic(ctx context.Context, t testing.TB, cl *kafka.Client, name string, partitions int) {
	t.Helper()
	res, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: name, NumPartitions: partitions, ReplicationFactor: 1},
	}})
	if err == nil {
		err = res.Errors[name]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

func scAddPartitions(ctx context.Context, t testing.TB, cl *kafka.Client, name string, count int) {
	t.Helper()
	if err := scTryAddPartitions(ctx, cl, name, count); err != nil {
		t.Fatal(err)
	}
}

// scTryAddPartitions is scAddPartitions for goroutines other than the test's.
func scTryAddPartitions(ctx context.Context, cl *kafka.Client, name string, count int) error {
	res, err := cl.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: name, Count: int32(count)}},
	})
	if err == nil {
		err = res.Errors[name]
	}
	if err != nil {
		return fmt.Errorf("partitions of %s -> %d: %w", name, count, err)
	}
	return nil
}

func scDeleteTopic(ctx context.Context, t testing.TB, cl *kafka.Client, name string) {
	t.Helper()
	res, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{name}})
	if err == nil {
		err = res.Errors[name]
	}
	if err != nil {
		t.Fatalf("delete topic %s: %v", name, err)
	}
}

func scAlterTopicConfig(ctx context.Context, t testing.TB, cl *kafka.Client, topic, key, value string) {
	t.Helper()
	res, err := cl.AlterConfigs(ctx, &kafka.AlterConfigsRequest{Resources: []kafka.AlterConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.AlterConfigRequestConfig{{Name: key, Value: value}},
	}}})
	if err == nil {
		for _, e := range res.Errors {
			err = errors.Join(err, e)
		}
	}
	if err != nil {
		t.Fatalf("alter config of %s: %v", topic, err)
	}
}

// scMembers starts one KIP-848 consumer (Kafka's Java client) per group, each reading
// the topic given for it, concurrently, and waits until each has its assignment. They
// leave their groups at the end of the test.
func scMembers(ctx context.Context, t testing.TB, c *kafkatest.Cluster, topicOf map[string]string) {
	t.Helper()
	var mu sync.Mutex
	var members []*kafkatest.Member
	t.Cleanup(func() {
		start := time.Now()
		var wg sync.WaitGroup
		for _, m := range members {
			wg.Go(m.Close)
		}
		wg.Wait()
		if d := time.Since(start); d > 3*time.Second {
			t.Logf("members took %v to leave", d.Round(time.Millisecond))
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, len(topicOf))
	for group, topic := range topicOf {
		wg.Go(func() {
			m, err := c.StartMember(ctx, group, kafkatest.KindConsumer, []string{topic}, "")
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			members = append(members, m)
			mu.Unlock()
			if _, err := m.WaitFor(ctx, "assigned "); err != nil {
				errs <- fmt.Errorf("group %s: %w", group, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func scTail(path string, lines int) string {
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

// scWaitStep waits until a burst running in another goroutine has made step n.
func scWaitStep(t testing.TB, step *atomic.Int32, n int32) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for step.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the burst is stuck at step %d, waiting for %d", step.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// scReason returns the single reason of e, failing t when there is not exactly one.
func scReason(t testing.TB, e scEvent) publish.Reason {
	t.Helper()
	if len(e.Env.Data.Reasons) != 1 {
		t.Fatalf("event %v: want exactly one reason", e)
	}
	return e.Env.Data.Reasons[0]
}

// TestSidecarPartitionsAdded: three groups join while kraftwatch runs (each gets one
// first event, reason subscription_changed); partitions are added to the topic two of
// them read: exactly one event for each of those two, reason partitions_added 2 -> 4,
// previous hash the first event's, new hash what `kraftwatch hashes` computes; none
// for the group on the other topic. Then changes to topics no group reads (create, add
// partitions, alter config, delete) give no event at all.
func TestSidecarPartitionsAdded(t *testing.T) {
	c, bin := sidecarSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := scStartNATS(t)
	w := scWatch(t, ns.url(), c.ClusterID)
	cl := scKafka(c)
	scCreateTopic(ctx, t, cl, "pa-orders", 2)
	scCreateTopic(ctx, t, cl, "pa-audit", 1)
	kw := scStartKW(t, "kw", bin, scEnv(c, ns.url(), "pa-.*"))
	t.Logf("kraftwatch ready in %v", kw.waitReady(time.Minute).Round(time.Millisecond))

	scMembers(ctx, t, c, map[string]string{"pa-billing": "pa-orders", "pa-shipping": "pa-orders", "pa-auditor": "pa-audit"})
	first := w.expect(t, map[string]int{"pa-billing": 1, "pa-shipping": 1, "pa-auditor": 1}, time.Minute)
	topicID := map[string]string{}
	for g, want := range map[string]publish.Reason{
		"pa-billing":  {Kind: publish.SubscriptionChanged, Topic: "pa-orders", NewPartitions: 2},
		"pa-shipping": {Kind: publish.SubscriptionChanged, Topic: "pa-orders", NewPartitions: 2},
		"pa-auditor":  {Kind: publish.SubscriptionChanged, Topic: "pa-audit", NewPartitions: 1},
	} {
		e := first[g][0]
		r := scReason(t, e)
		want.TopicID = r.TopicID
		if r != want || r.TopicID == "" || e.Env.Data.PreviousHash.Valid {
			t.Fatalf("group %s's first event: %v; want previous null and reason %+v", g, e, want)
		}
		topicID[r.Topic] = r.TopicID
	}

	scAddPartitions(ctx, t, cl, "pa-orders", 4)
	got := w.expect(t, map[string]int{"pa-billing": 2, "pa-shipping": 2, "pa-auditor": 1}, time.Minute)
	fresh := scFreshHashes(t, bin, c)
	for _, g := range []string{"pa-billing", "pa-shipping"} {
		e := got[g][1]
		want := publish.Reason{Kind: publish.PartitionsAdded, Topic: "pa-orders", TopicID: topicID["pa-orders"], OldPartitions: 2, NewPartitions: 4}
		if r := scReason(t, e); r != want {
			t.Fatalf("group %s: %v; want reason %+v", g, e, want)
		}
		scCheckChain(t, g, got[g])
		if int64(e.Env.Data.NewHash) != fresh[g] {
			t.Fatalf("group %s: announced hash %d, kraftwatch hashes computes %d", g, e.Env.Data.NewHash, fresh[g])
		}
		if e.Env.Data.MetadataOffset <= got[g][0].Env.Data.MetadataOffset {
			t.Fatalf("group %s: partitions_added at metadata offset %d, not after the first event's %d", g, e.Env.Data.MetadataOffset, got[g][0].Env.Data.MetadataOffset)
		}
	}
	if h := int64(got["pa-auditor"][0].Env.Data.NewHash); h != fresh["pa-auditor"] {
		t.Fatalf("group pa-auditor: announced hash %d, kraftwatch hashes computes %d", h, fresh["pa-auditor"])
	}
	t.Logf("partitions added: one event each for pa-billing and pa-shipping, none for pa-auditor")

	t.Run("unread topics", func(t *testing.T) {
		scCreateTopic(ctx, t, cl, "pa-unread", 1)
		scAddPartitions(ctx, t, cl, "pa-unread", 3)
		scAlterTopicConfig(ctx, t, cl, "pa-unread", "retention.ms", "3600000")
		scAlterTopicConfig(ctx, t, cl, "pa-orders", "retention.ms", "3600000") // a read topic, but no hash input
		scDeleteTopic(ctx, t, cl, "pa-unread")
		scCreateTopic(ctx, t, cl, "pa-unread-2", 2)
		scDeleteTopic(ctx, t, cl, "pa-unread-2")
		// A change that does move a group: kraftwatch decides in metadata log order, so
		// once its event is here every change above has been decided.
		scAddPartitions(ctx, t, cl, "pa-audit", 2)
		got := w.expect(t, map[string]int{"pa-billing": 2, "pa-shipping": 2, "pa-auditor": 2}, time.Minute)
		e := got["pa-auditor"][1]
		want := publish.Reason{Kind: publish.PartitionsAdded, Topic: "pa-audit", TopicID: topicID["pa-audit"], OldPartitions: 1, NewPartitions: 2}
		if r := scReason(t, e); r != want {
			t.Fatalf("pa-auditor: %v; want reason %+v", e, want)
		}
	})

	stream := scStream(t, ns.url(), c.ClusterID)
	if n := len(stream); n != 6 {
		t.Fatalf("stream holds %d events, want 6:\n%s", n, scList(stream))
	}
	scCheckStreamAndCore(t, stream, w, "pa-billing", "pa-shipping", "pa-auditor")
}

// TestSidecarTwoReplicas: two kraftwatch processes on one cluster, one NATS and one
// stream, started together after the groups exist (so they race on the first
// events), then a burst of three partition increases: every transition is stored once
// (1 + 3 events per group, a consistent chain), the replicas' published counters add
// up to the stream's events, and both replicas decided every live transition.
func TestSidecarTwoReplicas(t *testing.T) {
	c, bin := sidecarSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := scStartNATS(t)
	w := scWatch(t, ns.url(), c.ClusterID)
	cl := scKafka(c)
	scCreateTopic(ctx, t, cl, "rr-orders", 1)
	scMembers(ctx, t, c, map[string]string{"rr-a": "rr-orders", "rr-b": "rr-orders"})

	env := scEnv(c, ns.url(), "rr-.*")
	kws := []*scKW{scStartKW(t, "kw1", bin, env), scStartKW(t, "kw2", bin, env)}
	for _, k := range kws {
		k.waitReady(time.Minute)
	}
	w.expect(t, map[string]int{"rr-a": 1, "rr-b": 1}, time.Minute)
	for n := 2; n <= 4; n++ {
		scAddPartitions(ctx, t, cl, "rr-orders", n)
	}
	got := w.expect(t, map[string]int{"rr-a": 4, "rr-b": 4}, time.Minute)
	fresh := scFreshHashes(t, bin, c)
	stream := scStream(t, ns.url(), c.ClusterID)
	for _, g := range []string{"rr-a", "rr-b"} {
		evs := got[g]
		scCheckChain(t, g, evs)
		for i, e := range evs[1:] {
			want := publish.Reason{Kind: publish.PartitionsAdded, Topic: "rr-orders", TopicID: scReason(t, evs[0]).TopicID,
				OldPartitions: int32(i + 1), NewPartitions: int32(i + 2)}
			if r := scReason(t, e); r != want {
				t.Fatalf("group %s event %d: %v; want reason %+v", g, i+1, e, want)
			}
		}
		if h := int64(evs[3].Env.Data.NewHash); h != fresh[g] {
			t.Fatalf("group %s: last hash %d, kraftwatch hashes computes %d", g, h, fresh[g])
		}
		scSameEvents(t, "stream and core subscriber events of "+g, scGroup(stream, g), evs)
		for _, k := range kws {
			live := 0
			for _, d := range k.decisions(1, g) {
				for _, e := range evs[1:] {
					if d.NewHash == int64(e.Env.Data.NewHash) && d.MetadataOffset == e.Env.Data.MetadataOffset {
						live++
					}
				}
			}
			if live != 3 {
				t.Fatalf("kraftwatch %s decided %d of group %s's 3 live transitions: %+v", k.name, live, g, k.decisions(1, g))
			}
		}
	}
	// The losing replica of each race publishes the same event expecting a last
	// sequence the winner already moved (or finds it stored): the stream refuses it and
	// republishes only what it stores, so the core subscriber received each stored
	// event exactly once and nothing else.
	w.noRepeats(t)
	scSameEvents(t, "stream and core subscriber events", stream, w.all(t))
	t.Logf("core subscriber: %d events, each once, the stream's", len(w.all(t)))
	var published, already, decided float64
	for _, k := range kws {
		p, a, d := k.metric("kraftwatch_events_published_total"), k.metric("kraftwatch_events_already_published_total"), k.metric("kraftwatch_decisions_total")
		t.Logf("kraftwatch %s: %v decisions, %v events published, %v found already published", k.name, d, p, a)
		published, already, decided = published+p, already+a, decided+d
	}
	if int(published) != len(stream) || len(stream) != 8 {
		t.Fatalf("replicas published %v events in all, the stream holds %d, want 8", published, len(stream))
	}
	if already == 0 || decided < 14 {
		t.Fatalf("replicas decided %v and found %v already published: want both replicas deciding every live transition", decided, already)
	}
}

// TestSidecarSIGKILL kills kraftwatch with SIGKILL in the middle of a burst of eight
// partition increases and starts it again at once, while the burst goes on: afterwards
// each group's last stored hash is the hash computed from scratch (nothing lost), the
// chain of events is consistent with no hash announced twice in a row and no id stored
// twice (nothing duplicated), the core subscriber saw exactly the stored events, and
// every decision of the restarted process is in the stream.
func TestSidecarSIGKILL(t *testing.T) {
	c, bin := sidecarSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := scStartNATS(t)
	w := scWatch(t, ns.url(), c.ClusterID)
	cl := scKafka(c)
	scCreateTopic(ctx, t, cl, "kill-orders", 1)
	kw := scStartKW(t, "kw", bin, scEnv(c, ns.url(), "kill-.*"))
	kw.waitReady(time.Minute)
	scMembers(ctx, t, c, map[string]string{"kill-a": "kill-orders", "kill-b": "kill-orders"})
	w.expect(t, map[string]int{"kill-a": 1, "kill-b": 1}, time.Minute)

	const last = 9
	var step atomic.Int32
	burst := make(chan error, 1)
	go func() {
		for n := 2; n <= last; n++ {
			if err := scTryAddPartitions(ctx, cl, "kill-orders", n); err != nil {
				burst <- err
				return
			}
			step.Store(int32(n))
			time.Sleep(200 * time.Millisecond)
		}
		burst <- nil
	}()
	deadline := time.Now().Add(time.Minute)
	for len(scGroup(w.all(t), "kill-a")) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no event for the burst's first two steps:\n%s", scList(w.all(t)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	kw.kill()
	killedAt := step.Load()
	before := map[string]int{"kill-a": len(scGroup(w.all(t), "kill-a")), "kill-b": len(scGroup(w.all(t), "kill-b"))}
	// Two more steps while it is down, then start it again while the burst goes on.
	scWaitStep(t, &step, killedAt+2)
	restartedAt := step.Load()
	kw.start()
	kw.waitReady(time.Minute)
	t.Logf("SIGKILL after the burst's step to %d partitions (events stored: %v); restarted at step %d", killedAt, before, restartedAt)
	if err := <-burst; err != nil {
		t.Fatal(err)
	}
	if restartedAt >= last {
		t.Fatalf("the burst was over when kraftwatch was started again: not a restart during a burst")
	}

	fresh := scFreshHashes(t, bin, c)
	lastHash := func(g string) int64 {
		evs := scGroup(w.all(t), g)
		return int64(evs[len(evs)-1].Env.Data.NewHash)
	}
	deadline = time.Now().Add(time.Minute)
	for lastHash("kill-a") != fresh["kill-a"] || lastHash("kill-b") != fresh["kill-b"] {
		if time.Now().After(deadline) {
			t.Fatalf("last hashes never reached the fresh ones %v:\n%s", fresh, scList(w.all(t)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(scQuiet)
	stream := scStream(t, ns.url(), c.ClusterID)
	for _, g := range []string{"kill-a", "kill-b"} {
		evs := scGroup(stream, g)
		scCheckChain(t, g, evs)
		scSameEvents(t, "stream and core subscriber events of "+g, evs, scGroup(w.all(t), g))
		if h := int64(evs[len(evs)-1].Env.Data.NewHash); h != fresh[g] {
			t.Fatalf("group %s: last stored hash %d, kraftwatch hashes computes %d", g, h, fresh[g])
		}
		stored := map[scDecision]bool{}
		for _, e := range evs {
			stored[scDecision{Group: g, NewHash: int64(e.Env.Data.NewHash), MetadataOffset: e.Env.Data.MetadataOffset}] = true
		}
		for _, d := range kw.decisions(2, g) {
			if !stored[d] {
				t.Fatalf("group %s: the restarted kraftwatch decided %+v, which is not in the stream:\n%s", g, d, scList(evs))
			}
		}
		// What changed while it was down is announced once, at start-up (reason
		// subscription_changed: the cause is not known), right after the events the
		// killed process stored; every other event after the first is one step.
		catchUp := 0
		for i, e := range evs[1:] {
			switch r := scReason(t, e); r.Kind {
			case publish.SubscriptionChanged:
				catchUp++
				if i+1 < before[g] {
					t.Fatalf("group %s: start-up event %d among the %d events stored before the kill:\n%s", g, i+1, before[g], scList(evs))
				}
			case publish.PartitionsAdded:
				if r.NewPartitions != r.OldPartitions+1 {
					t.Fatalf("group %s: live event %v is not one step", g, e)
				}
			default:
				t.Fatalf("group %s: unexpected reason in %v", g, e)
			}
		}
		if catchUp != 1 {
			t.Fatalf("group %s: %d start-up events after the restart, want 1:\n%s", g, catchUp, scList(evs))
		}
		t.Logf("group %s: %d events stored for 1 + %d transitions (those made while kraftwatch was down announced as one)", g, len(evs), last-1)
	}
	w.noRepeats(t)
}

// TestSidecarChangeWhileDown stops kraftwatch (SIGTERM), adds partitions to the topic
// one group reads and starts kraftwatch again: exactly one event for that group, from
// the hash announced before to the hash computed from scratch, none for the group on
// the unchanged topic; a further restart announces nothing.
func TestSidecarChangeWhileDown(t *testing.T) {
	c, bin := sidecarSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := scStartNATS(t)
	w := scWatch(t, ns.url(), c.ClusterID)
	cl := scKafka(c)
	scCreateTopic(ctx, t, cl, "down-orders", 2)
	scCreateTopic(ctx, t, cl, "down-other", 1)
	kw := scStartKW(t, "kw", bin, scEnv(c, ns.url(), "down-.*"))
	kw.waitReady(time.Minute)
	scMembers(ctx, t, c, map[string]string{"down-g": "down-orders", "down-h": "down-other"})
	first := w.expect(t, map[string]int{"down-g": 1, "down-h": 1}, time.Minute)
	if code, took := kw.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("kraftwatch exited %d after %v", code, took)
	}

	scAddPartitions(ctx, t, cl, "down-orders", 5)
	fresh := scFreshHashes(t, bin, c)
	kw.start()
	kw.waitReady(time.Minute)
	got := w.expect(t, map[string]int{"down-g": 2, "down-h": 1}, time.Minute)
	e := got["down-g"][1]
	d := e.Env.Data
	if !d.PreviousHash.Valid || d.PreviousHash.Hash != first["down-g"][0].Env.Data.NewHash || int64(d.NewHash) != fresh["down-g"] {
		t.Fatalf("event after the restart: %v; want previous %d, new %d", e, first["down-g"][0].Env.Data.NewHash, fresh["down-g"])
	}
	want := publish.Reason{Kind: publish.SubscriptionChanged, Topic: "down-orders", TopicID: scReason(t, first["down-g"][0]).TopicID, NewPartitions: 5}
	if r := scReason(t, e); r != want {
		t.Fatalf("event after the restart: %v; want reason %+v", e, want)
	}

	// Nothing already announced is announced again.
	if code, _ := kw.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("kraftwatch exited %d", code)
	}
	kw.start()
	kw.waitReady(time.Minute)
	if n := kw.metric("kraftwatch_decisions_total"); n != 0 {
		t.Fatalf("third run decided %v events at start-up, want 0", n)
	}
	w.expect(t, map[string]int{"down-g": 2, "down-h": 1}, time.Minute)
	stream := scStream(t, ns.url(), c.ClusterID)
	scCheckStreamAndCore(t, stream, w, "down-g", "down-h")
}

// TestSidecarNATSRestart kills the nats-server process (SIGKILL) after a first
// transition, adds partitions twice while it is gone (kraftwatch decides both and
// keeps retrying; /readyz fails), starts it again on the same port and store, and adds
// partitions once more: the stream ends with every transition exactly once, in order
// (1 + 4 events), /readyz recovers, and the core subscriber, reconnected, receives what
// is published after its return.
func TestSidecarNATSRestart(t *testing.T) {
	c, bin := sidecarSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := scStartNATS(t)
	w := scWatch(t, ns.url(), c.ClusterID)
	cl := scKafka(c)
	scCreateTopic(ctx, t, cl, "nr-orders", 1)
	kw := scStartKW(t, "kw", bin, scEnv(c, ns.url(), "nr-.*"))
	kw.waitReady(time.Minute)
	scMembers(ctx, t, c, map[string]string{"nr-g": "nr-orders"})
	w.expect(t, map[string]int{"nr-g": 1}, time.Minute)
	scAddPartitions(ctx, t, cl, "nr-orders", 2)
	w.expect(t, map[string]int{"nr-g": 2}, time.Minute)

	ns.kill()
	start := time.Now()
	for kw.readyz() == http.StatusOK {
		if time.Since(start) > 20*time.Second {
			t.Fatal("/readyz still 200 20s after nats-server was killed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("/readyz failed %v after nats-server was killed", time.Since(start).Round(time.Millisecond))
	scAddPartitions(ctx, t, cl, "nr-orders", 3)
	scAddPartitions(ctx, t, cl, "nr-orders", 4)
	for len(kw.decisions(1, "nr-g")) < 4 {
		if time.Since(start) > time.Minute {
			t.Fatalf("kraftwatch did not decide the changes made while NATS was down: %+v", kw.decisions(1, "nr-g"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := kw.readyz(); code == http.StatusOK {
		t.Fatal("/readyz is 200 while nats-server is down")
	}
	time.Sleep(time.Second) // let the publisher retry a few times
	ns.start()
	t.Logf("nats-server restarted after %v down", time.Since(start).Round(time.Millisecond))
	kw.waitReady(time.Minute)
	scAddPartitions(ctx, t, cl, "nr-orders", 5)

	fresh := scFreshHashes(t, bin, c)
	deadline := time.Now().Add(time.Minute)
	var evs []scEvent
	for {
		evs = scGroup(scStream(t, ns.url(), c.ClusterID), "nr-g")
		if len(evs) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream holds %d events of nr-g, want 5:\n%s", len(evs), scList(evs))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(scQuiet)
	evs = scGroup(scStream(t, ns.url(), c.ClusterID), "nr-g")
	if len(evs) != 5 {
		t.Fatalf("stream holds %d events of nr-g, want exactly 5:\n%s", len(evs), scList(evs))
	}
	scCheckChain(t, "nr-g", evs)
	for i, e := range evs[1:] {
		want := publish.Reason{Kind: publish.PartitionsAdded, Topic: "nr-orders", TopicID: scReason(t, evs[0]).TopicID,
			OldPartitions: int32(i + 1), NewPartitions: int32(i + 2)}
		if r := scReason(t, e); r != want {
			t.Fatalf("event %d: %v; want reason %+v", i+1, e, want)
		}
	}
	if h := int64(evs[4].Env.Data.NewHash); h != fresh["nr-g"] {
		t.Fatalf("last stored hash %d, kraftwatch hashes computes %d", h, fresh["nr-g"])
	}
	// The core subscriber missed what was published while it was reconnecting, at most;
	// it saw nothing twice and nothing that is not stored, and the last event.
	core := scGroup(w.all(t), "nr-g")
	if len(core) < 3 || core[len(core)-1].MsgID != evs[4].MsgID {
		t.Fatalf("core subscriber received:\n%swant at least the first two and the last of:\n%s", scList(core), scList(evs))
	}
	j := 0
	for _, e := range core {
		for j < len(evs) && evs[j].MsgID != e.MsgID {
			j++
		}
		if j == len(evs) {
			t.Fatalf("core subscriber received events not stored, or out of order:\n%sstored:\n%s", scList(core), scList(evs))
		}
		j++
	}
	w.noRepeats(t)
	t.Logf("core subscriber received %d of the 5 stored events, none twice; kraftwatch retried %v publishes",
		len(core), kw.metric("kraftwatch_events_retried_total"))
}

// TestSidecarSIGTERM sends SIGTERM in the middle of a burst of five partition
// increases: kraftwatch exits 0 within 5 s, every decision it logged is in the stream
// and it dropped nothing; started again, it announces exactly what it had not decided
// (one event when the stream's last hash is not the fresh one, none otherwise), so the
// last stored hash is the fresh hash.
func TestSidecarSIGTERM(t *testing.T) {
	c, bin := sidecarSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := scStartNATS(t)
	w := scWatch(t, ns.url(), c.ClusterID)
	cl := scKafka(c)
	scCreateTopic(ctx, t, cl, "term-orders", 1)
	kw := scStartKW(t, "kw", bin, scEnv(c, ns.url(), "term-.*"))
	kw.waitReady(time.Minute)
	scMembers(ctx, t, c, map[string]string{"term-g": "term-orders"})
	w.expect(t, map[string]int{"term-g": 1}, time.Minute)

	// SIGTERM in the middle of the burst, once its third step is done.
	var step atomic.Int32
	burst := make(chan error, 1)
	go func() {
		for n := 2; n <= 6; n++ {
			if err := scTryAddPartitions(ctx, cl, "term-orders", n); err != nil {
				burst <- err
				return
			}
			step.Store(int32(n))
		}
		burst <- nil
	}()
	scWaitStep(t, &step, 4)
	code, took := kw.stop(syscall.SIGTERM)
	if err := <-burst; err != nil {
		t.Fatal(err)
	}
	if code != 0 || took > 5*time.Second {
		t.Fatalf("SIGTERM: exit code %d after %v, want 0 within 5s", code, took)
	}
	t.Logf("SIGTERM: exit 0 after %v", took.Round(time.Millisecond))
	if lines := kw.logLines(1, "event dropped"); len(lines) > 0 {
		t.Fatalf("kraftwatch dropped %d event(s): %v", len(lines), lines)
	}
	if len(kw.logLines(1, "publisher stopped")) != 1 {
		t.Fatal(`no "publisher stopped" line: the publisher did not drain`)
	}
	stream := scGroup(scStream(t, ns.url(), c.ClusterID), "term-g")
	stored := map[scDecision]bool{}
	for _, e := range stream {
		stored[scDecision{Group: "term-g", NewHash: int64(e.Env.Data.NewHash), MetadataOffset: e.Env.Data.MetadataOffset}] = true
	}
	ds := kw.decisions(1, "term-g")
	for _, d := range ds {
		if !stored[d] {
			t.Fatalf("decision %+v before SIGTERM is not in the stream:\n%s", d, scList(stream))
		}
	}
	if len(ds) != len(stream) {
		t.Fatalf("%d decisions, %d events stored", len(ds), len(stream))
	}
	t.Logf("SIGTERM at step %d of the burst: %d of the 5 transitions decided before exit, all stored", 4, len(ds)-1)

	fresh := scFreshHashes(t, bin, c)["term-g"]
	want := len(stream)
	if int64(stream[len(stream)-1].Env.Data.NewHash) != fresh {
		want++
	}
	kw.start()
	kw.waitReady(time.Minute)
	got := w.expect(t, map[string]int{"term-g": want}, time.Minute)["term-g"]
	if h := int64(got[len(got)-1].Env.Data.NewHash); h != fresh {
		t.Fatalf("last hash %d, kraftwatch hashes computes %d", h, fresh)
	}
	stream = scGroup(scStream(t, ns.url(), c.ClusterID), "term-g")
	scCheckChain(t, "term-g", stream)
	scSameEvents(t, "stream and core subscriber events", stream, got)
	w.noRepeats(t)
	if code, took := kw.stop(syscall.SIGTERM); code != 0 || took > 5*time.Second {
		t.Fatalf("second SIGTERM: exit code %d after %v", code, took)
	}
}
