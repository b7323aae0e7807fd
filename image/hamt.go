package image

import "math/bits"

// edit marks the nodes one Delta may change in place. Every node carries the edit of
// the Delta that created it; a Delta changes a node in place only when it carries the
// Delta's current edit, and copies it otherwise. Apply and transaction savepoints move
// the Delta to a new edit, which freezes every node reachable from an Image.
type edit struct{ _ byte } // not zero-sized: distinct edits must have distinct addresses

// hmap is a persistent hash array mapped trie: an immutable map whose updates copy
// only the O(log32 n) nodes on the path to the changed key. Its zero value is empty.
type hmap[K comparable, V any] struct {
	root *hnode[K, V]
	size int
}

type hleaf[K comparable, V any] struct {
	hash uint64
	key  K
	val  V
}

// hnode is one level of the trie. Each of 32 slots (5 bits of the hash at this
// level) holds nothing, a leaf or a child; leafmap and kidmap say which, and leaves
// and kids hold them in slot order. Below the last level (shift >= 64) a node is a
// collision list: its leaves share a hash and are scanned linearly.
type hnode[K comparable, V any] struct {
	edit    *edit
	leafmap uint32
	kidmap  uint32
	leaves  []hleaf[K, V]
	kids    []*hnode[K, V]
}

const hbits = 5

func slot(h uint64, shift uint) uint32 { return 1 << ((h >> shift) & 31) }

func rank(m, bit uint32) int { return bits.OnesCount32(m & (bit - 1)) }

func (m *hmap[K, V]) Len() int { return m.size }

func (m *hmap[K, V]) get(h uint64, k K) (V, bool) {
	n := m.root
	for shift := uint(0); n != nil; shift += hbits {
		if shift >= 64 {
			for i := range n.leaves {
				if n.leaves[i].key == k {
					return n.leaves[i].val, true
				}
			}
			break
		}
		bit := slot(h, shift)
		if n.leafmap&bit != 0 {
			l := &n.leaves[rank(n.leafmap, bit)]
			if l.hash == h && l.key == k {
				return l.val, true
			}
			break
		}
		if n.kidmap&bit == 0 {
			break
		}
		n = n.kids[rank(n.kidmap, bit)]
	}
	var zero V
	return zero, false
}

// set returns the map with k bound to v; nodes carrying e are changed in place.
func (m hmap[K, V]) set(e *edit, h uint64, k K, v V) hmap[K, V] {
	root, added := m.root.set(e, 0, hleaf[K, V]{h, k, v})
	m.root = root
	if added {
		m.size++
	}
	return m
}

// del returns the map without k.
func (m hmap[K, V]) del(e *edit, h uint64, k K) hmap[K, V] {
	if m.root == nil {
		return m
	}
	root, removed := m.root.del(e, 0, h, k)
	if removed {
		m.root = root
		m.size--
	}
	return m
}

