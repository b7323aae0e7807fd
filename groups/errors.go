package groups

import (
	"errors"
	"fmt"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// ErrUnknownRecordType reports a key whose int16 record type this package does not
// know. Kafka's own loader skips such records ("a left over from an aborted upgrade");
// callers should count them and move on.
var ErrUnknownRecordType = errors.New("groups: unknown record type")

// ErrUnknownVersion reports a value whose int16 version this package cannot decode
// for its record type. Callers should count and skip the record.
var ErrUnknownVersion = errors.New("groups: unknown value version")

// ErrTruncated reports a key or value that ended before a field was complete. It is
// the same sentinel as kbin.ErrTruncated, so errors.Is works with either.
var ErrTruncated = kbin.ErrTruncated

// ErrLimit reports an array of more than 1 000 000 elements or a tagged-field
// section of more than 10 000 fields, which Kafka 4.4 refuses to decode too. It is
// the same sentinel as kbin.ErrLimit.
var ErrLimit = kbin.ErrLimit

// ErrCorrupt reports a key or value that cannot be a valid encoding: a negative
// length, a count larger than the input, or bytes left over after the last field.
// It is the same sentinel as kbin.ErrCorrupt.
var ErrCorrupt = kbin.ErrCorrupt

// Part names which half of a record an error is about.
type Part uint8

const (
	// PartKey is the record key (int16 type and key struct).
	PartKey Part = iota
	// PartValue is the record value (int16 version and value struct).
	PartValue
)

// String returns "key" or "value".
func (p Part) String() string {
	if p == PartKey {
		return "key"
	}
	return "value"
}

// DecodeError is returned by Decode for every record it cannot decode. It names the
// record type and value version (-1 when the value was not reached) and wraps one of
// ErrUnknownRecordType, ErrUnknownVersion, ErrTruncated, ErrCorrupt or ErrLimit.
type DecodeError struct {
	RecordType RecordType
	Version    int16 // value version; -1 if unknown or not read
	Part       Part  // where decoding failed
	Err        error
}

func (e *DecodeError) Error() string {
	if e.Part == PartValue && e.Version >= 0 {
		return fmt.Sprintf("groups: decode %v value v%d: %v", e.RecordType, e.Version, e.Err)
	}
	return fmt.Sprintf("groups: decode %v %v: %v", e.RecordType, e.Part, e.Err)
}

// Unwrap returns the underlying cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// ErrNotBroker reports a bootstrap server that closed the connection on a Metadata
// request, as a KRaft controller listener does: the bootstrap servers must name broker
// listeners.
var ErrNotBroker = errors.New("the server closed the connection on a Metadata request: is this a controller listener?")
