package publish_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// benchRound makes each round's stream and subjects new: -count N runs the
// sub-benchmarks N times against one server, and bench/fanout.sh runs several
// processes against one (benchRun).
var benchRound atomic.Int64

var benchRun = strconv.FormatInt(time.Now().UnixNano(), 36)

// BenchmarkPublish10k publishes one event for each of 10,000 groups (one change that
// affects 10k groups) and reports events/s and the time for all 10k, from the first
// Enqueue until the last event is stored (acked), with the allocations per event of
// the whole process (Enqueue, publishing, acks) and the CPU time per event of this
// process and, when it is another process, of the server: on a shared machine these
// move much less with the load than events/s do. The server is natstest.BenchServer's,
// with JetStream on file storage, sharing the machine's cores with the publisher.
//
//	go test ./publish -run '^$' -bench Publish10k -benchtime 5x -count 3
//
// new-groups: subjects without events; LoadLastPublished ran at start (as kraftwatch
// does), so no subject is read before publishing. lazy: the same without
// LoadLastPublished, so each subject is read once first. next-transition: every group
// already has an event (known from the previous round). Each runs under events-none
// (Config.NoEventsStream: kraftwatch's stream alone) and events-stream (the default:
// the events stream sources it).
func BenchmarkPublish10k(b *testing.B) {
	const groups = 10_000
	url, pid := natstest.BenchServer(b)
	nc := connect(b, url)

	var mallocs, bytes uint64     // during the timed part of the current sub-benchmark
	var cpu, srvCPU time.Duration // likewise
	run := func(b *testing.B, p *publish.Publisher, k int) time.Duration {
		b.Helper()
		evs := make([]events.RebalanceNeeded, groups) // made before, as the engine's decisions are
		for g := range evs {
			evs[g] = transition(fmt.Sprintf("bench-group-%05d", g), k)
		}
		ctx := context.Background()
		base := p.Stats()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		m0, b0 := ms.Mallocs, ms.TotalAlloc
		c0, s0 := cpuTime(b, 0), cpuTime(b, pid)
		defer func() {
			runtime.ReadMemStats(&ms)
			mallocs += ms.Mallocs - m0
			bytes += ms.TotalAlloc - b0
			cpu += cpuTime(b, 0) - c0
			srvCPU += cpuTime(b, pid) - s0
		}()
		start := time.Now()
		for _, ev := range evs {
			if err := p.Enqueue(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
		for {
			s := p.Stats()
			if s.Published+s.AlreadyPublished+s.Superseded+s.Dropped-(base.Published+base.AlreadyPublished+base.Superseded+base.Dropped) >= groups && s.Queued == 0 {
				if s.Published-base.Published != groups {
					b.Fatalf("stats %+v: want %d more published", s, groups)
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
		return time.Since(start)
	}
	report := func(b *testing.B, total time.Duration) {
		per := total / time.Duration(b.N)
		b.ReportMetric(float64(groups)/per.Seconds(), "events/s")
		b.ReportMetric(float64(per.Milliseconds()), "ms/10k")
		b.ReportMetric(float64(mallocs)/float64(b.N*groups), "allocs/event")
		b.ReportMetric(float64(bytes)/float64(b.N*groups), "B/event")
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*groups), "cpu-us/event")
		if pid != 0 {
			b.ReportMetric(float64(srvCPU.Microseconds())/float64(b.N*groups), "server-cpu-us/event")
		}
		b.ReportMetric(0, "ns/op")
		mallocs, bytes, cpu, srvCPU = 0, 0, 0, 0
	}
	// events-none first: the events streams of events-stream rounds go on sourcing a
	// moment after their last ack, on the same server.
	for _, streams := range []string{"events-none", "events-stream"} {
		b.Run(streams, func(b *testing.B) {
			newPub := func(b *testing.B, prefix string) (*publish.Publisher, *running) {
				cfg := baseConfig(b, nc)
				cfg.Prefix = prefix
				cfg.Stream = prefix
				cfg.NoEventsStream = streams == "events-none"
				p := newPublisher(b, cfg)
				return p, start(b, p)
			}
			for _, mode := range []string{"new-groups", "lazy"} {
				b.Run(mode, func(b *testing.B) {
					b.ReportAllocs()
					var total time.Duration
					for range b.N {
						b.StopTimer()
						p, r := newPub(b, fmt.Sprintf("bench_%s_%s_%d", mode, benchRun, benchRound.Add(1)))
						if mode == "new-groups" {
							if _, err := p.LoadLastPublished(context.Background()); err != nil {
								b.Fatal(err)
							}
						}
						waitFor(b, 10*time.Second, "ready", p.Ready)
						b.StartTimer()
						total += run(b, p, 0)
						b.StopTimer()
						_ = r.stop()
					}
					report(b, total)
				})
			}
			b.Run("next-transition", func(b *testing.B) {
				b.ReportAllocs()
				b.StopTimer()
				p, _ := newPub(b, fmt.Sprintf("bench_next_%s_%d", benchRun, benchRound.Add(1)))
				if _, err := p.LoadLastPublished(context.Background()); err != nil {
					b.Fatal(err)
				}
				run(b, p, 0)
				mallocs, bytes, cpu, srvCPU = 0, 0, 0, 0
				var total time.Duration
				for i := range b.N {
					b.StartTimer()
					total += run(b, p, i+1)
					b.StopTimer()
				}
				report(b, total)
			})
		})
	}
}

// cpuTime is natstest.CPUTime of pid (0: this process), failing b on an error.
func cpuTime(b *testing.B, pid int) time.Duration {
	d, err := natstest.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}
