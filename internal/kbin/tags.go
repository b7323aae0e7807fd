package kbin

import "fmt"

// Reset makes r read b from its start and clears any recorded error, so one Reader
// (for example a stack variable) can be reused without allocating.
func (r *Reader) Reset(b []byte) { *r = Reader{b: b} }

// Tags is a cursor over a tagged-field section that does not allocate. Obtain it with
// Reader.Tags and call Next until it returns false; errors are recorded on the
// Reader that created it.
type Tags struct {
	r    *Reader
	left uint64
	prev int64
}

// Tags reads the field count of a tagged-field section and returns a cursor over its
// fields. Tags must ascend, as every Kafka writer emits them.
func (r *Reader) Tags() Tags {
	n := r.Uvarint()
	if r.err == nil && n > MaxTaggedFields {
		r.Fail(fmt.Errorf("%d tagged fields, more than %d: %w", n, MaxTaggedFields, ErrLimit))
	}
	if r.err == nil && n > uint64(r.Len()/2) {
		r.Fail(fmt.Errorf("%d tagged fields in %d bytes: %w", n, r.Len(), ErrCorrupt))
	}
	if r.err != nil {
		n = 0
	}
	return Tags{r: r, left: n, prev: -1}
}

// Next returns the next field's tag and payload (sharing memory with the input).
// It returns false at the end of the section or on error.
func (t *Tags) Next() (tag uint64, payload []byte, ok bool) {
	r := t.r
	if t.left == 0 || r.err != nil {
		return 0, nil, false
	}
	t.left--
	tag = r.Uvarint()
	size := r.Uvarint()
	if r.err != nil {
		return 0, nil, false
	}
	if tag > 1<<31 || int64(tag) <= t.prev {
		r.Fail(fmt.Errorf("tag %d after tag %d: %w", tag, t.prev, ErrCorrupt))
		return 0, nil, false
	}
	if size > uint64(r.Len()) {
		r.Fail(fmt.Errorf("tagged field %d of %d bytes, %d left: %w", tag, size, r.Len(), ErrTruncated))
		return 0, nil, false
	}
	t.prev = int64(tag)
	return tag, r.take(int(size)), true
}
