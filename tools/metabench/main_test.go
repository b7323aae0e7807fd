package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{3}, 3},
		{"odd, unsorted", []float64{9, 1, 5}, 5},
		{"even", []float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in, func(f float64) float64 { return f }); got != tc.want {
			t.Errorf("%s: median(%v) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestReadFloor: the floor reads and decodes every data record of a metagen snapshot,
// with the window the benchmark uses and with one shorter than a record (the window
// grows), and fails on a flipped byte (the batch's CRC).
func TestReadFloor(t *testing.T) {
	c, err := metagen.ForKafka("4.3.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions = 20, 30
	files, err := metagen.WriteDir(filepath.Join(t.TempDir(), "__cluster_metadata-0"), c, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, window := range []int{floorWindow, 16} {
		got, err := readFloor(files.Snapshot, window)
		if err != nil || got != files.SnapshotStats.Records {
			t.Fatalf("window %d: %d records, %v; want %d", window, got, err, files.SnapshotStats.Records)
		}
	}
	raw, err := os.ReadFile(files.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x40
	bad := filepath.Join(t.TempDir(), "bad.checkpoint")
	if err := os.WriteFile(bad, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := readFloor(bad, floorWindow); !errors.Is(err, recordbatch.ErrCorrupt) {
		t.Fatalf("a flipped byte: %d records, %v; want ErrCorrupt", n, err)
	}
}
