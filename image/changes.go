package image

import (
	"fmt"
	"slices"
	"strings"
)

// Changes is what one Apply changed, relative to the image before it. Lists are
// sorted (topics by name then id, brokers by id). A topic deleted and created again
// with the same name is one Deleted entry and one Created entry (with PreviousID).
type Changes struct {
	Created         []TopicRef
	Deleted         []TopicRef
	Changed         []TopicChange
	Brokers         []BrokerChange
	FeaturesChanged bool
}

// TopicRef names a created or deleted topic.
type TopicRef struct {
	ID   UUID
	Name string
	// PreviousID is set on a created topic whose name belonged to another topic id
	// in the old image: the topic was deleted and created again.
	PreviousID UUID
}

// TopicChange is a topic present before and after whose partitions changed.
type TopicChange struct {
	ID                        UUID
	Name                      string
	OldPartitions, Partitions int
	// Changed lists the ids of the partitions that were added or changed.
	Changed []int32
	// ReplicasChanged is true when a partition was added or a partition's replica
	// list changed (leader, ISR and epoch changes alone leave it false).
	ReplicasChanged bool
}

// PartitionsAdded is the number of partitions the topic gained.
func (c *TopicChange) PartitionsAdded() int { return c.Partitions - c.OldPartitions }

// BrokerChange is a broker whose registration changed. Old and New are nil when the
// broker was not registered before or after.
type BrokerChange struct {
	ID           int32
	Old, New     *Broker
	Registered   bool // not registered before
	Unregistered bool // not registered after
	Reregistered bool // registered before and after, with a new incarnation id
	RackChanged  bool // registered before and after, with a different rack
	FencedChange bool // registered before and after, fenced state flipped
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool {
	return len(c.Created) == 0 && len(c.Deleted) == 0 && len(c.Changed) == 0 && len(c.Brokers) == 0 && !c.FeaturesChanged
}

// String renders the changes one per line, for logs and golden files.
func (c *Changes) String() string {
	var b strings.Builder
	for _, t := range c.Deleted {
		fmt.Fprintf(&b, "deleted topic %s %s\n", t.Name, t.ID)
	}
	for _, t := range c.Created {
		fmt.Fprintf(&b, "created topic %s %s", t.Name, t.ID)
		if t.PreviousID != (UUID{}) {
			fmt.Fprintf(&b, " (recreated, was %s)", t.PreviousID)
		}
		b.WriteByte('\n')
	}
	for _, t := range c.Changed {
		fmt.Fprintf(&b, "changed topic %s %s partitions %d->%d changed %v replicas-changed=%v\n",
			t.Name, t.ID, t.OldPartitions, t.Partitions, t.Changed, t.ReplicasChanged)
	}
	for _, bc := range c.Brokers {
		var what []string
		for _, f := range []struct {
			on   bool
			name string
		}{{bc.Registered, "registered"}, {bc.Unregistered, "unregistered"}, {bc.Reregistered, "reregistered"},
			{bc.RackChanged, "rack-changed"}, {bc.FencedChange, "fenced-changed"}} {
			if f.on {
				what = append(what, f.name)
			}
		}
		if len(what) == 0 {
			what = append(what, "changed")
		}
		fmt.Fprintf(&b, "broker %d %s\n", bc.ID, strings.Join(what, " "))
	}
	if c.FeaturesChanged {
		b.WriteString("features changed\n")
	}
	return b.String()
}

// changes compares the touched parts of two images.
func changes(old, cur *Image, t *touched) *Changes {
	c := &Changes{FeaturesChanged: t.features && !mapsEqual(old.s.features, cur.s.features)}
	// At least this many topics were created: a rebuild's Created (every topic) is
	// made at its size, not grown by append to several times it at the peak of a
	// load (TestCreatedSizedOnce; bench/burst.sh's at-load peak RSS target guards it).
	if n := cur.NumTopics() - old.NumTopics(); n > 0 {
		c.Created = make([]TopicRef, 0, n)
	}
	t.leaderIDs()
	if t.created { // old holds no topics, and t records none
		for nt := range cur.Topics() {
			c.Created = append(c.Created, created(old, nt))
		}
	}
	for id, e := range t.topics {
		h := hashUUID(id)
		ot, inOld := old.s.topics.get(h, id)
		nt, inNew := cur.s.topics.get(h, id)
		switch {
		case !inOld && !inNew:
		case !inOld:
			c.Created = append(c.Created, created(old, nt))
		case !inNew:
			c.Deleted = append(c.Deleted, TopicRef{ID: id, Name: ot.name})
		case ot != nt && !e.diff:
			// Leader changes alone: the partitions they changed, without reading
			// the leaves (a burst's would be cache misses by now).
			if len(e.ids) > 0 {
				c.Changed = append(c.Changed, leaderChanges(nt, e.ids))
			}
		case ot != nt:
			_, all := t.replaced[id]
			if tc, ok := compareTopic(ot, nt, all); ok {
				c.Changed = append(c.Changed, tc)
			}
		}
	}
	for id := range t.brokers {
		h := hashInt32(id)
		ob, _ := old.s.brokers.get(h, id)
		nb, _ := cur.s.brokers.get(h, id)
		if bc, ok := compareBroker(id, ob, nb); ok {
			c.Brokers = append(c.Brokers, bc)
		}
	}
	c.sort()
	return c
}

// leaderChanges is the change of topic nt whose partitions ids (in the order
// replayed, maybe repeated) had only leader changes since the base image. ids is
// the topic's own (touched.leaderIDs): sorted in place.
func leaderChanges(nt *Topic, ids []int32) TopicChange {
	n := nt.NumPartitions()
	tc := TopicChange{ID: nt.id, Name: nt.name, OldPartitions: n, Partitions: n}
	if !slices.IsSorted(ids) {
		slices.Sort(ids)
	}
	tc.Changed = slices.Clip(slices.Compact(ids))
	return tc
}

func created(old *Image, t *Topic) TopicRef {
	ref := TopicRef{ID: t.id, Name: t.name}
	if prev, ok := old.s.names.get(hashString(t.name), t.name); ok && prev != t.id {
		ref.PreviousID = prev
	}
	return ref
}

// compareTopic compares the partitions of two versions of a topic: all of them when
// all is set, else those in the nodes of nt's trie that are not ot's (a Delta copies
// the nodes on the path to each partition it sets and shares the rest).
func compareTopic(ot, nt *Topic, all bool) (TopicChange, bool) {
	tc := TopicChange{ID: nt.id, Name: nt.name, OldPartitions: ot.NumPartitions(), Partitions: nt.NumPartitions()}
	check := func(id int32) {
		op, inOld := ot.parts.get(id)
		np, inNew := nt.parts.get(id)
		switch {
		case inOld && inNew && op.equal(&np):
		case inNew:
			tc.Changed = append(tc.Changed, id)
			if !inOld || !slices.Equal(op.list(listReplicas), np.list(listReplicas)) {
				tc.ReplicasChanged = true
			}
		case inOld:
			tc.ReplicasChanged = true // a partition vanished: the topic was emptied
		}
	}
	if !all && ot.parts.shift != nt.parts.shift {
		all = true // the trie grew a level: nothing is shared
	}
	if all {
		seen := map[int32]struct{}{}
		for _, t := range []*Topic{ot, nt} {
			t.parts.each(func(p Partition) bool {
				if _, ok := seen[p.p.id]; !ok {
					seen[p.p.id] = struct{}{}
					check(p.p.id)
				}
				return true
			})
		}
		slices.Sort(tc.Changed)
	} else {
		// One pass into a buffer on the stack (a unit's changes are usually few),
		// copied out at the exact size; diffNodes goes in id order.
		var buf [128]int32
		ids := diffNodes(ot.parts.root, nt.parts.root, nt.parts.shift, buf[:0], &tc.ReplicasChanged)
		if len(ids) > 0 {
			tc.Changed = slices.Clone(ids)
		}
	}
	return tc, len(tc.Changed) > 0 || tc.ReplicasChanged || ot.name != nt.name
}

// diffNodes appends to ids, in id order, the id of each partition of b (a node of a
// trie at shift) that a (the node at the same place in an older version, or nil) does
// not hold equal, and sets *replicas when such a partition is new or its replicas
// differ. Nodes the versions share are skipped.
func diffNodes(a, b *pnode, shift uint, ids []int32, replicas *bool) []int32 {
	if a == b || b == nil {
		return ids
	}
	if shift == 0 {
		for k := range b.parts {
			p := &b.parts[k]
			if !p.present() {
				continue
			}
			if a == nil || k >= len(a.parts) || !a.parts[k].present() {
				ids = append(ids, p.id)
				*replicas = true
				continue
			}
			if q := &a.parts[k]; q.n == p.n && (!p.hasLists() || q.off == p.off && a.chunks[q.chunk] == b.chunks[p.chunk]) {
				// The same lists: what a copied leaf holds for most slots, and what a
				// leader change keeps. Then the fields alone say whether it changed,
				// and its replicas did not.
				if q.id != p.id || q.leader != p.leader || q.leaderEpoch != p.leaderEpoch ||
					q.partitionEpoch != p.partitionEpoch || q.state != p.state {
					ids = append(ids, p.id)
				}
				continue
			}
			old, cur := a.at(k), b.at(k)
			if old.equal(&cur) {
				continue
			}
			ids = append(ids, p.id)
			if old.data != cur.data && !slices.Equal(old.replicas(), cur.replicas()) {
				*replicas = true
			}
		}
		return ids
	}
	for k, kid := range b.kids {
		var old *pnode
		if a != nil && k < len(a.kids) {
			old = a.kids[k]
		}
		ids = diffNodes(old, kid, shift-hbits, ids, replicas)
	}
	return ids
}

func compareBroker(id int32, ob, nb *Broker) (BrokerChange, bool) {
	bc := BrokerChange{ID: id, Old: ob, New: nb}
	switch {
	case ob == nil && nb == nil:
		return bc, false
	case ob == nil:
		bc.Registered = true
	case nb == nil:
		bc.Unregistered = true
	default:
		if brokerEqual(ob, nb) {
			return bc, false
		}
		bc.Reregistered = ob.IncarnationID != nb.IncarnationID
		bc.RackChanged = ob.HasRack != nb.HasRack || ob.Rack != nb.Rack
		bc.FencedChange = ob.Fenced != nb.Fenced
	}
	return bc, true
}

func brokerEqual(a, b *Broker) bool {
	return a.ID == b.ID && a.Epoch == b.Epoch && a.IncarnationID == b.IncarnationID && a.Rack == b.Rack &&
		a.HasRack == b.HasRack && a.Fenced == b.Fenced && a.InControlledShutdown == b.InControlledShutdown &&
		a.IsMigratingZkBroker == b.IsMigratingZkBroker && slices.Equal(a.LogDirs, b.LogDirs)
}

func (c *Changes) sort() {
	byName := func(a, b TopicRef) int {
		if r := compareStrings(a.Name, b.Name); r != 0 {
			return r
		}
		return compareStrings(string(a.ID[:]), string(b.ID[:]))
	}
	slices.SortFunc(c.Created, byName)
	slices.SortFunc(c.Deleted, byName)
	slices.SortFunc(c.Changed, func(a, b TopicChange) int {
		return byName(TopicRef{ID: a.ID, Name: a.Name}, TopicRef{ID: b.ID, Name: b.Name})
	})
	slices.SortFunc(c.Brokers, func(a, b BrokerChange) int { return int(a.ID) - int(b.ID) })
}

// Diff reports how cur differs from old, comparing everything: O(size of the
// images). It is for the rare case where an image was rebuilt rather than derived by
// a Delta (for example after the log was truncated), so the difference can still be
// announced as one set of changes.
func Diff(old, cur *Image) *Changes {
	t := newTouched()
	all := func(id UUID, _ *Topic) bool {
		t.topics[id] = &topicEdits{diff: true}
		t.replaced[id] = struct{}{}
		return true
	}
	old.s.topics.each(all)
	cur.s.topics.each(all)
	old.s.brokers.each(func(id int32, _ *Broker) bool { t.brokers[id] = struct{}{}; return true })
	cur.s.brokers.each(func(id int32, _ *Broker) bool { t.brokers[id] = struct{}{}; return true })
	t.features = !mapsEqual(old.s.features, cur.s.features)
	return changes(old, cur, t)
}

func mapsEqual(a, b map[string]int16) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
