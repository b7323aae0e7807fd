package kbin

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestReaderPrimitives(t *testing.T) {
	in := []byte{
		0x01,       // bool
		0xff, 0xfe, // int16 -2
		0x00, 0x00, 0x01, 0x00, // int32 256
		0x03, // compact string len 2
		'h', 'i',
		0x00,                 // compact nullable string: null
		0x00, 0x02, 'o', 'k', // string
		0x03,       // zigzag varint -2
		0xac, 0x02, // uvarint 300
		0x02, 0x00, 0x01, 0x07, 0x05, 0x01, 0x09, // tagged: tag 0 size 1 [7], tag 5 size 1 [9]
	}
	r := NewReader(in)
	if !r.Bool() || r.Int16() != -2 || r.Int32() != 256 {
		t.Fatalf("fixed ints wrong, err=%v", r.Err())
	}
	if s := r.CompactString(); s != "hi" {
		t.Fatalf("compact string = %q", s)
	}
	if _, ok := r.CompactNullableString(); ok {
		t.Fatal("null compact string read as present")
	}
	if s := r.String(); s != "ok" {
		t.Fatalf("string = %q", s)
	}
	if v := r.Varint(); v != -2 {
		t.Fatalf("varint = %d", v)
	}
	if v := r.Uvarint(); v != 300 {
		t.Fatalf("uvarint = %d", v)
	}
	var got []uint64
	r.TaggedFields(func(tag uint64, f *Reader) bool {
		if tag == 0 {
			got = append(got, uint64(f.Int8()))
			return true
		}
		return false
	})
	if r.Err() != nil || len(got) != 1 || got[0] != 7 || r.Len() != 0 {
		t.Fatalf("tagged fields: got %v err %v left %d", got, r.Err(), r.Len())
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		read func(r *Reader)
		want error
	}{
		{"short int32", []byte{0, 1}, func(r *Reader) { r.Int32() }, ErrTruncated},
		{"string longer than input", []byte{0, 9, 'a'}, func(r *Reader) { _ = r.String() }, ErrTruncated},
		{"negative string length", []byte{0xff, 0xf0}, func(r *Reader) { _ = r.String() }, ErrCorrupt},
		{"array count beyond input", []byte{0x00, 0x0f, 0x42, 0x40}, func(r *Reader) { r.ArrayLen(1) }, ErrTruncated},
		// Kafka 4.4's caps: 1 000 000 elements, 10 000 tagged fields.
		{"array count beyond Kafka's cap", []byte{0x00, 0x0f, 0x42, 0x41}, func(r *Reader) { r.ArrayLen(1) }, ErrLimit},
		{"compact array count beyond Kafka's cap", binary.AppendUvarint(nil, MaxArrayLen+2), func(r *Reader) { r.CompactArrayLen(1) }, ErrLimit},
		{"compact array count at Kafka's cap", binary.AppendUvarint(nil, MaxArrayLen+1), func(r *Reader) { r.CompactArrayLen(1) }, ErrTruncated},
		{"tagged fields beyond Kafka's cap", binary.AppendUvarint(nil, MaxTaggedFields+1), func(r *Reader) { r.TaggedFields(nil) }, ErrLimit},
		{"tag cursor beyond Kafka's cap", binary.AppendUvarint(nil, MaxTaggedFields+1), func(r *Reader) { t := r.Tags(); t.Next() }, ErrLimit},
		{"tagged fields at Kafka's cap", binary.AppendUvarint(nil, MaxTaggedFields), func(r *Reader) { r.TaggedFields(nil) }, ErrCorrupt},
		{"overlong uvarint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, func(r *Reader) { r.Uvarint() }, ErrCorrupt},
		{"empty uvarint", nil, func(r *Reader) { r.Uvarint() }, ErrTruncated},
		{"tags out of order", []byte{0x02, 0x05, 0x00, 0x01, 0x00}, func(r *Reader) { r.TaggedFields(nil) }, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(tt.in)
			tt.read(r)
			if !errors.Is(r.Err(), tt.want) {
				t.Fatalf("err = %v, want %v", r.Err(), tt.want)
			}
			// Sticky: later reads stay zero and keep the first error.
			if r.Int64() != 0 || !errors.Is(r.Err(), tt.want) {
				t.Fatal("error was not sticky")
			}
		})
	}
}

func TestUUIDText(t *testing.T) {
	u := UUID{15: 1}
	if s := u.String(); s != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Fatalf("metadata topic id = %s", s)
	}
	back, err := ParseUUID(u.String())
	if err != nil || back != u {
		t.Fatalf("round trip: %v %v", back, err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte{0x03, 'h', 'i', 0x00, 0x01, 0x00, 0x01, 0x07})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(in)
		r.CompactString()
		r.CompactArrayLen(1)
		r.TaggedFields(func(uint64, *Reader) bool { return false })
		r.Varint()
		r.Bytes()
		if r.Offset() > len(in) || r.Len() < 0 {
			t.Fatalf("reader claims %d of %d bytes", r.Offset(), len(in))
		}
	})
}
