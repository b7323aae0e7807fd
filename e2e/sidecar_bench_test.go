//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/observer"
)

// Benchmarks of kraftwatch as a process against a real Kafka and a real nats-server
// (bench/sidecar.sh runs them and checks their targets):
//
//	go test -tags e2e -run '^$' -bench Sidecar -benchtime 1x -timeout 30m ./e2e/
//
// Latencies are measured from a metadata batch's append time (the controller's clock,
// in milliseconds: the event's time attribute) to the event's arrival at a core NATS
// subscriber (this process, same machine and clock), so they include Kafka writing
// and committing the batch, kraftwatch noticing and reading it, deciding, publishing
// to JetStream and NATS delivering it. The millisecond timestamp makes each figure up
// to 1 ms too high.

// benchRound numbers the benchmark runs of one test binary, which share a cluster.
var benchRound atomic.Int32

// BenchmarkSidecarLatency makes 100 real changes (partitions added to a topic one
// group reads, one at a time, each after the previous event arrived) and reports the
// p50, p90, p99 and max latency from the change's metadata batch append time to the
// event's arrival, split at kraftwatch's decision (its "rebalance needed" log line).
func BenchmarkSidecarLatency(b *testing.B) {
	const changes = 100
	s := e2etest.StartSidecar(b, sidecarCluster(b))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	round := benchRound.Add(1) // -count runs share the cluster: names of their own
	topic := fmt.Sprintf("lat%d-orders", round)
	s.Admin.CreateTopic(ctx, b, topic, 1)
	kw := s.StartKraftwatch(ctx, b, fmt.Sprintf("lat%d-.*", round), "KRAFTWATCH_LOG_LEVEL=info")
	// An observer in this process marks when each batch could first be read from the
	// log, which splits Kafka's part (batching linger, write) from kraftwatch's.
	var seenMu sync.Mutex
	seen := map[int64]time.Time{} // metadata offset -> first read
	obs, err := observer.New(observer.Config{Dir: s.Cluster.Nodes[0].MetadataLogDir(), Handler: func(u observer.Update) {
		now := time.Now()
		seenMu.Lock()
		seen[u.Provenance.Offset] = now
		seenMu.Unlock()
	}})
	if err != nil {
		b.Fatal(err)
	}
	obsCtx, stopObs := context.WithCancel(ctx)
	obsDone := make(chan struct{})
	go func() {
		obs.Run(obsCtx)
		close(obsDone)
	}()
	defer func() {
		stopObs()
		<-obsDone
	}()
	<-obs.Ready()
	group := fmt.Sprintf("lat%d-g", round)
	e2etest.StartConsumers(ctx, b, s.Cluster, map[string]string{group: topic})
	s.Watcher.Expect(ctx, b, map[string]int{group: 1}, time.Minute)

	var evs e2etest.Events
	var call []time.Duration // the CreatePartitions round trip, for context
	partitions := 1
	b.ResetTimer()
	for range b.N {
		for range changes {
			partitions++
			start := time.Now()
			s.Admin.AlterPartitions(ctx, b, topic, partitions)
			call = append(call, time.Since(start))
			e := waitPartitionsEvent(ctx, b, s.Watcher, group, partitions, 30*time.Second)
			evs = append(evs, e)
		}
	}
	b.StopTimer()

	decided := map[int64]time.Time{} // metadata offset -> time of the decision
	for _, l := range kw.LogLines(1, "rebalance needed") {
		if l.Str("group") == group {
			at, err := time.Parse(time.RFC3339Nano, l.Str("time"))
			if err != nil {
				b.Fatal(err)
			}
			decided[l.Int("metadata_offset")] = at
		}
	}
	var total, toDecision, toArrival, toRead, readToDecision []time.Duration
	seenMu.Lock()
	defer seenMu.Unlock()
	for _, e := range evs {
		total = append(total, e.At.Sub(e.Env.Time))
		at, ok := decided[e.Env.Data.MetadataOffset]
		if !ok {
			b.Fatalf("event %v matches no decision log line", e)
		}
		toDecision = append(toDecision, at.Sub(e.Env.Time))
		toArrival = append(toArrival, e.At.Sub(at))
		if read, ok := seen[e.Env.Data.MetadataOffset]; ok {
			toRead = append(toRead, read.Sub(e.Env.Time))
			readToDecision = append(readToDecision, at.Sub(read))
		}
	}
	p := percentiles(total)
	b.ReportMetric(ms(p[50]), "p50-ms")
	b.ReportMetric(ms(p[90]), "p90-ms")
	b.ReportMetric(ms(p[99]), "p99-ms")
	b.ReportMetric(ms(p[100]), "max-ms")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d changes: metadata batch append -> event at a NATS subscriber: %s (target p99 <= 100 ms: %v)",
		len(total), formatPercentiles(p), p[99] <= 100*time.Millisecond)
	b.Logf("  append -> kraftwatch decision:          %s", formatPercentiles(percentiles(toDecision)))
	b.Logf("  decision -> subscriber:                 %s", formatPercentiles(percentiles(toArrival)))
	if len(toRead) > 0 {
		b.Logf("  append -> read by an observer here:     %s (%d batches)", formatPercentiles(percentiles(toRead)), len(toRead))
		b.Logf("  read here -> kraftwatch decision:       %s", formatPercentiles(percentiles(readToDecision)))
	}
	b.Logf("  (CreatePartitions round trip:           %s)", formatPercentiles(percentiles(call)))
}

