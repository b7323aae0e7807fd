package publish_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// BenchmarkPublish10k publishes one event for each of 10,000 groups (one change that
// affects 10k groups) and reports events/s and the time for all 10k, from the first
// Enqueue until the last event is stored. The server is nats-server in process, with
// JetStream on file storage, sharing the machine's cores with the publisher.
//
//	go test ./publish -run '^$' -bench Publish10k -benchtime 5x
//
// new-groups: subjects without events; LoadLastPublished ran at start (as kraftwatch
// does), so no subject is read before publishing. lazy: the same without
// LoadLastPublished, so each subject is read once first. next-transition: every group
// already has an event (known from the previous round).
func BenchmarkPublish10k(b *testing.B) {
	const groups = 10_000
	srv := natstest.Start(b)
	nc := connect(b, srv.ClientURL())

	run := func(b *testing.B, p *publish.Publisher, k int) time.Duration {
		b.Helper()
		base := p.Stats()
		start := time.Now()
		for g := range groups {
			enqueue(b, p, transition(fmt.Sprintf("bench-group-%05d", g), k))
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
		b.ReportMetric(0, "ns/op")
	}
	newPub := func(b *testing.B, prefix string) (*publish.Publisher, *running) {
		cfg := baseConfig(b, nc)
		cfg.Prefix = prefix
		cfg.Stream = prefix
		p := newPublisher(b, cfg)
		return p, start(b, p)
	}

	for _, mode := range []string{"new-groups", "lazy"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			var total time.Duration
			for i := range b.N {
				b.StopTimer()
				p, r := newPub(b, fmt.Sprintf("bench_%s_%d_%d", mode, b.N, i))
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
		p, _ := newPub(b, fmt.Sprintf("bench_next_%d", b.N))
		if _, err := p.LoadLastPublished(context.Background()); err != nil {
			b.Fatal(err)
		}
		run(b, p, 0)
		var total time.Duration
		for i := range b.N {
			b.StartTimer()
			total += run(b, p, i+1)
			b.StopTimer()
		}
		report(b, total)
	})
}
