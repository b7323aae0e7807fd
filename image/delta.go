package image

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Delta replays metadata records on top of a base Image. Apply publishes the result
// as a new Image and the Delta carries on from it, so one Delta can follow a whole
// log: Replay the records of a batch, Apply, Replay the next batch, and so on.
// A Delta is not safe for concurrent use.
type Delta struct {
	base    *Image
	cur     state
	edit    *edit
	touched *touched
	txn     *txn
	// featuresOwned is true once cur.features is a private copy.
	featuresOwned bool
	// last caches the topic the previous record edited (it carries edit), and
	// lastEdits what touched records of it.
	last       *Topic
	lastEdits  *topicEdits
	lastInBase bool
	// bulk buffers the partitions of a new topic (see bulk.go); noBulk turns it off,
	// for tests that compare both paths. chunk is the chunk lists are carved from
	// (Delta.lists), its first carved int32s taken.
	bulk   bulk
	noBulk bool
	// recordAll records every topic edited even while the base holds no topics
	// (touched.created), for tests that compare both.
	recordAll bool
	chunk     []int32
	carved    int
	// interned and scratch serve bulkAdd and packLists (see interner).
	interned *interner
	scratch  []int32
	// pos is stamped on the records replayed (At).
	pos Stamp
}

// touched records what a delta changed, to report it at Apply.
type touched struct {
	topics   map[UUID]*topicEdits
	replaced map[UUID]struct{} // topics of the base image a TopicRecord emptied
	brokers  map[int32]struct{}
	features bool
	// leaders lists the partitions leader changes (a PartitionChangeRecord that
	// keeps every list) changed, in the order replayed, for the topics no other
	// record edited. Its blocks are kept from one Apply to the next.
	leaders leaderLog
	// order holds the entries of topics in the order added: leaders names a topic
	// by its index here, so that its blocks hold no pointers.
	order []*topicEdits
	// created is set while the base image holds no topics (a rebuild: a snapshot
	// and the log after it replayed on Empty): every topic the delta holds is then
	// created, so none is recorded (topics stays empty, edits returns all) and
	// Apply lists the new image's topics. Recording them would add to the load's
	// peak RSS, which bench/burst.sh's at-load peak RSS target guards.
	created bool
	all     topicEdits // what edits returns while created: diff is set
}

// leaderID is a partition a leader change changed: order[topic]'s partition id.
type leaderID struct {
	topic, id int32
}

// leaderLog is a list in blocks of a fixed size: a burst's window of 200k changes
// grown as one slice would allocate 5 times its size (append grows large slices by a
// quarter), and the blocks are reused.
type leaderLog struct {
	blocks [][]leaderID
	n      int // blocks in use, the last one maybe not full
}

const leaderBlock = 1024

func (l *leaderLog) add(x leaderID) {
	if l.n == 0 || len(l.blocks[l.n-1]) == leaderBlock {
		if l.n == len(l.blocks) {
			l.blocks = append(l.blocks, make([]leaderID, 0, leaderBlock))
		}
		l.n++
	}
	b := &l.blocks[l.n-1]
	*b = append(*b, x)
}

// used is the blocks in use.
func (l *leaderLog) used() [][]leaderID { return l.blocks[:l.n] }

// reset empties l, keeping its blocks.
func (l *leaderLog) reset() {
	for i, b := range l.used() {
		l.blocks[i] = b[:0]
	}
	l.n = 0
}

// topicEdits is what a delta did to one topic. While only leader changes edited it,
// n of touched.leaders are its: each raised its partition epoch, so each differs
// from the base image, and its replicas did not change. Any other edit sets diff,
// and Apply compares the topic's versions instead.
type topicEdits struct {
	n    int
	diff bool
	// idx is its index in touched.order; ids is filled at Apply
	// (touched.leaderIDs); merged is the outer transaction's entry for the topic,
	// once merged into it.
	idx    int32
	ids    []int32
	merged *topicEdits
}

func newTouched() *touched {
	return &touched{topics: map[UUID]*topicEdits{},
		replaced: map[UUID]struct{}{}, brokers: map[int32]struct{}{}}
}

// edits returns what t records of topic id, adding it.
func (t *touched) edits(id UUID) *topicEdits {
	if t.created {
		t.all.diff = true
		return &t.all
	}
	e := t.topics[id]
	if e == nil {
		e = &topicEdits{idx: int32(len(t.order))}
		t.topics[id] = e
		t.order = append(t.order, e)
	}
	return e
}

