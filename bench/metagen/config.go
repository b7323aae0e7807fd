package metagen

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// UUID is a Kafka Uuid.
type UUID = kbin.UUID

// Feature is a finalized feature level (FeatureLevelRecord).
type Feature struct {
	Name  string
	Level int16
}

// Kafka's limits and defaults that the writers follow.
const (
	// MaxBatchBytes is Kafka's largest metadata batch (KafkaRaftClient
	// MAX_BATCH_SIZE_BYTES, 8 MiB).
	MaxBatchBytes = 8 << 20
	// GroupSize is how many records Kafka's SnapshotEmitter hands the batch writer at
	// a time; a group never spans two batches.
	GroupSize = 1024
	// ControllerIDBase: controller i (0-based) has node id ControllerIDBase+1+i.
	ControllerIDBase = 1000
	// MinMetadataVersion is the oldest metadata.version Kafka 4.x reads (3.3-IV3).
	MinMetadataVersion = 7
	// MaxMetadataVersion is the newest this package knows (4.4-IV2, Kafka 4.4.0).
	MaxMetadataVersion = 33
)

// Config describes a cluster and the snapshot that holds it. The zero value is not
// usable; start from ForKafka and change what you need.
type Config struct {
	// Topics, each with Partitions partitions of ReplicationFactor replicas.
	Topics, Partitions, ReplicationFactor int
	// Brokers have node ids 1..Brokers. With Racks > 0, broker b is in rack
	// Rack(b) = "rack-" + ((b-1) mod Racks), so consecutive ids alternate racks;
	// with Racks == 0 no broker has a rack.
	Brokers, Racks int
	// Controllers are registered with RegisterControllerRecords (MV >= 3.7-IV0) and
	// are the Raft voters of the snapshot header (kraft.version >= 1).
	Controllers int

	// MetadataVersion is the metadata.version feature level; it picks the record
	// versions. Features are the other finalized features, written in this order.
	MetadataVersion int16
	Features        []Feature
	// KRaftVersion 1 adds the KRaftVersion and Voters control records to the header.
	KRaftVersion int16

	// Seed makes the topic ids, incarnation ids and directory ids.
	Seed uint64
	// Epoch is the snapshot's epoch (every batch's PartitionLeaderEpoch); EndOffset
	// its end offset in the log (0: NumRecords(), as if the log held exactly the
	// records of the snapshot). Both name the file: EEE...-OOO.checkpoint.
	Epoch     int32
	EndOffset int64
	// Timestamp is the append time of every batch (ms); the header's
	// LastContainedLogTimestamp is one ms earlier.
	Timestamp int64
	// MaxBatchBytes bounds each batch (0: MaxBatchBytes, 8 MiB).
	MaxBatchBytes int
	// Order is the order in which WriteSegment's changes move partition leaders
	// (the zero value: OrderSequential).
	Order Order
}

// Order is an order of WriteSegment's leader changes.
type Order int8

const (
	// OrderSequential moves the leader of partition i mod NumPartitions to its next
	// replica at change i (topics in order, then partitions), in batches of
	// SegmentBatchRecords: each batch touches consecutive partitions of one topic.
	OrderSequential Order = iota
	// OrderRolling is a rolling restart as Kafka's controller writes it, broker by
	// broker (ids 1..Brokers, then again): the broker's controlled shutdown moves
	// the leadership of every partition whose preferred (first) replica it is, and
	// leads, to the second replica, topic by topic (in a seeded order standing in
	// for the hash order of Kafka's BrokersToIsrs), the partitions of a topic in
	// ascending order, in batches of ShutdownBatchRecords; then the preferred
	// leader election moves them back, in a seeded order over all topics (standing
	// in for the hash order of Kafka's imbalanced-partitions set), in batches of
	// ElectionBatchRecords. Needs ReplicationFactor >= 2.
	OrderRolling
	// OrderUnknown is past the known orders.
	OrderUnknown
)

// Kafka's batch limits that OrderRolling follows.
const (
	// ShutdownBatchRecords is the most records QuorumController puts in one batch
	// (MAX_RECORDS_PER_BATCH); a broker's controlled shutdown is one result of
	// many records, split at this count. (Kafka's Raft BatchAccumulator may join
	// the splits into batches of up to 8 MiB; metagen keeps them apart.)
	ShutdownBatchRecords = 10_000
	// ElectionBatchRecords is the most elections one run of the preferred leader
	// election makes (ReplicationControlManager MAX_ELECTIONS_PER_IMBALANCE); the
	// controller runs it again at once while partitions are left.
	ElectionBatchRecords = 1_000
)

var orderNames = [...]string{OrderSequential: "sequential", OrderRolling: "rolling"}

func (o Order) String() string {
	if o >= 0 && o < OrderUnknown {
		return orderNames[o]
	}
	return fmt.Sprintf("Order(%d)", o)
}

// ParseOrder is the Order named s ("sequential", "rolling"), or ErrConfig.
func ParseOrder(s string) (Order, error) {
	for o, name := range orderNames {
		if s == name {
			return Order(o), nil
		}
	}
	return OrderUnknown, fmt.Errorf("%w: order %q (known: sequential, rolling)", ErrConfig, s)
}

