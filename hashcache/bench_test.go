package hashcache_test

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/spaolacci/murmur3"
	"github.com/zeebo/xxh3"
	"golang.org/x/sys/unix"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/hashcache/hashcachetest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Benchmarks. BenchmarkHashes compares each scheme with the raw hash over the very
// bytes the scheme hashes, in one run (bench/hashes.sh prints the ratios):
//
//	go test -run '^$' -bench Hashes -benchtime 20x ./hashcache/

const (
	benchTopics     = 10_000
	benchPartitions = 100 // 10k x 100 = 1M partitions
	benchBrokers    = 12
)

// benchCluster is 1M partitions, RF 3, 12 brokers in 4 racks.
var benchCluster = sync.OnceValue(func() *hashcachetest.Cluster {
	c := hashcachetest.NewCluster()
	for id := range int32(benchBrokers) {
		c.Racks[id] = fmt.Sprintf("eu-west-1%c", 'a'+id%4)
	}
	for t := range benchTopics {
		top := &hashcachetest.Topic{
			TopicID:   hashcachetest.ID(uint64(t)*0x9e3779b97f4a7c15, uint64(t)),
			TopicName: fmt.Sprintf("service-%04d.events.v1", t),
		}
		for p := range benchPartitions {
			first := int32(t+p) % benchBrokers
			top.Partitions = append(top.Partitions,
				[]int32{first, (first + 1) % benchBrokers, (first + 5) % benchBrokers})
		}
		c.Add(top)
	}
	return c
})

func benchTopicList(c *hashcachetest.Cluster) []*hashcachetest.Topic {
	list := make([]*hashcachetest.Topic, 0, len(c.Topics))
	for t := range benchTopics {
		list = append(list, c.Topics[fmt.Sprintf("service-%04d.events.v1", t)])
	}
	return list
}

// streams returns the byte streams that s hashes for topics, and their total size.
func streams(s hashcache.Scheme, c hashcache.Brokers, topics []*hashcachetest.Topic) ([][]byte, int64) {
	var out [][]byte
	var n int64
	for _, t := range topics {
		b, _ := hashcache.TopicBytes(s, t, c)
		out = append(out, b)
		n += int64(len(b))
	}
	return out, n
}

// benchImage is benchCluster as a metadata image: what kraftwatch hashes.
var benchImage = sync.OnceValue(func() *image.Image {
	c := benchCluster()
	d := image.NewDelta(image.Empty)
	replay := func(r metadata.Record) {
		if err := d.Replay(r); err != nil {
			panic(err)
		}
	}
	for id := range int32(benchBrokers) {
		rack := c.Racks[id]
		replay(&metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1, Rack: &rack})
	}
	for _, t := range benchTopicList(c) {
		replay(&metadata.TopicRecord{Name: t.TopicName, TopicID: t.TopicID})
		for p, r := range t.Partitions {
			replay(&metadata.PartitionRecord{TopicID: t.TopicID, PartitionID: int32(p), Replicas: r, ISR: r, Leader: r[0]})
		}
	}
	im, _ := d.Apply(image.Provenance{})
	return im
})

