package image

import "unsafe"

// Leaf is a run of up to 32 consecutive partition slots of a topic, as its trie
// stores them: what a topic hash reads, without a call or a trie walk per partition
// (hashcache). It shares the image's memory: do not modify what it returns.
type Leaf struct {
	parts []partition
	// chunks is the first entry of the leaf's chunk table (pnode.chunks): a slot
	// with lists always has its chunk in the table, so the entry is read without a
	// bounds check, and Leaf stays four words, which the compiler keeps in
	// registers in the hashing loop (two slices would be copied through memory at
	// every call).
	chunks **int32
}

// LeafSize is the number of partition ids a Leaf covers.
const LeafSize = 1 << hbits

// Leaf returns the slots of partitions LeafSize*k … LeafSize*k+LeafSize-1. Slots
// past Len, and slots whose partition the topic does not have, have no replicas.
func (t *Topic) Leaf(k int) Leaf {
	v := &t.parts
	if k < 0 || v.root == nil || uint64(k)<<hbits>>v.shift >= LeafSize {
		return Leaf{}
	}
	n := v.root
	for s := v.shift; s > 0; s -= hbits {
		i := (k << hbits >> s) & (LeafSize - 1)
		if i >= len(n.kids) || n.kids[i] == nil {
			return Leaf{}
		}
		n = n.kids[i]
	}
	return Leaf{n.parts, unsafe.SliceData(n.chunks)}
}

// Len is the number of slots held, at most LeafSize.
func (l Leaf) Len() int { return len(l.parts) }

// Replicas returns the replicas of the partition in slot j (j < Len), what
// Partition(id).Replicas() returns, or nil when the topic has no such partition.
func (l Leaf) Replicas(j int) []int32 {
	p := &l.parts[j]
	if p.n[listReplicas] == 0 { // as in a slot that holds no partition: all zeros
		return nil
	}
	return unsafe.Slice(l.data(p), p.n[listReplicas])
}

// data is the packed lists of p, a slot with lists: what pnode.data gives.
func (l Leaf) data(p *partition) *int32 {
	chunk := *(**int32)(unsafe.Add(unsafe.Pointer(l.chunks), unsafe.Sizeof(l.chunks)*uintptr(p.chunk)))
	return (*int32)(unsafe.Add(unsafe.Pointer(chunk), 4*uintptr(p.off)))
}

// Replicas3 returns the replicas of the partition in slot j (j < Len) when it has
// three of them, and nil when it has another number or the topic has no such
// partition. It reads the slot in place, without building a slice: the replication
// factor of most partitions, hashed a slot at a time. Do not modify what it returns.
func (l Leaf) Replicas3(j int) *[3]int32 {
	p := &l.parts[j]
	if p.n[listReplicas] != 3 { // a slot that holds no partition is all zeros
		return nil
	}
	return (*[3]int32)(unsafe.Pointer(l.data(p)))
}