// BenchmarkSidecar10kGroups creates 10,000 real classic consumer groups on one topic
// (one member each, joined and synced with kafka-go's group APIs, session timeout 30
// minutes so they stay without heartbeats), starts kraftwatch (which announces each
// group's first event), then adds a partition to the topic: one change that moves
// 10k groups. It reports the time from the change's metadata batch append time to the
// arrival of the last of the 10k events at a NATS subscriber (target 2 s), and the
// start-up announcement of the 10k first events. KRAFTWATCH_BENCH_GROUPS changes the
// number of groups.
func BenchmarkSidecar10kGroups(b *testing.B) {
	n := 10_000
	if v := os.Getenv("KRAFTWATCH_BENCH_GROUPS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	s := e2etest.StartSidecar(b, sidecarCluster(b))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("fan%d", benchRound.Add(1)) // -count runs share the cluster
	topic := prefix + "-orders"
	s.Admin.CreateTopic(ctx, b, topic, 1)
	start := time.Now()
	e2etest.ClassicGroups(ctx, b, s.Cluster, prefix+"-g", topic, n)
	b.Logf("%d classic groups created in %v", n, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	kw := e2etest.StartKraftwatch(b, "kw", e2etest.Env(s.Cluster, s.NATS.URL(), prefix+"-.*", "KRAFTWATCH_LOG_LEVEL=info"))
	ready := kw.WaitReady(ctx, 5*time.Minute)
	first := waitEvents(ctx, b, s.Watcher, n, 5*time.Minute)
	b.Logf("start-up: ready after %v (__consumer_offsets read, last events loaded, %d groups decided); %d first events at the subscriber %v after start",
		ready.Round(time.Millisecond), n, n, first.Sub(start).Round(time.Millisecond))

	b.ResetTimer()
	partitions := 1
	var all []time.Duration
	for range b.N {
		partitions++
		before := len(s.Watcher.All(b))
		s.Admin.AlterPartitions(ctx, b, topic, partitions)
		waitEvents(ctx, b, s.Watcher, before+n, 5*time.Minute)
		time.Sleep(time.Second)
		evs := s.Watcher.All(b)[before:]
		groups := map[string]bool{}
		for _, e := range evs {
			groups[e.Env.Data.GroupID] = true
		}
		if len(evs) != n || len(groups) != n {
			b.Fatalf("one change: %d events for %d groups, want one for each of %d", len(evs), len(groups), n)
		}
		var batch time.Time
		var firstAt, lastAt time.Time
		for i, e := range evs {
			r := e.Reason(b)
			if r.Kind != events.PartitionsAdded || int(r.NewPartitions) != partitions {
				b.Fatalf("event %v: want partitions_added to %d", e, partitions)
			}
			if i == 0 {
				batch, firstAt, lastAt = e.Env.Time, e.At, e.At
			}
			if !e.Env.Time.Equal(batch) {
				b.Fatalf("events of one change carry different times: %v and %v", batch, e.Env.Time)
			}
			firstAt, lastAt = minTime(firstAt, e.At), maxTime(lastAt, e.At)
		}
		all = append(all, lastAt.Sub(batch))
		b.Logf("one change, %d groups: append -> first event %v, -> last event %v (first to last %v, %.0f events/s)",
			n, firstAt.Sub(batch).Round(time.Millisecond), lastAt.Sub(batch).Round(time.Millisecond),
			lastAt.Sub(firstAt).Round(time.Millisecond), float64(n)/lastAt.Sub(firstAt).Seconds())
	}
	b.StopTimer()
	slices.Sort(all)
	b.ReportMetric(ms(all[len(all)-1]), "all-events-ms")
	b.ReportMetric(0, "ns/op")
	if r := s.Watcher.Repeated(); len(r) > 0 {
		b.Fatalf("%d events received twice", len(r))
	}
}

// waitPartitionsEvent waits for group's event announcing partitions added up to count.
func waitPartitionsEvent(ctx context.Context, tb testing.TB, w *e2etest.Watcher, group string, count int, timeout time.Duration) e2etest.Event {
	tb.Helper()
	var found e2etest.Event
	err := e2etest.Wait(ctx, timeout, func() error {
		evs := w.All(tb)
		for i := len(evs) - 1; i >= 0; i-- {
			e := evs[i]
			if e.Env.Data.GroupID != group || len(e.Env.Data.Reasons) != 1 {
				continue
			}
			if r := e.Env.Data.Reasons[0]; r.Kind == events.PartitionsAdded && int(r.NewPartitions) == count {
				found = e
				return nil
			}
		}
		return fmt.Errorf("no event of group %s for %d partitions", group, count)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return found
}

// waitEvents waits until the subscriber has n distinct events and returns when the
// n-th arrived.
func waitEvents(ctx context.Context, tb testing.TB, w *e2etest.Watcher, n int, timeout time.Duration) time.Time {
	tb.Helper()
	var at time.Time
	err := e2etest.Wait(ctx, timeout, func() error {
		evs := w.All(tb)
		if len(evs) < n {
			return fmt.Errorf("%d of %d events", len(evs), n)
		}
		at = evs[n-1].At
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return at
}

// percentiles returns the 50th, 90th, 99th and 100th percentiles (nearest rank).
func percentiles(ds []time.Duration) map[int]time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	out := map[int]time.Duration{}
	for _, p := range []int{50, 90, 99, 100} {
		i := (p*len(s)+99)/100 - 1
		out[p] = s[max(i, 0)]
	}
	return out
}

func formatPercentiles(p map[int]time.Duration) string {
	return fmt.Sprintf("p50 %v, p90 %v, p99 %v, max %v", p[50].Round(100*time.Microsecond), p[90].Round(100*time.Microsecond),
		p[99].Round(100*time.Microsecond), p[100].Round(100*time.Microsecond))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
