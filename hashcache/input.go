package hashcache

// Topic is the part of a topic that a topic hash reads.
type Topic interface {
	// ID is the topic id in wire order: most significant long, then least
	// significant long, each big-endian.
	ID() [16]byte
	// Name is the topic name.
	Name() string
	// NumPartitions is the number of partitions; they are numbered 0 … n-1.
	NumPartitions() int
	// Replicas returns the replica broker ids of partition i in replica order
	// (including adding replicas during a reassignment). The slice is only read,
	// and not kept after the call that asked for it.
	Replicas(i int) []int32
}

// ReplicaLister is an optional interface of a Topic: the replica lists of all its
// partitions at once, so that a hash reads them without a call per partition.
// hashcachetest's topics implement it; ImageCluster's topics are read a trie leaf
// at a time instead.
type ReplicaLister interface {
	// ReplicaLists returns Replicas(i) for each i in 0 … NumPartitions()-1. The
	// slice and the lists are only read, and not kept after the call that asked
	// for them.
	ReplicaLists() [][]int32
}

// Brokers resolves broker racks.
type Brokers interface {
	// Rack returns the rack of broker id. ok is false when the broker is not
	// registered or has no rack; such replicas contribute nothing to a hash.
	// Fenced and shutting-down brokers are registered.
	Rack(id int32) (rack string, ok bool)
}

// Cluster is a metadata image as the cache sees it.
type Cluster interface {
	Brokers
	// Topic returns the topic with this name, ok false if there is none.
	Topic(name string) (t Topic, ok bool)
}

// NamedHash is the hash of one topic, as a group hash takes it.
type NamedHash struct {
	Name string
	Hash int64
}
