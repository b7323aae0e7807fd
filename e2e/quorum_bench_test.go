//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
)

// BenchmarkQuorumLatency compares the change -> event latency of kraftwatch's two
// metadata sources in one run, on the quorum tests' cluster (three dedicated
// controllers, two brokers): a network-source kraftwatch (fetching from the quorum
// leader, applying what the high watermark covers) and a disk-source one (broker 1's
// metadata log dir), each with its own nats-server, see the same 100 real changes
// (partitions added to a topic one classic group reads, one at a time, each after
// both events arrived). It reports each source's p50/p90/p99/max from the change's
// metadata batch append time (the event's time, the leader's clock) to the event at a
// core NATS subscriber, and the ratio of the p99s. bench/network.sh runs it:
//
//	go test -tags e2e -run '^$' -bench QuorumLatency -benchtime 1x -timeout 30m ./e2e/
func BenchmarkQuorumLatency(b *testing.B) {
	const changes = 100
	c := quorumCluster(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	round := benchRound.Add(1) // -count runs share the cluster: names of their own
	prefix := fmt.Sprintf("qlat%d", round)
	topic, group := prefix+"-orders", prefix+"-g"
	e2etest.NewAdmin(c).CreateTopic(ctx, b, topic, 1)
	netw, disk := startPair(ctx, b, c, prefix+"-.*")
	joinClassic(ctx, b, c, group, topic)
	for _, s := range []*side{netw, disk} {
		s.w.Expect(ctx, b, map[string]int{group: 1}, time.Minute)
	}

	lat := map[*side][]time.Duration{}
	admin := e2etest.NewAdmin(c)
	partitions := 1
	b.ResetTimer()
	for range b.N {
		for range changes {
			partitions++
			admin.AlterPartitions(ctx, b, topic, partitions)
			for _, s := range []*side{netw, disk} {
				e := waitPartitionsEvent(ctx, b, s.w, group, partitions, 30*time.Second)
				lat[s] = append(lat[s], e.At.Sub(e.Env.Time))
			}
		}
	}
	b.StopTimer()
	pn, pd := percentiles(lat[netw]), percentiles(lat[disk])
	b.ReportMetric(ms(pn[99]), "network-p99-ms")
	b.ReportMetric(ms(pd[99]), "disk-p99-ms")
	b.ReportMetric(ms(pn[50]), "network-p50-ms")
	b.ReportMetric(ms(pd[50]), "disk-p50-ms")
	b.ReportMetric(float64(pn[99])/float64(pd[99]), "p99-ratio")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d changes, metadata batch append -> event at a NATS subscriber:", len(lat[netw]))
	b.Logf("  network source: %s", formatPercentiles(pn))
	b.Logf("  disk source:    %s", formatPercentiles(pd))
	b.Logf("  p99 network/disk: %.2fx (%v more)", float64(pn[99])/float64(pd[99]), (pn[99] - pd[99]).Round(100*time.Microsecond))
	for _, s := range []*side{netw, disk} {
		if r := s.w.Repeated(); len(r) > 0 {
			b.Fatalf("%s: %d events received twice", s.name, len(r))
		}
	}
}
