package hashcache_test

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/hashcache/hashcachetest"
)

// plainTopic hides a topic's AppendReplicas, so a hash asks for each partition.
type plainTopic struct{ t *hashcachetest.Topic }

func (p plainTopic) ID() [16]byte           { return p.t.ID() }
func (p plainTopic) Name() string           { return p.t.Name() }
func (p plainTopic) NumPartitions() int     { return p.t.NumPartitions() }
func (p plainTopic) Replicas(i int) []int32 { return p.t.Replicas(i) }

// shortLister's AppendReplicas misses the last partition: a hash must not trust it.
type shortLister struct{ plainTopic }

func (s shortLister) AppendReplicas(dst [][]int32) [][]int32 {
	return append(dst, s.t.Partitions[:len(s.t.Partitions)-1]...)
}

// TestMemoAcrossTopicsAndRackChanges hashes topics again and again with the same
// schemes while brokers change racks, lose them, register and go away in the same
// cluster: every hash must be the reference hash of the cluster as it is, and the
// brokers a hash reports having read must be exactly its topic's replicas.
func TestMemoAcrossTopicsAndRackChanges(t *testing.T) {
	m, k := hashcache.NewMurmur3(), hashcache.NewKafka()
	rapid.Check(t, func(t *rapid.T) {
		c := genCluster(t)
		nb := int32(len(c.Racks) + 3)
		for step := range rapid.IntRange(1, 30).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				id := rapid.Int32Range(0, nb).Draw(t, "broker")
				c.Racks[id] = genRack(t, "rack")
			case 1:
				delete(c.Racks, rapid.Int32Range(0, nb).Draw(t, "broker"))
			case 2:
				c.Add(genTopic(t, nb))
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
