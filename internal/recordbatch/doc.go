// Package recordbatch decodes Kafka record batches (magic 2) as they are stored in log
// segments and KRaft snapshot files, the records inside them, and the control records
// that KRaft writes (LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion, Voters).
// It also encodes them, for tests and for tools that write metadata logs.
//
// Invariants:
//   - Decode checks the whole batch before returning it: the length, the magic, the
//     CRC-32C over bytes [21, end) and the attributes. Records are checked as they are
//     iterated: exactly NumRecords records, each consuming exactly its declared length,
//     with no bytes left over.
//   - Input that ends early is ErrTruncated (wait for more bytes); input that cannot be
//     valid is ErrCorrupt. Neither ever panics, and no function reads past its input.
//     A batch whose bytes are all present but whose CRC fails is ErrCorrupt; at the very
//     end of a file that is being written this can also be a write still in progress,
//     which a caller tailing a live file may want to retry before giving up.
//   - Decoding does not copy: a Batch's Records and a Record's Key, Value and headers
//     share memory with the input, except for compressed batches, which are decompressed
//     into a new buffer. Callers must not modify the input while they use the results.
//
// Batches are values; a RecordIter is not safe for concurrent use. The package keeps no
// state and does no I/O.
package recordbatch
