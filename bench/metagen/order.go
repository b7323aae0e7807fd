package metagen

import (
	"iter"
	"math/rand/v2"
)

// change is one leader change of WriteSegment: partition k (t*Partitions+p) gets
// leader; endsBatch closes the batch after it.
type change struct {
	k         int
	leader    int32
	endsBatch bool
}

// changes yields the first n leader changes of WriteSegment in c.Order.
func (c *Config) changes(n int) iter.Seq[change] {
	return func(yield func(change) bool) {
		if n <= 0 || c.NumPartitions() == 0 {
			return
		}
		if c.Order == OrderRolling {
			c.rolling(n, yield)
		} else {
			c.sequential(n, yield)
		}
	}
}

func (c *Config) sequential(n int, yield func(change) bool) {
	np := int(c.NumPartitions())
	var replicas []int32
	for i := range n {
		k := i % np
		replicas = c.Replicas(replicas[:0], k/c.Partitions, k%c.Partitions)
		if !yield(change{k, replicas[(i/np+1)%len(replicas)], (i+1)%SegmentBatchRecords == 0}) {
			return
		}
	}
}

// rolling restarts broker after broker until n changes are yielded (see
// OrderRolling). Broker index bi is the first replica of partition p of topic t when
// (t+p) mod Brokers = bi (Replicas).
func (c *Config) rolling(n int, yield func(change) bool) {
	rng := rand.New(rand.NewPCG(c.Seed, kindOrder))
	topics := rng.Perm(c.Topics)
	var led []int
	var replicas []int32
	emit := func(batch, replica int) bool {
		for j, k := range led {
			replicas = c.Replicas(replicas[:0], k/c.Partitions, k%c.Partitions)
			if !yield(change{k, replicas[replica], (j+1)%batch == 0 || j == len(led)-1}) {
				return false
			}
			if n--; n == 0 {
				return false
			}
		}
		return true
	}
	for {
		for bi := range c.Brokers {
			led = led[:0]
			for _, t := range topics {
				for p := ((bi-t)%c.Brokers + c.Brokers) % c.Brokers; p < c.Partitions; p += c.Brokers {
					led = append(led, t*c.Partitions+p)
				}
			}
			if !emit(ShutdownBatchRecords, 1) {
				return
			}
			rng.Shuffle(len(led), func(a, b int) { led[a], led[b] = led[b], led[a] })
			if !emit(ElectionBatchRecords, 0) {
				return
			}
		}
	}
}

// LeadersAfter is the leader of every partition (index t*Partitions+p) after the
// first changes changes of WriteSegment, and how many of them moved it (each raised
// its leader epoch and partition epoch by one).
func (c *Config) LeadersAfter(changes int) (leaders, moves []int32) {
	np := int(c.NumPartitions())
	leaders, moves = make([]int32, np), make([]int32, np)
	var replicas []int32
	for k := range np {
		replicas = c.Replicas(replicas[:0], k/c.Partitions, k%c.Partitions)
		leaders[k] = replicas[0]
	}
	for ch := range c.changes(changes) {
		leaders[ch.k] = ch.leader
		moves[ch.k]++
	}
	return leaders, moves
}
