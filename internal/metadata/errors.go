package metadata

import (
	"errors"
	"fmt"
)

// ErrUnknownType reports an apiKey this package does not know (a newer Kafka or a
// fork). The record cannot be interpreted; callers count and skip it.
var ErrUnknownType = errors.New("metadata: unknown record type")

// ErrUnknownVersion reports a known record type at a version newer than this package
// knows. Callers count and skip it.
var ErrUnknownVersion = errors.New("metadata: unknown record version")

// ErrCorrupt reports a value that cannot be the record it claims to be: a bad frame
// version, a body that ends early, a null in a non-nullable field, trailing bytes.
var ErrCorrupt = errors.New("metadata: corrupt record")

// DecodeError is the error of every failed decode.
type DecodeError struct {
	// APIKey and Version are what the frame said; -1 when the frame ended before them.
	APIKey  int
	Version int
	// Offset is the log offset of the record when the caller knows it and sets it
	// (Decode leaves it -1).
	Offset int64
	// Err wraps ErrUnknownType, ErrUnknownVersion or ErrCorrupt, with detail.
	Err error
}

func (e *DecodeError) Error() string {
	s := "metadata: "
	if e.APIKey >= 0 {
		s += fmt.Sprintf("%s (apiKey %d) version %d: ", RecordType(e.APIKey), e.APIKey, e.Version)
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf("offset %d: ", e.Offset)
	}
	return s + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Unknown reports whether the record is of a type or version this package does not
// know, as opposed to corrupt.
func (e *DecodeError) Unknown() bool {
	return errors.Is(e.Err, ErrUnknownType) || errors.Is(e.Err, ErrUnknownVersion)
}
