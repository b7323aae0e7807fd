package kbin

import (
	"errors"
	"testing"
)

func TestStringBytes(t *testing.T) {
	in := []byte{0x00, 0x02, 'o', 'k', 0xff, 0xff, 0x03, 'h', 'i', 0x00, 0x01, 0x00, 0x05, 'x'}
	r := NewReader(in)
	if b, ok := r.StringBytes(); !ok || string(b) != "ok" {
		t.Fatalf("StringBytes = %q, %v", b, ok)
	}
	if b, ok := r.StringBytes(); ok || b != nil {
		t.Fatalf("null StringBytes = %q, %v", b, ok)
	}
	if b, ok := r.CompactStringBytes(); !ok || string(b) != "hi" {
		t.Fatalf("CompactStringBytes = %q, %v", b, ok)
	}
	if b, ok := r.CompactStringBytes(); ok || b != nil {
		t.Fatalf("null CompactStringBytes = %q, %v", b, ok)
	}
	if b, ok := r.CompactStringBytes(); !ok || len(b) != 0 {
		t.Fatalf("empty CompactStringBytes = %q, %v", b, ok)
	}
	if _, ok := r.StringBytes(); ok || !errors.Is(r.Err(), ErrTruncated) {
		t.Fatalf("short string: ok=%v err=%v", ok, r.Err())
	}
	if r.Offset() > len(in) {
		t.Fatal("read past input")
	}
}
