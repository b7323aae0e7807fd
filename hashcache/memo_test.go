package hashcache_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/hashcache/hashcachetest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// plainTopic hides a topic's ReplicaLists, so a hash asks for each partition.
type plainTopic struct{ t *hashcachetest.Topic }

func (p plainTopic) ID() [16]byte           { return p.t.ID() }
func (p plainTopic) Name() string           { return p.t.Name() }
func (p plainTopic) NumPartitions() int     { return p.t.NumPartitions() }
func (p plainTopic) Replicas(i int) []int32 { return p.t.Replicas(i) }

// shortLister's ReplicaLists misses the last partition: a hash must not trust it.
type shortLister struct{ plainTopic }

func (s shortLister) ReplicaLists() [][]int32 { return s.t.Partitions[:len(s.t.Partitions)-1] }

// TestMemoAcrossTopicsAndRackChanges hashes topics again and again with the same
// schemes while brokers change racks, lose them, register and go away in the same
// cluster: every hash must be the reference hash of the cluster as it is, and the
// brokers a hash reports having read must be exactly its topic's replicas. Odd
// broker ids may be moved past the ids the memo indexes directly (4096) or packs
// (1<<16).
func TestMemoAcrossTopicsAndRackChanges(t *testing.T) {
	m, k := hashcache.NewMurmur3(), hashcache.NewKafka()
	rapid.Check(t, func(t *rapid.T) {
		base := rapid.SampledFrom([]int32{0, 4090, 65530, 1 << 30}).Draw(t, "odd ids from")
		move := func(id int32) int32 {
			if id%2 == 1 {
				return id + base
			}
			return id
		}
		moveTopic := func(top *hashcachetest.Topic) *hashcachetest.Topic {
			for _, r := range top.Partitions {
				for i := range r {
					r[i] = move(r[i])
				}
			}
			return top
		}
		c := genCluster(t)
		racks := c.Racks
		c.Racks = map[int32]string{}
		for id, r := range racks {
			c.Racks[move(id)] = r
		}
		for _, top := range c.Topics {
			moveTopic(top)
		}
		nb := int32(len(c.Racks) + 3)
		for step := range rapid.IntRange(1, 30).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				id := rapid.Int32Range(0, nb).Draw(t, "broker")
				c.Racks[move(id)] = genRack(t, "rack")
			case 1:
				delete(c.Racks, move(rapid.Int32Range(0, nb).Draw(t, "broker")))
			case 2:
				c.Add(moveTopic(genTopic(t, nb)))
			}
			top := anyTopic(t, c)
			var view hashcache.Topic = top
			switch rapid.IntRange(0, 2).Draw(t, "view") {
			case 1:
				view = plainTopic{top}
			case 2:
				if len(top.Partitions) > 0 {
					view = shortLister{plainTopic{top}}
				}
			}
			var want []int32
			for _, r := range top.Partitions {
				want = append(want, r...)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			for _, s := range []hashcache.Scheme{m, k} {
				ref := refMurmur3TopicHash(top, c)
				if s.Name() == hashcache.SchemeKafka {
					ref = refKafkaTopicHash(top, c)
				}
				if got := s.TopicHash(view, c); got != ref {
					t.Fatalf("step %d %s %s: %#x, reference %#x", step, s.Name(), top.Name(), got, ref)
				}
				if got := hashcache.BrokersSeen(s); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("step %d %s: brokers seen %v, want %v", step, s.Name(), got, want)
				}
			}
		}
	})
}

