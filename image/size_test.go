package image

import (
	"testing"
	"unsafe"
)

func TestPartitionSlotSize(t *testing.T) {
	if s := unsafe.Sizeof(partition{}); s > 56 {
		t.Fatalf("partition slot is %d bytes, want <= 56", s)
	}
}
