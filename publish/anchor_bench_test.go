package publish_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// BenchmarkJetStreamRaw10k is the anchor of BenchmarkPublish10k: what the same server
// gives a client that does nothing but publish, the floor of the cost of storing the
// events. It publishes 10,000 messages (the bytes of 10k encoded events, one subject per
// group) with nats.go's jetstream.PublishMsgAsync, 1024 in flight, and waits for every
// ack, reporting events/s and the CPU time per event of this process and of the server.
//
//	raw:     no headers, into a plain file stream capturing the subjects;
//	headers: with kraftwatch's headers (Nats-Msg-Id, Nats-Expected-Stream,
//	         Nats-Expected-Last-Subject-Sequence, Content-Type), the same plain stream;
//	shape:   the same headers into streams of kraftwatch's shape: the subject transform
//	         and republish of kraftwatch's stream, and the events stream that captures
//	         the public subjects and sources it (publish/doc.go), so the server also
//	         refuses each republished copy at the events stream and stores each event a
//	         second time; it waits until the events stream holds them all.
//	republish: shape without the events stream: kraftwatch's stream alone, as with
//	         KRAFTWATCH_EVENTS_STREAM=none (BenchmarkPublish10k's events-none);
//	sourced: shape without the republish;
//	atomic:  republish's stream and headers, published as nats-server's atomic batches
//	         of 100 (Nats-Batch-Id, -Sequence, -Commit; the stream allows atomic
//	         publish): one PubAck per batch instead of one per event. It keeps the
//	         per-message Nats-Msg-Id and expected-last-subject-sequence checks, but one
//	         failing message fails its whole batch, and nats-server stages each batch in
//	         a store of its own before storing it in the stream;
//	two:     republish, with the groups split over two such streams (odd groups into
//	         the second): nats-server stores, answers and republishes each stream's
//	         messages in one goroutine of its own, so this shows what that one
//	         goroutine limits.
func BenchmarkJetStreamRaw10k(b *testing.B) {
	const groups, atomicBatch = 10_000, 100
	url, pid := natstest.BenchServer(b)
	nc := connect(b, url)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1024))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// Wait for room among the 1024 in flight as long as it takes (nats.go's default,
	// 200 ms, fails the publish on a loaded machine).
	stall := jetstream.WithStallWait(time.Minute)
	bodies := make([][]byte, groups)
	for g := range bodies {
		ev := transition(fmt.Sprintf("bench-group-%05d", g), 0)
		ev.ClusterID, ev.HashScheme = clusterID, events.SchemeMurmur3
		env, err := ev.Wrap(time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if bodies[g], err = json.Marshal(env); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"raw", "headers", "shape", "republish", "sourced", "atomic", "two"} {
		b.Run(mode, func(b *testing.B) {
			var total, cpu, srvCPU time.Duration
			for range b.N {
				b.StopTimer()
				name := fmt.Sprintf("bench_%s_%s_%d", mode, benchRun, benchRound.Add(1))
				names := []string{name}
				if mode == "two" {
					names = append(names, name+"_2")
				}
				streams := make([]jetstream.Stream, len(names))
				for i, n := range names {
					cfg := jetstream.StreamConfig{Name: n, Subjects: []string{n + ".>"}, MaxMsgsPerSubject: 16,
						Duplicates: publish.DefaultDuplicateWindow}
					if mode != "raw" && mode != "headers" {
						cfg.Subjects = []string{events.InternalPrefix + "." + n + ".>"}
						cfg.SubjectTransform = &jetstream.SubjectTransformConfig{Source: cfg.Subjects[0], Destination: n + ".>"}
						if mode != "sourced" {
							cfg.RePublish = &jetstream.RePublish{Source: n + ".>", Destination: n + ".>"}
						}
						cfg.AllowAtomicPublish = mode == "atomic"
					}
					if streams[i], err = js.CreateStream(ctx, cfg); err != nil {
						b.Fatal(err)
					}
				}
				var eventsStream jetstream.Stream
				if mode == "shape" || mode == "sourced" {
					if eventsStream, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: name + "_EVENTS", Subjects: []string{name + ".>"},
						MaxMsgsPerSubject: 16, Sources: []*jetstream.StreamSource{{Name: name}}}); err != nil {
						b.Fatal(err)
					}
				}
				msgs := make([]*nats.Msg, groups)
				for g := range msgs {
					n, subject := names[g%len(names)], strconv.Itoa(g)
					target := n + ".group.consumer."
					if mode != "raw" && mode != "headers" {
						target = events.InternalPrefix + "." + target
					}
					msgs[g] = &nats.Msg{Subject: target + subject, Data: bodies[g]}
					if mode != "raw" {
						msgs[g].Header = nats.Header{jetstream.MsgIDHeader: {n + subject}, "Content-Type": {events.ContentType},
							jetstream.ExpectedStreamHeader: {n}, jetstream.ExpectedLastSubjSeqHeader: {"0"}}
					}
					if mode == "atomic" {
						h := msgs[g].Header
						h["Nats-Batch-Id"] = []string{name + "." + strconv.Itoa(g/atomicBatch)}
						h["Nats-Batch-Sequence"] = []string{strconv.Itoa(g%atomicBatch + 1)}
						if g%atomicBatch == atomicBatch-1 || g == groups-1 {
							h["Nats-Batch-Commit"] = []string{"1"}
						}
					}
				}
				b.StartTimer()
				c0, s0 := cpuTime(b, 0), cpuTime(b, pid)
				start := time.Now()
				for _, m := range msgs {
					if mode == "atomic" && m.Header.Get("Nats-Batch-Commit") == "" {
						if err := nc.PublishMsg(m); err != nil { // only the commit is answered
							b.Fatal(err)
						}
						continue
					}
					if _, err := js.PublishMsgAsync(m, stall); err != nil {
						b.Fatal(err)
					}
				}
				select {
				case <-js.PublishAsyncComplete():
				case <-time.After(time.Minute):
					b.Fatal("acks not all in after a minute")
				}
				if eventsStream != nil {
					waitFor(b, time.Minute, "the eventsStream stream", func() bool {
						info, err := eventsStream.Info(ctx)
						return err == nil && info.State.Msgs == groups
					})
				}
				total += time.Since(start)
				cpu += cpuTime(b, 0) - c0
				srvCPU += cpuTime(b, pid) - s0
				// Every message stored (an async publish's error is not seen above).
				var stored uint64
				for _, st := range streams {
					info, err := st.Info(ctx)
					if err != nil {
						b.Fatal(err)
					}
					stored += info.State.Msgs
				}
				if stored != groups {
					b.Fatalf("streams %q hold %d messages, want %d", names, stored, groups)
				}
			}
			per := total / time.Duration(b.N)
			b.ReportMetric(float64(groups)/per.Seconds(), "events/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*groups), "cpu-us/event")
			if pid != 0 {
				b.ReportMetric(float64(srvCPU.Microseconds())/float64(b.N*groups), "server-cpu-us/event")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
