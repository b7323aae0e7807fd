package hashcache_test

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spaolacci/murmur3"
	"github.com/zeebo/xxh3"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/hashcache/hashcachetest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Benchmarks. Compare a scheme with the raw hash over the very bytes the scheme
// hashes, in one run:
//
//	go test -run '^$' -bench . -benchmem ./hashcache/
//
// BenchmarkAllTopics/S and BenchmarkRawHash/S report MB/s over the same bytes; their
// ratio is the overhead of building the byte stream (interface calls, rack lookups,
// sorting, encoding).

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

func BenchmarkAllTopics(b *testing.B) {
	c := benchCluster()
	topics := benchTopicList(c)
	for _, s := range schemes() {
		b.Run(s.Name(), func(b *testing.B) {
			_, n := streams(s, c, topics)
			b.SetBytes(n)
			b.ReportAllocs()
			loop(b, func() {
				for _, t := range topics {
					s.TopicHash(t, c)
				}
			})
		})
	}
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

// BenchmarkAllTopicsImage is BenchmarkAllTopics on benchCluster as an image.Image
// through ImageCluster: the same bytes, so BenchmarkRawHash is its floor too.
func BenchmarkAllTopicsImage(b *testing.B) {
	c := benchCluster()
	cl := hashcache.ImageCluster{Image: benchImage()}
	list := benchTopicList(c)
	var topics []hashcache.Topic
	for _, t := range list {
		top, ok := cl.Topic(t.TopicName)
		if !ok {
			b.Fatal(t.TopicName)
		}
		topics = append(topics, top)
	}
	for _, s := range schemes() {
		b.Run(s.Name(), func(b *testing.B) {
			_, n := streams(s, c, list)
			for i, t := range topics {
				want := s.TopicHash(list[i], c)
				if got := s.TopicHash(t, cl); got != want {
					b.Fatalf("%s: image hash %x, want %x", t.Name(), got, want)
				}
			}
			b.SetBytes(n)
			b.ReportAllocs()
			loop(b, func() {
				for _, t := range topics {
					s.TopicHash(t, cl)
				}
			})
		})
	}
}

// loop runs f b.N times, after a GC so that no collection of the setup's garbage
// runs during the loop, and reports the CPU time of the process per run beside the
// wall time: on a shared machine wall time also counts the time other processes
// held the cores.
func loop(b *testing.B, f func()) {
	runtime.GC()
	n, cpu0 := 0, cpuTime()
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkRawHash(b *testing.B) {
	c := benchCluster()
	topics := benchTopicList(c)
	raw := map[string]func([]byte) uint64{
		hashcache.SchemeMurmur3: murmur3.Sum64,
		hashcache.SchemeKafka:   xxh3.Hash,
	}
	for _, s := range schemes() {
		b.Run(s.Name(), func(b *testing.B) {
			bufs, n := streams(s, c, topics)
			hash := raw[s.Name()]
			b.SetBytes(n)
			b.ReportAllocs()
			loop(b, func() {
				for _, buf := range bufs {
					hash(buf)
				}
			})
		})
	}
}

func BenchmarkTopic10kPartitions(b *testing.B) {
	c := benchCluster()
	top := &hashcachetest.Topic{TopicID: hashcachetest.ID(1, 2), TopicName: "clickstream"}
	for p := range 10_000 {
		first := int32(p) % benchBrokers
		top.Partitions = append(top.Partitions, []int32{first, (first + 1) % benchBrokers, (first + 5) % benchBrokers})
	}
	for _, s := range schemes() {
		b.Run(s.Name(), func(b *testing.B) {
			bs, _ := hashcache.TopicBytes(s, top, c)
			b.SetBytes(int64(len(bs)))
			b.ReportAllocs()
			for b.Loop() {
				s.TopicHash(top, c)
			}
		})
	}
}

func BenchmarkCacheHit(b *testing.B) {
	c := benchCluster()
	for _, name := range []string{hashcache.SchemeMurmur3, hashcache.SchemeKafka} {
		b.Run(name, func(b *testing.B) {
			cache, _ := hashcache.New(hashcache.Config{Scheme: name})
			cache.TopicHash(c, "service-0042.events.v1")
			b.ReportAllocs()
			for b.Loop() {
				cache.TopicHash(c, "service-0042.events.v1")
			}
		})
	}
}

func BenchmarkGroupHashHits(b *testing.B) {
	c := benchCluster()
	subscribed := []string{"service-0001.events.v1", "service-0002.events.v1", "service-0003.events.v1", "missing", "service-0004.events.v1"}
	for _, name := range []string{hashcache.SchemeMurmur3, hashcache.SchemeKafka} {
		b.Run(name, func(b *testing.B) {
			cache, _ := hashcache.New(hashcache.Config{Scheme: name})
			cache.GroupHash(c, subscribed)
			b.ReportAllocs()
			for b.Loop() {
				cache.GroupHash(c, subscribed)
			}
		})
	}
}

// TestNoAllocs pins the allocation-free paths: a scheme's topic hash once its
// buffers have grown, a cache hit, and a group hash served from the cache.
func TestNoAllocs(t *testing.T) {
	c := specCluster()
	top := c.Topics["orders.v1_big-topic"]
	for _, s := range schemes() {
		s.TopicHash(top, c)
		if n := testing.AllocsPerRun(100, func() { s.TopicHash(top, c) }); n != 0 {
			t.Errorf("%s TopicHash: %v allocs", s.Name(), n)
		}
		hs := []hashcache.NamedHash{{"b", 1}, {"a", 2}}
		if n := testing.AllocsPerRun(100, func() { s.GroupHash(hs) }); n != 0 {
			t.Errorf("%s GroupHash: %v allocs", s.Name(), n)
		}
		cache, _ := hashcache.New(hashcache.Config{Scheme: s.Name()})
		cache.GroupHash(c, []string{"foo", "bar", "nb", "missing"})
		if n := testing.AllocsPerRun(100, func() { cache.TopicHash(c, "foo") }); n != 0 {
			t.Errorf("%s cache hit: %v allocs", s.Name(), n)
		}
		if n := testing.AllocsPerRun(100, func() { cache.GroupHash(c, []string{"foo", "bar", "nb", "missing"}) }); n != 0 {
			t.Errorf("%s cached group hash: %v allocs", s.Name(), n)
		}
	}
}

// BenchmarkReadInput is the floor under BenchmarkAllTopics: reading every replica
// id of benchCluster through the Topic interface, hashing nothing.
func BenchmarkReadInput(b *testing.B) {
	c := benchCluster()
	topics := make([]hashcache.Topic, 0, benchTopics)
	for _, t := range benchTopicList(c) {
		topics = append(topics, t)
	}
	var sum int32
	for b.Loop() {
		for _, t := range topics {
			for i := range t.NumPartitions() {
				for _, id := range t.Replicas(i) {
					sum += id
				}
			}
		}
	}
	if sum == 42 {
		b.Log(sum) // keep the loop
	}
}

// BenchmarkReadInputImage is BenchmarkReadInput on benchImage through
// ReplicaLister: the floor under BenchmarkAllTopicsImage.
func BenchmarkReadInputImage(b *testing.B) {
	cl := hashcache.ImageCluster{Image: benchImage()}
	var topics []hashcache.ReplicaLister
	for _, t := range benchTopicList(benchCluster()) {
		top, _ := cl.Topic(t.TopicName)
		topics = append(topics, top.(hashcache.ReplicaLister))
	}
	var lists [][]int32
	var sum int32
	for b.Loop() {
		for _, t := range topics {
			lists = t.AppendReplicas(lists[:0])
			for _, l := range lists {
				for _, id := range l {
					sum += id
				}
			}
		}
	}
	if sum == 42 {
		b.Log(sum) // keep the loop
	}
}
