package hashcache

import "github.com/kraftwatch/kraftwatch/image"

// ImageCluster is a metadata image as a Cluster: topics by name, partitions with
// their replica lists, and the racks of registered brokers (fenced and
// shutting-down brokers included, as Kafka counts them). The zero value, with a
// nil Image, is an empty cluster. It is a small value: pass it by value; it
// allocates nothing.
type ImageCluster struct {
	Image *image.Image
}

// Topic implements Cluster.
func (c ImageCluster) Topic(name string) (Topic, bool) {
	if c.Image == nil {
		return nil, false
	}
	t, ok := c.Image.TopicByName(name)
	if !ok {
		return nil, false
	}
	return imageTopic{t}, true
}

// Rack implements Brokers.
func (c ImageCluster) Rack(id int32) (string, bool) {
	if c.Image == nil {
		return "", false
	}
	return c.Image.BrokerRack(id)
}

// imageTopic is an *image.Topic as a Topic; one pointer, so storing it in an
// interface does not allocate.
type imageTopic struct{ t *image.Topic }

func (t imageTopic) ID() [16]byte       { return t.t.ID() }
func (t imageTopic) Name() string       { return t.t.Name() }
func (t imageTopic) NumPartitions() int { return t.t.NumPartitions() }

// Replicas returns the replicas of partition i; a partition missing from the image
// (which Kafka never leaves) has none.
func (t imageTopic) Replicas(i int) []int32 {
	p, ok := t.t.Partition(int32(i))
	if !ok {
		return nil
	}
	return p.Replicas()
}
