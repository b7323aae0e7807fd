package metagen

import "errors"

// ErrConfig reports a Config that cannot describe a valid cluster or snapshot (a
// replication factor above the broker count, a metadata.version Kafka 4.x cannot read,
// a batch limit too small for one group of records). Errors wrap it with the field
// and value at fault.
var ErrConfig = errors.New("metagen: invalid config")

// ErrUnknownRelease reports a Kafka release whose metadata.version and default
// features this package does not know; set Config.MetadataVersion and Features
// yourself for it.
var ErrUnknownRelease = errors.New("metagen: unknown Kafka release")
