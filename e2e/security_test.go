//go:build e2e

package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	envparse "github.com/caarlos0/env/v11"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/kafkaconn"
)

// TestKafkaSecurity reads __consumer_offsets through a broker's secure listeners with
// the Dialer that `kraftwatch run` builds from KRAFTWATCH_KAFKA_* (kafkaconn.Config read
// from the environment, Security, Dialer): TLS verified against the cluster's CA with each SASL mechanism (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512, the last with a password file), TLS alone, and SASL
// without TLS. Each reader must catch up and see the subscription of a KIP-848 group
// whose member runs on the PLAINTEXT listener. A wrong password, an unknown CA or a
// client whose TLS or SASL does not match the listener must each give a warning while
// the reader retries (never a silent hang), and Run must stop cleanly when its context
// ends; so must a password changed under a running reader, which resumes once the
// password is restored.
func TestKafkaSecurity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Two nodes, so that the partition readers also reach a broker-only node's
	// secure listener through the addresses the metadata advertises.
	c := kafkatest.New(t, kafkatest.Options{
		Brokers:  []string{""},
		Security: []kafkatest.Protocol{kafkatest.SASLSSL, kafkatest.SSL, kafkatest.SASLPlaintext},
	})
	if err := c.CreateTopic(ctx, "s-orders", 2, 1); err != nil {
		t.Fatal(err)
	}
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: "s-group", Topics: []string{"s-orders"}})
	fillConsumerOffsets(ctx, t, c, "s-orders")

	user, password := "kraftwatch", c.Users["kraftwatch"]
	if password == "" {
		t.Fatalf("cluster users %v lack kraftwatch", c.Users)
	}
	passwordFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(passwordFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Node 1's listener alone is the bootstrap server of the SASL_SSL and SSL cases:
	// the reader must find node 2's listener from the metadata, and ask each broker
	// for the end offsets of the partitions it leads.
	saslSSL := func(mechanism string) []string {
		return []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.Nodes[0].Listeners[kafkatest.SASLSSL],
			"KRAFTWATCH_KAFKA_TLS=true",
			"KRAFTWATCH_KAFKA_TLS_CA_FILE=" + c.CAFile,
			"KRAFTWATCH_KAFKA_SASL_MECHANISM=" + mechanism,
			"KRAFTWATCH_KAFKA_SASL_USERNAME=" + user,
		}
	}

	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"SASL_SSL/PLAIN", append(saslSSL("PLAIN"), "KRAFTWATCH_KAFKA_SASL_PASSWORD="+password)},
		{"SASL_SSL/SCRAM-SHA-256", append(saslSSL("SCRAM-SHA-256"), "KRAFTWATCH_KAFKA_SASL_PASSWORD="+password)},
		{"SASL_SSL/SCRAM-SHA-512/password-file", append(saslSSL("SCRAM-SHA-512"), "KRAFTWATCH_KAFKA_SASL_PASSWORD_FILE="+passwordFile)},
		{"SSL", []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.Nodes[0].Listeners[kafkatest.SSL],
			"KRAFTWATCH_KAFKA_TLS=true",
			"KRAFTWATCH_KAFKA_TLS_CA_FILE=" + c.CAFile,
		}},
		{"SASL_PLAINTEXT/SCRAM-SHA-512", []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.BootstrapFor(kafkatest.SASLPlaintext),
			"KRAFTWATCH_KAFKA_SASL_MECHANISM=SCRAM-SHA-512",
			"KRAFTWATCH_KAFKA_SASL_USERNAME=" + user,
			"KRAFTWATCH_KAFKA_SASL_PASSWORD=" + password,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := startReader(ctx, t, c, tc.env)
			defer r.stop(t)
			select {
			case <-r.CaughtUp():
			case <-time.After(time.Minute):
				out, err := c.DescribeTopics(ctx)
				t.Fatalf("reader did not catch up in a minute; log:\n%s\nkafka-topics --describe (err %v):\n%s", r.logs, err, out)
			}
			if r.Records() == 0 {
				t.Fatalf("caught up with no record read; log:\n%s", r.logs)
			}
			if got := r.subscribed("s-group"); !slices.Equal(got, []string{"s-orders"}) {
				t.Fatalf("after catch-up, s-group subscribes to %v, want [s-orders]; log:\n%s", got, r.logs)
			}
			if n := r.replayErrors(); n != 0 {
				t.Errorf("%d records failed to replay; log:\n%s", n, r.logs)
			}
			if r.Retries() != 0 {
				t.Errorf("%d retries; log:\n%s", r.Retries(), r.logs)
			}
			t.Logf("caught up after %d records in %v", r.Records(), time.Since(start).Round(time.Millisecond))
		})
	}

	for _, tc := range []struct {
		name string
		env  []string
		want string // in the warning logged while retrying
	}{
		// Wrong credentials or an untrusted certificate: the cause is named.
		{"wrong password/PLAIN", append(saslSSL("PLAIN"), "KRAFTWATCH_KAFKA_SASL_PASSWORD=wrong-"+password),
			"SASL Authentication Failed"},
		{"wrong password/SCRAM-SHA-512", append(saslSSL("SCRAM-SHA-512"), "KRAFTWATCH_KAFKA_SASL_PASSWORD=wrong-"+password),
			"SASL Authentication Failed"},
		{"unknown CA", []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.BootstrapFor(kafkatest.SSL),
			"KRAFTWATCH_KAFKA_TLS=true",
		}, "certificate signed by unknown authority"},
		// A client whose TLS or SASL does not match the listener's protocol: the
		// first two causes are named, the last two only show as an EOF.
		{"SASL to SSL listener", []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.BootstrapFor(kafkatest.SSL),
			"KRAFTWATCH_KAFKA_TLS_CA_FILE=" + c.CAFile,
			"KRAFTWATCH_KAFKA_SASL_MECHANISM=PLAIN",
			"KRAFTWATCH_KAFKA_SASL_USERNAME=" + user,
			"KRAFTWATCH_KAFKA_SASL_PASSWORD=" + password,
		}, "Illegal SASL State"},
		{"no TLS to SSL listener", []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.BootstrapFor(kafkatest.SSL),
		}, "broker appears to be expecting TLS"},
		{"TLS to PLAINTEXT listener", []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.Bootstrap(),
			"KRAFTWATCH_KAFKA_TLS=true",
			"KRAFTWATCH_KAFKA_TLS_CA_FILE=" + c.CAFile,
		}, "listing group record partitions"},
		{"no SASL to SASL_SSL listener", []string{
			"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.BootstrapFor(kafkatest.SASLSSL),
			"KRAFTWATCH_KAFKA_TLS=true",
			"KRAFTWATCH_KAFKA_TLS_CA_FILE=" + c.CAFile,
		}, "listing group record partitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := startReader(ctx, t, c, tc.env)
			var line string
			err := e2etest.Wait(ctx, 30*time.Second, func() error {
				if line = r.logs.find(tc.want); line == "" {
					return fmt.Errorf("no log line with %q", tc.want)
				}
				return nil
			})
			if err != nil {
				r.stop(t)
				t.Fatalf("%v; log:\n%s", err, r.logs)
			}
			if !strings.Contains(line, "level=WARN") {
				t.Errorf("the failure is logged as %q, want a warning", line)
			}
			t.Logf("after %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(line))
			select {
			case <-r.CaughtUp():
				t.Errorf("reader reports caught up without reading")
			default:
			}
			stopped := time.Now()
			r.stop(t)
			if d := time.Since(stopped); d > 5*time.Second {
				t.Errorf("Run took %v to return after its context ended", d)
			}
		})
	}

	// Once caught up, the partition readers connect through the Dialer, not the
	// metadata Transport: a password changed under a running reader must show in a
	// warning when the broker restarts, and reading must resume once it is back.
	t.Run("password changed while running", func(t *testing.T) {
		r := startReader(ctx, t, c, append(saslSSL("SCRAM-SHA-512"), "KRAFTWATCH_KAFKA_SASL_PASSWORD="+password))
		defer r.stop(t)
		select {
		case <-r.CaughtUp():
		case <-time.After(time.Minute):
			t.Fatalf("reader did not catch up in a minute; log:\n%s", r.logs)
		}
		if err := c.SetSCRAMPassword(ctx, "SCRAM-SHA-512", user, "rotated-"+password); err != nil {
			t.Fatal(err)
		}
		restarted := time.Now()
		if err := c.Nodes[0].Restart(ctx, nil); err != nil {
			t.Fatal(err)
		}
		var line string
		err := e2etest.Wait(ctx, time.Minute, func() error {
			if line = r.logs.find("SASL Authentication Failed"); line == "" {
				return errors.New("no SASL failure logged after the restart")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v; log:\n%s", err, r.logs)
		}
		if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "reading group records failed") {
			t.Errorf("the failure is logged as %q, want the partition reader's warning", line)
		}
		t.Logf("%v after the restart began: %s", time.Since(restarted).Round(time.Millisecond), strings.TrimSpace(line))
		if err := c.SetSCRAMPassword(ctx, "SCRAM-SHA-512", user, password); err != nil {
			t.Fatal(err)
		}
		after, err := c.StartMember(ctx, "s-after", kafkatest.KindConsumer, []string{"s-orders"}, "")
		if err != nil {
			t.Fatal(err)
		}
		defer after.Close()
		restored := time.Now()
		err = e2etest.Wait(ctx, time.Minute, func() error {
			if !slices.Equal(r.subscribed("s-after"), []string{"s-orders"}) {
				return errors.New("s-after not seen since the password was restored")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v; log:\n%s", err, r.logs)
		}
		t.Logf("reading resumed %v after the password was restored (%d retries)",
			time.Since(restored).Round(time.Millisecond), r.Retries())
	})
}

// TestKafkaClientID checks that the groups reader's first connection, the metadata
// Transport's (the partition readers use the Dialer, which always had it), names
// kraftwatch as its client id.
func TestKafkaClientID(t *testing.T) {
	addr, ids := fakeBroker(t)
	r := startReaderEnv(t, []string{
		"KRAFTWATCH_METADATA_LOG_DIR=" + t.TempDir(),
		"KRAFTWATCH_BOOTSTRAP_SERVERS=" + addr,
		"KRAFTWATCH_LOG_FORMAT=text",
	})
	defer r.stop(t)
	select {
	case id := <-ids:
		if id != "kraftwatch" {
			t.Errorf("client id %q, want kraftwatch", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no request in 10 s; log:\n%s", r.logs)
	}
}

// TestReaderCommaSeparatedBrokers gives groups.Reader one Brokers entry holding two
// addresses, as a caller passing a joined bootstrap list does: kafka-go's Transport
// panicked on it; the reader must split it and connect.
func TestReaderCommaSeparatedBrokers(t *testing.T) {
	addr1, ids1 := fakeBroker(t)
	addr2, ids2 := fakeBroker(t)
	r, err := groups.NewReader(groups.ReaderConfig{
		Brokers: []string{addr1 + ", " + addr2}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, func([]groups.Message) error { return nil }) }()
	select {
	case <-ids1:
	case <-ids2:
	case <-time.After(10 * time.Second):
		t.Error("no request reached either address in 10 s")
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v", err)
	}
}

// fakeBroker listens on 127.0.0.1 in place of a broker: it reads the header of each
// connection's first request, sends its client id on the channel and hangs up.
func fakeBroker(t *testing.T) (string, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ids := make(chan string, 64)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				// size int32, api_key int16, api_version int16, correlation_id int32,
				// client_id nullable string (int16 length).
				var head [14]byte
				if _, err := io.ReadFull(conn, head[:]); err != nil {
					return
				}
				id := make([]byte, max(0, int(int16(binary.BigEndian.Uint16(head[12:])))))
				if _, err := io.ReadFull(conn, id); err != nil {
					return
				}
				select {
				case ids <- string(id):
				default:
				}
			}()
		}
	}()
	return ln.Addr().String(), ids
}

// fillConsumerOffsets gives every partition of __consumer_offsets a record, so that
// catching up needs the partition readers to reach every broker: one offset commit
// (on PLAINTEXT) of a simple group that Kafka maps to each partition. It fails t
// unless the partitions' leaders are on two brokers.
func fillConsumerOffsets(ctx context.Context, t *testing.T, c *kafkatest.Cluster, topic string) {
	t.Helper()
	conn, err := kafka.DialContext(ctx, "tcp", c.Nodes[0].BrokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(groups.ConsumerOffsetsTopic)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int]bool{}
	for _, p := range parts {
		leaders[p.Leader.ID] = true
	}
	if len(leaders) != 2 {
		t.Fatalf("%s partitions are led by %d brokers, want 2: %+v", groups.ConsumerOffsetsTopic, len(leaders), parts)
	}
	client := &kafka.Client{Addr: kafka.TCP(strings.Split(c.Bootstrap(), ",")...), Timeout: 10 * time.Second}
	for p := range len(parts) {
		var id string
		for i := 0; ; i++ {
			// Kafka's partitionFor: abs(groupId.hashCode()) % partitions.
			id = fmt.Sprintf("s-simple-%d", i)
			var h int32
			for _, b := range []byte(id) {
				h = 31*h + int32(b)
			}
			if h == math.MinInt32 {
				h = 0
			}
			if int(max(h, -h))%len(parts) == p {
				break
			}
		}
		res, err := client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
			GroupID: id, GenerationID: -1, Topics: map[string][]kafka.OffsetCommit{topic: {{Partition: 0, Offset: 0}}},
		})
		if err == nil && res.Topics[topic][0].Error != nil {
			err = res.Topics[topic][0].Error
		}
		if err != nil {
			t.Fatalf("committing an offset for %s (partition %d): %v", id, p, err)
		}
	}
}

