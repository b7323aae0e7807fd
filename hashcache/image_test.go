package hashcache_test

import (
	"testing"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/image/imagetest"
)

// applyText replays metadata records in their text form on top of base.
func applyText(t *testing.T, base *image.Image, lines ...string) *image.Image {
	t.Helper()
	d := image.NewDelta(base)
	imagetest.Lines(t, d, nil, lines...)
	im, _ := d.Apply(image.Provenance{})
	return im
}

// TestImageCluster checks the adapter against the test vector of topic "foo"
// (docs/kafka-hash.md#test-vectors), and that fenced brokers keep their rack while
// unregistered ones and brokers without a rack contribute nothing.
func TestImageCluster(t *testing.T) {
	im := applyText(t, image.Empty,
		"RegisterBrokerRecord BrokerID=0 BrokerEpoch=1 Rack=rack0",
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=rack1 Fenced=true",
		"RegisterBrokerRecord BrokerID=2 BrokerEpoch=1 Rack=rack2",
		"RegisterBrokerRecord BrokerID=3 BrokerEpoch=1",
		"TopicRecord Name=foo TopicID=ASNFZ4mrze_-3LqYdlQyEA",
		"PartitionRecord TopicID=ASNFZ4mrze_-3LqYdlQyEA PartitionID=0 Replicas=0,1 ISR=0 Leader=0",
		"PartitionRecord TopicID=ASNFZ4mrze_-3LqYdlQyEA PartitionID=1 Replicas=2,1,3,9 ISR=2 Leader=2",
	)
	cl := hashcache.ImageCluster{Image: im}
	c, err := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	if err != nil {
		t.Fatal(err)
	}
	const want = 0x3ab7dc17403bfe50
	if h, ok := c.TopicHash(cl, "foo"); !ok || h != want {
		t.Fatalf("foo = %#x, %v; want %#x", uint64(h), ok, uint64(want))
	}
	if h, ok := c.TopicHash(cl, "missing"); ok || h != 0 {
		t.Fatalf("missing topic = %#x, %v; want 0, false", uint64(h), ok)
	}
	if r, ok := cl.Rack(1); !ok || r != "rack1" {
		t.Errorf("fenced broker 1 rack = %q, %v; want rack1", r, ok)
	}
	for _, id := range []int32{3, 9} {
		if r, ok := cl.Rack(id); ok {
			t.Errorf("broker %d rack = %q; want none", id, r)
		}
	}

	// Unregistering broker 2 takes rack2 out of partition 1; registering broker 9
	// with rack2 puts it back in the same place.
	gone := applyText(t, im, "UnregisterBrokerRecord BrokerID=2 BrokerEpoch=1")
	back := applyText(t, gone, "RegisterBrokerRecord BrokerID=9 BrokerEpoch=1 Rack=rack2")
	s := c.Scheme()
	top, _ := hashcache.ImageCluster{Image: gone}.Topic("foo")
	if h := s.TopicHash(top, hashcache.ImageCluster{Image: gone}); h == want {
		t.Errorf("unregistering broker 2 left the hash unchanged")
	}
	if h := s.TopicHash(top, hashcache.ImageCluster{Image: back}); h != want {
		t.Errorf("rack2 back on partition 1: %#x, want %#x", uint64(h), uint64(want))
	}

	var empty hashcache.ImageCluster
	if _, ok := empty.Topic("foo"); ok {
		t.Error("the zero ImageCluster has a topic")
	}
	if _, ok := empty.Rack(0); ok {
		t.Error("the zero ImageCluster has a rack")
	}
}

// TestImageClusterAllocs checks that reading a cached topic hash through the
// adapter allocates nothing.
func TestImageClusterAllocs(t *testing.T) {
	im := applyText(t, image.Empty,
		"RegisterBrokerRecord BrokerID=0 BrokerEpoch=1 Rack=rack0",
		"TopicRecord Name=t TopicID=ASNFZ4mrze_-3LqYdlQyEA",
		"PartitionRecord TopicID=ASNFZ4mrze_-3LqYdlQyEA PartitionID=0 Replicas=0 ISR=0 Leader=0",
	)
	c, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	cl := hashcache.ImageCluster{Image: im}
	c.TopicHash(cl, "t")
	if n := testing.AllocsPerRun(100, func() { c.TopicHash(cl, "t") }); n != 0 {
		t.Errorf("cached TopicHash through ImageCluster: %v allocations, want 0", n)
	}
}
