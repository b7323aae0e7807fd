package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestParseLoaderLog reads a log of Kafka 4.3.1's metadata loader written through
// loaderLog4j (testdata/loader-rolling-4.3.1.log: `metabench -changes 20000 -topics
// 200 -partitions 50 -runs 1 -keep -dir DIR`, DIR/loader-rolling-1.log):
// the burst runs from the image applied after the snapshot's last batch (offset 10223)
// to the one applied after the segment's last (30221), 24 batches; a log cut short
// or an offset no batch ends at is an error naming it.
func TestParseLoaderLog(t *testing.T) {
	raw, err := os.ReadFile("testdata/loader-rolling-4.3.1.log")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := parseLoaderLog(bytes.NewReader(raw), 10223, 30221)
	if err != nil {
		t.Fatal(err)
	}
	// The lines of the two applied images, found here by their text.
	applied := func(offset string) int64 {
		t.Helper()
		lines := strings.Split(string(raw), "\n")
		for i, l := range lines {
			if strings.Contains(l, "and "+offset+" from 1 batch(es)") {
				stamp, _, _ := strings.Cut(lines[i+1], " ")
				n, err := strconv.ParseInt(stamp, 10, 64)
				if err != nil || !strings.Contains(lines[i+1], "maybePublishMetadata(LOG_DELTA)") {
					t.Fatalf("line %d: %q", i+2, lines[i+1])
				}
				return n
			}
		}
		t.Fatalf("no batch ending at %s", offset)
		return 0
	}
	if want := time.Duration(applied("30221") - applied("10223")); rep.elapsed != want || rep.batches != 24 {
		t.Errorf("elapsed %v, %d batches; want %v, 24", rep.elapsed, rep.batches, want)
	}
	if rep.lines < 2*24 || rep.minGap <= 0 || rep.minGap > rep.elapsed/time.Duration(rep.lines) {
		t.Errorf("%d lines at least %v apart in %v", rep.lines, rep.minGap, rep.elapsed)
	}
	cut := raw[:bytes.Index(raw, []byte("and 30221 from"))]
	cut = cut[:bytes.LastIndexByte(cut, '\n')+1]
	for _, tc := range []struct {
		name     string
		log      []byte
		from, to int64
		want     string
	}{
		{"cut before the last batch", cut, 10223, 30221, "no batch ending at offset 30221 applied after the one ending at 10223"},
		{"no batch ends at from", raw, 10224, 30221, "no batch ending at offset 10224 applied"},
		{"not a loader log", []byte("Loading...\n"), 10223, 30221, "line 1: want <nanoTime> <logger> <message>"},
	} {
		if _, err := parseLoaderLog(bytes.NewReader(tc.log), tc.from, tc.to); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestReadMemClasses checks that every runtime/metrics name readMemClasses reads is
// one this Go knows: an unknown one reads as zero, and the peak's parts would be
// wrong without a word.
func TestReadMemClasses(t *testing.T) {
	m := readMemClasses()
	if m.HeapObjects <= 0 || m.Metadata <= 0 || m.Other <= 0 {
		t.Errorf("readMemClasses() = %+v: want the heap's objects, metadata and other above zero", m)
	}
	known := map[string]bool{}
	for _, d := range metrics.All() {
		known[d.Name] = true
	}
	for _, n := range memClassNames {
		if !known[n] {
			t.Errorf("%s: not a runtime/metrics name", n)
		}
	}
}
