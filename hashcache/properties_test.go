package hashcache_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/hashcache/hashcachetest"
)

// rackPool mixes ASCII, the empty rack, BMP characters above U+E000 and
// supplementary characters, whose Java and Go orders differ.
var rackPool = []string{
	"us-east-1a", "us-east-1b", "us-east-1c", "a", "b", "", "rack-ü", "日本-1",
	"r\U0001F600", "r\uFFFD", "r\uE000", "r\U00010000", "\U0010FFFF", "z",
}

// genString draws strings over an alphabet chosen to hit the UTF-16 corner cases.
var genString = rapid.StringOf(rapid.SampledFrom([]rune{
	'a', 'b', '-', 'é', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\ufffd',
	'\U00010000', '\U0001F600', '\U0010FFFF',
}))

func genRack(t *rapid.T, label string) string {
	if rapid.Bool().Draw(t, label+"_pool") {
		return rapid.SampledFrom(rackPool).Draw(t, label)
	}
	return genString.Draw(t, label)
}

// genCluster draws brokers (some without a rack, so unregistered) and topics whose
// replicas may name brokers that do not exist.
func genCluster(t *rapid.T) *hashcachetest.Cluster {
	c := hashcachetest.NewCluster()
	nb := rapid.IntRange(1, 12).Draw(t, "brokers")
	for id := range int32(nb) {
		if rapid.IntRange(0, 5).Draw(t, "registered") > 0 {
			c.Racks[id] = genRack(t, "rack")
		}
	}
	nt := rapid.IntRange(1, 4).Draw(t, "topics")
	for range nt {
		c.Add(genTopic(t, int32(nb)))
	}
	return c
}

func genTopic(t *rapid.T, nb int32) *hashcachetest.Topic {
	top := &hashcachetest.Topic{
		TopicName: rapid.StringMatching(`[a-zA-Z0-9._-]{1,20}`).Draw(t, "name"),
	}
	for i := range top.TopicID {
		top.TopicID[i] = rapid.Byte().Draw(t, "id")
	}
	np := rapid.IntRange(1, 10).Draw(t, "partitions")
	if rapid.IntRange(0, 20).Draw(t, "big") == 0 {
		np = rapid.IntRange(400, 1500).Draw(t, "partitions") // crosses the sink's flush size
	}
	for range np {
		top.Partitions = append(top.Partitions,
			rapid.SliceOfN(rapid.Int32Range(0, nb+2), 0, 5).Draw(t, "replicas"))
	}
	return top
}

func schemes() []hashcache.Scheme {
	return []hashcache.Scheme{hashcache.NewMurmur3(), hashcache.NewKafka()}
}

func anyTopic(t *rapid.T, c *hashcachetest.Cluster) *hashcachetest.Topic {
	names := make([]string, 0, len(c.Topics))
	for n := range c.Topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return c.Topics[rapid.SampledFrom(names).Draw(t, "topic")]
}

func clone(top *hashcachetest.Topic) *hashcachetest.Topic {
	c := *top
	c.Partitions = make([][]int32, len(top.Partitions))
	for i, p := range top.Partitions {
		c.Partitions[i] = slices.Clone(p)
	}
	return &c
}

// TestMatchesReference checks the fast schemes, reused across topics, against the
// plain reference implementations.
func TestMatchesReference(t *testing.T) {
	m, k := hashcache.NewMurmur3(), hashcache.NewKafka()
	rapid.Check(t, func(t *rapid.T) {
		c := genCluster(t)
		var hs []hashcache.NamedHash
		for name, top := range c.Topics {
			if got, want := m.TopicHash(top, c), refMurmur3TopicHash(top, c); got != want {
				t.Fatalf("murmur3 %s: %#x, reference %#x", name, got, want)
			}
			got, want := k.TopicHash(top, c), refKafkaTopicHash(top, c)
			if got != want {
				t.Fatalf("kafka %s: %#x, reference %#x", name, got, want)
			}
			hs = append(hs, hashcache.NamedHash{Name: name, Hash: got})
		}
		if got, want := k.GroupHash(slices.Clone(hs)), refKafkaGroupHash(hs); got != want {
			t.Fatalf("kafka group: %#x, reference %#x", got, want)
		}
	})
}

