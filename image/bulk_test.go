package image

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// newDelta returns a Delta on base with the bulk path on or off.
func newDelta(base *Image, bulk bool) *Delta {
	d := NewDelta(base)
	d.noBulk = !bulk
	return d
}

// sameImage fails unless a and b hold the same metadata, partition by partition, with
// tries of the same shape.
func sameImage(t *testing.T, a, b *Image) {
	t.Helper()
	if err := compareImages(a, b); err != nil {
		t.Fatal(err)
	}
}

func compareImages(a, b *Image) error {
	if a.Provenance() != b.Provenance() {
		return fmt.Errorf("provenance %+v, %+v", a.Provenance(), b.Provenance())
	}
	if a.NumTopics() != b.NumTopics() || a.NumPartitions() != b.NumPartitions() || a.NumBrokers() != b.NumBrokers() {
		return fmt.Errorf("topics %d/%d partitions %d/%d brokers %d/%d", a.NumTopics(), b.NumTopics(),
			a.NumPartitions(), b.NumPartitions(), a.NumBrokers(), b.NumBrokers())
	}
	if !mapsEqual(a.s.features, b.s.features) || !slices.EqualFunc(a.Brokers(), b.Brokers(), func(x, y Broker) bool { return brokerEqual(&x, &y) }) {
		return fmt.Errorf("features or brokers differ")
	}
	for ta := range a.Topics() {
		tb, ok := b.Topic(ta.ID())
		if !ok || tb.Name() != ta.Name() {
			return fmt.Errorf("topic %s %s missing or renamed", ta.Name(), ta.ID())
		}
		if byName, ok := b.TopicByName(ta.Name()); !ok || byName != tb {
			return fmt.Errorf("topic %s not found by name", ta.Name())
		}
		if ta.parts.count != tb.parts.count || ta.parts.shift != tb.parts.shift {
			return fmt.Errorf("topic %s: %d partitions at shift %d, %d at shift %d", ta.Name(),
				ta.parts.count, ta.parts.shift, tb.parts.count, tb.parts.shift)
		}
		pa, pb := slices.Collect(ta.Partitions()), slices.Collect(tb.Partitions())
		if len(pa) != int(ta.parts.count) || !slices.EqualFunc(pa, pb, Partition.Equal) {
			return fmt.Errorf("topic %s: partitions differ", ta.Name())
		}
		for _, p := range pa {
			if q, ok := tb.Partition(p.ID()); !ok || !q.Equal(p) {
				return fmt.Errorf("topic %s partition %d: lookup differs", ta.Name(), p.ID())
			}
		}
	}
	return nil
}

// replayBoth replays recs into a bulk and a plain delta, checking that every Replay
// returns the same error, and applies both at the end.
func replayBoth(t *testing.T, bulk, plain *Delta, recs []metadata.Record) {
	t.Helper()
	for i, r := range recs {
		e1, e2 := bulk.Replay(r), plain.Replay(r)
		if fmt.Sprint(e1) != fmt.Sprint(e2) {
			t.Fatalf("record %d (%s): bulk %v, plain %v", i, r.Type(), e1, e2)
		}
	}
}

func applyBoth(t *testing.T, bulk, plain *Delta, p Provenance) *Image {
	t.Helper()
	i1, c1 := bulk.Apply(p)
	i2, c2 := plain.Apply(p)
	sameImage(t, i1, i2)
	if c1.String() != c2.String() {
		t.Fatalf("changes differ:\n%s---\n%s", c1, c2)
	}
	return i1
}

