package image

// Stamp is where a record is in the metadata log: its offset and the append time of
// its batch (Unix milliseconds). Offset -1 means unknown: the record was replayed
// without a position (Delta.At), as the records of a snapshot are, whose own
// offsets the snapshot does not keep; the change is then at or before the image the
// snapshot starts.
type Stamp struct {
	Offset    int64
	Timestamp int64
}

// unknownStamp is the position of records replayed before Delta.At is called.
var unknownStamp = Stamp{Offset: -1, Timestamp: -1}

// Known reports whether the stamp names a record.
func (s Stamp) Known() bool { return s.Offset >= 0 }

// After reports whether s is known and later in the log than offset.
func (s Stamp) After(offset int64) bool { return s.Known() && s.Offset > offset }

// At sets the position stamped on the records replayed from now on: the record's
// offset and its batch's append time. The image keeps, per topic, the stamp of the
// record that created it, the last one that added partitions and the last one that
// changed a replica list (Topic.Created, Topic.PartitionsAdded, Topic.ReplicasChanged);
// per broker id, the last registration that changed its rack or that registered or
// unregistered it (Image.BrokerRackChanged); and the last deleted topics
// (Image.DeletedTopic). Without a call, records are stamped unknown.
func (d *Delta) At(offset, timestamp int64) { d.pos = Stamp{Offset: offset, Timestamp: timestamp} }

// Created is the stamp of the TopicRecord that created the topic.
func (t *Topic) Created() Stamp { return t.created }

// PartitionsAdded is the stamp of the last record that added a partition to the
// topic: its creation's last PartitionRecord unless partitions were added since.
func (t *Topic) PartitionsAdded() Stamp { return t.grown }

// ReplicasChanged is the stamp of the last record that added a partition or changed a
// partition's replica list (a reassignment), so possibly its racks. Racks also change
// with the brokers' registrations: see Image.BrokerRackChanged.
func (t *Topic) ReplicasChanged() Stamp { return t.moved }

// BrokerRackChanged returns the stamp of the last record that changed the rack broker
// id is seen in: its registration with a rack other than the one before (or with
// none), its first registration, or its unregistration. ok is false for an id never
// registered.
func (im *Image) BrokerRackChanged(id int32) (Stamp, bool) {
	return im.s.racks.get(hashInt32(id), id)
}

// DeletedTopic is a topic a RemoveTopicRecord deleted.
type DeletedTopic struct {
	ID         UUID
	Name       string
	Partitions int
	// Created and Deleted are the stamps of its TopicRecord and its RemoveTopicRecord.
	Created, Deleted Stamp
}

// keepDeleted bounds the deleted topics an image remembers: the last keepDeleted to
// 2·keepDeleted deletions.
const keepDeleted = 1024

// DeletedTopic returns the deleted topic with the given id, if it is one of the last
// 1,024 to 2,048 topics deleted (older ones are forgotten, to bound memory). The
// search costs up to 2,048 steps: it is for the rare look-up, not for every event.
func (im *Image) DeletedTopic(id UUID) (DeletedTopic, bool) {
	return im.s.deleted.find(id)
}

// deletions is a persistent list of the last deleted topics, newest first, in two
// generations: cur holds up to keepDeleted, old the generation before it. Adding
// is O(1) and shares everything with the state before.
type deletions struct {
	cur, old *deletedNode
	n        int // length of cur
}

type deletedNode struct {
	t    DeletedTopic
	next *deletedNode
}

func (l deletions) add(t DeletedTopic) deletions {
	if l.n == keepDeleted {
		l.old, l.cur, l.n = l.cur, nil, 0
	}
	l.cur = &deletedNode{t: t, next: l.cur}
	l.n++
	return l
}

func (l deletions) find(id UUID) (DeletedTopic, bool) {
	for _, n := range []*deletedNode{l.cur, l.old} {
		for ; n != nil; n = n.next {
			if n.t.ID == id {
				return n.t, true
			}
		}
	}
	return DeletedTopic{}, false
}
