package image

import (
	"slices"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// TestAppendReplicas: AppendReplicas gives what Partition(i).Replicas() gives for
// every i below NumPartitions, for dense topics and topics with holes.
func TestAppendReplicas(t *testing.T) {
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
	add(UUID{2}, "holes", 0, 2, 5, 6, 40)
	add(UUID{3}, "empty")
	add(UUID{4}, "no replicas")
	d.Replay(&metadata.PartitionRecord{TopicID: UUID{4}, PartitionID: 0})
	im, _ := d.Apply(Provenance{})
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