// TestMemoImages hashes the topics of a series of images, old and new in turn, with
// the same schemes, through ImageCluster: racks change, brokers go and come back,
// partitions move. Every hash must be a fresh scheme's, and the brokers a hash
// reports having read must be exactly its topic's replicas.
func TestMemoImages(t *testing.T) {
	m, k := hashcache.NewMurmur3(), hashcache.NewKafka()
	rapid.Check(t, func(t *rapid.T) {
		var images []*image.Image
		im := image.Empty
		ids := []image.UUID{{1}, {2}, {3}}
		for step := range rapid.IntRange(1, 12).Draw(t, "images") {
			d := image.NewDelta(im)
			for range rapid.IntRange(1, 6).Draw(t, "records") {
				id := rapid.Int32Range(0, 6).Draw(t, "broker")
				switch rapid.IntRange(0, 4).Draw(t, "op") {
				case 0, 1:
					r := &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: int64(step)}
					if rapid.Bool().Draw(t, "has rack") {
						rack := genRack(t, "rack")
						r.Rack = &rack
					}
					d.Replay(r)
				case 2:
					d.Replay(&metadata.UnregisterBrokerRecord{BrokerID: id})
				case 3:
					tid := rapid.SampledFrom(ids).Draw(t, "topic")
					d.Replay(&metadata.TopicRecord{TopicID: tid, Name: fmt.Sprint("t", tid[0])})
					for p := range rapid.IntRange(0, 40).Draw(t, "partitions") {
						d.Replay(&metadata.PartitionRecord{TopicID: tid, PartitionID: int32(p),
							Replicas: rapid.SliceOfN(rapid.Int32Range(0, 7), 0, 4).Draw(t, "replicas")})
					}
				case 4:
					tid := rapid.SampledFrom(ids).Draw(t, "topic")
					ch := metadata.NewPartitionChangeRecord(tid, rapid.Int32Range(0, 40).Draw(t, "partition"))
					ch.Replicas = rapid.SliceOfN(rapid.Int32Range(0, 7), 0, 4).Draw(t, "replicas")
					d.Replay(ch)
				}
			}
			im, _ = d.Apply(image.Provenance{Offset: int64(step)})
			images = append(images, im)
		}
		for range rapid.IntRange(1, 30).Draw(t, "hashes") {
			cl := hashcache.ImageCluster{Image: rapid.SampledFrom(images).Draw(t, "image")}
			var names []string
			for tp := range cl.Image.Topics() {
				names = append(names, tp.Name())
			}
			if len(names) == 0 {
				continue
			}
			slices.Sort(names)
			top, _ := cl.Topic(rapid.SampledFrom(names).Draw(t, "name"))
			var want []int32
			for i := range top.NumPartitions() {
				want = append(want, top.Replicas(i)...)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			for _, s := range []hashcache.Scheme{m, k} {
				fresh, _ := hashcache.NewScheme(s.Name())
				if got, ref := s.TopicHash(top, cl), fresh.TopicHash(top, cl); got != ref {
					t.Fatalf("%s %s: %#x, fresh %#x", s.Name(), top.Name(), got, ref)
				}
				if got := hashcache.BrokersSeen(s); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("%s: brokers seen %v, want %v", s.Name(), got, want)
				}
			}
		}
	})
}

// TestMemoManyBrokers: the memo gives the first 64 brokers it sees a bit, and notes
// the lists of the others one by one for their racks to be asked at the end of a
// topic (rackMemo.use). With 200 brokers whose racks change between hashes, through
// hashcachetest topics and through images, every hash must be the reference hash of
// the cluster as it is, and the brokers a hash reports having read its topic's.
func TestMemoManyBrokers(t *testing.T) {
	const brokers = 200
	c := hashcachetest.NewCluster()
	for id := range int32(brokers) {
		c.Racks[id] = fmt.Sprintf("rack-%d", id%5)
	}
	for n := range 3 {
		top := c.Add(&hashcachetest.Topic{TopicID: hashcachetest.ID(1, uint64(n)), TopicName: fmt.Sprint("t", n)})
		for p := range 150 {
			first := int32(p*(n+3)) % brokers
			top.Partitions = append(top.Partitions, []int32{first, (first + 1) % brokers, (first + 67) % brokers})
		}
	}
	asImage := func() hashcache.ImageCluster {
		d := image.NewDelta(image.Empty)
		for id, rack := range c.Racks {
			d.Replay(&metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1, Rack: &rack})
		}
		for n := range 3 {
			top := c.Topics[fmt.Sprint("t", n)]
			d.Replay(&metadata.TopicRecord{TopicID: top.TopicID, Name: top.TopicName})
			for p, r := range top.Partitions {
				d.Replay(&metadata.PartitionRecord{TopicID: top.TopicID, PartitionID: int32(p), Replicas: r, ISR: r, Leader: r[0]})
			}
		}
		im, _ := d.Apply(image.Provenance{})
		return hashcache.ImageCluster{Image: im}
	}
	for _, s := range schemes() {
		for round := range 6 {
			cl := asImage()
			for n := range 3 {
				top := c.Topics[fmt.Sprint("t", n)]
				ref := refMurmur3TopicHash(top, c)
				if s.Name() == hashcache.SchemeKafka {
					ref = refKafkaTopicHash(top, c)
				}
				var want []int32
				for _, r := range top.Partitions {
					want = append(want, r...)
				}
				slices.Sort(want)
				want = slices.Compact(want)
				it, _ := cl.Topic(top.TopicName)
				for _, v := range []struct {
					name string
					t    hashcache.Topic
					b    hashcache.Brokers
				}{{"topic", top, c}, {"image", it, cl}} {
					if got := s.TopicHash(v.t, v.b); got != ref {
						t.Fatalf("%s round %d %s %s: %#x, reference %#x", s.Name(), round, v.name, top.TopicName, got, ref)
					}
					if got := hashcache.BrokersSeen(s); !slices.Equal(got, want) {
						t.Fatalf("%s round %d %s %s: brokers seen %v, want %v", s.Name(), round, v.name, top.TopicName, got, want)
					}
				}
			}
			// Brokers with and without a bit move to another rack, or lose theirs.
			for _, id := range []int32{int32(round), 100 + int32(round), 167 + int32(round)} {
				if round%3 == 2 {
					delete(c.Racks, id)
				} else {
					c.Racks[id] = fmt.Sprintf("moved-%d", round)
				}
			}
		}
	}
}
