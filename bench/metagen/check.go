package metagen

import (
	"fmt"
	"slices"

	"github.com/kraftwatch/kraftwatch/image"
)

// Check compares im with the cluster c describes after the first changes changes of
// WriteSegment in c.Order (0: the snapshot alone), and returns the first difference
// it finds, or nil: the metadata.version and features, every broker (epoch,
// incarnation, rack, fenced, log dirs), every topic (name, id, partition count) and
// every partition (replicas, ISR, leader, epochs, directories), and nothing more.
func (c *Config) Check(im *image.Image, changes int) error {
	if got := im.MetadataVersion(); got != c.MetadataVersion {
		return fmt.Errorf("metadata.version %d, want %d", got, c.MetadataVersion)
	}
	for _, f := range c.Features {
		if got, _ := im.Feature(f.Name); got != f.Level {
			return fmt.Errorf("feature %s level %d, want %d", f.Name, got, f.Level)
		}
	}
	if got, want := len(im.Features()), 1+len(c.Features); got != want {
		return fmt.Errorf("%d features %v, want %d", got, im.Features(), want)
	}
	if im.NumBrokers() != c.Brokers {
		return fmt.Errorf("%d brokers, want %d", im.NumBrokers(), c.Brokers)
	}
	for i := range c.Brokers {
		id := c.BrokerID(i)
		b, ok := im.Broker(id)
		switch {
		case !ok:
			return fmt.Errorf("broker %d missing", id)
		case b.Rack != c.Rack(id) || b.HasRack != (c.Racks > 0):
			return fmt.Errorf("broker %d rack %q (set %v), want %q", id, b.Rack, b.HasRack, c.Rack(id))
		case b.Epoch != int64(100+id) || b.IncarnationID != c.Incarnation(id) || b.Fenced || b.InControlledShutdown:
			return fmt.Errorf("broker %d: %+v", id, b)
		case c.HasDirectories() && !slices.Equal(b.LogDirs, []UUID{c.Directory(id)}):
			return fmt.Errorf("broker %d log dirs %v, want [%v]", id, b.LogDirs, c.Directory(id))
		}
	}
	if im.NumTopics() != c.Topics || int64(im.NumPartitions()) != c.NumPartitions() {
		return fmt.Errorf("%d topics, %d partitions; want %d, %d", im.NumTopics(), im.NumPartitions(), c.Topics, c.NumPartitions())
	}
	leaders, moves := c.LeadersAfter(changes)
	var replicas []int32
	var dirs []UUID
	for t := range c.Topics {
		name := c.TopicName(t)
		topic, ok := im.TopicByName(name)
		if !ok {
			return fmt.Errorf("topic %s missing", name)
		}
		if topic.ID() != c.TopicID(t) || topic.NumPartitions() != c.Partitions {
			return fmt.Errorf("topic %s: id %v, %d partitions; want %v, %d", name, topic.ID(), topic.NumPartitions(), c.TopicID(t), c.Partitions)
		}
		for p := range c.Partitions {
			part, ok := topic.Partition(int32(p))
			if !ok {
				return fmt.Errorf("partition %s-%d missing", name, p)
			}
			replicas = c.Replicas(replicas[:0], t, p)
			leader, moves := leaders[t*c.Partitions+p], moves[t*c.Partitions+p]
			dirs = dirs[:0]
			if c.HasDirectories() {
				for _, r := range replicas {
					dirs = append(dirs, c.Directory(r))
				}
			}
			switch {
			case !slices.Equal(part.Replicas(), replicas) || !slices.Equal(part.ISR(), replicas):
				return fmt.Errorf("partition %s-%d: replicas %v isr %v, want %v", name, p, part.Replicas(), part.ISR(), replicas)
			case part.Leader() != leader || part.LeaderEpoch() != moves || part.PartitionEpoch() != moves:
				return fmt.Errorf("partition %s-%d: leader %d epochs %d/%d, want %d, %d/%d", name, p,
					part.Leader(), part.LeaderEpoch(), part.PartitionEpoch(), leader, moves, moves)
			case c.HasDirectories() && !slices.Equal(part.Directories(), dirs):
				return fmt.Errorf("partition %s-%d: directories %v, want %v", name, p, part.Directories(), dirs)
			case len(part.AddingReplicas())+len(part.RemovingReplicas())+len(part.ELR())+len(part.LastKnownELR()) != 0:
				return fmt.Errorf("partition %s-%d: unexpected adding/removing/ELR", name, p)
			}
		}
	}
	return nil
}