// snapshotRecords decodes every data record of a synthSnapshot (newly allocated).
func snapshotRecords(t *testing.T, snap []byte) []metadata.Record {
	t.Helper()
	var recs []metadata.Record
	if _, err := recordbatch.Scan(snap, func(b recordbatch.Batch) error {
		it := b.Iter()
		for it.Next() {
			rec, _, err := metadata.Decode(it.Record().Value)
			if err != nil {
				return err
			}
			recs = append(recs, rec)
		}
		return it.Err()
	}); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestBulkMatchesReplay loads snapshots into an empty image through the bulk path and
// record by record, and compares the images, the changes and the tries' shapes, for
// topics whose partitions fill one leaf, cross leaf and interior-node boundaries.
func TestBulkMatchesReplay(t *testing.T) {
	for _, c := range []struct{ topics, parts int }{{1, 1}, {3, 31}, {3, 32}, {3, 33}, {50, 100}, {2, 1024}, {2, 1025}, {1, 40000}} {
		t.Run(fmt.Sprintf("%dx%d", c.topics, c.parts), func(t *testing.T) {
			recs := snapshotRecords(t, synthSnapshot(c.topics, c.parts, 12))
			bulk, plain := newDelta(Empty, true), newDelta(Empty, false)
			replayBoth(t, bulk, plain, recs)
			im := applyBoth(t, bulk, plain, Provenance{Offset: 7, Epoch: 1})
			if im.NumPartitions() != c.topics*c.parts {
				t.Fatalf("%d partitions", im.NumPartitions())
			}
			if c.topics*c.parts <= 5000 && !slices.Equal(imageLines(im), imageLines(plain.Base())) {
				t.Fatal("printed images differ")
			}
			// Both deltas carry on alike: change, add and remove partitions and topics.
			var more []metadata.Record
			for _, tp := range im.SortedTopics() {
				ch := metadata.NewPartitionChangeRecord(tp.ID(), int32(c.parts-1))
				ch.Leader = 3
				more = append(more, ch, &metadata.PartitionRecord{TopicID: tp.ID(), PartitionID: int32(c.parts), Replicas: []int32{1}, ISR: []int32{1}})
			}
			more = append(more, &metadata.RemoveTopicRecord{TopicID: im.SortedTopics()[0].ID()})
			replayBoth(t, bulk, plain, more)
			applyBoth(t, bulk, plain, Provenance{Offset: 8, Epoch: 1})
		})
	}
}

// TestBulkTopicSizes: topics of different sizes one after the other, so each new
// topic's leaves are sized after a previous topic that is larger, smaller or alike.
func TestBulkTopicSizes(t *testing.T) {
	var recs []metadata.Record
	for i, n := range []int{100, 3, 40, 33, 1, 64, 65, 65, 32, 31, 200, 2, 2, 97} {
		id := UUID{byte(i + 1)}
		recs = append(recs, &metadata.TopicRecord{TopicID: id, Name: fmt.Sprint("t", i)})
		for p := range int32(n) {
			recs = append(recs, &metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: []int32{p % 5, 7}, ISR: []int32{7}})
		}
	}
	bulk, plain := newDelta(Empty, true), newDelta(Empty, false)
	replayBoth(t, bulk, plain, recs)
	im := applyBoth(t, bulk, plain, Provenance{Offset: 1})
	if !slices.Equal(imageLines(im), imageLines(plain.Base())) {
		t.Fatal("printed images differ")
	}
	for tp := range im.Topics() {
		tp.parts.each(func(Partition) bool { return true })
		var leaves func(n *pnode)
		leaves = func(n *pnode) {
			for _, k := range n.kids {
				leaves(k)
			}
			if n.kids == nil && cap(n.parts) != len(n.parts) {
				t.Errorf("%s: a leaf of %d slots holds %d", tp.Name(), cap(n.parts), len(n.parts))
			}
			if len(n.chunks) > len(n.parts) {
				t.Errorf("%s: a leaf of %d slots has a table of %d chunks", tp.Name(), len(n.parts), len(n.chunks))
			}
		}
		leaves(tp.parts.root)
	}
}

// TestBulkRandom replays random records on a few topics (partitions in and out of
// order, repeated, invalid, for unknown topics; topics recreated and removed;
// transactions committed and aborted) into a bulk and a plain delta side by side. The
// plain one records every topic it edits even while its base holds none, so the
// Changes of a delta that does not (touched.created: a rebuild's) are checked against
// it, also across transactions, Applies inside them and images emptied again.
func TestBulkRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := []UUID{{1}, {2}, {3}}
	for round := range 300 {
		bulk, plain := newDelta(Empty, true), newDelta(Empty, false)
		plain.recordAll, plain.touched.created = true, false
		next := map[UUID]int32{}
		for range 200 {
			id := ids[rng.IntN(len(ids))]
			var r metadata.Record
			switch k := rng.IntN(20); {
			case k < 2:
				r = &metadata.TopicRecord{TopicID: id, Name: fmt.Sprintf("t%d", id[0]+byte(rng.IntN(2)))}
				next[id] = 0
			case k < 14:
				p := next[id]
				switch rng.IntN(8) {
				case 0:
					p = rng.Int32N(40) - 1
				case 1:
					p--
				default:
					next[id]++
				}
				reps := []int32{rng.Int32N(5), rng.Int32N(5)}
				pr := &metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: reps, ISR: reps[:1], Leader: reps[0],
					LeaderEpoch: rng.Int32N(3), LeaderRecoveryState: int8(rng.IntN(5) / 4)}
				if rng.IntN(3) == 0 {
					pr.Directories = []UUID{{byte(rng.IntN(2))}, {9}}
				}
				if rng.IntN(10) == 0 {
					pr.EligibleLeaderReplicas = []int32{4}
				}
				if rng.IntN(30) == 0 {
					pr.LeaderRecoveryState = 7 // invalid
				}
				r = pr
			case k < 16:
				ch := metadata.NewPartitionChangeRecord(id, rng.Int32N(10))
				ch.Leader = rng.Int32N(5)
				r = ch
			case k < 17:
				r = &metadata.RemoveTopicRecord{TopicID: id}
			case k < 18:
				r = []metadata.Record{&metadata.BeginTransactionRecord{}, &metadata.EndTransactionRecord{}, &metadata.AbortTransactionRecord{}}[rng.IntN(3)]
			case k < 19:
				r = &metadata.ClearElrRecord{}
			default:
				r = nil // Apply
			}
			if r == nil {
				applyBoth(t, bulk, plain, Provenance{Offset: int64(round)})
				continue
			}
			replayBoth(t, bulk, plain, []metadata.Record{r})
		}
		applyBoth(t, bulk, plain, Provenance{Offset: int64(round)})
	}
}