// merge adds o, what a transaction changed, to t, what the delta changed before it.
func (t *touched) merge(o *touched) {
	maps.Copy(t.brokers, o.brokers)
	t.features = t.features || o.features
	if t.created { // every topic is created: nothing to record
		return
	}
	for id, oe := range o.topics {
		if e := t.topics[id]; e != nil {
			e.n += oe.n
			e.diff = e.diff || oe.diff
			oe.merged = e
		} else {
			oe.idx = int32(len(t.order))
			t.topics[id] = oe
			t.order = append(t.order, oe)
		}
	}
	for _, b := range o.leaders.used() {
		for _, l := range b {
			e := o.order[l.topic]
			if e.merged != nil {
				e = e.merged
			}
			t.leaders.add(leaderID{e.idx, l.id})
		}
	}
	maps.Copy(t.replaced, o.replaced)
}

// txn is an open metadata transaction: the state and changes before its Begin.
type txn struct {
	saved state
	outer *touched
}

// NewDelta returns a Delta on top of base (use Empty to load a snapshot).
func NewDelta(base *Image) *Delta {
	d := &Delta{base: base, cur: base.s, edit: new(edit), touched: newTouched(), pos: unknownStamp}
	d.touched.created = d.noTopics(base)
	return d
}

// Base is the image the delta applies to: the last one Apply returned, or the one
// given to NewDelta.
func (d *Delta) Base() *Image { return d.base }

// InTransaction reports whether a metadata transaction is open: Apply will not
// publish its records until its EndTransactionRecord is replayed.
func (d *Delta) InTransaction() bool { return d.txn != nil }

// freeze moves the delta to a new edit, so nodes reachable from what came before
// (a published image, a savepoint) are copied, not changed, from now on.
func (d *Delta) freeze() {
	d.edit = new(edit)
	d.last, d.lastEdits = nil, nil
	d.featuresOwned = false
	d.forget()
}

// Replay applies one record to the delta. Records the image does not model (configs,
// ACLs, quotas, credentials, tokens, producer ids, controllers, NoOp) are accepted
// and ignored. An error means the record was not applied. Replay keeps nothing of
// rec, so records from a metadata.Decoder (valid until its next call) may be passed.
func (d *Delta) Replay(rec metadata.Record) error {
	if t := d.bulk.t; t != nil {
		// The next partition of the topic being filled, asked first and with one
		// type assertion: a snapshot is mostly these.
		if r, ok := rec.(*metadata.PartitionRecord); ok && r.TopicID == t.id && r.PartitionID == int32(d.bulk.n) {
			if err := d.replayPartition(r); err != nil {
				return fmt.Errorf("%s: %w", rec.Type(), err)
			}
			return nil
		}
		d.flush()
	}
	var err error
	switch r := rec.(type) {
	case *metadata.BeginTransactionRecord:
		if d.txn != nil {
			return fmt.Errorf("BeginTransactionRecord inside a transaction: %w", ErrTransaction)
		}
		d.txn = &txn{saved: d.cur, outer: d.touched}
		d.touched = newTouched()
		d.freeze()
	case *metadata.EndTransactionRecord:
		if d.txn == nil {
			return fmt.Errorf("EndTransactionRecord without a BeginTransactionRecord: %w", ErrTransaction)
		}
		d.txn.outer.merge(d.touched)
		d.touched = d.txn.outer
		d.txn = nil
		d.last, d.lastEdits = nil, nil // lastEdits may be the inner touched's
	case *metadata.AbortTransactionRecord:
		if d.txn == nil {
			return fmt.Errorf("AbortTransactionRecord without a BeginTransactionRecord: %w", ErrTransaction)
		}
		d.cur = d.txn.saved
		d.touched = d.txn.outer
		d.txn = nil
		d.freeze()
	case *metadata.TopicRecord:
		err = d.replayTopic(r)
	case *metadata.PartitionRecord:
		err = d.replayPartition(r)
	case *metadata.PartitionChangeRecord:
		err = d.replayPartitionChange(r)
	case *metadata.RemoveTopicRecord:
		err = d.replayRemoveTopic(r)
	case *metadata.ClearElrRecord:
		err = d.replayClearElr(r)
	case *metadata.RegisterBrokerRecord:
		d.replayRegisterBroker(r)
	case *metadata.UnregisterBrokerRecord:
		if _, ok := d.cur.brokers.get(hashInt32(r.BrokerID), r.BrokerID); ok {
			d.cur.brokers = d.cur.brokers.del(d.edit, hashInt32(r.BrokerID), r.BrokerID)
			d.cur.racks = d.cur.racks.set(d.edit, hashInt32(r.BrokerID), r.BrokerID, d.pos)
			d.touched.brokers[r.BrokerID] = struct{}{}
		}
	case *metadata.BrokerRegistrationChangeRecord:
		err = d.replayBrokerChange(r.BrokerID, r.BrokerEpoch, r.Fenced, r.InControlledShutdown, r.LogDirs)
	case *metadata.FenceBrokerRecord:
		err = d.replayBrokerChange(r.ID, r.Epoch, metadata.FenceFenced, 0, nil)
	case *metadata.UnfenceBrokerRecord:
		err = d.replayBrokerChange(r.ID, r.Epoch, metadata.FenceUnfenced, 0, nil)
	case *metadata.FeatureLevelRecord:
		err = d.replayFeature(r)
	case nil:
		return fmt.Errorf("nil record: %w", ErrInvalid)
	default:
		// Known records the image does not model.
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rec.Type(), err)
	}
	return nil
}