func TestJavaCompare(t *testing.T) {
	check := func(t *rapid.T, a, b string) {
		if got, want := hashcache.JavaCompare(a, b), refJavaCompare(a, b); got != want {
			t.Fatalf("JavaCompare(%q, %q) = %d, want %d", a, b, got, want)
		}
		if got, want := hashcache.UTF16Len(a), len(javaUnits(a)); got != want {
			t.Fatalf("UTF16Len(%q) = %d, want %d", a, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		check(t, genString.Draw(t, "a"), genString.Draw(t, "b"))
		// Arbitrary bytes, including invalid UTF-8.
		check(t, string(rapid.SliceOf(rapid.Byte()).Draw(t, "x")), string(rapid.SliceOf(rapid.Byte()).Draw(t, "y")))
	})
}

func TestRackOrderWithinPartitionIgnored(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCluster(t)
		top := anyTopic(t, c)
		perm := clone(top)
		for _, p := range perm.Partitions {
			for i := len(p) - 1; i > 0; i-- {
				j := rapid.IntRange(0, i).Draw(t, "swap")
				p[i], p[j] = p[j], p[i]
			}
		}
		for _, s := range schemes() {
			if a, b := s.TopicHash(top, c), s.TopicHash(perm, c); a != b {
				t.Fatalf("%s: permuting replicas changed the hash %#x -> %#x", s.Name(), a, b)
			}
		}
	})
}

func TestRackMoveBetweenPartitionsChangesHash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCluster(t)
		top := anyTopic(t, c)
		if len(top.Partitions) < 2 {
			t.Skip("one partition")
		}
		from := rapid.IntRange(0, len(top.Partitions)-1).Draw(t, "from")
		to := rapid.IntRange(0, len(top.Partitions)-1).Filter(func(i int) bool { return i != from }).Draw(t, "to")
		// A replica whose rack occurs once in "from" and not at all in "to".
		racksOf := func(p []int32) map[string]int {
			m := map[string]int{}
			for _, id := range p {
				if r, ok := c.Rack(id); ok {
					m[r]++
				}
			}
			return m
		}
		fromRacks, toRacks := racksOf(top.Partitions[from]), racksOf(top.Partitions[to])
		k := slices.IndexFunc(top.Partitions[from], func(id int32) bool {
			r, ok := c.Rack(id)
			return ok && fromRacks[r] == 1 && toRacks[r] == 0
		})
		if k < 0 {
			t.Skip("no rack to move")
		}
		moved := clone(top)
		id := moved.Partitions[from][k]
		moved.Partitions[from] = slices.Delete(moved.Partitions[from], k, k+1)
		moved.Partitions[to] = append(moved.Partitions[to], id)
		for _, s := range schemes() {
			if a, b := s.TopicHash(top, c), s.TopicHash(moved, c); a == b {
				t.Fatalf("%s: moving broker %d from p%d to p%d left the hash at %#x", s.Name(), id, from, to, a)
			}
		}
	})
}

func TestIdentityChangesHash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCluster(t)
		top := anyTopic(t, c)
		changed := clone(top)
		switch what := rapid.SampledFrom([]string{"name", "id", "add-partition", "remove-partition"}).Draw(t, "change"); what {
		case "name":
			changed.TopicName = rapid.StringMatching(`[a-zA-Z0-9._-]{1,20}`).
				Filter(func(s string) bool { return s != top.TopicName }).Draw(t, "new name")
		case "id":
			i := rapid.IntRange(0, 15).Draw(t, "byte")
			changed.TopicID[i] ^= rapid.ByteRange(1, 255).Draw(t, "flip")
		case "add-partition":
			changed.Partitions = append(changed.Partitions, rapid.SliceOfN(rapid.Int32Range(0, 14), 0, 4).Draw(t, "replicas"))
		case "remove-partition":
			if len(changed.Partitions) < 2 {
				t.Skip("one partition")
			}
			changed.Partitions = changed.Partitions[:len(changed.Partitions)-1]
		}
		for _, s := range schemes() {
			if a, b := s.TopicHash(top, c), s.TopicHash(changed, c); a == b {
				t.Fatalf("%s: change left the hash at %#x", s.Name(), a)
			}
		}
	})
}

