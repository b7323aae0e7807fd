// Package whatif predicts which groups a maintenance operation will make rebalance,
// and how often, without touching Kafka.
//
// A Plan (a reassignment, partitions added, topics deleted or created, a broker's
// rack changed, a broker unregistered) is replayed as metadata records into
// image.NewDelta of the current image, one operation after the other, so each
// hypothetical image shares everything unchanged with the current one. Each group
// that reads a touched topic is hashed at every step with the engine's scheme:
//
//   - set-rack, add-partitions, delete-topic and create-topic are one step each, in
//     that order (each is a separate operator action, so a separate rebalance);
//   - a reassignment starts in one step: each moved partition's replicas become the
//     target plus the replicas being removed, as Kafka's controller writes them
//     (PartitionReassignmentReplicas: target, then the removed ones). A move that
//     adds no replica completes at once;
//   - its completions: the most rebalances count one per moved partition the group
//     reads whose completion changes the partition's part of the topic hash (a
//     throttled move completes partition by partition), plus one for the start;
//     the fewest count the reassignment once if it changes the group's hash in the
//     end, not at all if the hash comes back: a coordinator compares hashes when a
//     member heartbeats, so a start and completions that land between two
//     heartbeats are seen as their net change (TestWhatIfReassignment saw a
//     cross-rack move bump a group's epoch once, not twice);
//   - decommission (UnregisterBrokerRecord) comes last, after the moves.
//
// Which steps change a hash depends on the scheme. Kafka's own hash (scheme
// "kafka", group-coordinator KraftTopicMetadata.partitionRacks) lists one rack per
// replica, duplicates kept, so during any move that adds a replica the partition
// counts one rack more: even a move inside one rack changes the hash at the start
// and back at the completion. Under "murmur3", a set of racks, a move inside the
// same racks changes nothing. The predictions are of Kafka's coordinator, so the
// API evaluates with the kafka scheme (TestWhatIfReassignment saw a move inside one
// rack bump the epoch of the group reading it twice).
//
// Classic groups are counted only when a step changes the partition count or the
// existence of a topic they read: their clients do not see racks.
//
// The package is pure: no I/O, no goroutines, no clock, no logging. Evaluate reads
// the State and the Image it is given and changes neither; call it on the goroutine
// that owns the State.
package whatif
