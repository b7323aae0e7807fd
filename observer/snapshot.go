package observer

import (
	"errors"
	"fmt"
	"os"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// snapshot is a KRaft snapshot file read whole and checked: every batch valid, the
// first a control batch starting with a SnapshotHeader, the last a control batch with
// a SnapshotFooter. Read by the careful path, its records are not decoded yet (see
// follower.replaySnapshot); loaded in one pass (loadSnapshot), they are already
// replayed into delta.
type snapshot struct {
	id      SnapshotID
	path    string
	size    int64
	header  recordbatch.SnapshotHeaderRecord
	batches []recordbatch.Batch
	// positions[i] is the byte position of batches[i] in the file.
	positions []int64

	// delta holds the snapshot's records replayed on image.Empty, not applied, when
	// loadSnapshot loaded it (batches is then empty); records is how many records its
	// data batches hold.
	delta   *image.Delta
	records int64
}

// readSnapshot reads and checks a snapshot file. Errors are *PosError wrapping
// ErrBadSnapshot, or the error of reading the file.
func readSnapshot(path string, id SnapshotID) (*snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSnapshot(path, id, data)
}

func parseSnapshot(path string, id SnapshotID, data []byte) (*snapshot, error) {
	s := &snapshot{id: id, path: path, size: int64(len(data))}
	bad := func(pos int64, format string, args ...any) error {
		return &PosError{File: path, Position: pos, Offset: -1,
			Err: fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrBadSnapshot)}
	}
	pos := int64(0)
	valid, err := recordbatch.Scan(data, func(b recordbatch.Batch) error {
		s.positions = append(s.positions, pos)
		s.batches = append(s.batches, b)
		pos += int64(b.Size())
		return nil
	})
	if err != nil {
		if errors.Is(err, recordbatch.ErrTruncated) {
			return nil, bad(int64(valid), "file ends inside a batch (%d bytes left): %v", len(data)-valid, err)
		}
		return nil, bad(int64(valid), "%v", err)
	}
	if len(s.batches) == 0 {
		return nil, bad(0, "empty file")
	}
	first := s.batches[0]
	if !first.IsControl() {
		return nil, bad(0, "first batch is not a control batch")
	}
	c, err := firstControl(&first)
	if err != nil {
		return nil, bad(0, "first record: %v", err)
	}
	h, ok := c.(*recordbatch.SnapshotHeaderRecord)
	if !ok {
		return nil, bad(0, "first record is %s, want SNAPSHOT_HEADER", c.ControlType())
	}
	s.header = *h
	last := s.batches[len(s.batches)-1]
	lastPos := s.positions[len(s.batches)-1]
	if len(s.batches) < 2 || !last.IsControl() {
		return nil, bad(lastPos, "no SnapshotFooter: the last batch is not a control batch")
	}
	footer := false
	it := last.Iter()
	for it.Next() {
		r := it.Record()
		if _, typ, err := recordbatch.ParseControlKey(r.Key); err == nil && typ == recordbatch.ControlSnapshotFooter {
			footer = true
		}
	}
	if err := it.Err(); err != nil {
		return nil, bad(lastPos, "last batch: %v", err)
	}
	if !footer {
		return nil, bad(lastPos, "no SnapshotFooter in the last batch")
	}
	return s, nil
}

func firstControl(b *recordbatch.Batch) (recordbatch.ControlRecord, error) {
	it := b.Iter()
	if !it.Next() {
		if it.Err() != nil {
			return nil, it.Err()
		}
		return nil, errors.New("no records")
	}
	r := it.Record()
	return recordbatch.DecodeControl(r.Key, r.Value)
}

// lastTimestamp is the append time of the newest log batch the snapshot contains.
func (s *snapshot) lastTimestamp() int64 { return s.header.LastContainedLogTimestamp }
