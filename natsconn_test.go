package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// logBuf collects log output from any goroutine.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// natsTestOptions are the options natsOptions makes of c, failing t on a bad setting.
func natsTestOptions(t *testing.T, c config) []nats.Option {
	t.Helper()
	if c.NATSPingInterval == "" {
		c.NATSPingInterval, c.NATSMaxPingsOut = "5s", 2
	}
	return c.natsOptions(func(field, format string, args ...any) {
		t.Fatalf("%s: %s", field, fmt.Sprintf(format, args...))
	})
}

// waitUntil polls cond every 20 ms and returns how long it took to hold; it fails t after
// timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestNATSCause: each kind of connection failure names the setting to check.
func TestNATSCause(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"authorization", nats.ErrAuthorization, "KRAFTWATCH_NATS_USER and KRAFTWATCH_NATS_PASSWORD"},
		{"server's text", errors.New("nats: Authorization Violation"), "KRAFTWATCH_NATS_USER"},
		{"expired jwt", nats.ErrAuthExpired, "KRAFTWATCH_NATS_CREDS_FILE"},
		{"unknown CA", fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), "KRAFTWATCH_NATS_TLS_CA_FILE"},
		{"expired server certificate", x509.CertificateInvalidError{Reason: x509.Expired}, "KRAFTWATCH_NATS_TLS_CA_FILE"},
		{"client certificate refused", errors.New("remote error: tls: expired certificate"), "KRAFTWATCH_NATS_TLS_CERT_FILE"},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, "KRAFTWATCH_NATS_URL"},
		{"unresolvable", &net.DNSError{Name: "nats.invalid", IsNotFound: true}, "KRAFTWATCH_NATS_URL"},
		{"stale", nats.ErrStaleConnection, "KRAFTWATCH_NATS_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := natsCause("nats://kw:secret@h:4222", tc.err)
			if !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.err) || strings.Contains(err.Error(), "secret") {
				t.Errorf("natsCause: %v, want it to wrap %v, name %s and hide the password", err, tc.err, tc.want)
			}
		})
	}
}

// TestNATSConnectCause: a server that refuses connections and a host that does not
// resolve are the health's cause, and logged once, with the setting to check.
func TestNATSConnectCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "nats://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct{ name, url, want string }{
		{"refused", refused, "connection refused"},
		{"unresolvable", "nats://kraftwatch-test.invalid:4222", "no such host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logBuf{}
			nc, drain, err := connectNATS(natsSettings{url: tc.url, opts: natsTestOptions(t, config{})},
				slog.New(slog.NewTextHandler(logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer drain()
			waitUntil(t, 10*time.Second, "a failed attempt", func() bool {
				err := nc.health()
				return err != nil && strings.Contains(err.Error(), tc.want)
			})
			if err := nc.health(); !strings.Contains(err.Error(), "KRAFTWATCH_NATS_URL") {
				t.Errorf("health %v: want the setting named", err)
			}
			if n := strings.Count(logs.String(), tc.want); n != 1 {
				t.Errorf("%d log lines with %q, want 1 (then a summary every %v):\n%s", n, tc.want, natsLogEvery, logs)
			}
		})
	}
}

