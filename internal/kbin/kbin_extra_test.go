package kbin

import (
	"math"
	"testing"
)

func TestTags(t *testing.T) {
	in := []byte{0x02, 0x00, 0x01, 0x07, 0x05, 0x02, 0x08, 0x09, 0xaa}
	r := NewReader(in)
	tags := r.Tags()
	var got []uint64
	var payloads [][]byte
	for {
		tag, p, ok := tags.Next()
		if !ok {
			break
		}
		got = append(got, tag)
		payloads = append(payloads, p)
	}
	if r.Err() != nil || len(got) != 2 || got[1] != 5 || string(payloads[1]) != "\x08\x09" || r.Len() != 1 {
		t.Fatalf("tags %v payloads %v err %v left %d", got, payloads, r.Err(), r.Len())
	}
	for _, bad := range [][]byte{
		{0x02, 0x05, 0x00, 0x01, 0x00}, // descending
		{0x01, 0x00, 0x05, 0x00},       // payload past end
		{0x7f, 0x00},                   // count beyond input
	} {
		r := NewReader(bad)
		tags := r.Tags()
		for {
			if _, _, ok := tags.Next(); !ok {
				break
			}
		}
		if r.Err() == nil {
			t.Fatalf("%x: no error", bad)
		}
	}
	r.Reset([]byte{1})
	if r.Err() != nil || r.Int8() != 1 {
		t.Fatal("Reset did not clear the reader")
	}
}

func TestAppendRoundTrip(t *testing.T) {
	s := "hello"
	var b []byte
	b = AppendBool(b, true)
	b = AppendInt8(b, -3)
	b = AppendInt16(b, -2)
	b = AppendUint16(b, 65000)
	b = AppendInt32(b, math.MinInt32)
	b = AppendUint32(b, math.MaxUint32)
	b = AppendInt64(b, -1<<40)
	b = AppendFloat64(b, 1.5)
	b = AppendUUID(b, UUID{15: 1})
	b = AppendUvarint(b, 300)
	b = AppendVarint(b, -300)
	b = AppendCompactString(b, s)
	b = AppendCompactNullableString(b, nil)
	b = AppendCompactBytes(b, []byte{})
	b = AppendCompactBytes(b, nil)
	b = AppendCompactArrayLen(b, -1)
	b = AppendCompactArrayLen(b, 2)
	r := NewReader(b)
	ok := r.Bool() && r.Int8() == -3 && r.Int16() == -2 && r.Uint16() == 65000 &&
		r.Int32() == math.MinInt32 && r.Uint32() == math.MaxUint32 && r.Int64() == -1<<40 &&
		r.Float64() == 1.5 && r.UUID() == UUID{15: 1} && r.Uvarint() == 300 && r.Varint() == -300 &&
		r.CompactString() == s
	if _, present := r.CompactNullableString(); present {
		ok = false
	}
	if v := r.CompactBytes(); v == nil || len(v) != 0 {
		ok = false
	}
	if r.CompactBytes() != nil || r.CompactArrayLen(1) != -1 {
		ok = false
	}
	if r.Uvarint() != 3 {
		ok = false
	}
	if !ok || r.Err() != nil || r.Len() != 0 {
		t.Fatalf("round trip failed: err %v left %d", r.Err(), r.Len())
	}
}
