// Package metagen writes synthetic KRaft metadata logs for benchmarks and tests: a
// snapshot (.checkpoint) of a cluster of any size, laid out the way Kafka's
// RecordsSnapshotWriter and MetadataImage.write lay it out
// (docs/metadata-log.md#snapshots), and optionally a log segment (.log) of partition
// leader changes after it, in the Config's Order: partition after partition, or a
// rolling restart broker by broker as Kafka's controller writes one.
//
// Snapshot layout:
//   - a control batch at offset 0 with the SnapshotHeaderRecord, then, when
//     kraft.version >= 1, the KRaftVersionRecord and the VotersRecord of the controllers;
//   - data batches: the FeatureLevelRecord of metadata.version first (always at version
//     0), the other finalized features, one RegisterBrokerRecord per broker (with its
//     rack and one log directory), one RegisterControllerRecord per controller (MV >=
//     3.7-IV0), then per topic its TopicRecord followed by its PartitionRecords;
//   - a control batch with the SnapshotFooterRecord.
//
// Records go to the batch writer in groups of 1024, as Kafka's SnapshotEmitter hands
// them on; a group never spans two batches and a batch is closed when the next group
// would make it larger than MaxBatchBytes (8 MiB, Kafka's limit). Record versions
// follow metadata.version as Kafka's controller chooses them (RegisterBrokerRecord v4
// from 4.3-IV0, PartitionRecord v2 from 4.0-IV1, directories from 3.7-IV2).
//
// Everything is a pure function of the Config: the same Config always gives the same
// bytes, and the Config answers what any topic, partition or broker must look like
// (TopicName, TopicID, Replicas, Rack, ...) so that a test can check a reader's view
// without keeping the records. Writers stream: memory stays at about one batch
// whatever the size of the cluster.
//
// A Config is a plain value; the functions keep no state and are safe for concurrent
// use. The only I/O is WriteDir, which writes files into a directory.
package metagen