// release is what a Kafka release writes in a new cluster's snapshots, from the real
// logs in testdata/kafka-<version> (make fixtures).
type release struct {
	mv       int16
	features []Feature
}

var releases = map[string]release{
	"4.1": {27, []Feature{{"group.version", 1}, {"eligible.leader.replicas.version", 1}, {"transaction.version", 2}}},
	"4.3": {30, []Feature{{"group.version", 1}, {"streams.version", 1}, {"transaction.version", 2},
		{"eligible.leader.replicas.version", 1}, {"share.version", 1}}},
	"4.4": {33, []Feature{{"group.version", 1}, {"streams.version", 1}, {"transaction.version", 2},
		{"eligible.leader.replicas.version", 1}, {"share.version", 2}}},
}

// ForKafka returns the benchmark cluster (10,000 topics x 100 partitions, RF 3 over
// 12 brokers in 4 racks, 3 controllers) with the metadata.version, finalized features
// and kraft.version that Kafka release version (e.g. "4.3.1") writes. Only releases
// whose real logs are in the repository's fixtures are known (4.1.x, 4.3.x, 4.4.x);
// others are ErrUnknownRelease.
func ForKafka(version string) (Config, error) {
	major, minor, _ := strings.Cut(version, ".")
	minor, _, _ = strings.Cut(minor, ".")
	r, ok := releases[major+"."+minor]
	if !ok {
		return Config{}, fmt.Errorf("%w %q (known: 4.1.x, 4.3.x, 4.4.x)", ErrUnknownRelease, version)
	}
	return Config{
		Topics: 10_000, Partitions: 100, ReplicationFactor: 3,
		Brokers: 12, Racks: 4, Controllers: 3,
		MetadataVersion: r.mv, Features: r.features, KRaftVersion: 1,
		Seed: 1, Epoch: 7, Timestamp: 1_767_225_600_000, // 2026-01-01T00:00:00Z
	}, nil
}

// Validate reports the first field that cannot describe a valid snapshot.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Topics < 0:
		return bad("Topics %d < 0", c.Topics)
	case c.Partitions < 1 && c.Topics > 0:
		return bad("Partitions %d < 1", c.Partitions)
	case c.Brokers < 1:
		return bad("Brokers %d < 1", c.Brokers)
	case c.Brokers >= ControllerIDBase:
		return bad("Brokers %d >= %d (controller ids start there)", c.Brokers, ControllerIDBase)
	case c.ReplicationFactor < 1 || c.ReplicationFactor > c.Brokers:
		return bad("ReplicationFactor %d not in [1, Brokers=%d]", c.ReplicationFactor, c.Brokers)
	case c.Racks < 0 || c.Racks > c.Brokers:
		return bad("Racks %d not in [0, Brokers=%d]", c.Racks, c.Brokers)
	case c.Controllers < 0:
		return bad("Controllers %d < 0", c.Controllers)
	case c.MetadataVersion < MinMetadataVersion || c.MetadataVersion > MaxMetadataVersion:
		return bad("MetadataVersion %d not in [%d, %d]", c.MetadataVersion, MinMetadataVersion, MaxMetadataVersion)
	case c.KRaftVersion < 0 || c.KRaftVersion > 1:
		return bad("KRaftVersion %d not 0 or 1", c.KRaftVersion)
	case c.KRaftVersion == 1 && c.Controllers == 0:
		return bad("KRaftVersion 1 needs Controllers > 0 (the voters)")
	case c.Epoch < 0:
		return bad("Epoch %d < 0", c.Epoch)
	case c.EndOffset < 0:
		return bad("EndOffset %d < 0", c.EndOffset)
	case c.Timestamp < 1:
		return bad("Timestamp %d < 1", c.Timestamp)
	case c.MaxBatchBytes != 0 && (c.MaxBatchBytes < 1<<20 || c.MaxBatchBytes > MaxBatchBytes):
		return bad("MaxBatchBytes %d not in [1 MiB, 8 MiB]", c.MaxBatchBytes)
	case c.Order < 0 || c.Order >= OrderUnknown:
		return bad("Order %v unknown", c.Order)
	case c.Order == OrderRolling && c.ReplicationFactor < 2:
		return bad("Order rolling needs ReplicationFactor >= 2, not %d", c.ReplicationFactor)
	case int64(c.Topics)*int64(c.Partitions) > 1<<31-1:
		return bad("Topics x Partitions = %d too many", int64(c.Topics)*int64(c.Partitions))
	}
	for _, f := range c.Features {
		if f.Name == "" || f.Name == "metadata.version" || f.Name == "kraft.version" || f.Level < 1 {
			return bad("feature %q level %d (metadata.version and kraft.version have their own fields)", f.Name, f.Level)
		}
	}
	return nil
}

