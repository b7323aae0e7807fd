package whatif

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
)

// Suggestion is a reassignment that empties a broker, rack-neutral where it can be.
type Suggestion struct {
	Broker int32  `json:"broker"`
	Rack   string `json:"rack"`
	// Neutral moves each replica to a broker of the same rack: no rack set changes.
	Neutral []Move `json:"neutral"`
	// Changing are the partitions whose rack had no broker that could take the
	// replica: they move to another rack, and the groups reading them rebalance.
	Changing []Move `json:"changing"`
	// Stuck are the partitions no registered broker can take (every one already
	// holds a replica).
	Stuck []Move `json:"stuck,omitempty"`
}

// Plan returns the suggestion's moves, the rack-neutral ones first.
func (s *Suggestion) Plan() []Move { return append(slices.Clone(s.Neutral), s.Changing...) }

// sameRack reports whether two brokers are in the same rack for a hash: the same
// rack, or both without one (neither adds anything).
func sameRack(a, b image.Broker) bool { return a.HasRack == b.HasRack && a.Rack == b.Rack }

// SuggestDecommission returns a reassignment that moves every replica of broker id
// to a broker of its rack that can take it: not fenced, not shutting down, without
// a replica of the partition, the one with the fewest replicas (then the lowest id).
// Each replica keeps its position, so the preferred leader moves with it. Where the
// rack has no such broker, the replica goes to the least loaded broker of another
// rack, and the move is listed in Changing.
func SuggestDecommission(img *image.Image, id int32) (*Suggestion, error) {
	self, ok := img.Broker(id)
	if !ok {
		return nil, fmt.Errorf("%w: decommission %d: broker %d is not registered", ErrInvalidPlan, id, id)
	}
	load := make(map[int32]int)
	var cands []image.Broker
	for _, br := range img.Brokers() {
		if br.ID != id && !br.Fenced && !br.InControlledShutdown {
			cands = append(cands, br)
			load[br.ID] = 0
		}
	}
	var buf [][]int32
	for t := range img.Topics() {
		buf = t.AppendReplicas(buf[:0])
		for _, rs := range buf {
			for _, r := range rs {
				if _, ok := load[r]; ok {
					load[r]++
				}
			}
		}
	}
	s := &Suggestion{Broker: id, Rack: self.Rack, Neutral: []Move{}, Changing: []Move{}}
	pick := func(rs []int32, same bool) (int32, bool) {
		best, found := int32(0), false
		for _, br := range cands {
			if sameRack(br, self) != same || slices.Contains(rs, br.ID) {
				continue
			}
			if !found || load[br.ID] < load[best] || (load[br.ID] == load[best] && br.ID < best) {
				best, found = br.ID, true
			}
		}
		return best, found
	}
	for _, t := range img.SortedTopics() {
		for p := range t.Partitions() {
			rs := p.Replicas()
			i := slices.Index(rs, id)
			if i < 0 {
				continue
			}
			target := slices.Clone(rs)
			m := Move{Topic: t.Name(), Partition: p.ID(), From: slices.Clone(rs)}
			if to, ok := pick(rs, true); ok {
				target[i], m.Replicas = to, target
				load[to]++
				s.Neutral = append(s.Neutral, m)
			} else if to, ok := pick(rs, false); ok {
				target[i], m.Replicas = to, target
				load[to]++
				s.Changing = append(s.Changing, m)
			} else {
				s.Stuck = append(s.Stuck, m)
			}
		}
	}
	return s, nil
}

// Ordered is a plan's moves in the order to run them.
type Ordered struct {
	// Neutral moves leave each partition's racks as they were once complete: run
	// them first, and fast (unthrottled), since under Kafka's hash a move that adds
	// a replica counts its rack twice until it completes.
	Neutral []Move `json:"neutral"`
	// Changing moves change racks. Run them as one reassignment, unthrottled if
	// possible, so their completions land together; throttled, they are sorted by
	// the groups that read them and then by topic, so each group's partitions
	// complete one after the other rather than interleaved with other groups'.
	Changing []Move `json:"changing"`
}

// Order splits moves into rack-neutral and rack-changing ones against img, with
// the scheme's notion of a partition's racks ("" for the default). readers gives
// the groups reading a topic, as a sortable key (nil: order by topic alone).
func Order(img *image.Image, scheme string, moves []Move, readers func(topic string) string) (*Ordered, error) {
	sch, err := hashcache.NewScheme(scheme)
	if err != nil {
		return nil, err
	}
	cl := hashcache.ImageCluster{Image: img}
	o := &Ordered{Neutral: []Move{}, Changing: []Move{}}
	for _, m := range moves {
		t, ok := img.TopicByName(m.Topic)
		if !ok {
			return nil, fmt.Errorf("%w: reassignment of %s-%d: no topic %q", ErrInvalidPlan, m.Topic, m.Partition, m.Topic)
		}
		p, ok := t.Partition(m.Partition)
		if !ok {
			return nil, fmt.Errorf("%w: reassignment of %s-%d: no partition %d", ErrInvalidPlan, m.Topic, m.Partition, m.Partition)
		}
		if sch.TopicHash(single(p.Replicas()), cl) == sch.TopicHash(single(m.Replicas), cl) {
			o.Neutral = append(o.Neutral, m)
		} else {
			o.Changing = append(o.Changing, m)
		}
	}
	key := func(m Move) string {
		if readers == nil {
			return ""
		}
		return readers(m.Topic)
	}
	slices.SortStableFunc(o.Changing, func(a, b Move) int {
		return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return o, nil
}
