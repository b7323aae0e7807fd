package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// fanoutRound and fanoutRun make each run's cluster, and so its streams, new: -count N
// runs the benchmark N times against one server, and bench/fanout.sh several
// processes.
var (
	fanoutRound atomic.Int64
	fanoutRun   = strconv.FormatInt(time.Now().UnixNano(), 36)
)

// BenchmarkFanout10k: 10,000 consumer groups read one topic; each round adds a
// partition to it (one metadata update, as the observer hands a batch on once it could
// read it) and measures until the last of the 10k events reaches a JetStream consumer
// of kraftwatch's stream (an ordered consumer, as follow.Run reads it): deciding,
// encoding, publishing, storing and delivery. The engine and the publisher run as
// kraftwatch runs them, with the publisher's defaults. It also reports the CPU time per
// event of this process and, when it is another process, of the server. The server is
// natstest.BenchServer's (bench/fanout.sh starts a nats-server process).
//
//	go test ./engine -run '^$' -bench Fanout10k -benchtime 5x
//
// events-none runs kraftwatch's stream alone (KRAFTWATCH_EVENTS_STREAM=none), events-stream
// with the events stream sourcing it (the default).
func BenchmarkFanout10k(b *testing.B) {
	for _, streams := range []string{"events-none", "events-stream"} {
		b.Run(streams, func(b *testing.B) { fanout10k(b, streams == "events-none") })
	}
}

func fanout10k(b *testing.B, noEventsStream bool) {
	const n = 10_000
	url, pid := natstest.BenchServer(b)
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	cluster := "fanout-" + fanoutRun + "-" + strconv.FormatInt(fanoutRound.Add(1), 10)
	pub, err := publish.New(publish.Config{Conn: nc, ClusterID: cluster, HashScheme: "murmur3", NoEventsStream: noEventsStream})
	if err != nil {
		b.Fatal(err)
	}
	caughtUp := make(chan struct{})
	e, err := New(Config{ClusterID: cluster, Scheme: "murmur3", GroupsCaughtUp: caughtUp, Publisher: pub})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pubDone, engDone := make(chan error, 1), make(chan error, 1)
	go func() { pubDone <- pub.Run(ctx) }()
	go func() { engDone <- e.Run(ctx) }()
	defer func() {
		cancel()
		<-engDone
		<-pubDone
	}()
	u := replay(b, image.Empty, 10,
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=orders TopicID="+orders,
		"PartitionRecord TopicID="+orders+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	e.OnMetadata(u)
	for g := range n {
		if err := e.OnGroupRecord(member(b, fmt.Sprintf("group-%05d", g), int64(g), "orders")); err != nil {
			b.Fatal(err)
		}
	}
	close(caughtUp)
	waitUntil(b, time.Minute, "the start-up events", func() bool {
		s := pub.Stats()
		return e.Ready() == nil && s.Published == n && s.Queued == 0
	})

	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	s, err := js.Stream(ctx, pub.StreamName())
	if err != nil {
		b.Fatal(err)
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		b.Fatal(err)
	}
	var got, want atomic.Int64
	var lastAt atomic.Pointer[time.Time]
	cc, err := c.Consume(func(m jetstream.Msg) {
		if got.Add(1) == want.Load() {
			now := time.Now()
			lastAt.Store(&now)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Stop()

	var total, cpu, srvCPU time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		next := replay(b, u.Image, int64(20+10*i),
			fmt.Sprintf("PartitionRecord TopicID=%s PartitionID=%d Replicas=1 ISR=1 Leader=1", orders, i+1))
		u = next
		lastAt.Store(nil)
		want.Store(int64((i + 1) * n))
		b.StartTimer()
		c0, s0 := cpuTime(b, 0), cpuTime(b, pid)
		start := time.Now()
		e.OnMetadata(next)
		waitUntil(b, time.Minute, "the events at the consumer", func() bool { return lastAt.Load() != nil })
		total += lastAt.Load().Sub(start)
		cpu += cpuTime(b, 0) - c0
		srvCPU += cpuTime(b, pid) - s0
	}
	b.StopTimer()
	if st := pub.Stats(); st.Published != uint64((b.N+1)*n) || got.Load() != int64(b.N*n) {
		b.Fatalf("publisher %+v, consumer %d events: want %d published, %d consumed", st, got.Load(), (b.N+1)*n, b.N*n)
	}
	per := total / time.Duration(b.N)
	b.ReportMetric(float64(per)/float64(time.Millisecond), "ms-to-last")
	b.ReportMetric(float64(n)/per.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*n), "cpu-us/event")
	if pid != 0 {
		b.ReportMetric(float64(srvCPU.Microseconds())/float64(b.N*n), "server-cpu-us/event")
	}
	b.ReportMetric(0, "ns/op")
}

// cpuTime is natstest.CPUTime of pid (0: this process), failing b on an error.
func cpuTime(b *testing.B, pid int) time.Duration {
	d, err := natstest.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// waitUntil polls cond every millisecond until it holds, or fails b after timeout.
func waitUntil(b *testing.B, timeout time.Duration, what string, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}
