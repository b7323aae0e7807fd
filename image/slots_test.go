package image

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// TestListChangesKeepImages loads topics in bulk, then applies rounds of random
// changes: ISR and replica changes (new lists, often in chunks a leaf's table lacks),
// leader changes (lists kept), new partitions and ClearElrRecords. Every image
// published is kept and, at the end, still shows what a model of the records says it
// held when it was published; every leaf's chunk table stays within one chunk per
// slot.
func TestListChangesKeepImages(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type model struct {
		leader      int32
		replicas    []int32
		isr, elr    []int32
		hasDirs     bool
		leaderEpoch int32
	}
	topics := []UUID{{1}, {2}, {3}}
	parts := map[UUID][]model{}
	d := NewDelta(Empty)
	randList := func(n int) []int32 {
		l := make([]int32, n)
		for i := range l {
			l[i] = rng.Int32N(40)
		}
		return l
	}
	for i, id := range topics {
		d.Replay(&metadata.TopicRecord{TopicID: id, Name: fmt.Sprint("t", i)})
		for p := range int32(70 + 40*i) {
			m := model{leader: p % 7, replicas: randList(3), isr: randList(2), hasDirs: p%3 == 0}
			pr := &metadata.PartitionRecord{TopicID: id, PartitionID: p, Leader: m.leader, Replicas: m.replicas, ISR: m.isr}
			if m.hasDirs {
				pr.Directories = []UUID{{1}, {2}, {3}}
			}
			mustReplay(t, d, pr)
			parts[id] = append(parts[id], m)
		}
	}
	type published struct {
		im    *Image
		lines []string
		model map[UUID][]model
	}
	var kept []published
	snapshot := func() map[UUID][]model {
		c := map[UUID][]model{}
		for id, ms := range parts {
			c[id] = slices.Clone(ms)
		}
		return c
	}
	apply := func(off int64) {
		im, _ := d.Apply(Provenance{Offset: off})
		kept = append(kept, published{im, imageLines(im), snapshot()})
	}
	apply(0)
	for round := range 60 {
		for range 1 + rng.IntN(80) {
			id := topics[rng.IntN(len(topics))]
			p := rng.Int32N(int32(len(parts[id])))
			m := &parts[id][p]
			ch := metadata.NewPartitionChangeRecord(id, p)
			switch k := rng.IntN(10); {
			case k < 4: // a leader change: the lists stay
				ch.Leader = rng.Int32N(7)
				m.leader = ch.Leader
				m.leaderEpoch++
			case k < 7:
				ch.ISR = randList(1 + rng.IntN(3))
				m.isr = ch.ISR
			case k < 8:
				ch.Replicas = randList(3)
				// The brokers that stay keep their directories (movedDirectories).
				m.hasDirs = m.hasDirs && slices.ContainsFunc(ch.Replicas, func(b int32) bool { return slices.Contains(m.replicas, b) })
				m.replicas = ch.Replicas
			case k < 9:
				ch.EligibleLeaderReplicas = randList(1)
				m.elr = ch.EligibleLeaderReplicas
			default:
				if rng.IntN(4) == 0 {
					mustReplay(t, d, &metadata.ClearElrRecord{})
					for _, ms := range parts {
						for j := range ms {
							ms[j].elr = nil
						}
					}
					continue
				}
				n := int32(len(parts[id]))
				nm := model{leader: 1, replicas: randList(2), isr: randList(1)}
				mustReplay(t, d, &metadata.PartitionRecord{TopicID: id, PartitionID: n, Leader: 1, Replicas: nm.replicas, ISR: nm.isr})
				parts[id] = append(parts[id], nm)
				continue
			}
			mustReplay(t, d, ch)
		}
		apply(int64(round + 1))
	}
	for i, k := range kept {
		if got := imageLines(k.im); !slices.Equal(got, k.lines) {
			t.Fatalf("image %d changed after it was published:\n%s\n---\n%s", i, strings.Join(k.lines, "\n"), strings.Join(got, "\n"))
		}
		for id, ms := range k.model {
			tp, _ := k.im.Topic(id)
			if tp.NumPartitions() != len(ms) {
				t.Fatalf("image %d topic %s: %d partitions, want %d", i, tp.Name(), tp.NumPartitions(), len(ms))
			}
			for j, m := range ms {
				p, _ := tp.Partition(int32(j))
				if p.Leader() != m.leader || p.LeaderEpoch() != m.leaderEpoch || !slices.Equal(p.Replicas(), m.replicas) ||
					!slices.Equal(p.ISR(), m.isr) || !slices.Equal(p.ELR(), m.elr) || p.HasDirectories() != m.hasDirs {
					t.Fatalf("image %d topic %s partition %d: leader %d epoch %d replicas %v isr %v elr %v dirs %v, want %+v",
						i, tp.Name(), j, p.Leader(), p.LeaderEpoch(), p.Replicas(), p.ISR(), p.ELR(), p.HasDirectories(), m)
				}
			}
			checkTables(t, fmt.Sprintf("image %d topic %s", i, tp.Name()), tp.parts.root)
		}
	}
}

// checkTables fails t when a leaf under n has more chunks in its table than slots:
// pnode.refer keeps at most one chunk per slot.
func checkTables(t *testing.T, where string, n *pnode) {
	t.Helper()
	if n == nil {
		return
	}
	for _, c := range n.kids {
		checkTables(t, where, c)
	}
	if len(n.chunks) > len(n.parts) {
		t.Fatalf("%s: a leaf of %d slots has a table of %d chunks", where, len(n.parts), len(n.chunks))
	}
}

func mustReplay(t *testing.T, d *Delta, r metadata.Record) {
	t.Helper()
	if err := d.Replay(r); err != nil {
		t.Fatalf("%s: %v", r.Type(), err)
	}
}