// topic returns the topic *idp for editing: a copy carrying the delta's edit, stored
// in cur.topics. It takes a pointer: a UUID passed by value is copied through the
// stack in moves the CPU cannot forward from the stores that wrote it, a stall per
// record (bench/burst.sh).
func (d *Delta) topic(idp *UUID) (*Topic, error) {
	if t := d.last; t != nil && t.id == *idp {
		return t, nil
	}
	id := *idp
	h := hashUUID(id)
	t, ok := d.cur.topics.get(h, id)
	if !ok {
		return nil, fmt.Errorf("topic id %s: %w", id, ErrUnknownTopic)
	}
	if t.edit != d.edit {
		c := *t
		c.edit = d.edit
		t = &c
		d.cur.topics = d.cur.topics.set(d.edit, h, id, t)
	}
	d.lastEdits = d.touched.edits(id)
	// Only bulkStart reads lastInBase, for a topic without partitions: a change to a
	// topic that has some (a leader change) need not look it up in the base too.
	d.lastInBase = false
	if t.parts.root == nil {
		_, d.lastInBase = d.base.s.topics.get(h, id)
	}
	d.last = t
	return t, nil
}

func (d *Delta) replayTopic(r *metadata.TopicRecord) error {
	hn := hashString(r.Name)
	if other, ok := d.cur.names.get(hn, r.Name); ok && other != r.TopicID {
		return fmt.Errorf("name %q already belongs to topic %s: %w", r.Name, other, ErrInvalid)
	}
	h := hashUUID(r.TopicID)
	if old, ok := d.cur.topics.get(h, r.TopicID); ok {
		// Kafka replaces the topic with an empty one.
		d.cur.partitions -= old.NumPartitions()
		d.touched.replaced[r.TopicID] = struct{}{}
		if old.name != r.Name {
			d.cur.names = d.cur.names.del(d.edit, hashString(old.name), old.name)
		}
	}
	t := &Topic{edit: d.edit, id: r.TopicID, name: r.Name, created: d.pos, grown: d.pos, moved: d.pos}
	d.cur.topics = d.cur.topics.set(d.edit, h, r.TopicID, t)
	d.cur.names = d.cur.names.set(d.edit, hn, r.Name, r.TopicID)
	d.lastEdits = d.touched.edits(r.TopicID)
	d.lastEdits.diff = true
	_, d.lastInBase = d.base.s.topics.get(h, r.TopicID)
	d.last = t
	return nil
}

func (d *Delta) replayRemoveTopic(r *metadata.RemoveTopicRecord) error {
	h := hashUUID(r.TopicID)
	t, ok := d.cur.topics.get(h, r.TopicID)
	if !ok {
		return fmt.Errorf("topic id %s: %w", r.TopicID, ErrUnknownTopic)
	}
	d.cur.topics = d.cur.topics.del(d.edit, h, r.TopicID)
	hn := hashString(t.name)
	if id, ok := d.cur.names.get(hn, t.name); ok && id == r.TopicID {
		d.cur.names = d.cur.names.del(d.edit, hn, t.name)
	}
	d.cur.partitions -= t.NumPartitions()
	d.cur.deleted = d.cur.deleted.add(DeletedTopic{ID: t.id, Name: t.name, Partitions: t.NumPartitions(), Created: t.created, Deleted: d.pos})
	d.touched.edits(r.TopicID).diff = true
	if d.last != nil && d.last.id == r.TopicID {
		d.last, d.lastEdits = nil, nil
	}
	return nil
}

