package recordbatch

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// records describes every record of an iterator, and its error.
func records(it RecordIter) []string {
	var out []string
	for it.Next() {
		r := it.Record()
		out = append(out, fmt.Sprintf("%d ts=%d key=%x value=%x headers=%v", it.Offset(), r.TimestampDelta, r.Key, r.Value, r.Headers()))
	}
	if it.Err() != nil {
		out = append(out, "error")
	}
	return out
}

// streamed reads the batch at the start of in through a Stream, window bytes at a time
// (the window grows as the observer's does when a record does not fit), and describes
// its records as records does; err is the first error of NewStream, Next, a piece's
// records or Close.
func streamed(in []byte, window int) (recs []string, size int64, err error) {
	if len(in) < HeaderSize {
		return nil, 0, ErrTruncated
	}
	st, size, err := NewStream(in)
	if err != nil {
		return nil, 0, err
	}
	if size > int64(len(in)) {
		return nil, size, ErrTruncated
	}
	rest := in[HeaderSize:size]
	buf := make([]byte, 0, window)
	for st.Left() > 0 {
		k := min(cap(buf)-len(buf), len(rest))
		buf, rest = append(buf, rest[:k]...), rest[k:]
		piece, used, err := st.Next(buf)
		if err != nil {
			return recs, size, err
		}
		if used == 0 {
			buf = append(make([]byte, 0, 2*cap(buf)), buf...)
			continue
		}
		for _, r := range records(piece.Iter()) {
			if r == "error" {
				return recs, size, ErrCorrupt
			}
			recs = append(recs, r)
		}
		buf = append(buf[:0], buf[used:]...)
	}
	return recs, size, st.Close()
}

// decoded is streamed's result from Decode and Iter of the whole batch.
func decoded(in []byte) ([]string, int64, error) {
	b, err := Decode(in)
	if err != nil {
		return nil, 0, err
	}
	recs := records(b.Iter())
	if n := len(recs); n > 0 && recs[n-1] == "error" {
		return recs[:n-1], int64(b.Size()), ErrCorrupt
	}
	return recs, int64(b.Size()), nil
}

// TestStreamMatchesDecode: every uncompressed batch of the fixtures (snapshots and
// segments written by real Kafkas) read through a Stream in windows of any size gives
// the records Decode and Iter give, and a changed byte anywhere fails it.
func TestStreamMatchesDecode(t *testing.T) {
	batches := 0
	for _, in := range fuzzSeeds(t) {
		for len(in) >= HeaderSize {
			want, size, err := decoded(in)
			if err != nil {
				break
			}
			b, _ := Decode(in)
			if b.Codec() == CodecNone {
				batches++
				for _, w := range []int{1, 7, 64, 1000, int(size)} {
					got, n, err := streamed(in, w)
					if err != nil || n != size || !reflect.DeepEqual(got, want) {
						t.Fatalf("batch at %d, window %d: %d records, size %d, %v; want %d records, size %d", b.BaseOffset, w, len(got), n, err, len(want), size)
					}
				}
				for _, at := range []int{offsetAttributes + 2, HeaderSize, int(size) - 1} {
					bad := append([]byte(nil), in[:size]...)
					bad[at] ^= 0x40
					if _, _, err := streamed(bad, 64); err == nil {
						t.Fatalf("batch at %d with byte %d changed: no error", b.BaseOffset, at)
					}
				}
			}
			in = in[size:]
		}
	}
	if batches < 10 {
		t.Fatalf("only %d uncompressed batches in the fixtures", batches)
	}
}

// TestStreamErrors: what a Stream refuses, and how.
func TestStreamErrors(t *testing.T) {
	one := unhex(t, specDataBatch)
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"short header":                 {one[:HeaderSize-1], ErrTruncated},
		"magic":                        {rewrite(one, func(b []byte) { b[offsetMagic] = 1 }), ErrCorrupt},
		"crc":                          {flipCRC(one), ErrCorrupt},
		"compressed":                   {rewrite(one, func(b []byte) { b[offsetAttributes+1] |= byte(CodecGzip) }), ErrUnsupportedCodec},
		"records > size":               {rewrite(one, func(b []byte) { b[57+3] += 100 }), ErrCorrupt},
		"one fewer record, bytes left": {rewrite(one, func(b []byte) { b[57+3]-- }), ErrCorrupt},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := streamed(c.in, 16)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

// FuzzStream: for any bytes, a Stream accepts the first batch exactly when Decode and
// Iter do (an uncompressed one), with the same records, whatever the window.
func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint16(100))
	}
	f.Fuzz(func(t *testing.T, in []byte, window uint16) {
		want, wsize, werr := decoded(in)
		if werr == nil {
			if b, _ := Decode(in); b.Codec() != CodecNone {
				return
			}
		}
		got, size, err := streamed(in, int(window)+1)
		if (err == nil) != (werr == nil) {
			t.Fatalf("stream: %v, decode: %v", err, werr)
		}
		if err == nil && (size != wsize || !reflect.DeepEqual(got, want)) {
			t.Fatalf("stream gives %d records of a %d-byte batch, decode %d of %d", len(got), size, len(want), wsize)
		}
	})
}

// flipCRC is b with one bit of its CRC changed.
func flipCRC(b []byte) []byte {
	b = append([]byte(nil), b...)
	b[offsetCRC] ^= 1
	return b
}
