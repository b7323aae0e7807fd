package kbin

import (
	"encoding/binary"
	"math"
)

// The Append functions encode Kafka's primitives at the end of a byte slice and
// return the extended slice. They mirror the Reader's methods.

// AppendInt8 appends a signed byte.
func AppendInt8(b []byte, v int8) []byte { return append(b, byte(v)) }

// AppendBool appends 1 for true and 0 for false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendInt16 appends a big-endian int16.
func AppendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }

// AppendUint16 appends a big-endian uint16.
func AppendUint16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

// AppendInt32 appends a big-endian int32.
func AppendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

// AppendUint32 appends a big-endian uint32.
func AppendUint32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

// AppendInt64 appends a big-endian int64.
func AppendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// AppendFloat64 appends a big-endian IEEE 754 double.
func AppendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

// AppendUUID appends the 16 bytes of u.
func AppendUUID(b []byte, u UUID) []byte { return append(b, u[:]...) }

// AppendUvarint appends an unsigned LEB128 varint.
func AppendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendVarint appends a zigzag varint.
func AppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendCompactString appends uvarint(len+1) and the bytes of s.
func AppendCompactString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s))+1)
	return append(b, s...)
}

// AppendCompactNullableString appends a compact string, or the null marker 0 when s is nil.
func AppendCompactNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return AppendCompactString(b, *s)
}

// AppendCompactBytes appends uvarint(len+1) and v; a nil v is written as null (0).
func AppendCompactBytes(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

// AppendCompactArrayLen appends the compact count of an array of n elements; n < 0 is null.
func AppendCompactArrayLen(b []byte, n int) []byte {
	if n < 0 {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}
