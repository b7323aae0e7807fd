package whatif

// Move is one partition of a reassignment: its target replicas, in preferred-leader
// order.
type Move struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"`
	// From is the replica list the plan was computed against (Cruise Control's
	// oldReplicas); nil when not given. Evaluate refuses a plan whose From differs
	// from the image: it is stale.
	From []int32 `json:"from,omitempty"`
}

// AddPartitions raises a topic's partition count to Count.
type AddPartitions struct {
	Topic string `json:"topic"`
	Count int    `json:"count"`
}

// NewTopic is a topic to create.
type NewTopic struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
	// ReplicationFactor defaults to that of the cluster's first topic, or 1.
	ReplicationFactor int `json:"replication_factor,omitempty"`
}

// SetRack gives a broker another rack (a restart with another broker.rack).
type SetRack struct {
	Broker int32  `json:"broker"`
	Rack   string `json:"rack"`
}

// Plan is a set of hypothetical changes. The zero Plan changes nothing.
type Plan struct {
	Moves         []Move          `json:"moves,omitempty"`
	AddPartitions []AddPartitions `json:"add_partitions,omitempty"`
	DeleteTopics  []string        `json:"delete_topics,omitempty"`
	CreateTopics  []NewTopic      `json:"create_topics,omitempty"`
	SetRacks      []SetRack       `json:"set_racks,omitempty"`
	// Decommission unregisters these brokers once the moves have completed.
	Decommission []int32 `json:"decommission,omitempty"`
}