// testReader is a groups.Reader built as `kraftwatch run` builds it, replaying what it
// reads into a groups.State.
type testReader struct {
	*groups.Reader
	logs  *logLines
	mu    sync.Mutex
	state *groups.State
	bad   int // records Replay rejected
	stopf context.CancelFunc
	done  chan error
}

func startReader(ctx context.Context, t *testing.T, c *kafkatest.Cluster, env []string) *testReader {
	t.Helper()
	return startReaderEnv(t, append([]string{
		"KRAFTWATCH_METADATA_LOG_DIR=" + c.Nodes[0].LogDir,
		"KRAFTWATCH_LOG_FORMAT=text",
	}, env...))
}

// startReaderEnv configures and starts a reader from KRAFTWATCH_* variables alone.
func startReaderEnv(t *testing.T, env []string) *testReader {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var kc kafkaconn.Config
	if err := envparse.ParseWithOptions(&kc, envparse.Options{Prefix: "KRAFTWATCH_KAFKA_", Environment: vars}); err != nil {
		t.Fatal(err)
	}
	sec, err := kc.Security()
	if err != nil {
		t.Fatal(err)
	}
	r := &testReader{logs: &logLines{}, state: groups.NewState(), done: make(chan error, 1)}
	r.Reader, err = groups.NewReader(groups.ReaderConfig{
		Brokers: kafkaconn.SplitHosts(vars["KRAFTWATCH_BOOTSTRAP_SERVERS"]), Dialer: sec.Dialer(),
		Logger: slog.New(slog.NewTextHandler(r.logs, nil)).With("stage", "groups"),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	r.stopf = stop
	go func() {
		r.done <- r.Run(runCtx, groups.EachRecord(func(m groups.Message) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if _, err := r.state.Replay(m.Key, m.Value); err != nil {
				r.bad++
				r.logs.Write([]byte("replay: " + err.Error() + "\n"))
			}
			return nil
		}))
	}()
	return r
}

// stop ends Run and checks that it returned no error other than the cancellation.
func (r *testReader) stop(t *testing.T) {
	t.Helper()
	r.stopf()
	select {
	case err := <-r.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Run did not return 30 s after its context ended; log:\n%s", r.logs)
	}
}

func (r *testReader) replayErrors() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

func (r *testReader) subscribed(group string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.state.Group(events.GroupKey{Type: events.ConsumerGroup, ID: group})
	if !ok {
		return nil
	}
	return g.SubscribedTopicNames()
}

// logLines collects what a logger writes.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// find returns the first line containing substr, or "".
func (l *logLines) find(substr string) string {
	for _, line := range strings.SplitAfter(l.String(), "\n") {
		if strings.Contains(line, substr) {
			return line
		}
	}
	return ""
}