func (d *Delta) replayPartition(r *metadata.PartitionRecord) error {
	if r.PartitionID < 0 {
		return fmt.Errorf("partition id %d: %w", r.PartitionID, ErrInvalid)
	}
	if r.LeaderRecoveryState != 0 && r.LeaderRecoveryState != 1 {
		return fmt.Errorf("leader recovery state %d: %w", r.LeaderRecoveryState, ErrInvalid)
	}
	if len(r.Directories) > 0 && len(r.Directories) != len(r.Replicas) {
		return fmt.Errorf("%d directories for %d replicas: %w", len(r.Directories), len(r.Replicas), ErrInvalid)
	}
	// The longest list, without building an array of the six (the bulk path does not
	// need one): about 100 instructions less per partition.
	if n := max(len(r.Replicas), len(r.ISR), len(r.RemovingReplicas), len(r.AddingReplicas),
		len(r.EligibleLeaderReplicas), len(r.LastKnownELR)); n > maxList {
		return fmt.Errorf("list of %d replicas: %w", n, ErrInvalid)
	}
	if t := d.bulk.t; t != nil { // Replay checked that r is its next partition
		t.grown, t.moved = d.pos, d.pos
		d.bulkAdd(r)
		return nil
	}
	t, err := d.topic(&r.TopicID)
	if err != nil {
		return err
	}
	d.lastEdits.diff = true
	t.moved = d.pos
	if d.bulkStart(t, r.PartitionID) {
		t.grown = d.pos // flush adds the partitions
		d.bulk.t = t
		d.bulkAdd(r)
		return nil
	}
	p := partition{id: r.PartitionID, leader: r.Leader, leaderEpoch: r.LeaderEpoch, partitionEpoch: r.PartitionEpoch, state: stateOf(r.LeaderRecoveryState)}
	lists := [listDirs][]int32{r.Replicas, r.ISR, r.RemovingReplicas, r.AddingReplicas, r.EligibleLeaderReplicas, r.LastKnownELR}
	if t.parts.set(d.edit, p, d.packLists(&p, lists, r.Directories)) {
		d.cur.partitions++
		t.grown = d.pos
	}
	return nil
}

func (d *Delta) replayPartitionChange(r *metadata.PartitionChangeRecord) error {
	if r.LeaderRecoveryState < -1 || r.LeaderRecoveryState > 1 {
		return fmt.Errorf("leader recovery state %d: %w", r.LeaderRecoveryState, ErrInvalid)
	}
	t, err := d.topic(&r.TopicID)
	if err != nil {
		return err
	}
	leaf, k := t.parts.find(r.PartitionID)
	if leaf == nil {
		return fmt.Errorf("topic %s (%s) partition %d: %w", t.name, t.id, r.PartitionID, ErrUnknownPartition)
	}
	if r.Replicas == nil && r.ISR == nil && r.RemovingReplicas == nil && r.AddingReplicas == nil &&
		r.EligibleLeaderReplicas == nil && r.LastKnownELR == nil && r.Directories == nil {
		// A leader or epoch change: the arrays are immutable, so the slot keeps its
		// place in the same leaf table. It is written field by field where it is: a
		// partition built aside and copied in is moved in 16-byte loads over the
		// smaller stores that built it, which stall (BenchmarkApplyLeaderChanges).
		o := &leaf.parts[k]
		if leaf.edit != d.edit {
			// Not this delta's own leaf (a leaf is editable only on a path made
			// editable from the root): slot copies the path and the leaf.
			o = t.parts.slot(d.edit, r.PartitionID)
		}
		o.partitionEpoch++
		if r.Leader != metadata.LeaderUnchanged {
			o.leader = r.Leader
			o.leaderEpoch++
		}
		if r.LeaderRecoveryState != metadata.LeaderRecoveryUnchanged {
			o.state = stateOf(r.LeaderRecoveryState)
		}
		if e := d.lastEdits; !e.diff {
			e.n++
			d.touched.leaders.add(leaderID{e.idx, r.PartitionID})
		}
		return nil
	}
	changes := [listDirs][]int32{r.Replicas, r.ISR, r.RemovingReplicas, r.AddingReplicas, r.EligibleLeaderReplicas, r.LastKnownELR}
	for _, c := range changes {
		if len(c) > maxList {
			return fmt.Errorf("list of %d replicas: %w", len(c), ErrInvalid)
		}
	}
	o := &leaf.parts[k] // read before set writes to the leaf
	p := partition{id: o.id, leader: o.leader, leaderEpoch: o.leaderEpoch, partitionEpoch: o.partitionEpoch + 1, state: o.state}
	if r.Leader != metadata.LeaderUnchanged {
		p.leader = r.Leader
		p.leaderEpoch++
	}
	if r.LeaderRecoveryState != metadata.LeaderRecoveryUnchanged {
		p.state = stateOf(r.LeaderRecoveryState)
	}
	if r.Replicas != nil && !slices.Equal(r.Replicas, leaf.at(k).Replicas()) {
		t.moved = d.pos
	}
	d.lastEdits.diff = true
	old := leaf.at(k)
	var lists [listDirs][]int32
	for i, c := range changes {
		lists[i] = c
		if c == nil {
			lists[i] = old.list(i)
		}
	}
	var dirs []UUID
	switch {
	case r.Directories != nil:
		if len(r.Directories) > 0 && len(r.Directories) != len(lists[listReplicas]) {
			return fmt.Errorf("%d directories for %d replicas: %w", len(r.Directories), len(lists[listReplicas]), ErrInvalid)
		}
		dirs = r.Directories
	case o.n[listDirs] > 0:
		dirs = movedDirectories(old.list(listReplicas), old.Directories(), lists[listReplicas])
	}
	t.parts.set(d.edit, p, d.packLists(&p, lists, dirs))
	return nil
}