// NumRecords is the number of metadata (data) records in the snapshot.
func (c *Config) NumRecords() int64 {
	n := int64(1+len(c.Features)) + int64(c.Brokers) + int64(c.Topics)*(1+int64(c.Partitions))
	if c.MetadataVersion >= mvRegisterController {
		n += int64(c.Controllers)
	}
	return n
}

// NumPartitions is Topics x Partitions.
func (c *Config) NumPartitions() int64 { return int64(c.Topics) * int64(c.Partitions) }

// SnapshotEndOffset is the end offset of the snapshot (its id's offset).
func (c *Config) SnapshotEndOffset() int64 {
	if c.EndOffset > 0 {
		return c.EndOffset
	}
	return c.NumRecords()
}

// SnapshotName is the snapshot's file name, OOOOOOOOOOOOOOOOOOOO-EEEEEEEEEE.checkpoint.
func (c *Config) SnapshotName() string {
	return fmt.Sprintf("%020d-%010d.checkpoint", c.SnapshotEndOffset(), c.Epoch)
}

func (c *Config) maxBatch() int {
	if c.MaxBatchBytes == 0 {
		return MaxBatchBytes
	}
	return c.MaxBatchBytes
}

// metadata.version feature levels where record versions change
// (docs/metadata-log.md#versions-kafka-writes).
const (
	mvRegisterBrokerV2   = 8  // 3.4-IV0
	mvRegisterController = 15 // 3.7-IV0
	mvDirectories        = 17 // 3.7-IV2: RegisterBrokerRecord v3, PartitionRecord v1
	mvPartitionV2        = 23 // 4.0-IV1
	mvRegisterBrokerV4   = 30 // 4.3-IV0
)

// RegisterBrokerVersion is the RegisterBrokerRecord version Kafka writes at the
// Config's metadata.version.
func (c *Config) RegisterBrokerVersion() int16 {
	switch mv := c.MetadataVersion; {
	case mv >= mvRegisterBrokerV4:
		return 4
	case mv >= mvDirectories:
		return 3
	case mv >= mvRegisterBrokerV2:
		return 2
	default:
		return 1
	}
}

// PartitionVersion is the PartitionRecord and PartitionChangeRecord version Kafka
// writes at the Config's metadata.version.
func (c *Config) PartitionVersion() int16 {
	switch mv := c.MetadataVersion; {
	case mv >= mvPartitionV2:
		return 2
	case mv >= mvDirectories:
		return 1
	default:
		return 0
	}
}

// HasDirectories reports whether partitions name a log directory per replica.
func (c *Config) HasDirectories() bool { return c.MetadataVersion >= mvDirectories }

// TopicName is the name of topic t (0-based): topic-00000, topic-00001, ...
func (c *Config) TopicName(t int) string { return fmt.Sprintf("topic-%05d", t) }

// TopicID is the id of topic t.
func (c *Config) TopicID(t int) UUID { return c.uuid(kindTopic, uint64(t)) }

// BrokerID is the node id of broker i (0-based): i+1.
func (c *Config) BrokerID(i int) int32 { return int32(i + 1) }

// ControllerID is the node id of controller i (0-based).
func (c *Config) ControllerID(i int) int32 { return int32(ControllerIDBase + 1 + i) }

// Rack is the rack of broker id, "" when Racks is 0.
func (c *Config) Rack(id int32) string {
	if c.Racks == 0 {
		return ""
	}
	return fmt.Sprintf("rack-%d", (int(id)-1)%c.Racks)
}

// Directory is the one log directory of broker (or controller) id.
func (c *Config) Directory(id int32) UUID { return c.uuid(kindDir, uint64(id)) }

// Incarnation is the incarnation id of broker (or controller) id.
func (c *Config) Incarnation(id int32) UUID { return c.uuid(kindIncarnation, uint64(id)) }

// Replicas appends the replicas of partition p of topic t to dst: ReplicationFactor
// consecutive broker ids starting at (t+p) mod Brokers, wrapping around. As broker
// ids alternate racks, the replicas are in distinct racks whenever ReplicationFactor
// <= Racks and Brokers is a multiple of Racks. The first replica is the leader, and
// the ISR is all replicas.
func (c *Config) Replicas(dst []int32, t, p int) []int32 {
	start := (t + p) % c.Brokers
	for i := range c.ReplicationFactor {
		dst = append(dst, c.BrokerID((start+i)%c.Brokers))
	}
	return dst
}

const (
	kindTopic = iota + 1
	kindDir
	kindIncarnation
	kindOrder
)

// uuid derives a version-4-looking UUID from (Seed, kind, i), as Kafka's
// Uuid.randomUuid would have made one: never a reserved id (the high long is never
// 0), and never one whose text form starts with '-'.
func (c *Config) uuid(kind, i uint64) UUID {
	s := c.Seed*0x9e3779b97f4a7c15 ^ kind<<56 ^ i
	for {
		var u UUID
		binary.BigEndian.PutUint64(u[:8], splitmix(&s))
		binary.BigEndian.PutUint64(u[8:], splitmix(&s))
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // IETF variant
		if u[0]>>2 != 62 {      // base64url '-'
			return u
		}
	}
}

func splitmix(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
