package image

import (
	"errors"
	"slices"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// TestAppendReplicas: AppendReplicas gives what Partition(i).Replicas() gives for
// every i below NumPartitions, for dense topics and topics with holes.
func TestAppendReplicas(t *testing.T) {
	im := layouts(t)
	for tp := range im.Topics() {
		got := tp.AppendReplicas([][]int32{{42}})
		if len(got) != 1+tp.NumPartitions() || !slices.Equal(got[0], []int32{42}) {
			t.Fatalf("%s: %d lists for %d partitions", tp.Name(), len(got), tp.NumPartitions())
		}
		for i, l := range got[1:] {
			p, ok := tp.Partition(int32(i))
			want := p.Replicas()
			if !ok {
				want = nil
			}
			if !slices.Equal(l, want) || (l == nil) != (want == nil) {
				t.Fatalf("%s partition %d: %v, want %v", tp.Name(), i, l, want)
			}
		}
	}
}

// TestBrokerRack: BrokerRack gives what Broker gives.
func TestBrokerRack(t *testing.T) {
	d := NewDelta(Empty)
	rack := "r1"
	empty := ""
	d.Replay(&metadata.RegisterBrokerRecord{BrokerID: 1, Rack: &rack})
	d.Replay(&metadata.RegisterBrokerRecord{BrokerID: 2})
	d.Replay(&metadata.RegisterBrokerRecord{BrokerID: 3, Rack: &empty})
	im, _ := d.Apply(Provenance{})
	for id := range int32(5) {
		b, ok := im.Broker(id)
		r, rok := im.BrokerRack(id)
		if rok != (ok && b.HasRack) || r != b.Rack {
			t.Fatalf("broker %d: BrokerRack %q %v, Broker %+v %v", id, r, rok, b, ok)
		}
	}
	if r, ok := im.BrokerRack(3); !ok || r != "" {
		t.Fatalf("broker 3: %q %v", r, ok)
	}
}

// TestLongestLists: a partition holds lists of up to maxList (255) replicas, on the
// bulk path, one by one and through a change; a longer list is refused, and the
// partition stays as it was.
func TestLongestLists(t *testing.T) {
	ids := func(n int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(i)
		}
		return s
	}
	d := NewDelta(Empty)
	id := UUID{7}
	if err := d.Replay(&metadata.TopicRecord{TopicID: id, Name: "wide"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		rec  metadata.Record
		ok   bool
	}{
		{"bulk 255", &metadata.PartitionRecord{TopicID: id, PartitionID: 0, Replicas: ids(255), ISR: ids(255)}, true},
		{"bulk 256", &metadata.PartitionRecord{TopicID: id, PartitionID: 1, Replicas: ids(256)}, false},
		{"bulk 256 removing", &metadata.PartitionRecord{TopicID: id, PartitionID: 1, Replicas: ids(3), RemovingReplicas: ids(256)}, false},
		{"bulk 256 last known ELR", &metadata.PartitionRecord{TopicID: id, PartitionID: 1, Replicas: ids(3), LastKnownELR: ids(256)}, false},
		{"one by one 255", &metadata.PartitionRecord{TopicID: id, PartitionID: 5, Replicas: ids(255), Directories: make([]UUID, 255)}, true},
		{"change 256", &metadata.PartitionChangeRecord{TopicID: id, PartitionID: 0, Leader: metadata.LeaderUnchanged,
			LeaderRecoveryState: metadata.LeaderRecoveryUnchanged, ISR: ids(256)}, false},
		{"change 254", &metadata.PartitionChangeRecord{TopicID: id, PartitionID: 0, Leader: 3,
			LeaderRecoveryState: 1, ISR: ids(254)}, true},
	} {
		err := d.Replay(c.rec)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	im, _ := d.Apply(Provenance{})
	tp, _ := im.Topic(id)
	p0, _ := tp.Partition(0)
	p5, _ := tp.Partition(5)
	if tp.NumPartitions() != 2 || !slices.Equal(p0.Replicas(), ids(255)) || !slices.Equal(p0.ISR(), ids(254)) ||
		p0.Leader() != 3 || p0.LeaderRecoveryState() != 1 || !slices.Equal(p5.Replicas(), ids(255)) || p5.LeaderRecoveryState() != 0 {
		t.Fatalf("%d partitions; 0: %d replicas, %d isr, leader %d, lrs %d; 5: %d replicas",
			tp.NumPartitions(), len(p0.Replicas()), len(p0.ISR()), p0.Leader(), p0.LeaderRecoveryState(), len(p5.Replicas()))
	}
}

// layouts is an image of a dense topic (several trie levels), a topic with holes, an
// empty one and one whose partition has no replicas.
func layouts(t *testing.T) *Image {
	d := NewDelta(Empty)
	add := func(id UUID, name string, parts ...int32) {
		if err := d.Replay(&metadata.TopicRecord{TopicID: id, Name: name}); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			if err := d.Replay(&metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: []int32{p, p + 1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var dense []int32
	for p := range int32(1100) {
		dense = append(dense, p)
	}
	add(UUID{1}, "dense", dense...)
	add(UUID{2}, "holes", 0, 2, 5, 6, 40, 1030)
	add(UUID{3}, "empty")
	add(UUID{4}, "no replicas")
	d.Replay(&metadata.PartitionRecord{TopicID: UUID{4}, PartitionID: 0})
	im, _ := d.Apply(Provenance{})
	return im
}
