package observer

import (
	"errors"
	"fmt"
)

// ErrNoLog reports a directory that holds neither a snapshot nor a log segment (not
// formatted yet, or the wrong directory). Run waits and retries.
var ErrNoLog = errors.New("observer: no snapshot and no log segment")

// ErrCorrupt reports metadata log bytes that cannot be valid where they are: a batch
// with a bad CRC followed by more data, a segment that ends inside a batch although a
// newer segment follows it, offsets that skip or go back, an epoch that goes down.
// A torn batch at the very end of the newest segment is not corrupt: it is waited for.
var ErrCorrupt = errors.New("observer: corrupt metadata log")

// ErrBadSnapshot reports a snapshot file that cannot be used: it does not start with a
// SnapshotHeader, does not end with a SnapshotFooter, or holds an invalid batch. The
// observer falls back to an older snapshot.
var ErrBadSnapshot = errors.New("observer: unusable snapshot")

// ErrNoStart reports a log that cannot be replayed from any usable snapshot: no
// snapshot can be read and the log does not start at offset 0, or the log starts after
// the snapshot ends.
var ErrNoStart = errors.New("observer: no usable starting point")

// PosError says which file and which byte position an error is about.
type PosError struct {
	File     string // path of the segment or snapshot file
	Position int64  // byte position in the file
	Offset   int64  // log offset expected there, -1 when not known
	Err      error  // wraps ErrCorrupt, ErrBadSnapshot or a recordbatch error
}

func (e *PosError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s at byte %d (offset %d): %v", e.File, e.Position, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s at byte %d: %v", e.File, e.Position, e.Err)
}

func (e *PosError) Unwrap() error { return e.Err }

// errReset is returned inside the follower when what it finds on disk no longer
// continues what it has read (truncation, a vanished segment): it must rebuild from
// the newest snapshot.
type errReset struct{ why string }

func (e *errReset) Error() string { return "observer: must rebuild from a snapshot: " + e.why }