// movedDirectories gives each replica of to the directory it had in from (replicas
// with dirs), and replicas new to the list the zero UUID (unknown): a change of the
// replicas that names no directories keeps those of the brokers that stay, and the
// directories stay one per replica.
func movedDirectories(from []int32, dirs []UUID, to []int32) []UUID {
	out := make([]UUID, len(to))
	for i, b := range to {
		if j := slices.Index(from, b); j >= 0 && j < len(dirs) {
			out[i] = dirs[j]
		}
	}
	return out
}

func (d *Delta) replayClearElr(r *metadata.ClearElrRecord) error {
	var ids []UUID
	if r.TopicName == "" {
		d.cur.topics.each(func(id UUID, _ *Topic) bool { ids = append(ids, id); return true })
	} else {
		id, ok := d.cur.names.get(hashString(r.TopicName), r.TopicName)
		if !ok {
			return fmt.Errorf("topic %q: %w", r.TopicName, ErrUnknownTopic)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		t, _ := d.cur.topics.get(hashUUID(id), id)
		var clear []Partition
		t.parts.each(func(p Partition) bool {
			if p.p.n[listELR] > 0 || p.p.n[listLastKnownELR] > 0 {
				clear = append(clear, p)
			}
			return true
		})
		if len(clear) == 0 {
			continue
		}
		et, _ := d.topic(&id)
		d.lastEdits.diff = true
		for _, old := range clear {
			p := old.p
			p.partitionEpoch++
			lists := [listDirs][]int32{old.list(listReplicas), old.list(listISR), old.list(listRemoving), old.list(listAdding), nil, nil}
			var dirs []UUID
			if p.n[listDirs] > 0 {
				dirs = old.Directories()
			}
			et.parts.set(d.edit, p, d.packLists(&p, lists, dirs))
		}
	}
	return nil
}

func (d *Delta) replayRegisterBroker(r *metadata.RegisterBrokerRecord) {
	b := &Broker{
		ID:                   r.BrokerID,
		Epoch:                r.BrokerEpoch,
		IncarnationID:        r.IncarnationID,
		Fenced:               r.Fenced,
		InControlledShutdown: r.InControlledShutdown,
		IsMigratingZkBroker:  r.IsMigratingZkBroker,
	}
	if r.Rack != nil {
		b.Rack, b.HasRack = *r.Rack, true
	}
	if len(r.LogDirs) > 0 {
		b.LogDirs = sortedUUIDs(r.LogDirs)
	}
	h := hashInt32(r.BrokerID)
	if old, ok := d.cur.brokers.get(h, r.BrokerID); !ok || old.HasRack != b.HasRack || old.Rack != b.Rack {
		d.cur.racks = d.cur.racks.set(d.edit, h, r.BrokerID, d.pos)
	}
	d.cur.brokers = d.cur.brokers.set(d.edit, h, r.BrokerID, b)
	d.touched.brokers[r.BrokerID] = struct{}{}
}

func sortedUUIDs(u []UUID) []UUID {
	s := slices.Clone(u)
	slices.SortFunc(s, func(a, b UUID) int { return compareStrings(string(a[:]), string(b[:])) })
	return s
}

func (d *Delta) replayBrokerChange(id int32, epoch int64, fenced, shutdown int8, logDirs []UUID) error {
	h := hashInt32(id)
	old, ok := d.cur.brokers.get(h, id)
	if !ok {
		return fmt.Errorf("broker %d: %w", id, ErrUnknownBroker)
	}
	if old.Epoch != epoch {
		return fmt.Errorf("broker %d has epoch %d, record has %d: %w", id, old.Epoch, epoch, ErrBrokerEpoch)
	}
	b := *old
	switch fenced {
	case metadata.FenceUnchanged:
	case metadata.FenceFenced:
		b.Fenced = true
	case metadata.FenceUnfenced:
		b.Fenced = false
	default:
		return fmt.Errorf("fenced value %d: %w", fenced, ErrInvalid)
	}
	switch shutdown {
	case 0:
	case 1:
		b.InControlledShutdown = true
	default:
		return fmt.Errorf("in controlled shutdown value %d: %w", shutdown, ErrInvalid)
	}
	if len(logDirs) > 0 {
		b.LogDirs = sortedUUIDs(logDirs)
	}
	d.cur.brokers = d.cur.brokers.set(d.edit, h, id, &b)
	d.touched.brokers[id] = struct{}{}
	return nil
}

func (d *Delta) replayFeature(r *metadata.FeatureLevelRecord) error {
	if r.Name == "kraft.version" {
		return nil // from the KRaftVersion control records, not the image (KAFKA-18979)
	}
	if r.Name == MetadataVersionFeature && r.FeatureLevel < 1 {
		return fmt.Errorf("metadata.version level %d: %w", r.FeatureLevel, ErrInvalid)
	}
	if !d.featuresOwned {
		d.cur.features = maps.Clone(d.cur.features)
		if d.cur.features == nil {
			d.cur.features = map[string]int16{}
		}
		d.featuresOwned = true
	}
	if r.FeatureLevel == 0 {
		delete(d.cur.features, r.Name)
	} else {
		d.cur.features[r.Name] = r.FeatureLevel
	}
	d.touched.features = true
	return nil
}

// Apply publishes the records replayed so far as a new Image with provenance p and
// reports how it differs from the delta's base. Records of a transaction that is
// still open are not published: they stay in the delta until their End. The delta
// then continues on top of the new image.
func (d *Delta) Apply(p Provenance) (*Image, *Changes) {
	d.flush()
	s, t := d.cur, d.touched
	if d.txn != nil {
		s, t = d.txn.saved, d.txn.outer
	}
	im := &Image{s: s, prov: p}
	ch := changes(d.base, im, t)
	d.base = im
	if d.txn != nil {
		d.txn.outer = newTouched()
		d.txn.outer.created = d.noTopics(im)
	} else {
		d.touched = t.reuse()
		d.touched.created = d.noTopics(im)
	}
	d.freeze()
	return im, ch
}

// noTopics reports whether im, the delta's base, holds no topics, so that the delta
// need not record the topics it edits (touched.created).
func (d *Delta) noTopics(im *Image) bool { return !d.recordAll && im.NumTopics() == 0 }

// reuse returns t emptied when its maps are small, else a new touched: a Delta that
// follows a log applies a few records at a time and need not allocate the maps each
// time, but a map that once held a whole snapshot stays large when cleared, and every
// Apply ranges over it.
func (t *touched) reuse() *touched {
	const small = 64
	t.leaders.reset()
	leaders := t.leaders
	if len(t.topics) > small || len(t.replaced) > small || len(t.brokers) > small {
		t = newTouched()
	} else {
		clear(t.topics)
		clear(t.replaced)
		clear(t.brokers)
		clear(t.order)
		t.order = t.order[:0]
		t.features = false
	}
	t.leaders = leaders
	return t
}

// leaderIDs sets the ids of each topic only leader changes edited, out of one
// array.
func (t *touched) leaderIDs() {
	n := 0
	for _, e := range t.topics {
		if !e.diff {
			n += e.n
		}
	}
	if n == 0 {
		return
	}
	all := make([]int32, n)
	for _, e := range t.topics {
		if !e.diff {
			e.ids, all = all[:0:e.n], all[e.n:]
		}
	}
	for _, b := range t.leaders.used() {
		for _, l := range b {
			if e := t.order[l.topic]; !e.diff {
				e.ids = append(e.ids, l.id)
			}
		}
	}
}
