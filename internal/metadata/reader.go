package metadata

import (
	"errors"
	"fmt"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// UUID is a Kafka Uuid.
type UUID = kbin.UUID

// reader wraps kbin.Reader with the flexible-version helpers records need. When
// arena is set, int32 and uuid arrays are carved out of reused buffers.
type reader struct {
	kbin.Reader
	arena *arena
	// unknownTags counts the tagged fields skipped because the record's schema has no
	// such tag (a newer Kafka's).
	unknownTags int
}

// arena holds reusable backing storage for decoded arrays.
type arena struct {
	ints  []int32
	uuids []UUID
}

func (a *arena) reset() {
	a.ints = a.ints[:0]
	a.uuids = a.uuids[:0]
}

var (
	emptyInt32s = []int32{}
	emptyUUIDs  = []UUID{}
)

var errNull = errors.New("null in a non-nullable field")

// count reads a compact array length; a null array is an error unless nullable.
func (r *reader) count(nullable bool, minElem int) int {
	n := r.CompactArrayLen(minElem)
	if n < 0 && !nullable && r.Err() == nil {
		r.Fail(errNull)
	}
	return n
}

// int32s reads a compact []int32. Null is nil (or an error when not nullable); an
// empty nullable array is a non-nil empty slice; an empty non-nullable one is nil.
func (r *reader) int32s(nullable bool) []int32 {
	n := r.count(nullable, 4)
	if n < 0 || r.Err() != nil {
		return nil
	}
	if n == 0 {
		if nullable {
			return emptyInt32s
		}
		return nil
	}
	var s []int32
	if r.arena != nil {
		a := r.arena
		start := len(a.ints)
		a.ints = growInts(a.ints, n)
		s = a.ints[start : start+n : start+n]
	} else {
		s = make([]int32, n)
	}
	raw := r.Raw(4 * n)
	for i := range s {
		s[i] = int32(uint32(raw[4*i])<<24 | uint32(raw[4*i+1])<<16 | uint32(raw[4*i+2])<<8 | uint32(raw[4*i+3]))
	}
	return s
}

func growInts(s []int32, n int) []int32 {
	if len(s)+n <= cap(s) {
		return s[:len(s)+n]
	}
	// Old slices handed out stay valid: they keep the old backing array alive.
	ns := make([]int32, len(s)+n, max(2*cap(s), len(s)+n, 256))
	copy(ns, s)
	return ns
}

func growUUIDs(s []UUID, n int) []UUID {
	if len(s)+n <= cap(s) {
		return s[:len(s)+n]
	}
	// Old slices handed out stay valid: they keep the old backing array alive.
	ns := make([]UUID, len(s)+n, max(2*cap(s), len(s)+n, 64))
	copy(ns, s)
	return ns
}

// uuidArray reads a compact []uuid with the same null rules as int32s.
func (r *reader) uuidArray(nullable bool) []UUID {
	n := r.count(nullable, 16)
	if n < 0 || r.Err() != nil {
		return nil
	}
	if n == 0 {
		if nullable {
			return emptyUUIDs
		}
		return nil
	}
	var s []UUID
	if r.arena != nil {
		a := r.arena
		start := len(a.uuids)
		a.uuids = growUUIDs(a.uuids, n)
		s = a.uuids[start : start+n : start+n]
	} else {
		s = make([]UUID, n)
	}
	raw := r.Raw(16 * n)
	for i := range s {
		copy(s[i][:], raw[16*i:])
	}
	return s
}

// str reads a non-nullable compact string.
func (r *reader) str() string {
	s, ok := r.CompactNullableString()
	if !ok && r.Err() == nil {
		r.Fail(errNull)
	}
	return s
}

// nstr reads a nullable compact string.
func (r *reader) nstr() *string {
	s, ok := r.CompactNullableString()
	if !ok {
		return nil
	}
	return &s
}

// strs reads a non-nullable compact array of non-nullable compact strings.
func (r *reader) strs() []string {
	n := r.count(false, 1)
	if n <= 0 || r.Err() != nil {
		return nil
	}
	s := make([]string, 0, n)
	for range n {
		s = append(s, r.str())
	}
	return s
}

// bytes reads non-nullable compact bytes, sharing memory with the input.
func (r *reader) bytes() []byte {
	b := r.CompactBytes()
	if b == nil && r.Err() == nil {
		r.Fail(errNull)
	}
	return b
}

// skipTags skips a tagged-field section whose tags are all unknown, counting them.
func (r *reader) skipTags() {
	t := r.Tags()
	for {
		if _, _, ok := t.Next(); !ok {
			return
		}
		r.unknownTags++
	}
}

// field returns a reader over one tagged field's payload, sharing r's arena.
func (r *reader) field(payload []byte) reader {
	f := reader{arena: r.arena}
	f.Reset(payload)
	return f
}

// done checks that a tagged field's reader consumed its payload exactly, and moves
// its error to r.
func (r *reader) done(f *reader, tag uint64) {
	if err := f.Err(); err != nil {
		r.Fail(fmt.Errorf("tagged field %d: %w", tag, err))
	} else if f.Len() != 0 {
		r.Fail(fmt.Errorf("tagged field %d: %d bytes left over", tag, f.Len()))
	}
}

// badTag records a known tag used at a version where it is not valid.
func (r *reader) badTag(tag uint64, v int16) {
	r.Fail(fmt.Errorf("tag %d is not valid for version %d", tag, v))
}

// Append helpers.

func appendInt32s(b []byte, s []int32, nullable bool) []byte {
	if s == nil && nullable {
		return append(b, 0)
	}
	b = kbin.AppendCompactArrayLen(b, len(s))
	for _, v := range s {
		b = kbin.AppendInt32(b, v)
	}
	return b
}

func appendUUIDs(b []byte, s []UUID, nullable bool) []byte {
	if s == nil && nullable {
		return append(b, 0)
	}
	b = kbin.AppendCompactArrayLen(b, len(s))
	for _, v := range s {
		b = append(b, v[:]...)
	}
	return b
}

func appendStrs(b []byte, s []string) []byte {
	b = kbin.AppendCompactArrayLen(b, len(s))
	for _, v := range s {
		b = kbin.AppendCompactString(b, v)
	}
	return b
}

func appendNonNullBytes(b []byte, v []byte) []byte {
	if v == nil {
		v = []byte{}
	}
	return kbin.AppendCompactBytes(b, v)
}

// tagWriter collects tagged fields and appends the section.
type tagWriter struct {
	n   int
	buf [256]byte
	b   []byte
}

// add appends one tagged field whose payload is produced by f.
func (w *tagWriter) add(tag uint64, f func(b []byte) []byte) {
	if w.b == nil {
		w.b = w.buf[:0]
	}
	p := f(nil)
	w.b = kbin.AppendUvarint(w.b, tag)
	w.b = kbin.AppendUvarint(w.b, uint64(len(p)))
	w.b = append(w.b, p...)
	w.n++
}

func (w *tagWriter) appendTo(b []byte) []byte {
	b = kbin.AppendUvarint(b, uint64(w.n))
	return append(b, w.b...)
}
