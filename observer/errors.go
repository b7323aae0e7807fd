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

// ErrNotAuthorized reports a controller refusing the observer for lack of an ACL
// (CLUSTER_AUTHORIZATION_FAILED): it needs ClusterAction on the cluster. Run keeps
// retrying, so an ACL added later is picked up without a restart.
var ErrNotAuthorized = errors.New("observer: not authorized by the controllers")

// ErrProtocol reports a controller answer that is not what the protocol allows: an
// error code where none can be, a partition or snapshot other than the one asked for,
// a snapshot chunk at the wrong position, a response with no complete batch.
var ErrProtocol = errors.New("observer: unexpected answer from a controller")

// ErrNoLeader reports a quorum with no known leader (an election, or every bootstrap
// server unreachable). Run retries with backoff.
var ErrNoLeader = errors.New("observer: no quorum leader known")

// ControllerError says which controller, which request and which log offset an error
// of the network source is about.
type ControllerError struct {
	Addr    string // host:port asked
	Node    int32  // its node id, -1 when not known
	Request string // Fetch, FetchSnapshot, DescribeCluster
	Offset  int64  // fetch offset or snapshot position, -1 when not relevant
	Err     error  // wraps ErrCorrupt, ErrBadSnapshot, ErrProtocol, ErrNotAuthorized, a kerr error or a network error
}

func (e *ControllerError) Error() string {
	node := ""
	if e.Node >= 0 {
		node = fmt.Sprintf(" (node %d)", e.Node)
	}
	at := ""
	if e.Offset >= 0 {
		if e.Request == "FetchSnapshot" {
			at = fmt.Sprintf(" at byte %d", e.Offset)
		} else {
			at = fmt.Sprintf(" at offset %d", e.Offset)
		}
	}
	return fmt.Sprintf("controller %s%s: %s%s: %v", e.Addr, node, e.Request, at, e.Err)
}

func (e *ControllerError) Unwrap() error { return e.Err }
