// Package image holds the KRaft cluster metadata as an immutable Image, and a Delta
// that replays metadata records on top of one Image and applies them to produce the
// next, reporting what changed. It follows the vocabulary and the replay rules of
// Kafka's own image package (MetadataImage, MetadataDelta, replay, apply).
//
// Invariants:
//   - An Image never changes. It is safe to share between goroutines and to keep.
//   - Applying a Delta costs O(what changed), not O(image): topics, names and brokers
//     live in persistent hash tries and each topic's partitions in a persistent radix
//     trie, so an Image shares everything unchanged with the Image it came from.
//   - Partitions are stored compactly: one 28-byte slot each, holding no pointer, and
//     one run of int32 for its lists (each of at most 255 replicas), shared by the
//     partitions with the same lists (a Delta interns them; a leader change keeps
//     them), carved from shared 512-byte chunks. A slot names its run by an index
//     into its leaf's table of chunks and an offset, so the collector scans one
//     pointer per chunk a leaf uses, never the slots. A leaf's table is shared by
//     the versions of the leaf and never changed; a Delta that stores a list in a
//     chunk the leaf's table lacks gives the copied leaf a new table. A 1M-partition
//     image with three replicas and a directory per replica holds about 35 bytes of
//     heap per partition (TestHeapPerPartition, bench/metadata.sh).
//   - Each topic keeps the stamps (offset, batch time; Delta.At) of the records that
//     created it, last added partitions and last changed a replica list; each broker id
//     the stamp of its last rack change; the image remembers the last 1,024 to 2,048
//     deleted topics. They cost 48 bytes per topic and a bounded list (stamp.go).
//   - Records between a BeginTransactionRecord and its EndTransactionRecord become
//     visible together; records between a Begin and an AbortTransactionRecord never
//     reach an Image (Kafka's intended semantics, docs/metadata-log.md#transactions).
//   - A record that Kafka would reject (an unknown partition, a stale broker epoch) is
//     returned as an error by Replay and not applied; the Delta stays usable.
//
// Concurrency: a Delta is not safe for concurrent use; one goroutine owns it. Images
// may be read by any number of goroutines, for example through an atomic.Pointer.
//
// The package is pure: no I/O, no goroutines, no clock, no logging.
package image
