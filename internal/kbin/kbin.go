// Package kbin reads Kafka's binary primitives: big-endian fixed-width integers,
// zigzag and unsigned varints, classic and compact strings, bytes and arrays, UUIDs
// and tagged-field sections (KIP-482).
//
// A Reader is a cursor over one byte slice. The first failure is sticky: after it
// every read returns a zero value and Err reports what went wrong and where. A Reader
// never reads past its slice and never panics on any input. A Reader is not safe for
// concurrent use.
package kbin

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrTruncated reports input that ended before a value was complete.
var ErrTruncated = errors.New("kbin: input ended early")

// ErrCorrupt reports input that cannot be a valid encoding (a negative length, a
// varint longer than ten bytes, a count larger than the remaining input).
var ErrCorrupt = errors.New("kbin: corrupt input")

// ErrLimit reports an array or tagged-field section with more entries than Kafka
// itself accepts (MaxArrayLen, MaxTaggedFields).
var ErrLimit = errors.New("kbin: count beyond Kafka's limit")

// MaxArrayLen and MaxTaggedFields are the largest array and tagged-field section Kafka
// 4.4's readers accept (more fail to decode there too); a Reader refuses larger ones
// with ErrLimit before reading them.
const (
	MaxArrayLen     = 1_000_000
	MaxTaggedFields = 10_000
)

// UUID is a Kafka Uuid: most significant long then least significant long, big-endian.
type UUID [16]byte

// String returns Kafka's text form: URL-safe base64 without padding.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// ParseUUID parses Kafka's text form of a UUID.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("kbin: bad uuid %q", s)
	}
	copy(u[:], b)
	return u, nil
}

// Reader decodes primitives from a byte slice.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

// Len is the number of bytes left.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Fail records err (wrapped with the current offset) unless an error is already recorded.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("at byte %d: %w", r.off, err)
	}
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 {
		r.Fail(ErrCorrupt)
		return nil
	}
	if n > len(r.b)-r.off {
		r.Fail(ErrTruncated)
		return nil
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s
}

// Raw returns the next n bytes, sharing memory with the input.
func (r *Reader) Raw(n int) []byte { return r.take(n) }

// Rest returns every byte left, sharing memory with the input.
func (r *Reader) Rest() []byte { return r.take(r.Len()) }

// Bool reads one byte; any non-zero value is true.
func (r *Reader) Bool() bool { return r.Int8() != 0 }

// Int8 reads a signed byte.
func (r *Reader) Int8() int8 {
	b := r.take(1)
	if b == nil {
		return 0
	}
	return int8(b[0])
}

// Int16 reads a big-endian int16.
func (r *Reader) Int16() int16 {
	b := r.take(2)
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}

// Uint16 reads a big-endian uint16.
func (r *Reader) Uint16() uint16 { return uint16(r.Int16()) }

// Int32 reads a big-endian int32.
func (r *Reader) Int32() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// Uint32 reads a big-endian uint32.
func (r *Reader) Uint32() uint32 { return uint32(r.Int32()) }

// Int64 reads a big-endian int64.
func (r *Reader) Int64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Float64 reads a big-endian IEEE 754 double.
func (r *Reader) Float64() float64 { return math.Float64frombits(uint64(r.Int64())) }

// UUID reads 16 bytes.
func (r *Reader) UUID() UUID {
	var u UUID
	copy(u[:], r.take(16))
	return u
}

// Uvarint reads an unsigned LEB128 varint of at most 64 bits.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	switch {
	case n == 0:
		r.Fail(ErrTruncated)
		return 0
	case n < 0:
		r.Fail(ErrCorrupt)
		return 0
	}
	r.off += n
	return v
}

// Varint reads a zigzag varint (Kafka's varint and varlong share this encoding).
func (r *Reader) Varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	switch {
	case n == 0:
		r.Fail(ErrTruncated)
		return 0
	case n < 0:
		r.Fail(ErrCorrupt)
		return 0
	}
	r.off += n
	return v
}

// length converts a decoded length to int, failing when it is negative beyond the
// null marker or larger than the input left (each element takes at least min bytes).
func (r *Reader) length(n int64, min int) int {
	if n < -1 || (min > 0 && n > int64(r.Len()/min)) {
		if n > 0 {
			r.Fail(ErrTruncated)
		} else {
			r.Fail(ErrCorrupt)
		}
		return -1
	}
	return int(n)
}

