// Package metadata decodes and encodes the records of Kafka's KRaft metadata log
// (the values of data records in __cluster_metadata batches and snapshots), every
// record type and version Kafka defines up to 4.4.
//
// A value is framed as uvarint frame version (1), uvarint apiKey, uvarint version,
// then the record body in Kafka's flexible encoding; every byte must be consumed.
// Fields absent at a version, and tagged fields that are not present, take Kafka's
// defaults (PartitionChangeRecord.Leader = -2 "unchanged", nullable arrays = nil
// "unchanged", ...). Unknown tagged fields are skipped. A tag Kafka knows but that is
// not valid at the record's version is an error, as in Kafka.
//
// Nullable strings are *string and nullable arrays distinguish nil (null) from an
// empty non-nil slice; non-nullable empty arrays decode as nil.
//
// Errors are *DecodeError values wrapping ErrUnknownType or ErrUnknownVersion (a
// record this package cannot know: count it and skip it) or ErrCorrupt (bytes that
// cannot be the record they claim to be).
//
// Decode allocates every record it returns. A Decoder reuses memory across calls and
// does not allocate for the records a large snapshot is made of; what it returns is
// only valid until its next call. A BatchDecoder does the same for many records at
// once, valid until its Reset, so that decoded batches can be handed to another
// goroutine. None is safe for concurrent use; the package has no state and does no
// I/O. Byte-slice fields (SCRAM salts and keys) share memory with
// the input.
package metadata