// TestBulkKeepsBaseImages checks that an image published while a later delta fills a
// topic in bulk never changes.
func TestBulkKeepsBaseImages(t *testing.T) {
	d := NewDelta(Empty)
	id := UUID{7}
	d.Replay(&metadata.TopicRecord{TopicID: id, Name: "a"})
	for p := range int32(40) {
		d.Replay(&metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: []int32{p}})
	}
	first, _ := d.Apply(Provenance{Offset: 1})
	before := strings.Join(imageLines(first), "\n")
	d.Replay(&metadata.PartitionRecord{TopicID: id, PartitionID: 40, Replicas: []int32{1}})
	d.Replay(&metadata.PartitionRecord{TopicID: id, PartitionID: 3, Replicas: []int32{9}})
	second, ch := d.Apply(Provenance{Offset: 2})
	if after := strings.Join(imageLines(first), "\n"); after != before {
		t.Fatalf("published image changed:\n%s\n---\n%s", before, after)
	}
	if second.NumPartitions() != 41 || len(ch.Changed) != 1 || !slices.Equal(ch.Changed[0].Changed, []int32{3, 40}) {
		t.Fatalf("second image: %d partitions, changes %s", second.NumPartitions(), ch)
	}
}

// TestPackedListsRoundTrip: every list of a partition, of each length from 0 to 7, and
// its directories come back as replayed, on the bulk path and the other (packList and
// copyDirectories move short lists without copy).
func TestPackedListsRoundTrip(t *testing.T) {
	list := func(n, base int) []int32 {
		l := make([]int32, n)
		for i := range l {
			l[i] = int32(base + i)
		}
		return l
	}
	for _, bulk := range []bool{true, false} {
		id := UUID{7}
		d := newDelta(Empty, bulk)
		if err := d.Replay(&metadata.TopicRecord{TopicID: id, Name: "t"}); err != nil {
			t.Fatal(err)
		}
		var want []*metadata.PartitionRecord
		for p := range int32(64) {
			n := int(p % 8)
			r := &metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: list(n, 100), ISR: list(int(p/8)%(n+1), 200),
				RemovingReplicas: list((n+1)%8, 300), AddingReplicas: list((n+2)%8, 400),
				EligibleLeaderReplicas: list((n+3)%8, 500), LastKnownELR: list((n+5)%8, 600)}
			if p%3 != 0 {
				for i := range n {
					r.Directories = append(r.Directories, UUID{byte(p), byte(i), 15: byte(n)})
				}
			}
			if err := d.Replay(r); err != nil {
				t.Fatal(err)
			}
			want = append(want, r)
		}
		im, _ := d.Apply(Provenance{})
		tp, _ := im.Topic(id)
		for _, r := range want {
			p, ok := tp.Partition(r.PartitionID)
			dirs := r.Directories
			if dirs == nil {
				dirs = make([]UUID, len(r.Replicas))
			}
			if !ok || !slices.Equal(p.Replicas(), r.Replicas) || !slices.Equal(p.ISR(), r.ISR) ||
				!slices.Equal(p.RemovingReplicas(), r.RemovingReplicas) || !slices.Equal(p.AddingReplicas(), r.AddingReplicas) ||
				!slices.Equal(p.ELR(), r.EligibleLeaderReplicas) || !slices.Equal(p.LastKnownELR(), r.LastKnownELR) ||
				!slices.Equal(p.Directories(), dirs) {
				t.Fatalf("bulk %v, partition %d: replicas %v isr %v removing %v adding %v elr %v lkelr %v dirs %v, want %+v",
					bulk, r.PartitionID, p.Replicas(), p.ISR(), p.RemovingReplicas(), p.AddingReplicas(), p.ELR(), p.LastKnownELR(), p.Directories(), r)
			}
		}
	}
}
