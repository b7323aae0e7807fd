package image

import (
	"encoding/binary"
	"hash/maphash"
	"iter"
	"maps"
	"slices"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// UUID is a Kafka Uuid (topic ids, incarnation ids, directory ids).
type UUID = kbin.UUID

// Provenance says which part of the metadata log an image reflects.
type Provenance struct {
	// Offset is the offset of the last record the image contains (-1 for none).
	Offset int64
	// Epoch is the leader epoch of the batch holding that record.
	Epoch int32
	// Timestamp is that batch's append time, in Unix milliseconds.
	Timestamp int64
}

// Image is an immutable view of the cluster metadata: topics with their partitions,
// brokers and finalized features. Images are safe to share between goroutines; a
// Delta builds the next one without changing this one.
type Image struct {
	s    state
	prov Provenance
}

// state is the part of an image a Delta edits. Copying it is O(1).
type state struct {
	topics     hmap[UUID, *Topic]
	names      hmap[string, UUID]
	brokers    hmap[int32, *Broker]
	features   map[string]int16
	partitions int
	racks      hmap[int32, Stamp] // see BrokerRackChanged
	deleted    deletions
}

// Empty is the image of an empty log.
var Empty = &Image{prov: Provenance{Offset: -1, Epoch: -1, Timestamp: -1}}

// Provenance returns where in the log this image was taken.
func (im *Image) Provenance() Provenance { return im.prov }

// Topic returns the topic with the given id.
func (im *Image) Topic(id UUID) (*Topic, bool) { return im.s.topics.get(hashUUID(id), id) }

// TopicByName returns the topic with the given name.
func (im *Image) TopicByName(name string) (*Topic, bool) {
	id, ok := im.s.names.get(hashString(name), name)
	if !ok {
		return nil, false
	}
	return im.Topic(id)
}

// NumTopics is the number of topics.
func (im *Image) NumTopics() int { return im.s.topics.Len() }

// NumPartitions is the number of partitions of all topics.
func (im *Image) NumPartitions() int { return im.s.partitions }

// Topics iterates the topics in no particular order.
func (im *Image) Topics() iter.Seq[*Topic] {
	return func(yield func(*Topic) bool) {
		im.s.topics.each(func(_ UUID, t *Topic) bool { return yield(t) })
	}
}

// SortedTopics returns the topics sorted by name.
func (im *Image) SortedTopics() []*Topic {
	ts := slices.Collect(im.Topics())
	slices.SortFunc(ts, func(a, b *Topic) int { return compareStrings(a.name, b.name) })
	return ts
}

// Broker returns the registration of broker id.
func (im *Image) Broker(id int32) (Broker, bool) {
	b, ok := im.s.brokers.get(hashInt32(id), id)
	if !ok {
		return Broker{}, false
	}
	return *b, true
}

// BrokerRack returns the rack of broker id: what Broker(id) gives as Rack, ok false
// when the broker is not registered or has no rack. It copies nothing.
func (im *Image) BrokerRack(id int32) (rack string, ok bool) {
	b, ok := im.s.brokers.get(hashInt32(id), id)
	if !ok || !b.HasRack {
		return "", false
	}
	return b.Rack, true
}

// NumBrokers is the number of registered brokers.
func (im *Image) NumBrokers() int { return im.s.brokers.Len() }

// Brokers returns the registered brokers sorted by id.
func (im *Image) Brokers() []Broker {
	var bs []Broker
	im.s.brokers.each(func(_ int32, b *Broker) bool { bs = append(bs, *b); return true })
	slices.SortFunc(bs, func(a, b Broker) int { return int(a.ID) - int(b.ID) })
	return bs
}

// Feature returns the finalized level of a feature ("metadata.version",
// "group.version", ...). kraft.version is not part of the image: it comes from the
// KRaftVersion control records.
func (im *Image) Feature(name string) (int16, bool) {
	l, ok := im.s.features[name]
	return l, ok
}

// Features returns a copy of the finalized features.
func (im *Image) Features() map[string]int16 { return maps.Clone(im.s.features) }

// MetadataVersion is the metadata.version feature level, 0 when unset.
func (im *Image) MetadataVersion() int16 { return im.s.features[MetadataVersionFeature] }

// MetadataVersionFeature is the name of the metadata.version feature.
const MetadataVersionFeature = "metadata.version"

// Topic is one topic of an image. It is immutable once its image is published.
type Topic struct {
	edit  *edit
	id    UUID
	name  string
	parts pvec
	// Stamps of the records that last changed what the topic hash reads (stamp.go).
	created, grown, moved Stamp
}

// ID is the topic id.
func (t *Topic) ID() UUID { return t.id }

// Name is the topic name.
func (t *Topic) Name() string { return t.name }

// NumPartitions is the number of partitions.
func (t *Topic) NumPartitions() int { return int(t.parts.count) }

// Partition returns partition i.
func (t *Topic) Partition(i int32) (Partition, bool) { return t.parts.get(i) }

// Partitions iterates the partitions in id order.
func (t *Topic) Partitions() iter.Seq[Partition] {
	return func(yield func(Partition) bool) {
		t.parts.each(yield)
	}
}

// AppendReplicas appends the replica list of each partition 0 … NumPartitions()-1 to
// dst, nil for an id the topic does not have, and returns the extended slice: what
// Partition(i).Replicas() returns for each i, in one walk over the partitions. The
// lists are shared with the image: do not modify them.
func (t *Topic) AppendReplicas(dst [][]int32) [][]int32 {
	start, n := len(dst), t.NumPartitions()
	dst = t.parts.root.appendReplicas(dst, start, n)
	for len(dst) < start+n {
		dst = append(dst, nil)
	}
	return dst
}

// appendReplicas appends the replica lists of the partitions below n in n's subtree
// to dst, where partition id goes to dst[start+id], and nil for the ids missing
// before each.
func (nd *pnode) appendReplicas(dst [][]int32, start, n int) [][]int32 {
	if nd == nil {
		return dst
	}
	for _, k := range nd.kids {
		dst = k.appendReplicas(dst, start, n)
	}
	for i := range nd.parts {
		p := &nd.parts[i]
		if !p.present() {
			continue
		}
		id := int(p.id)
		if id >= n {
			break
		}
		for len(dst) < start+id {
			dst = append(dst, nil)
		}
		q := nd.at(i)
		dst = append(dst, q.replicas())
	}
	return dst
}

// Broker is a broker registration. Its LogDirs slice is shared: do not modify it.
type Broker struct {
	ID                   int32
	Epoch                int64
	IncarnationID        UUID
	Rack                 string
	HasRack              bool // false when the broker has no rack (Rack is then "")
	Fenced               bool
	InControlledShutdown bool
	IsMigratingZkBroker  bool
	LogDirs              []UUID // sorted
}

// Hashing for the persistent maps. Strings use a per-process random seed so names
// cannot be chosen to collide; ids are hashed the same way.
var seed = maphash.MakeSeed()

func hashString(s string) uint64 { return maphash.String(seed, s) }

func hashUUID(u UUID) uint64 { return maphash.Bytes(seed, u[:]) }

func hashInt32(i int32) uint64 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(i))
	return maphash.Bytes(seed, b[:])
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