// startAuthServer starts nats-server (natstest.Binary, a separate process: reloading an
// in-process server races inside nats-server) with JetStream on a fixed port, accepting
// user kw with password; reload changes the password (config file and SIGHUP).
func startAuthServer(t *testing.T, password string) (url string, reload func(password string)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	write := func(password string) {
		t.Helper()
		c := fmt.Sprintf("listen: 127.0.0.1:%d\njetstream { store_dir: %q }\nauthorization { users = [ { user: kw, password: %q } ] }\n",
			port, filepath.Join(dir, "store"), password)
		if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(password)
	logf, err := os.Create(filepath.Join(dir, "nats.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(natstest.Binary(t), "-c", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("nats-server log:\n%s", b)
		}
	})
	url = fmt.Sprintf("nats://127.0.0.1:%d", port)
	waitUntil(t, 30*time.Second, "nats-server listening", func() bool {
		c, err := net.DialTimeout("tcp", url[len("nats://"):], time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return url, func(password string) {
		t.Helper()
		write(password)
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNATSCredentialRotation: NATS refuses kraftwatch's password at start-up, then
// accepts it (the server's users reloaded), then refuses it again while it runs, then
// accepts it again. The publisher's health names the authorization violation and the
// settings to check while refused; the connection never gives up (nats.go closes it
// after two refusals by default), /livez stays ok, and the publisher is ready again
// after each acceptance. Every event enqueued meanwhile is stored once.
func TestNATSCredentialRotation(t *testing.T) {
	url, reload := startAuthServer(t, "old")
	logs := &logBuf{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	nc, drain, err := connectNATS(natsSettings{url: url, opts: natsTestOptions(t, config{NATSUser: "kw", NATSPassword: "new"})}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer drain()
	p, ctx, stop := runPublisher(t, nc, 0, log)
	defer stop()
	refused := func() bool {
		err := p.Health()
		return err != nil && strings.Contains(strings.ToLower(err.Error()), "authorization violation") &&
			strings.Contains(err.Error(), "KRAFTWATCH_NATS_USER")
	}
	ready := func() bool { return p.Health() == nil }
	waitUntil(t, 10*time.Second, "health naming the refused credentials", refused)
	time.Sleep(3 * time.Second) // several refusals: nats.go would have given up after two
	if err := nc.live(); err != nil || nc.IsClosed() {
		t.Fatalf("live %v, closed %v after refusals: want the connection retrying", err, nc.IsClosed())
	}
	t.Logf("refused at start-up: %v", p.Health())

	reload("new")
	toReady := waitUntil(t, 30*time.Second, "ready after the server accepts the password", ready)
	t.Logf("start-up refusal: ready %v after the server accepted the password", toReady.Round(time.Millisecond))
	enqueue := func(k int) {
		t.Helper()
		ev := events.RebalanceNeeded{GroupType: events.ConsumerGroup, GroupID: fmt.Sprintf("g%d", k),
			NewHash: events.Hash(k + 1), Reasons: []events.Reason{{Kind: events.PartitionsAdded, Topic: "t",
				TopicID: "AAAAAAAAAAAAAAAAAAAAAA", OldPartitions: 1, NewPartitions: 2}},
			Cause: events.Cause{MetadataOffset: int64(k + 1), MetadataEpoch: 1}}
		if err := p.Enqueue(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(0)

	reload("newer") // rotated on the server first, as when a secret is rotated in place
	rotated := time.Now()
	toRefused := waitUntil(t, 30*time.Second, "not ready after the password is rotated away", refused)
	enqueue(1) // waits for the connection
	time.Sleep(3 * time.Second)
	if err := nc.live(); err != nil || nc.IsClosed() {
		t.Fatalf("live %v, closed %v after refusals while running: want the connection retrying", err, nc.IsClosed())
	}
	reload("new")
	toReady = waitUntil(t, 30*time.Second, "ready after the password is accepted again", ready)
	t.Logf("refusal while running: not ready %v after the rotation, ready %v after the server accepted the password again (down %v)",
		toRefused.Round(time.Millisecond), toReady.Round(time.Millisecond), time.Since(rotated).Round(time.Millisecond))
	waitUntil(t, 30*time.Second, "both events published", func() bool {
		s := p.Stats()
		if s.Published+s.AlreadyPublished == 2 && s.Queued == 0 {
			return true
		}
		t.Logf("stats %+v, health %v", s, p.Health())
		return false
	})
	// Once each: an attempt whose acknowledgement the rotation cut off is found stored
	// on the retry (AlreadyPublished), never stored twice.
	js, err := jetstream.New(nc.Conn)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(context.Background(), "KRAFTWATCH_c1")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Dropped != 0 || info.State.Msgs != 2 {
		t.Errorf("stats %+v, stream holds %d events: want both events stored once", s, info.State.Msgs)
	}
	if n := strings.Count(strings.ToLower(logs.String()), "authorization violation"); n == 0 || n > 6 {
		t.Errorf("%d log lines name the authorization violation, want 1 per refusal spell and its summaries:\n%s", n, logs)
	}
}

// TestNATSHungNode: in a 3-node NATS cluster, the node kraftwatch is connected to hangs
// (SIGSTOP) while events flow into a stream with 3 replicas. With
// KRAFTWATCH_NATS_PING_INTERVAL=500ms and KRAFTWATCH_NATS_MAX_PINGS_OUT=2 the
// connection leaves it within 1.5 s (nats.go's default keepalive takes 6 min) for
// another node, and every event is stored once.
func TestNATSHungNode(t *testing.T) {
	c := natstest.StartCluster(t, natstest.ClusterOptions{})
	const ping, maxOut = 500 * time.Millisecond, 2
	bound := ping * (maxOut + 1)
	logs := &logBuf{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	nc, drain, err := connectNATS(natsSettings{url: c.URLs(),
		opts: natsTestOptions(t, config{NATSPingInterval: ping.String(), NATSMaxPingsOut: maxOut})}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer drain()
	p, ctx, stop := runPublisher(t, nc, 3, log)
	defer stop()
	waitUntil(t, 30*time.Second, "ready", func() bool { return p.Health() == nil })

	const n = 400
	produced := make(chan error, 1)
	go func() {
		for k := range n {
			ev := events.RebalanceNeeded{GroupType: events.ConsumerGroup, GroupID: fmt.Sprintf("g%02d", k%20),
				NewHash: events.Hash(k + 1), Reasons: []events.Reason{{Kind: events.PartitionsAdded, Topic: "t",
					TopicID: "AAAAAAAAAAAAAAAAAAAAAA", OldPartitions: 1, NewPartitions: 2}},
				Cause: events.Cause{MetadataOffset: int64(k + 1), MetadataEpoch: 1}}
			if err := p.Enqueue(ctx, ev); err != nil {
				produced <- err
				return
			}
			time.Sleep(10 * time.Millisecond) // a steady stream
		}
		produced <- nil
	}()
	waitUntil(t, 30*time.Second, "events published", func() bool { return p.Stats().Published >= 50 })
	victim := c.Node(nc.ConnectedServerName())
	c.Pause(victim)
	defer c.Resume(victim)
	hung := time.Now()
	var notReady time.Duration
	left := waitUntil(t, time.Minute, "the connection on another node", func() bool {
		if notReady == 0 && p.Health() != nil {
			notReady = time.Since(hung)
		}
		return nc.IsConnected() && nc.ConnectedServerName() != victim.Name
	})
	t.Logf("%s hung: publisher not ready after %v (%v), connection on %s after %v (bound %v)",
		victim.Name, notReady.Round(time.Millisecond), p.Health(), nc.ConnectedServerName(), left.Round(time.Millisecond), bound)
	if left > bound+5*time.Second {
		t.Errorf("left the hung node after %v, want about %v (KRAFTWATCH_NATS_PING_INTERVAL × (MAX_PINGS_OUT+1))", left, bound)
	}
	waitUntil(t, time.Minute, "ready again", func() bool { return p.Health() == nil })
	t.Logf("ready again %v after the hang", time.Since(hung).Round(time.Millisecond))
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "every event done", func() bool { s := p.Stats(); return s.Queued == 0 && s.Enqueued == n })
	c.Resume(victim)
	s := p.Stats()
	if s.Published+s.AlreadyPublished+s.Superseded != n || s.Dropped != 0 {
		t.Errorf("stats %+v: want all %d events stored", s, n)
	}
	js, err := jetstream.New(nc.Conn)
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	stream, err := js.Stream(sctx, p.StreamName())
	if err != nil {
		t.Fatal(err)
	}
	// Each message stored takes a sequence (MaxMsgsPerSubject drops old ones, not their
	// sequences); a duplicate Msg-Id takes none.
	if got := stream.CachedInfo().State.LastSeq; got != s.Published {
		t.Errorf("stream %s stored %d events, the publisher published %d: lost or duplicated", p.StreamName(), got, s.Published)
	}
	t.Logf("stats %+v; %d log lines", s, strings.Count(logs.String(), "\n"))
}

// TestWatchUsesNATSSettings: `kraftwatch watch` logs in with the KRAFTWATCH_NATS_*
// settings of run (here user and password): it finds no stream yet, rather than
// being refused; with a wrong password it names the refusal.
func TestWatchUsesNATSSettings(t *testing.T) {
	url, _ := startAuthServer(t, "secret")
	for _, tc := range []struct {
		name, password, want string
	}{
		{"accepted", "secret", "no stream holds"},
		{"refused", "wrong", "uthorization"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"KRAFTWATCH_NATS_URL=" + url, "KRAFTWATCH_NATS_USER=kw", "KRAFTWATCH_NATS_PASSWORD=" + tc.password}
			var stdout, stderr logBuf
			code := make(chan int, 1)
			go func() { code <- mainCode([]string{"watch", "--count", "1"}, env, &stdout, &stderr) }()
			waitUntil(t, 20*time.Second, "watch to say "+tc.want, func() bool { return strings.Contains(stderr.String(), tc.want) })
			if tc.name == "refused" {
				if c := <-code; c != 1 {
					t.Errorf("exit %d, want 1; stderr:\n%s", c, stderr.String())
				}
			}
		})
	}
}

// TestNATSAsyncErrorsRateLimited: the same asynchronous error many times logs one line,
// then a line with the count per natsLogEvery.
func TestNATSAsyncErrorsRateLimited(t *testing.T) {
	logs := &logBuf{}
	c := &natsConn{url: "nats://h:4222", log: slog.New(slog.NewTextHandler(logs, nil))}
	for range 1000 {
		c.asyncError(nil, nats.ErrPermissionViolation)
	}
	c.asyncError(nil, nats.ErrSlowConsumer)
	if n := strings.Count(logs.String(), "\n"); n != 2 {
		t.Errorf("%d lines for 1000 permission violations and one slow consumer, want 2:\n%s", n, logs)
	}
	c.asyncErrs[nats.ErrPermissionViolation.Error()].logged = time.Now().Add(-natsLogEvery)
	c.asyncError(nil, nats.ErrPermissionViolation)
	if !strings.Contains(logs.String(), "occurrences=1000") {
		t.Errorf("no summary with the count:\n%s", logs)
	}
}

// runPublisher runs a publisher of cluster c1 on nc with fast retries and a 1 s publish
// timeout, its stream with replicas (0: the default); stop ends Run and reports its error.
func runPublisher(t *testing.T, nc *natsConn, replicas int, log *slog.Logger) (*publish.Publisher, context.Context, func()) {
	t.Helper()
	p, err := publish.New(publish.Config{Conn: nc.Conn, ConnHealth: nc.health, ClusterID: "c1", Replicas: replicas,
		RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, PublishTimeout: time.Second, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return p, ctx, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