// editable returns n itself when it carries e, else a copy that does, with room for
// one more leaf (addLeaf) or kid (addKid) than n holds: a copy made to replace an
// entry, the common case when a Delta follows a log, is no larger than n.
func (n *hnode[K, V]) editable(e *edit, addLeaf, addKid bool) *hnode[K, V] {
	if n.edit == e {
		return n
	}
	c := &hnode[K, V]{edit: e, leafmap: n.leafmap, kidmap: n.kidmap}
	c.leaves = append(make([]hleaf[K, V], 0, len(n.leaves)+b2i(addLeaf)), n.leaves...)
	if len(n.kids) > 0 || addKid {
		c.kids = append(make([]*hnode[K, V], 0, len(n.kids)+b2i(addKid)), n.kids...)
	}
	return c
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (n *hnode[K, V]) set(e *edit, shift uint, l hleaf[K, V]) (*hnode[K, V], bool) {
	if n == nil {
		if shift >= 64 {
			return &hnode[K, V]{edit: e, leaves: []hleaf[K, V]{l}}, true
		}
		return &hnode[K, V]{edit: e, leafmap: slot(l.hash, shift), leaves: []hleaf[K, V]{l}}, true
	}
	if shift >= 64 {
		for i := range n.leaves {
			if n.leaves[i].key == l.key {
				c := n.editable(e, false, false)
				c.leaves[i] = l
				return c, false
			}
		}
		c := n.editable(e, true, false)
		c.leaves = append(c.leaves, l)
		return c, true
	}
	bit := slot(l.hash, shift)
	switch {
	case n.leafmap&bit != 0:
		i := rank(n.leafmap, bit)
		old := n.leaves[i]
		if old.hash == l.hash && old.key == l.key {
			c := n.editable(e, false, false)
			c.leaves[i] = l
			return c, false
		}
		// Two keys in one slot: push both one level down.
		kid := merge(e, shift+hbits, old, l)
		c := n.editable(e, false, true)
		c.leaves = append(c.leaves[:i], c.leaves[i+1:]...)
		c.leafmap &^= bit
		j := rank(c.kidmap, bit)
		c.kids = append(c.kids, nil)
		copy(c.kids[j+1:], c.kids[j:])
		c.kids[j] = kid
		c.kidmap |= bit
		return c, true
	case n.kidmap&bit != 0:
		j := rank(n.kidmap, bit)
		kid, added := n.kids[j].set(e, shift+hbits, l)
		if kid == n.kids[j] {
			return n, added
		}
		c := n.editable(e, false, false)
		c.kids[j] = kid
		return c, added
	default:
		c := n.editable(e, true, false)
		i := rank(c.leafmap, bit)
		c.leaves = append(c.leaves, hleaf[K, V]{})
		copy(c.leaves[i+1:], c.leaves[i:])
		c.leaves[i] = l
		c.leafmap |= bit
		return c, true
	}
}

// merge builds the subtree at shift holding two leaves with distinct keys.
func merge[K comparable, V any](e *edit, shift uint, a, b hleaf[K, V]) *hnode[K, V] {
	if shift >= 64 {
		return &hnode[K, V]{edit: e, leaves: []hleaf[K, V]{a, b}}
	}
	ba, bb := slot(a.hash, shift), slot(b.hash, shift)
	if ba == bb {
		return &hnode[K, V]{edit: e, kidmap: ba, kids: []*hnode[K, V]{merge(e, shift+hbits, a, b)}}
	}
	if ba > bb {
		a, b = b, a
	}
	return &hnode[K, V]{edit: e, leafmap: ba | bb, leaves: []hleaf[K, V]{a, b}}
}

// del removes k below n; it returns nil when n becomes empty.
func (n *hnode[K, V]) del(e *edit, shift uint, h uint64, k K) (*hnode[K, V], bool) {
	if shift >= 64 {
		for i := range n.leaves {
			if n.leaves[i].key == k {
				if len(n.leaves) == 1 {
					return nil, true
				}
				c := n.editable(e, false, false)
				c.leaves = append(c.leaves[:i], c.leaves[i+1:]...)
				return c, true
			}
		}
		return n, false
	}
	bit := slot(h, shift)
	switch {
	case n.leafmap&bit != 0:
		i := rank(n.leafmap, bit)
		if l := n.leaves[i]; l.hash != h || l.key != k {
			return n, false
		}
		if len(n.leaves) == 1 && len(n.kids) == 0 {
			return nil, true
		}
		c := n.editable(e, false, false)
		c.leaves = append(c.leaves[:i], c.leaves[i+1:]...)
		c.leafmap &^= bit
		return c, true
	case n.kidmap&bit != 0:
		j := rank(n.kidmap, bit)
		kid, removed := n.kids[j].del(e, shift+hbits, h, k)
		if !removed {
			return n, false
		}
		c := n.editable(e, true, false)
		switch {
		case kid == nil:
			c.kids = append(c.kids[:j], c.kids[j+1:]...)
			c.kidmap &^= bit
			if len(c.kids) == 0 && len(c.leaves) == 0 {
				return nil, true
			}
		case len(kid.kids) == 0 && len(kid.leaves) == 1:
			// A lone leaf moves up so the trie stays as shallow as a fresh one.
			c.kids = append(c.kids[:j], c.kids[j+1:]...)
			c.kidmap &^= bit
			i := rank(c.leafmap, bit)
			c.leaves = append(c.leaves, hleaf[K, V]{})
			copy(c.leaves[i+1:], c.leaves[i:])
			c.leaves[i] = kid.leaves[0]
			c.leafmap |= bit
		default:
			c.kids[j] = kid
		}
		return c, true
	}
	return n, false
}

// each calls f for every entry until f returns false; it reports whether it finished.
func (n *hnode[K, V]) each(f func(K, V) bool) bool {
	if n == nil {
		return true
	}
	for i := range n.leaves {
		if !f(n.leaves[i].key, n.leaves[i].val) {
			return false
		}
	}
	for _, k := range n.kids {
		if !k.each(f) {
			return false
		}
	}
	return true
}

func (m *hmap[K, V]) each(f func(K, V) bool) { m.root.each(f) }
