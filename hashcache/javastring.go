package hashcache

import (
	"encoding/binary"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file holds the Java String semantics that the kafka scheme needs: lengths
// in UTF-16 code units, UTF-16LE encoding as hash4j's putChars writes it, and
// String.compareTo order. Go strings are decoded as by a range loop: an invalid
// UTF-8 byte is one U+FFFD.

// isASCII reports whether s has only bytes below 0x80.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// utf16Len returns the number of UTF-16 code units of s.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// appendUTF16LE appends the UTF-16 code units of s, 2 bytes little-endian each.
func appendUTF16LE(b []byte, s string) []byte {
	i := 0
	for ; i < len(s) && s[i] < utf8.RuneSelf; i++ {
		b = append(b, s[i], 0)
	}
	for _, r := range s[i:] {
		if r < 0x10000 {
			b = binary.LittleEndian.AppendUint16(b, uint16(r))
			continue
		}
		r -= 0x10000
		b = binary.LittleEndian.AppendUint16(b, uint16(0xd800+(r>>10)))
		b = binary.LittleEndian.AppendUint16(b, uint16(0xdc00+(r&0x3ff)))
	}
	return b
}

// appendJavaString appends s as hash4j's putString does: UTF-16LE code units, then
// their number as int32 little-endian.
func appendJavaString(b []byte, s string) []byte {
	// ASCII (topic names always are) eight bytes at a time, each byte one code unit.
	start, rest := len(b), s
	b = slices.Grow(b, 2*len(s)+4)
	for ; len(rest) >= 8; rest = rest[8:] {
		x := uint64(rest[0]) | uint64(rest[1])<<8 | uint64(rest[2])<<16 | uint64(rest[3])<<24 |
			uint64(rest[4])<<32 | uint64(rest[5])<<40 | uint64(rest[6])<<48 | uint64(rest[7])<<56
		if x&0x8080808080808080 != 0 {
			break
		}
		b = binary.LittleEndian.AppendUint64(b, widen(uint32(x)))
		b = binary.LittleEndian.AppendUint64(b, widen(uint32(x>>32)))
	}
	if isASCII(rest) {
		for i := range len(rest) {
			b = append(b, rest[i], 0)
		}
		return binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	}
	b = appendUTF16LE(b[:start], s)
	return binary.LittleEndian.AppendUint32(b, uint32(utf16Len(s)))
}

// widen returns the four bytes of x as four 16-bit units, little-endian.
func widen(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff0000ffff
	return (v | v<<8) & 0x00ff00ff00ff00ff
}

// firstUnit returns the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	return 0xd800 + (r-0x10000)>>10
}

// javaCompare orders strings as Java's String.compareTo does: by UTF-16 code
// units, a proper prefix first. It returns -1, 0 or +1.
func javaCompare(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	for {
		if a == "" || b == "" {
			switch {
			case a == b:
				return 0
			case a == "":
				return -1
			default:
				return 1
			}
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			// Valid runes are never surrogates, so a BMP rune never equals the
			// high surrogate of a supplementary one. Equal high surrogates mean
			// both are supplementary, where rune order is low-surrogate order.
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua == ub {
				ua, ub = ra, rb
			}
			if ua < ub {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
}
