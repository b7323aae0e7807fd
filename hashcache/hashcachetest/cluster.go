// Package hashcachetest provides an in-memory hashcache.Cluster for tests.
package hashcachetest

import (
	"encoding/binary"

	"github.com/kraftwatch/kraftwatch/hashcache"
)

// Topic is a topic as hashcache reads it. It implements hashcache.Topic.
type Topic struct {
	TopicID   [16]byte
	TopicName string
	// Partitions holds the replica broker ids of each partition.
	Partitions [][]int32
}

// ID implements hashcache.Topic.
func (t *Topic) ID() [16]byte { return t.TopicID }

// Name implements hashcache.Topic.
func (t *Topic) Name() string { return t.TopicName }

// NumPartitions implements hashcache.Topic.
func (t *Topic) NumPartitions() int { return len(t.Partitions) }

// Replicas implements hashcache.Topic.
func (t *Topic) Replicas(i int) []int32 { return t.Partitions[i] }

// ReplicaLists implements hashcache.ReplicaLister.
func (t *Topic) ReplicaLists() [][]int32 { return t.Partitions }

// Cluster is a mutable in-memory cluster. It implements hashcache.Cluster.
type Cluster struct {
	Topics map[string]*Topic
	// Racks holds the rack of each registered broker that has one. A broker
	// that is absent is unregistered or has no rack: for a hash that is the same.
	Racks map[int32]string
}

// NewCluster returns an empty cluster.
func NewCluster() *Cluster {
	return &Cluster{Topics: map[string]*Topic{}, Racks: map[int32]string{}}
}

// Add adds or replaces a topic and returns it.
func (c *Cluster) Add(t *Topic) *Topic {
	c.Topics[t.TopicName] = t
	return t
}

// Topic implements hashcache.Cluster.
func (c *Cluster) Topic(name string) (hashcache.Topic, bool) {
	t, ok := c.Topics[name]
	if !ok {
		return nil, false
	}
	return t, true
}

// Rack implements hashcache.Brokers.
func (c *Cluster) Rack(id int32) (string, bool) {
	r, ok := c.Racks[id]
	return r, ok
}

// ID returns a topic id from its most and least significant longs.
func ID(msb, lsb uint64) [16]byte {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], msb)
	binary.BigEndian.PutUint64(id[8:], lsb)
	return id
}