// BenchmarkHashes (run and checked by bench/hashes.sh): every topic hash of
// benchCluster, through hashcachetest topics ("topics") and through the same cluster
// as an image.Image ("image", what kraftwatch hashes), against the raw hash over the
// very bytes the scheme hashes ("raw": XXH3 for kafka, Murmur3 for murmur3, the
// one-shot functions the schemes call), one pass over the 10,000 topics each. An
// iteration runs the three passes one after the other, in an order that rotates, so
// that each ratio compares passes a few milliseconds apart; each pass is timed in CPU
// time of its thread (not counting the time the machine ran other processes, nor the
// runtime's other threads) and in wall time. It reports, per pass, the minimum and the
// median over the iterations, and the ratios scheme / raw: of the minima, and the
// median of each iteration's ratio. There is a GC after the setup; the passes
// allocate nothing, so none runs during them.
func BenchmarkHashes(b *testing.B) {
	c := benchCluster()
	list := benchTopicList(c)
	cl := hashcache.ImageCluster{Image: benchImage()}
	var cTopics, iTopics []hashcache.Topic
	for _, t := range list {
		top, ok := cl.Topic(t.TopicName)
		if !ok {
			b.Fatal(t.TopicName)
		}
		cTopics, iTopics = append(cTopics, t), append(iTopics, top)
	}
	raw := map[string]func([]byte) uint64{
		hashcache.SchemeMurmur3: murmur3.Sum64,
		hashcache.SchemeKafka:   xxh3.Hash,
	}
	for _, s := range schemes() {
		b.Run(s.Name(), func(b *testing.B) {
			bufs, n := streams(s, c, list)
			for i, t := range iTopics {
				if got, want := s.TopicHash(t, cl), s.TopicHash(list[i], c); got != want {
					b.Fatalf("%s: image hash %x, want %x", t.Name(), got, want)
				}
			}
			hash := raw[s.Name()]
			passes := []pass{
				{name: "raw", run: func() {
					for _, buf := range bufs {
						hash(buf)
					}
				}},
				{name: "topics", run: func() {
					for _, t := range cTopics {
						s.TopicHash(t, c)
					}
				}},
				{name: "image", run: func() {
					for _, t := range iTopics {
						s.TopicHash(t, cl)
					}
				}},
			}
			b.SetBytes(3 * n)
			b.ReportAllocs()
			runPasses(b, passes)
		})
	}
}

// pass is one timed pass of BenchmarkHashes, and its times per iteration.
type pass struct {
	name      string
	run       func()
	cpu, wall []time.Duration
}

// runPasses runs every pass once per iteration, rotating their order, and reports
// the metrics BenchmarkHashes describes; passes[0] is the anchor of the ratios.
func runPasses(b *testing.B, passes []pass) {
	runtime.LockOSThread() // so that the thread's CPU time is the pass's
	defer runtime.UnlockOSThread()
	for i := range passes { // room for the usual -benchtime Nx, so the loop allocates nothing
		passes[i].cpu, passes[i].wall = make([]time.Duration, 0, 256), make([]time.Duration, 0, 256)
	}
	runtime.GC()
	for i := 0; b.Loop(); i++ {
		for k := range passes {
			p := &passes[(i+k)%len(passes)]
			cpu0, wall0 := threadCPUTime(b), time.Now()
			p.run()
			p.wall = append(p.wall, time.Since(wall0))
			p.cpu = append(p.cpu, threadCPUTime(b)-cpu0)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for _, p := range passes {
		b.ReportMetric(ms(slices.Min(p.cpu)), p.name+"-cpu-ms-min")
		b.ReportMetric(ms(median(p.cpu)), p.name+"-cpu-ms-med")
		b.ReportMetric(ms(slices.Min(p.wall)), p.name+"-wall-ms-min")
		b.ReportMetric(ms(median(p.wall)), p.name+"-wall-ms-med")
	}
	anchor := passes[0]
	for _, p := range passes[1:] {
		ratios := make([]float64, len(p.cpu)) // per iteration
		for i := range p.cpu {
			ratios[i] = float64(p.cpu[i]) / float64(max(anchor.cpu[i], 1))
		}
		b.ReportMetric(float64(slices.Min(p.cpu))/float64(max(slices.Min(anchor.cpu), 1)), p.name+"/"+anchor.name+"-cpu-min")
		b.ReportMetric(median(ratios), p.name+"/"+anchor.name+"-cpu-med")
	}
}

func median[T cmp.Ordered](xs []T) T {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// threadCPUTime is the CPU time of the calling OS thread (CLOCK_THREAD_CPUTIME_ID,
// precise; getrusage's RUSAGE_THREAD counts in scheduler ticks of 4 ms).
func threadCPUTime(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}
