package image

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
	edit  *edit
	kids  []*pnode    // interior nodes
	parts []partition // leaves
}

func (v *pvec) get(i int32) (partition, bool) {
	if i < 0 || v.root == nil || uint64(i)>>v.shift >= 32 {
		return partition{}, false
	}
	n := v.root
	for s := v.shift; s > 0; s -= hbits {
		k := int(uint32(i)>>s) & 31
		if k >= len(n.kids) || n.kids[k] == nil {
			return partition{}, false
		}
		n = n.kids[k]
	}
	k := int(i) & 31
	if k >= len(n.parts) || !n.parts[k].present() {
		return partition{}, false
	}
	return n.parts[k], true
}

// set stores p at p.id (>= 0) and reports whether the slot was empty.
func (v *pvec) set(e *edit, p partition) bool {
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
	v.root, added = v.root.set(e, v.shift, i, p)
	if added {
		v.count++
	}
	return added
}

// slot returns the partition at i, which must be present (get reports it), in a leaf
// that e may change, copying the nodes on its path that e does not own: one walk of
// the trie where set walks it again after a get.
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
	}
	return c
}

func (n *pnode) set(e *edit, shift uint, i uint32, p partition) (*pnode, bool) {
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
	kid, added := kid.set(e, shift-hbits, i, p)
	c.kids[k] = kid
	return c, added
}

// each calls f for the partitions in id order until f returns false.
func (v *pvec) each(f func(*partition) bool) bool { return v.root.each(f) }

func (n *pnode) each(f func(*partition) bool) bool {
	if n == nil {
		return true
	}
	for _, k := range n.kids {
		if !k.each(f) {
			return false
		}
	}
	for i := range n.parts {
		if n.parts[i].present() && !f(&n.parts[i]) {
			return false
		}
	}
	return true
}
