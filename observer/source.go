package observer

import (
	"errors"
	"iter"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// The two sources, the disk follower (follower.poll) and the quorum client
// (quorum.step), read, check and cut the log; each is a sequence of items
// (iter.Seq2[item, error]) that the Observer ranges over, as prometheus tsdb's wlog
// Watcher reads the records a LiveReader frames. The Observer owns what follows: the
// delta, the units a catch-up holds, the rebuild in progress and publishing. Nothing
// in a source knows the Observer, and a source that is stopped (the range loop ends
// early) stops reading.

// itemKind says what an item is.
type itemKind int8

const (
	_ itemKind = iota // the zero value is no kind
	// itemRebuild starts a whole state: the snapshot of item.build (or nothing), onto
	// which the units until itemRebuilt are replayed. It discards a rebuild in progress.
	itemRebuild
	// itemUnit is a unit of the log (item.unit).
	itemUnit
	// itemFlush ends what a catch-up read as one commit: the units held so far are
	// published as one update.
	itemFlush
	// itemRebuilt ends the rebuild: its image is published as one Update with Reset set.
	itemRebuilt
)

func (k itemKind) String() string {
	switch k {
	case itemRebuild:
		return "rebuild"
	case itemUnit:
		return "unit"
	case itemFlush:
		return "flush"
	case itemRebuilt:
		return "rebuilt"
	}
	return "unknown"
}

// An item is one thing a source yields, in log order. Every unit the network source
// yields is committed (at or below the high watermark: it keeps what it fetched
// above it, bounded by Config.MaxUncommitted, and drops what the leader's log
// diverges from before cutting it); the disk source reads the local log, whose tail
// may not be, and rebuilds when that is truncated under it.
type item struct {
	kind itemKind
	// unit is itemUnit's unit. Its Entries, and the records in them, are the
	// source's again once the Observer asks for the next item (Unit's contract).
	unit Unit
	// catchUp marks a unit read in a catch-up (catchUpAbove): the Observer may hold
	// it, if it is plain, and publish it with the units around it.
	catchUp bool
	// build is what itemRebuild starts.
	build *build
}

// build is a whole state being assembled from a source: a snapshot (or nothing) and
// the units of the log after it, replayed into delta and published as one Update
// (Reset) at itemRebuilt. The source fills in what it starts with; the Observer owns
// it from itemRebuild on.
type build struct {
	why      string
	snapshot string       // the snapshot's file or source, for log lines; "none"
	delta    *image.Delta // the snapshot replayed on image.Empty; nil: start from image.Empty
	prov     Provenance   // the snapshot's provenance; image.Empty's without one
	// records are the snapshot's records, counted in SnapshotRecords when the build
	// is published; 0 when the source counted them as it read them.
	records int64
	// deferLog: what Replay refuses of the units is logged and counted when the build
	// is published, as on the disk source's careful path, which replays them only
	// then (TestFastSnapshotMatchesCareful).
	deferLog bool
	failed   []failedEntry // refused while deferLog is set
}

// failedEntry is a record Replay refused, logged and counted later (build.deferLog).
type failedEntry struct {
	offset int64
	typ    metadata.RecordType
	err    error
}

// plain reports whether u holds no transaction marker: a catch-up may hold it and
// publish it with the units around it.
func (u *Unit) plain() bool { return !u.Transaction && !u.Aborted }

// errStopped is what a source's reading returns inside once its consumer has stopped
// ranging (yield returned false); the sequence ends without it.
var errStopped = errors.New("observer: the consumer stopped")

// yielder adapts a sequence's yield to the sources' functions, which return errors:
// send returns errStopped once the consumer has stopped.
type yielder func(item) bool

func (y yielder) send(it item) error {
	if !y(it) {
		return errStopped
	}
	return nil
}

// sequence makes a source's read, which yields through y and returns an error, the
// sequence the Observer ranges over: the items, then the error, if any.
func sequence(read func(y yielder) error) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		err := read(func(it item) bool { return yield(it, nil) })
		if err != nil && !errors.Is(err, errStopped) {
			yield(item{}, err)
		}
	}
}
