package observer

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// FileRecord is one record of a segment or snapshot file, as ReadFile hands it on.
type FileRecord struct {
	// Offset is the record's offset: a log offset in a segment, the position in the
	// file (from 0) in a snapshot.
	Offset int64
	// Epoch and Timestamp are the batch's partition leader epoch and append time.
	Epoch     int32
	Timestamp int64
	// Exactly one of Record (a metadata record at Version), Control (a control record)
	// and Err (a record that does not decode: unknown type or version, or corrupt) is
	// set.
	Record  metadata.Record
	Version int16
	Control recordbatch.ControlRecord
	Err     error
}

// ReadFile calls fn for every record of one metadata log file, in order: a segment
// (.log) or a snapshot (.checkpoint, checked for its header and footer first). Records
// that do not decode are handed on with Err set. A file that ends inside a batch, or
// holds a corrupt batch, is an error (*PosError) after the records before it; an error
// from fn stops the reading and is returned.
func ReadFile(path string, fn func(FileRecord) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if id, ok := ParseSnapshotName(filepath.Base(path)); ok || filepath.Ext(path) == ".checkpoint" {
		if _, err := parseSnapshot(path, id, data); err != nil {
			return err
		}
	}
	pos := int64(0)
	valid, err := recordbatch.Scan(data, func(b recordbatch.Batch) error {
		it := b.Iter()
		for it.Next() {
			r := it.Record()
			fr := FileRecord{Offset: it.Offset(), Epoch: b.PartitionLeaderEpoch, Timestamp: b.MaxTimestamp}
			if b.IsControl() {
				fr.Control, fr.Err = recordbatch.DecodeControl(r.Key, r.Value)
			} else {
				fr.Record, fr.Version, fr.Err = metadata.Decode(r.Value)
			}
			if err := fn(fr); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil {
			return &PosError{File: path, Position: pos, Offset: b.BaseOffset, Err: fmt.Errorf("%w: %w", err, ErrCorrupt)}
		}
		pos += int64(b.Size())
		return nil
	})
	var pe *PosError
	if err != nil && !errors.As(err, &pe) && (errors.Is(err, recordbatch.ErrTruncated) || errors.Is(err, recordbatch.ErrCorrupt)) {
		what := "a corrupt batch"
		if errors.Is(err, recordbatch.ErrTruncated) {
			what = "the file ends inside a batch"
		}
		return &PosError{File: path, Position: int64(valid), Offset: -1,
			Err: fmt.Errorf("%s (%d bytes not read): %w: %w", what, int64(len(data)-valid), err, ErrCorrupt)}
	}
	return err
}

// Loaded is the result of Load.
type Loaded struct {
	// Image is the image of the snapshot and the log after it.
	Image *image.Image
	// Snapshot is the path of the snapshot loaded, "" when the log was replayed from
	// offset 0; SnapshotEnd is its end offset (0 without one).
	Snapshot    string
	SnapshotEnd int64
	// Segments are the paths of the segments in the directory, in offset order.
	Segments []string
	// Metrics counts what was read and skipped.
	Metrics *Metrics
}

// Load reads a metadata log dir once, as Run's initial load does, and returns its
// image. It does not wait: a missing or empty directory, a corrupt log, a torn tail
// or no usable snapshot is an error. A half-written batch at the end of the newest
// segment is left out.
func Load(dir string, logger *slog.Logger) (*Loaded, error) {
	return LoadConfig(Config{Dir: dir, Logger: logger})
}

// LoadConfig is Load of cfg.Dir with cfg.Logger and cfg.LoadGC; it ignores the other
// fields.
func LoadConfig(cfg Config) (*Loaded, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o, err := New(Config{Dir: cfg.Dir, Logger: logger, LoadGC: cfg.LoadGC})
	if err != nil {
		return nil, err
	}
	o.cfg.Handler = nil
	if err := o.poll(); err != nil {
		return nil, err
	}
	o.f.close()
	ls, err := listDir(o.f.dir)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Image: o.Image(), Metrics: o.Metrics()}
	if o.f.snapshot != "" {
		l.Snapshot, l.SnapshotEnd = o.f.snapshot, o.f.snapshotEnd
	}
	for _, base := range ls.segments {
		l.Segments = append(l.Segments, segmentPath(o.f.dir, base))
	}
	return l, nil
}
