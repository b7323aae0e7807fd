package kbin

// StringBytes reads an int16-length string (classic encoding) and returns its bytes
// without copying them (they share memory with the input); ok is false for null.
// It lets a caller intern or compare a string without allocating.
func (r *Reader) StringBytes() (b []byte, ok bool) {
	n := r.length(int64(r.Int16()), 1)
	if n < 0 || r.err != nil {
		return nil, false
	}
	b = r.take(n)
	return b, r.err == nil
}

// CompactStringBytes reads a uvarint(len+1)-length string and returns its bytes
// without copying them; ok is false for null.
func (r *Reader) CompactStringBytes() (b []byte, ok bool) {
	n := r.compactLen(1, 0)
	if n < 0 {
		return nil, false
	}
	b = r.take(n)
	return b, r.err == nil
}
