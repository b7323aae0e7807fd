package image

import (
	"reflect"
	"testing"
	"unsafe"
)

func TestPartitionSlotSize(t *testing.T) {
	if s := unsafe.Sizeof(partition{}); s > 28 {
		t.Fatalf("partition slot is %d bytes, want <= 28 (a leader change copies a leaf of 32 slots)", s)
	}
}

// TestPartitionSlotHoldsNoPointer: a leaf's slots are allocated noscan only while the
// slot type holds no pointer, so the collector never scans the image's partitions.
func TestPartitionSlotHoldsNoPointer(t *testing.T) {
	typ := reflect.TypeFor[partition]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch k := f.Type.Kind(); {
		case k >= reflect.Int && k <= reflect.Uint64:
		case k == reflect.Array && f.Type.Elem().Kind() == reflect.Uint8:
		default:
			t.Errorf("partition.%s is a %s: the slot must hold only integers", f.Name, f.Type)
		}
	}
}