// The adapter-level model below carries what image.Image carries beyond the hash
// input: leaders, ISR, ELR, epochs, directories, broker epochs and fencing. The
// adapter exposes only what hashcache reads, so none of it can reach a hash.

type modelPartition struct {
	Replicas, ISR, ELR  []int32
	Leader              int32
	LeaderEpoch, Epoch  int32
	Directories         [][16]byte
	LeaderRecoveryState int8
}

type modelTopic struct {
	ID         [16]byte
	Name       string
	Partitions []modelPartition
}

type modelBroker struct {
	Rack           string
	HasRack        bool
	Fenced         bool
	InControlled   bool
	Epoch          int64
	IncarnationID  [16]byte
	ListenerPort   uint16
	RegisteredRack bool
}

type modelImage struct {
	Topics  map[string]*modelTopic
	Brokers map[int32]*modelBroker
}

type modelTopicView struct{ t *modelTopic }

func (v modelTopicView) ID() [16]byte           { return v.t.ID }
func (v modelTopicView) Name() string           { return v.t.Name }
func (v modelTopicView) NumPartitions() int     { return len(v.t.Partitions) }
func (v modelTopicView) Replicas(i int) []int32 { return v.t.Partitions[i].Replicas }

func (m *modelImage) Topic(name string) (hashcache.Topic, bool) {
	t, ok := m.Topics[name]
	if !ok {
		return nil, false
	}
	return modelTopicView{t}, true
}

func (m *modelImage) Rack(id int32) (string, bool) {
	b, ok := m.Brokers[id]
	if !ok || !b.HasRack {
		return "", false
	}
	return b.Rack, true
}

func genModel(t *rapid.T) *modelImage {
	m := &modelImage{Topics: map[string]*modelTopic{}, Brokers: map[int32]*modelBroker{}}
	for id := range int32(rapid.IntRange(1, 8).Draw(t, "brokers")) {
		m.Brokers[id] = &modelBroker{Rack: genRack(t, "rack"), HasRack: rapid.Bool().Draw(t, "has rack")}
	}
	for range rapid.IntRange(1, 3).Draw(t, "topics") {
		top := &modelTopic{Name: rapid.StringMatching(`[a-z]{1,8}`).Draw(t, "name")}
		top.ID[0] = rapid.Byte().Draw(t, "id")
		for range rapid.IntRange(1, 6).Draw(t, "partitions") {
			top.Partitions = append(top.Partitions, modelPartition{
				Replicas: rapid.SliceOfNDistinct(rapid.Int32Range(0, 9), 0, 4, rapid.ID[int32]).Draw(t, "replicas"),
			})
		}
		m.Topics[top.Name] = top
	}
	return m
}

func TestNonHashedStateIgnored(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genModel(t)
		before := map[string]int64{}
		for _, s := range schemes() {
			for name := range m.Topics {
				v, _ := m.Topic(name)
				before[s.Name()+"/"+name] = s.TopicHash(v, m)
			}
		}
		// Change leaders, ISR, ELR, epochs, directories, recovery state and the
		// brokers' fencing, epochs and endpoints.
		for _, top := range m.Topics {
			for i := range top.Partitions {
				p := &top.Partitions[i]
				if len(p.Replicas) > 0 {
					p.Leader = rapid.SampledFrom(p.Replicas).Draw(t, "leader")
					p.ISR = rapid.SliceOfDistinct(rapid.SampledFrom(p.Replicas), rapid.ID[int32]).Draw(t, "isr")
				} else {
					p.Leader = -1
				}
				p.ELR = rapid.SliceOf(rapid.Int32Range(0, 9)).Draw(t, "elr")
				p.LeaderEpoch = rapid.Int32().Draw(t, "leader epoch")
				p.Epoch = rapid.Int32().Draw(t, "partition epoch")
				p.Directories = make([][16]byte, len(p.Replicas))
				p.LeaderRecoveryState = rapid.Int8Range(0, 1).Draw(t, "recovery")
			}
		}
		for _, b := range m.Brokers {
			b.Fenced = rapid.Bool().Draw(t, "fenced")
			b.InControlled = rapid.Bool().Draw(t, "controlled shutdown")
			b.Epoch = rapid.Int64().Draw(t, "broker epoch")
			b.IncarnationID[0] = rapid.Byte().Draw(t, "incarnation")
			b.ListenerPort = rapid.Uint16().Draw(t, "port")
		}
		for _, s := range schemes() {
			for name := range m.Topics {
				v, _ := m.Topic(name)
				if got, want := s.TopicHash(v, m), before[s.Name()+"/"+name]; got != want {
					t.Fatalf("%s %s: %#x, was %#x", s.Name(), name, got, want)
				}
			}
		}
	})
}