// String reads an int16-length UTF-8 string (classic encoding). Null reads as "".
func (r *Reader) String() string {
	s, _ := r.NullableString()
	return s
}

// NullableString reads an int16-length string; ok is false for null.
func (r *Reader) NullableString() (s string, ok bool) {
	n := r.length(int64(r.Int16()), 1)
	if n < 0 || r.err != nil {
		return "", false
	}
	return string(r.take(n)), r.err == nil
}

// CompactString reads a uvarint(len+1)-length string. Null reads as "".
func (r *Reader) CompactString() string {
	s, _ := r.CompactNullableString()
	return s
}

// CompactNullableString reads a compact string; ok is false for null.
func (r *Reader) CompactNullableString() (s string, ok bool) {
	n := r.compactLen(1, 0)
	if n < 0 {
		return "", false
	}
	return string(r.take(n)), r.err == nil
}

// Bytes reads int32-length bytes (classic encoding); null reads as nil.
func (r *Reader) Bytes() []byte {
	n := r.length(int64(r.Int32()), 1)
	if n < 0 || r.err != nil {
		return nil
	}
	return r.take(n)
}

// CompactBytes reads uvarint(len+1)-length bytes; null reads as nil.
func (r *Reader) CompactBytes() []byte {
	n := r.compactLen(1, 0)
	if n < 0 {
		return nil
	}
	return r.take(n)
}

// ArrayLen reads an int32 element count (classic encoding); -1 means null.
// minElem is the fewest bytes one element can take; counts that cannot fit are corrupt.
func (r *Reader) ArrayLen(minElem int) int {
	if r.err != nil {
		return -1
	}
	n := int64(r.Int32())
	if r.err == nil && n > MaxArrayLen {
		r.Fail(fmt.Errorf("array of %d elements, more than %d: %w", n, MaxArrayLen, ErrLimit))
		return -1
	}
	return r.length(n, minElem)
}

// CompactArrayLen reads a uvarint(count+1) element count; -1 means null.
func (r *Reader) CompactArrayLen(minElem int) int { return r.compactLen(minElem, MaxArrayLen) }

// compactLen reads a uvarint(len+1) length of elements of at least min bytes; more
// than limit elements (0: no limit) fail with ErrLimit.
func (r *Reader) compactLen(min int, limit uint64) int {
	u := r.Uvarint()
	if r.err != nil {
		return -1
	}
	if limit > 0 && u > limit+1 {
		r.Fail(fmt.Errorf("array of %d elements, more than %d: %w", u-1, limit, ErrLimit))
		return -1
	}
	if u > math.MaxInt32 {
		r.Fail(ErrCorrupt)
		return -1
	}
	return r.length(int64(u)-1, min)
}

// TaggedFields reads a tagged-field section. For each field, fn is called with its tag
// and a Reader over exactly its payload; fn returns false for a tag it does not know,
// which is then skipped. fn may be nil to skip every field. Tags must ascend.
func (r *Reader) TaggedFields(fn func(tag uint64, field *Reader) bool) {
	n := r.Uvarint()
	if r.err != nil {
		return
	}
	if n > MaxTaggedFields {
		r.Fail(fmt.Errorf("%d tagged fields, more than %d: %w", n, MaxTaggedFields, ErrLimit))
		return
	}
	if n > uint64(r.Len()/2) {
		r.Fail(ErrCorrupt)
		return
	}
	prev := int64(-1)
	for i := uint64(0); i < n && r.err == nil; i++ {
		tag := r.Uvarint()
		size := r.Uvarint()
		if r.err != nil {
			return
		}
		if int64(tag) <= prev || size > uint64(r.Len()) {
			r.Fail(ErrCorrupt)
			return
		}
		prev = int64(tag)
		payload := r.take(int(size))
		if fn != nil {
			sub := NewReader(payload)
			if fn(tag, sub) && sub.err != nil {
				r.Fail(fmt.Errorf("tagged field %d: %w", tag, sub.err))
			}
		}
	}
}
