package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// childDecode is the floor under a snapshot load (issue 14, goal 3): it reads the
// snapshot of a metadata log dir a batch at a time into one reused buffer, checks each
// batch (recordbatch.Decode: framing and CRC), and decodes every record of the data
// batches into a metadata.BatchDecoder reset after each batch. No image is built. It
// prints its wall and CPU time as JSON (LoadNs, CPUNs).
func childDecode(o *options) error {
	paths, err := filepath.Glob(filepath.Join(o.childDecode, "*.checkpoint"))
	if err != nil || len(paths) != 1 {
		return fmt.Errorf("%s: want one snapshot, found %v (%v)", o.childDecode, paths, err)
	}
	cpu0 := cpuTime()
	start := time.Now()
	f, err := os.Open(paths[0])
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var buf []byte
	var dec metadata.BatchDecoder
	var records int64
	for pos := int64(0); pos < fi.Size(); {
		var head [recordbatch.LogOverhead]byte
		if _, err := f.ReadAt(head[:], pos); err != nil {
			return err
		}
		n := int64(int32(binary.BigEndian.Uint32(head[8:]))) + recordbatch.LogOverhead
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		raw := buf[:n]
		if _, err := f.ReadAt(raw, pos); err != nil {
			return err
		}
		b, err := recordbatch.Decode(raw)
		if err != nil {
			return fmt.Errorf("batch at %d: %w", pos, err)
		}
		pos += n
		it := b.Iter()
		for it.Next() {
			if b.IsControl() {
				continue
			}
			if _, _, err := dec.Decode(it.Record().Value); err != nil {
				return err
			}
			records++
		}
		if err := it.Err(); err != nil {
			return err
		}
		dec.Reset()
	}
	r := loadResult{LoadNs: time.Since(start).Nanoseconds(), CPUNs: (cpuTime() - cpu0).Nanoseconds(), Records: records, Check: "ok"}
	return json.NewEncoder(os.Stdout).Encode(r)
}
