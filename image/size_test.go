package image

import (
	"testing"
	"unsafe"
)

func TestPartitionSlotSize(t *testing.T) {
	if s := unsafe.Sizeof(partition{}); s > 32 {
		t.Fatalf("partition slot is %d bytes, want <= 32 (a leader change copies a leaf of 32 slots)", s)
	}
}
