package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/publish"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader on other goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// natsServer is a real in-process nats-server with JetStream on a fixed port and store,
// so that it can be stopped and started again in place.
type natsServer struct {
	t    *testing.T
	port int
	dir  string
	s    *server.Server
}

func startNATS(t *testing.T) *natsServer {
	n := &natsServer{t: t, port: -1, dir: t.TempDir()}
	n.start()
	n.port = n.s.Addr().(*net.TCPAddr).Port
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	n.t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir, NoLog: true, NoSigs: true})
	if err != nil {
		n.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats-server not ready")
	}
	n.s = s
}

func (n *natsServer) stop() {
	n.s.Shutdown()
	n.s.WaitForShutdown()
}

func (n *natsServer) url() string { return n.s.ClientURL() }

// publisher runs a kraftwatch publisher for cluster c1 on its own connection.
func publisher(t *testing.T, url string) *publish.Publisher {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	p, err := publish.New(publish.Config{Conn: nc, ClusterID: "c1", HashScheme: "murmur3"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; nc.Close() })
	return p
}

func announce(t *testing.T, p *publish.Publisher, group string, offset int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.Enqueue(ctx, events.RebalanceNeeded{GroupID: group, GroupType: events.GroupType(1), NewHash: events.Hash(offset),
		Reasons: []events.Reason{}, Cause: events.Cause{MetadataOffset: offset}, CoordinatorEpoch: -1})
	if err != nil {
		t.Fatal(err)
	}
}

// watch runs Watch with args until it returns; it returns its outputs and exit code.
type watchRun struct {
	stdout, stderr syncBuffer
	code           chan int
}

func startWatch(url string, args ...string) *watchRun {
	w := &watchRun{code: make(chan int, 1)}
	go func() { w.code <- Watch(append([]string{"--nats", url}, args...), nil, nil, &w.stdout, &w.stderr) }()
	return w
}

func (w *watchRun) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s; stdout:\n%s\nstderr:\n%s", what, w.stdout.String(), w.stderr.String())
		}
	}
}

func (w *watchRun) exit(t *testing.T) int {
	t.Helper()
	select {
	case c := <-w.code:
		return c
	case <-time.After(20 * time.Second):
		t.Fatalf("watch did not exit; stdout:\n%s\nstderr:\n%s", w.stdout.String(), w.stderr.String())
		return -1
	}
}

// TestWatchFollowsRestart: watch reads the stream through an ordered consumer; after the
// NATS server stops and comes back, the two events stored at once right after the restart
// are printed (a core subscription missed them), and stderr says NATS was lost and back.
// --since and --from-seq replay what is stored.
func TestWatchFollowsRestart(t *testing.T) {
	ns := startNATS(t)
	w := startWatch(ns.url(), "--count", "4")
	w.wait(t, "watch to wait for a stream", func() bool { return strings.Contains(w.stderr.String(), "no stream holds") })
	p := publisher(t, ns.url())
	announce(t, p, "g1", 1)
	w.wait(t, "the first event", func() bool { return strings.Count(w.stdout.String(), "rebalance-needed") == 1 })
	announce(t, p, "g2", 2)
	w.wait(t, "the second event", func() bool { return strings.Count(w.stdout.String(), "rebalance-needed") == 2 })

	ns.stop()
	w.wait(t, "the disconnect to be reported", func() bool { return strings.Contains(w.stderr.String(), "lost NATS") })
	ns.start()
	announce(t, p, "g3", 3)
	announce(t, p, "g4", 4)
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, w.stderr.String())
	}
	out := w.stdout.String()
	for i := 1; i <= 4; i++ {
		if !strings.Contains(out, fmt.Sprintf(`group "g%d"`, i)) || !strings.Contains(out, fmt.Sprintf("seq %d]", i)) {
			t.Errorf("event of g%d (seq %d) missing:\n%s", i, i, out)
		}
	}
	if !strings.Contains(w.stderr.String(), "NATS back at") {
		t.Errorf("the reconnect was not reported:\n%s", w.stderr.String())
	}
	if lines := strings.Split(strings.TrimSpace(w.stderr.String()), "\n"); strings.Contains(lines[len(lines)-1], "lost NATS") {
		t.Errorf("watch --count ends saying it lost NATS, though it closed the connection itself:\n%s", w.stderr.String())
	}

	replay := startWatch(ns.url(), "--since", "1h", "--count", "4", "--json")
	if code := replay.exit(t); code != 0 || strings.Count(replay.stdout.String(), `"group_id"`) != 4 {
		t.Fatalf("--since 1h: exit %d, stdout:\n%s\nstderr:\n%s", code, replay.stdout.String(), replay.stderr.String())
	}
	from := startWatch(ns.url(), "--cluster", "c1", "--from-seq", "3", "--count", "2")
	if code := from.exit(t); code != 0 {
		t.Fatalf("--from-seq: exit %d", code)
	}
	if got := from.stdout.String(); strings.Contains(got, `"g1"`) || !strings.Contains(got, `"g3"`) || !strings.Contains(got, `"g4"`) {
		t.Fatalf("--from-seq 3 printed:\n%s", got)
	}
}

func TestWatchUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"--help"}, 0, "--count"},
		{"extra argument", []string{"x"}, 2, "unexpected argument"},
		{"negative since", []string{"--since", "-1h"}, 2, "must not be negative"},
		{"since and from-seq", []string{"--since", "1h", "--cluster", "c", "--from-seq", "2"}, 2, "exclude each other"},
		{"from-seq without cluster", []string{"--from-seq", "2"}, 2, "needs --cluster"},
		{"core replay", []string{"--core", "--since", "1h"}, 2, "cannot replay"},
		{"unknown flag", []string{"--bogus"}, 2, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Watch(tc.args, nil, nil, &out, &errb)
			if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
				t.Fatalf("exit %d (want %d), output %q, want it to contain %q", code, tc.code, out.String()+errb.String(), tc.want)
			}
		})
	}
}

// TestDescribeRebalanced: watch's line for a rebalanced event says, on Kafka 4.3+, how
// many epoch bumps the assignment folds and how many partitions it moves.
func TestDescribeRebalanced(t *testing.T) {
	prev, a, moved := int32(2), int32(4), 1
	ev := events.GroupRebalanced{ClusterID: "c", GroupID: "billing", GroupType: events.ConsumerGroup, PreviousEpoch: &prev, NewEpoch: 4,
		ConsumerOffsets: events.OffsetsPosition{Partition: 0, Offset: 11},
		Causes:          []events.RebalanceCause{{Kind: events.CauseMemberJoined, MemberID: "m2", Epoch: 3}, {Kind: events.CauseMemberJoined, MemberID: "m3", Epoch: 4}}}
	at := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		with func(*events.GroupRebalanced)
		want string
	}{
		{"per epoch (4.1, 4.2)", func(*events.GroupRebalanced) {},
			`18:00:00.000 rebalanced consumer group "billing": epoch 2 -> 4 because member_joined m2, member_joined m3 [__consumer_offsets 0/11]`},
		{"per assignment (4.3+)", func(e *events.GroupRebalanced) {
			e.AssignmentEpoch, e.EpochBumps, e.PartitionsMoved = &a, []int32{3, 4}, &moved
		},
			`18:00:00.000 rebalanced consumer group "billing": epoch 2 -> 4 (one assignment of 2 epoch bumps, 1 partitions moved) because member_joined m2, member_joined m3 [__consumer_offsets 0/11]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ev
			tc.with(&e)
			env, err := e.Wrap(at)
			if err != nil {
				t.Fatal(err)
			}
			if got := describeRebalanced(env); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
