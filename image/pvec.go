package image

import (
	"math/bits"
	"unsafe"
)

// pvec is a persistent sparse vector of partitions indexed by partition id: a radix
// trie of 32-way nodes whose leaves hold up to 32 partitions. A leaf's slice is only
// as long as its highest present slot, so a topic with 3 partitions costs one node
// and three partitions. Updates copy the O(log32 n) nodes on one path.
type pvec struct {
	root  *pnode
	shift uint // 0 when the root is a leaf
	count int32
}

type pnode struct {
	edit *edit
	kids []*pnode // interior nodes
	// parts are a leaf's slots; chunks is its table of the arrays its slots' lists
	// are carved from (partition.chunk indexes it): the leaf's only pointers, one per
	// chunk, not one per slot. A table is shared by the versions of a leaf and never
	// changed once stored (refer builds a new one), and holds at most one chunk per
	// slot.
	parts  []partition
	chunks []*int32
}

// listRef is where a partition's packed lists are stored: off int32s into the array
// that base points at (a chunk, or an array of their own); base is nil when every
// list is empty.
type listRef struct {
	base *int32
	off  uint16
}

// at is slot k of leaf n with its lists.
func (n *pnode) at(k int) Partition {
	p := n.parts[k]
	return Partition{p: p, data: n.data(&p)}
}

// data is the packed lists of p, a slot of leaf n, nil when they are all empty.
func (n *pnode) data(p *partition) *int32 {
	if !p.hasLists() {
		return nil
	}
	return (*int32)(unsafe.Add(unsafe.Pointer(n.chunks[p.chunk]), 4*uintptr(p.off)))
}

// refer points p, which goes to slot k of leaf n (a leaf the caller's edit owns), at
// ref: it sets p.chunk to the index of ref's array in n's table, giving n a new table
// when the array is not in it yet. The new table keeps only the chunks the other
// slots use, renumbering them, so a table never holds more than one chunk per slot
// nor one that no slot needs.
func (n *pnode) refer(k int, p *partition, ref listRef) {
	p.chunk, p.off = 0, ref.off
	if ref.base == nil {
		return
	}
	for i, c := range n.chunks {
		if c == ref.base {
			p.chunk = uint8(i)
			return
		}
	}
	var used uint32 // a table holds at most LeafSize chunks
	for j := range n.parts {
		if q := &n.parts[j]; j != k && q.hasLists() {
			used |= 1 << q.chunk
		}
	}
	var renum [LeafSize]uint8
	t := make([]*int32, 0, bits.OnesCount32(used)+1)
	for i, c := range n.chunks {
		if used&(1<<i) != 0 {
			renum[i] = uint8(len(t))
			t = append(t, c)
		}
	}
	for j := range n.parts {
		if q := &n.parts[j]; j != k && q.hasLists() {
			q.chunk = renum[q.chunk]
		}
	}
	p.chunk = uint8(len(t))
	n.chunks = append(t, ref.base)
}

func (v *pvec) get(i int32) (Partition, bool) {
	n, k := v.find(i)
	if n == nil {
		return Partition{}, false
	}
	return n.at(k), true
}

// find returns the leaf holding partition i and its slot there, or nil when there
// is no partition i.
func (v *pvec) find(i int32) (*pnode, int) {
	if i < 0 || v.root == nil || uint64(i)>>v.shift >= 32 {
		return nil, 0
	}
	n := v.root
	for s := v.shift; s > 0; s -= hbits {
		k := int(uint32(i)>>s) & 31
		if k >= len(n.kids) || n.kids[k] == nil {
			return nil, 0
		}
		n = n.kids[k]
	}
	k := int(i) & 31
	if k >= len(n.parts) || !n.parts[k].present() {
		return nil, 0
	}
	return n, k
}

// set stores p at p.id (>= 0), its lists at ref, and reports whether the slot was
// empty.
func (v *pvec) set(e *edit, p partition, ref listRef) bool {
	if p.state == 0 {
		p.state = stateOf(0)
	}
	i := uint32(p.id)
	if v.root == nil {
		v.root = &pnode{edit: e}
		v.shift = 0
	}
	for uint64(i)>>v.shift >= 32 {
		v.root = &pnode{edit: e, kids: []*pnode{v.root}}
		v.shift += hbits
	}
	var added bool
	v.root, added = v.root.set(e, v.shift, i, p, ref)
	if added {
		v.count++
	}
	return added
}

// slot returns the partition at i, which must be present (get reports it), in a leaf
// that e may change, copying the nodes on its path that e does not own: one walk of
// the trie where set walks it again after a get. The slot's chunk and offset must
// stay as they are (the leaf's table is the one get read them against): it is for
// a change that keeps the lists.
func (v *pvec) slot(e *edit, i int32) *partition {
	v.root = v.root.editable(e)
	n := v.root
	for s := v.shift; s > 0; s -= hbits {
		k := int(uint32(i)>>s) & 31
		n.kids[k] = n.kids[k].editable(e)
		n = n.kids[k]
	}
	return &n.parts[int(i)&31]
}

func (n *pnode) editable(e *edit) *pnode {
	if n.edit == e {
		return n
	}
	c := &pnode{edit: e}
	if n.kids != nil {
		c.kids = append([]*pnode(nil), n.kids...)
	}
	if n.parts != nil {
		c.parts = append([]partition(nil), n.parts...)
		c.chunks = n.chunks
	}
	return c
}

func (n *pnode) set(e *edit, shift uint, i uint32, p partition, ref listRef) (*pnode, bool) {
	c := n.editable(e)
	if shift == 0 {
		k := int(i & 31)
		if k >= len(c.parts) {
			if k >= cap(c.parts) {
				// Grow by doubling, capped at the 32 slots of a leaf.
				grown := make([]partition, len(c.parts), min(32, max(k+1, 2*cap(c.parts))))
				copy(grown, c.parts)
				c.parts = grown
			}
			c.parts = c.parts[:k+1]
		}
		added := !c.parts[k].present()
		c.refer(k, &p, ref)
		c.parts[k] = p
		return c, added
	}
	k := int(i>>shift) & 31
	if k >= len(c.kids) {
		if k >= cap(c.kids) {
			grown := make([]*pnode, len(c.kids), min(32, max(k+1, 2*cap(c.kids))))
			copy(grown, c.kids)
			c.kids = grown
		}
		c.kids = c.kids[:k+1]
	}
	kid := c.kids[k]
	if kid == nil {
		kid = &pnode{edit: e}
	}
	kid, added := kid.set(e, shift-hbits, i, p, ref)
	c.kids[k] = kid
	return c, added
}

// each calls f for the partitions in id order until f returns false.
func (v *pvec) each(f func(Partition) bool) bool { return v.root.each(f) }

func (n *pnode) each(f func(Partition) bool) bool {
	if n == nil {
		return true
	}
	for _, k := range n.kids {
		if !k.each(f) {
			return false
		}
	}
	for i := range n.parts {
		if n.parts[i].present() && !f(n.at(i)) {
			return false
		}
	}
	return true
}
