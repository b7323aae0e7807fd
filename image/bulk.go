package image

import "github.com/kraftwatch/kraftwatch/internal/metadata"

// bulk buffers the partitions of a topic created in the current delta while they
// arrive in id order 0, 1, 2, ..., as Kafka writes them after the TopicRecord (in a
// snapshot, and for a new topic in the log), and stores them in the topic in one go:
// one exactly sized array for all their replica lists and one for their slots, with
// the radix trie built bottom up. The image is the same as replaying them one by one
// (TestBulkMatchesReplay); it costs a fraction of the allocations and copying.
//
// Any other record, and Apply, first flushes the buffered partitions into the topic,
// so nothing else ever sees a topic with partitions pending.
type bulk struct {
	t     *Topic      // the topic being filled; nil when nothing is buffered
	parts []partition // buffered partitions; data is nil, lists live in ints
	ints  []int32     // the packed lists of parts, in order
}

// bulkMatches reports whether rec is the next partition of the buffered topic.
func (d *Delta) bulkMatches(rec metadata.Record) bool {
	r, ok := rec.(*metadata.PartitionRecord)
	return ok && r.TopicID == d.bulk.t.id && r.PartitionID == int32(len(d.bulk.parts))
}

// bulkStart reports whether partition id of t (as returned by d.topic) can start a
// bulk load: t was created by this delta, holds no partitions, and id is 0.
func (d *Delta) bulkStart(t *Topic, id int32) bool {
	return !d.noBulk && id == 0 && !d.lastInBase && t.parts.root == nil && t.edit == d.edit
}

// bulkAdd buffers r, the next partition of d.bulk.t. r has been validated.
func (d *Delta) bulkAdd(r *metadata.PartitionRecord) {
	b := &d.bulk
	p := partition{id: r.PartitionID, leader: r.Leader, leaderEpoch: r.LeaderEpoch, partitionEpoch: r.PartitionEpoch,
		lrs: r.LeaderRecoveryState, present: true}
	lists := [listDirs][]int32{r.Replicas, r.ISR, r.RemovingReplicas, r.AddingReplicas, r.EligibleLeaderReplicas, r.LastKnownELR}
	for i, l := range lists {
		p.n[i] = uint16(len(l))
		b.ints = append(b.ints, l...)
	}
	if anyDirectory(r.Directories) {
		p.n[listDirs] = uint16(len(r.Directories))
		b.ints = appendUUIDInts(b.ints, r.Directories)
	}
	b.parts = append(b.parts, p)
}

// appendUUIDInts appends each uuid as four big-endian int32, as partition.data holds
// directories.
func appendUUIDInts(data []int32, dirs []UUID) []int32 {
	for _, u := range dirs {
		for j := range 4 {
			data = append(data, int32(uint32(u[4*j])<<24|uint32(u[4*j+1])<<16|uint32(u[4*j+2])<<8|uint32(u[4*j+3])))
		}
	}
	return data
}

// flush stores the buffered partitions in their topic and empties the buffer.
func (d *Delta) flush() {
	b := &d.bulk
	t := b.t
	if t == nil {
		return
	}
	b.t = nil
	n := len(b.parts)
	if n == 0 {
		return
	}
	data := make([]int32, len(b.ints))
	copy(data, b.ints)
	slots := make([]partition, n)
	off := 0
	for i := range b.parts {
		p := &slots[i]
		*p = b.parts[i]
		w := 0
		for l := range nLists {
			w += p.width(l)
		}
		p.data = data[off : off+w : off+w]
		off += w
	}
	// Leaves of 32 slots (the last one as long as needed), then interior levels of
	// 32 kids, up to a single root: the shape pvec.set grows into.
	nodes := make([]*pnode, 0, (n+31)/32)
	for i := 0; i < n; i += 32 {
		end := min(i+32, n)
		nodes = append(nodes, &pnode{edit: d.edit, parts: slots[i:end:end]})
	}
	shift := uint(0)
	for len(nodes) > 1 {
		up := make([]*pnode, 0, (len(nodes)+31)/32)
		for i := 0; i < len(nodes); i += 32 {
			end := min(i+32, len(nodes))
			up = append(up, &pnode{edit: d.edit, kids: nodes[i:end:end]})
		}
		nodes = up
		shift += hbits
	}
	t.parts = pvec{root: nodes[0], shift: shift, count: int32(n)}
	d.cur.partitions += n
	if cap(b.parts) > maxBulkKept {
		b.parts, b.ints = nil, nil // do not keep the buffers of a huge topic
	}
	b.parts = b.parts[:0]
	b.ints = b.ints[:0]
}

// maxBulkKept bounds the buffered partitions whose buffers a Delta keeps for the
// next topic.
const maxBulkKept = 4096
