package recordbatch

import "errors"

// ErrTruncated reports input that ends before a batch is complete: the tail of a file
// that is still being written, or a tail torn by a crash. More bytes may complete it.
var ErrTruncated = errors.New("recordbatch: batch not complete")

// ErrCorrupt reports bytes that cannot be a valid batch or record: a bad CRC, a magic
// other than 2, a length that does not fit, records that do not add up to the batch.
var ErrCorrupt = errors.New("recordbatch: corrupt batch")

// ErrUnsupportedCodec reports a compressed batch whose codec this package cannot
// decompress (snappy, lz4, zstd). KRaft never compresses its batches.
var ErrUnsupportedCodec = errors.New("recordbatch: unsupported compression codec")

// ErrUnknownControlType reports a control record whose type this package does not know.
// Kafka reads such records as UNKNOWN and ignores them.
var ErrUnknownControlType = errors.New("recordbatch: unknown control record type")
