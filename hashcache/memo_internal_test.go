package hashcache

import (
	"testing"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// cluster is a minimal mutable Cluster for white-box tests.
type cluster struct {
	racks  map[int32]string
	topics map[string]Topic
}

func (c *cluster) Rack(id int32) (string, bool) { r, ok := c.racks[id]; return r, ok }
func (c *cluster) Topic(name string) (Topic, bool) {
	t, ok := c.topics[name]
	return t, ok
}

type topic struct {
	id    [16]byte
	parts [][]int32
}

func (t *topic) ID() [16]byte           { return t.id }
func (t *topic) Name() string           { return "t" }
func (t *topic) NumPartitions() int     { return len(t.parts) }
func (t *topic) Replicas(i int) []int32 { return t.parts[i] }

// TestMemoStartsAfresh: when the memo forgets its racks (past maxRacks), its
// replica lists (past maxTuples, maxBlocks) or its brokers past denseBrokers (past
// maxFar), or one of its generations wraps, hashes do not change, and a rack that
// changed at that moment is read anew.
func TestMemoStartsAfresh(t *testing.T) {
	c := &cluster{racks: map[int32]string{0: "a", 1: "b", 2: "c"}}
	c.racks[5000], c.racks[70000] = "d", "e" // past denseBrokers, past pack
	top := &topic{parts: [][]int32{{0, 1, 2}, {2, 1}, {2}, {0, 1, 2}, {5000, 1, 70000}, {5000, 1, 70000}}}
	for _, s := range []Scheme{NewMurmur3(), NewKafka()} {
		fresh := func() int64 { n, _ := NewScheme(s.Name()); return n.TopicHash(top, c) }
		var m *rackMemo
		switch s := s.(type) {
		case *Murmur3:
			m = &s.memo
		case *Kafka:
			m = &s.memo
		}
		for fi, forget := range []func(){
			func() { m.racks = append(m.racks, make([]memoRack, maxRacks+1-len(m.racks))...) },
			func() { m.nTuples = maxTuples },
			func() { m.blocks = append(m.blocks, make([]byte, maxBlocks+1)...) },
			func() { m.gen = ^uint32(0) },
			func() { m.askGen = ^uint32(0) },
			func() { m.racksGen = ^uint32(0) },
			func() { // forgetting the racks wraps their epoch
				m.racksEpoch = ^uint32(0)
				m.racks = append(m.racks, make([]memoRack, maxRacks+1-len(m.racks))...)
			},
			func() { m.far = append(m.far, make([]brokerSlot, maxFar+1-len(m.far))...) },
		} {
			if got, want := s.TopicHash(top, c), fresh(); got != want {
				t.Fatalf("%s before forgetting %d: %#x, want %#x", s.Name(), fi, got, want)
			}
			forget()
			c.racks[1] += "x"
			c.racks[5000] += "y"
			if got, want := s.TopicHash(top, c), fresh(); got != want {
				t.Fatalf("%s after forgetting %d: %#x, want %#x", s.Name(), fi, got, want)
			}
		}
	}
}

// TestMemoStartsAfreshSameImage: the memo forgetting its racks while the racks come
// from the same image again.
func TestMemoStartsAfreshSameImage(t *testing.T) {
	d := image.NewDelta(image.Empty)
	for id, r := range []string{"a", "b", "c"} {
		d.Replay(&metadata.RegisterBrokerRecord{BrokerID: int32(id), Rack: &r})
	}
	d.Replay(&metadata.TopicRecord{TopicID: image.UUID{1}, Name: "t"})
	d.Replay(&metadata.PartitionRecord{TopicID: image.UUID{1}, Replicas: []int32{0, 1, 2}})
	d.Replay(&metadata.PartitionRecord{TopicID: image.UUID{1}, PartitionID: 1, Replicas: []int32{2, 1}})
	im, _ := d.Apply(image.Provenance{})
	cl := ImageCluster{Image: im}
	top, _ := cl.Topic("t")
	for _, s := range []Scheme{NewMurmur3(), NewKafka()} {
		fresh, _ := NewScheme(s.Name())
		want := fresh.TopicHash(top, cl)
		var m *rackMemo
		switch s := s.(type) {
		case *Murmur3:
			m = &s.memo
		case *Kafka:
			m = &s.memo
		}
		s.TopicHash(top, cl)
		m.racks = append(m.racks, make([]memoRack, maxRacks+1-len(m.racks))...)
		if got := s.TopicHash(top, cl); got != want {
			t.Fatalf("%s: %#x, want %#x", s.Name(), got, want)
		}
	}
}
