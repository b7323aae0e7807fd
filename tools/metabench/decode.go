package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// The floor reads as observer.Load's one-pass load does (observer/snapload.go): a
// window of floorWindow bytes at a time, floorChunk records decoded between resets.
const (
	floorWindow = 1 << 18
	floorChunk  = 512
)

// childDecode is the floor under a snapshot load (bench/metadata.sh): it reads the
// snapshot of a metadata log dir as the load reads it, a window at a time into one
// reused buffer through recordbatch.Stream (framing, then the batch's
// CRC once its last byte is read; control batches whole through recordbatch.Decode),
// and decodes every record of the data batches into a metadata.BatchDecoder reset
// every floorChunk records. No image is built and nothing is replayed: it is the
// least a load can cost. It prints its wall and
// CPU time as JSON (LoadNs, CPUNs).
func childDecode(o *options) error {
	paths, err := filepath.Glob(filepath.Join(o.childDecode, "*.checkpoint"))
	if err != nil || len(paths) != 1 {
		return fmt.Errorf("%s: want one snapshot, found %v (%v)", o.childDecode, paths, err)
	}
	cpu0 := cpuTime()
	start := time.Now()
	records, err := readFloor(paths[0], floorWindow)
	if err != nil {
		return err
	}
	r := loadResult{LoadNs: time.Since(start).Nanoseconds(), CPUNs: (cpuTime() - cpu0).Nanoseconds(), Records: records, Check: "ok"}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// readFloor reads, checks and decodes the snapshot at path with a window of the given
// size and returns the number of records of its data batches.
func readFloor(path string, window int) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	fl := floor{f: f, buf: make([]byte, window)}
	for pos := int64(0); pos < fi.Size(); {
		var head [recordbatch.HeaderSize]byte
		if _, err := f.ReadAt(head[:], pos); err != nil {
			return 0, fmt.Errorf("batch at %d: %w", pos, err)
		}
		st, n, err := recordbatch.NewStream(head[:])
		if err != nil {
			return 0, fmt.Errorf("batch at %d: %w", pos, err)
		}
		if h := st.Header(); h.IsControl() {
			err = fl.control(pos, n)
		} else {
			err = fl.stream(st, pos)
		}
		if err != nil {
			return 0, fmt.Errorf("batch at %d: %w", pos, err)
		}
		pos += n
	}
	return fl.records, nil
}

type floor struct {
	f       *os.File
	buf     []byte // the window
	dec     metadata.BatchDecoder
	pending int // records decoded since dec's last reset
	records int64
}

// control reads and checks the control batch of n bytes at pos whole.
func (fl *floor) control(pos, n int64) error {
	if int64(len(fl.buf)) < n {
		fl.buf = make([]byte, n)
	}
	raw := fl.buf[:n]
	if _, err := fl.f.ReadAt(raw, pos); err != nil {
		return err
	}
	b, err := recordbatch.Decode(raw)
	if err != nil {
		return err
	}
	it := b.Iter()
	for it.Next() {
	}
	return it.Err()
}

// stream reads the data batch at pos a window at a time and decodes its records.
func (fl *floor) stream(st *recordbatch.Stream, pos int64) error {
	off := pos + recordbatch.HeaderSize // of the next byte to read
	have := 0                           // bytes at the start of buf not cut yet
	for st.Left() > 0 {
		if k := min(int64(len(fl.buf)-have), st.Left()-int64(have)); k > 0 {
			if _, err := fl.f.ReadAt(fl.buf[have:have+int(k)], off); err != nil {
				return err
			}
			off += k
			have += int(k)
		}
		piece, used, err := st.Next(fl.buf[:have])
		if err != nil {
			return err
		}
		if used == 0 { // a record longer than the window
			fl.buf = append(fl.buf, make([]byte, len(fl.buf))...)
			continue
		}
		it := piece.Iter()
		for it.Next() {
			if _, _, err := fl.dec.Decode(it.Value()); err != nil {
				return err
			}
			fl.records++
			if fl.pending++; fl.pending == floorChunk {
				fl.dec.Reset()
				fl.pending = 0
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
		have = copy(fl.buf, fl.buf[used:have])
	}
	return st.Close()
}