func ExampleCache() {
	c := hashcachetest.NewCluster()
	c.Racks[1], c.Racks[2] = "a", "b"
	c.Add(&hashcachetest.Topic{TopicID: hashcachetest.ID(1, 2), TopicName: "orders", Partitions: [][]int32{{1, 2}}})
	cache, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	h1, _ := cache.TopicHash(c, "orders")
	c.Racks[2] = "c" // broker 2 moved to rack c
	dropped := cache.Invalidate(hashcache.Invalidation{Brokers: []int32{2}}, nil)
	h2, _ := cache.TopicHash(c, "orders")
	fmt.Println(dropped, h1 != h2, cache.Stats())
	// Output: [orders] true {0 2 1 0}
}

// TestLargeTopicStreams checks topics far larger than the sink's buffer, which are
// hashed by the streaming hashers in chunks.
func TestLargeTopicStreams(t *testing.T) {
	c := hashcachetest.NewCluster()
	for id := range int32(12) {
		c.Racks[id] = fmt.Sprintf("zone-%c", 'a'+id%4)
	}
	top := &hashcachetest.Topic{TopicID: hashcachetest.ID(7, 9), TopicName: "large"}
	for i := range 10_000 {
		top.Partitions = append(top.Partitions, []int32{int32(i % 12), int32((i + 1) % 12), int32((i + 5) % 12)})
	}
	m, k := hashcache.NewMurmur3(), hashcache.NewKafka()
	if b, _ := hashcache.TopicBytes(k, top, c); len(b) < 4*hashcache.FlushAt {
		t.Fatalf("topic is %d bytes, want several flushes of %d", len(b), hashcache.FlushAt)
	}
	for range 2 { // twice: reused buffers must not leak state
		if got, want := m.TopicHash(top, c), refMurmur3TopicHash(top, c); got != want {
			t.Errorf("murmur3: %#x, reference %#x", got, want)
		}
		if got, want := k.TopicHash(top, c), refKafkaTopicHash(top, c); got != want {
			t.Errorf("kafka: %#x, reference %#x", got, want)
		}
	}
}

// TestManyDistinctReplicaLists covers a topic with more distinct replica lists
// than the memo keeps.
func TestManyDistinctReplicaLists(t *testing.T) {
	c := hashcachetest.NewCluster()
	for id := range int32(300) {
		c.Racks[id] = fmt.Sprintf("r%d", id%7)
	}
	top := &hashcachetest.Topic{TopicID: hashcachetest.ID(3, 4), TopicName: "wide"}
	for i := range 20_000 {
		top.Partitions = append(top.Partitions, []int32{int32(i % 300), int32(i/300) % 300, 299 - int32(i%13)})
	}
	for _, s := range schemes() {
		want := refMurmur3TopicHash(top, c)
		if s.Name() == hashcache.SchemeKafka {
			want = refKafkaTopicHash(top, c)
		}
		if got := s.TopicHash(top, c); got != want {
			t.Errorf("%s: %#x, reference %#x", s.Name(), got, want)
		}
	}
}
