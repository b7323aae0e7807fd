package observer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// catchUpAbove is how many unread bytes a segment must hold, at least prefetchAbove
// too, for a live read to be a catch-up (for the network source: how many fetched
// bytes the high watermark must cover): its units are marked so (item.catchUp), and
// an itemFlush follows every catchUpFlush bytes of batches; the Observer holds the
// plain units and publishes them together at each flush, before any other unit, and
// at the end of what is readable now. Tests lower it.
var catchUpAbove int64 = 1 << 20

// catchUpFlush is Kafka's KafkaRaftClient.MAX_FETCH_SIZE_BYTES (8 MiB): the most a
// broker's Raft client reads from its log at once (KafkaMetadataLog.read up to
// maxFetchSizeInBytes) and hands its listener as one commit, which MetadataLoader
// replays into one delta and publishes once. Tests lower it.
var catchUpFlush int64 = 8 << 20

// batchRef remembers the last batch consumed, to notice when the log under it changes.
type batchRef struct {
	seg   int64 // segment base offset
	pos   int64 // byte position in the segment
	base  int64 // batch base offset
	epoch int32
	crc   uint32
	size  int
}

// follower is the disk source: where it is in which segment, what it read last, and
// (its cutter) the open metadata transaction. It does file I/O and reads no clock: poll
// yields everything available now and ends; a prefetcher it starts to read a long
// segment ahead has ended by then. It never calls its consumer but through the
// sequence's yield. Not safe for concurrent use.
type follower struct {
	cutter // cuts the batches read into units
	dir    string

	loaded    bool      // a rebuild succeeded and the state below is valid
	next      int64     // offset of the next record to read
	epoch     int32     // epoch of the last batch read (of the snapshot after a rebuild)
	cur       *segment  // the segment being read
	last      *batchRef // nil, or &lastRef
	lastRef   batchRef
	replaying bool   // inside a rebuild: inconsistencies are errors, not rebuilds
	why       string // why the next rebuild is needed ("" for the initial load)
	torn      batchRef
	// snapshot and snapshotEnd name the snapshot of the last rebuild ("" and 0
	// without one), for Load.
	snapshot    string
	snapshotEnd int64
	// oneShot makes rebuild load clean snapshots in one pass, replayed into
	// snapshot.delta (loadSnapshot); the Observer sets it. Without it, or for a
	// snapshot that is not clean, snapshots are read whole and checked, and their
	// records replayed after the log is read (replaySnapshot).
	oneShot bool
	loadGC  bool // the one-pass load may raise the GC percent (Config.LoadGC)
	// stream is set by a consumer that is done with each unit once it asks for the
	// next (the Observer): units' memory is reused (reuse), and a rebuild's units are
	// yielded as they are read (but after a snapshot that is not clean), in pieces of
	// pieceRecords records.
	stream bool
	framed []rawRecord // the records of the batch being read (frame)
	// pf reads cur ahead (a long segment), or is nil; tried is the segment a
	// prefetch was considered for. prefetches counts the prefetchers started, for
	// tests.
	pf         *prefetcher
	tried      *segment
	prefetches int
}

func newFollower(dir string, log *slog.Logger, m *Metrics) *follower {
	return &follower{cutter: newCutter(log, m), dir: dir}
}

func (f *follower) close() {
	f.cur.close()
	f.cur = nil
}

// poll yields what the log holds now: a rebuild first (the initial load, or after the
// log was truncated under what was read: itemRebuild, its units, itemRebuilt), then
// one unit at a time. A consumer that stops early leaves the follower to rebuild at
// the next poll.
func (f *follower) poll() iter.Seq2[item, error] {
	return sequence(func(y yielder) error {
		err := f.read(y)
		if errors.Is(err, errStopped) {
			// What was read is gone with the consumer: start over.
			f.close()
			f.loaded, f.why = false, "a read was stopped"
		}
		return err
	})
}

// read is poll's body: a rebuild when none succeeded yet, else the log after what
// was read, or a rebuild when that changed under the follower.
func (f *follower) read(y yielder) error {
	if !f.loaded {
		why := f.why
		if why == "" {
			why = "initial load"
		}
		return f.rebuild(why, y)
	}
	ls, err := listDir(f.dir)
	if err != nil {
		return err
	}
	err = f.verify(&ls)
	if err == nil {
		f.setReuse(f.stream)
		err = f.readAvailable(&ls, y)
	}
	var r *errReset
	if errors.As(err, &r) {
		f.m.Resets.Add(1)
		f.log.Warn("metadata log changed under the observer; rebuilding from the newest snapshot",
			"reason", r.why, "offset", f.next-1, "epoch", f.epoch)
		f.loaded = false
		f.why = r.why // kept for the retries if this rebuild fails
		return f.rebuild(r.why, y)
	}
	return err
}

// rebuild loads the newest usable snapshot and replays the log after it: it yields
// itemRebuild, the units of the log, and itemRebuilt.
func (f *follower) rebuild(why string, y yielder) error {
	f.close()
	f.loaded = false
	err := f.load(why, y)
	if err != nil {
		f.close()
		return err
	}
	f.loaded, f.why = true, ""
	return nil
}

// load is rebuild's reading: the newest usable snapshot, then the log after it, read
// on the careful path when the snapshot is not clean or the consumer keeps units
// (not stream), else streamed.
func (f *follower) load(why string, y yielder) error {
	ls, err := listDir(f.dir)
	if err != nil {
		return err
	}
	if len(ls.segments) == 0 && len(ls.snapshots) == 0 {
		return fmt.Errorf("%s: %w", f.dir, ErrNoLog)
	}
	snap, err := f.newestSnapshot(&ls)
	if err != nil {
		return err
	}
	f.next, f.epoch = 0, -1
	b := &build{why: why, snapshot: "none", prov: image.Empty.Provenance()}
	if snap != nil {
		f.next, f.epoch = snap.id.EndOffset, snap.id.Epoch
		b.snapshot = snap.path
		b.prov = Provenance{Offset: snap.id.EndOffset - 1, Epoch: snap.id.Epoch, Timestamp: snap.lastTimestamp()}
	}
	f.last, f.txn, f.torn = nil, nil, batchRef{}
	f.setReuse(false)
	f.bdec.Reset()
	f.replaying = true
	if f.stream && (snap == nil || snap.delta != nil) {
		err = f.loadStreamed(&ls, snap, b, y)
	} else {
		err = f.loadCareful(&ls, snap, b, y)
	}
	f.replaying = false
	if err != nil {
		return err
	}
	// Counted before the consumer publishes the image: a reader woken by it (Ready)
	// sees the snapshot counted, as the network source's load does.
	f.snapshot, f.snapshotEnd = "", 0
	if snap != nil {
		f.m.SnapshotsLoaded.Add(1)
		f.snapshot, f.snapshotEnd = snap.path, snap.id.EndOffset
	}
	return y.send(item{kind: itemRebuilt})
}

// loadStreamed yields the rebuild's start, with the snapshot loaded in one pass (or
// none), and then the units of the log as they are read, reusing their memory.
func (f *follower) loadStreamed(ls *listing, snap *snapshot, b *build, y yielder) error {
	if snap != nil {
		b.delta, b.records, snap.delta = snap.delta, snap.records, nil
	}
	b.deferLog = true
	if err := y.send(item{kind: itemRebuild, build: b}); err != nil {
		return err
	}
	f.setReuse(true)
	f.pieces = true
	defer func() { f.pieces = false }()
	return f.readAvailable(ls, y)
}

// loadCareful reads the units of the log first, then replays the snapshot (so that
// what is logged comes in the order it always did), and yields the rebuild's start
// and the units.
func (f *follower) loadCareful(ls *listing, snap *snapshot, b *build, y yielder) error {
	var units []Unit
	err := f.readAvailable(ls, func(it item) bool {
		if it.kind == itemUnit {
			units = append(units, it.unit)
		}
		return true
	})
	if err != nil {
		return err
	}
	if snap != nil {
		if snap.delta != nil { // loaded in one pass, without a problem to log
			b.delta, b.records, snap.delta = snap.delta, snap.records, nil
		} else if b.delta, err = f.replaySnapshot(snap); err != nil {
			return err
		}
	}
	if err := y.send(item{kind: itemRebuild, build: b}); err != nil {
		return err
	}
	for _, u := range units {
		if err := y.send(item{kind: itemUnit, unit: u}); err != nil {
			return err
		}
	}
	return nil
}

// newestSnapshot returns the newest snapshot of ls that reads cleanly, loaded in
// one pass when it can be (oneShot), or nil when none does; ErrNoStart when the log
// cannot be replayed from it or, without one, from offset 0; that error names why
// the newest snapshot skipped was unusable (a file kraftwatch may not read, most often).
func (f *follower) newestSnapshot(ls *listing) (*snapshot, error) {
	var skipped error // why the newest unusable snapshot was skipped
	for i := len(ls.snapshots) - 1; i >= 0; i-- {
		id := ls.snapshots[i]
		path := filepath.Join(f.dir, id.FileName())
		var sn *snapshot
		var err error
		if f.oneShot {
			sn = loadSnapshot(path, id, f.loadGC) // nil unless clean
		}
		if sn == nil {
			sn, err = readSnapshot(path, id)
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted since the listing
			}
			if err == nil {
				err = checkRecords(sn)
			}
		}
		if err != nil {
			f.m.BadSnapshots.Add(1)
			f.log.Error("skipping unusable snapshot, trying an older one", "snapshot", path, "error", err)
			if skipped == nil {
				skipped = err
				if errors.Is(err, fs.ErrPermission) {
					skipped = fmt.Errorf("%w (run kraftwatch as Kafka's user, or give it read access to the metadata log dir)", err)
				}
			}
			continue
		}
		if len(ls.segments) > 0 && ls.segments[0] > id.EndOffset {
			return nil, fmt.Errorf("%s: snapshot %s ends at offset %d but the log starts at %d: %w",
				f.dir, id, id.EndOffset, ls.segments[0], ErrNoStart)
		}
		return sn, nil
	}
	if len(ls.segments) == 0 || ls.segments[0] != 0 {
		first := "no segment"
		if len(ls.segments) > 0 {
			first = fmt.Sprintf("the first segment starts at offset %d", ls.segments[0])
		}
		if skipped != nil {
			return nil, fmt.Errorf("%s: no usable snapshot (%w) and %s: %w", f.dir, skipped, first, ErrNoStart)
		}
		return nil, fmt.Errorf("%s: no usable snapshot and %s: %w", f.dir, first, ErrNoStart)
	}
	return nil, nil
}

// replaySnapshot replays the records of a snapshot read whole into a new delta on
// image.Empty, logging and counting what Replay refuses.
func (f *follower) replaySnapshot(s *snapshot) (*image.Delta, error) {
	d := image.NewDelta(image.Empty)
	err := f.snapshotRecords(s, func(e Entry) error {
		if err := d.Replay(e.Record); err != nil {
			replayFailed(f.log, f.m, e.Offset, e.Record.Type(), err, s.path)
		}
		return nil
	})
	return d, err
}

// checkRecords checks the record framing of every batch of a snapshot, so that a bad
// snapshot is rejected before any of it is replayed.
func checkRecords(s *snapshot) error {
	for i := range s.batches {
		it := s.batches[i].Iter()
		for it.Next() {
		}
		if err := it.Err(); err != nil {
			return &PosError{File: s.path, Position: s.positions[i], Offset: -1, Err: fmt.Errorf("%w: %w", err, ErrBadSnapshot)}
		}
	}
	return nil
}

// snapshotRecords calls fn for every metadata record of s in order, with its offset in
// the snapshot file. The record is only valid during the call.
func (f *follower) snapshotRecords(s *snapshot, fn func(e Entry) error) error {
	for i := range s.batches {
		b := &s.batches[i]
		if b.IsControl() {
			continue
		}
		it := b.Iter()
		for it.Next() {
			f.m.SnapshotRecords.Add(1)
			rec, v, ok := f.dec.decode(it.Value(), it.Offset(), s.path, true)
			if !ok {
				continue
			}
			if err := fn(Entry{Offset: it.Offset(), Version: v, Record: rec}); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil { // checked by checkRecords; a file cannot change
			return err
		}
	}
	return nil
}

// problem is what an inconsistency becomes: while following, a reason to rebuild from
// the newest snapshot; while rebuilding, an error.
func (f *follower) problem(file string, pos int64, format string, args ...any) error {
	why := fmt.Sprintf(format, args...)
	if f.replaying {
		f.m.CorruptBatches.Add(1)
		return &PosError{File: file, Position: pos, Offset: f.next, Err: fmt.Errorf("%s: %w", why, ErrCorrupt)}
	}
	return &errReset{why: fmt.Sprintf("%s (%s at byte %d)", why, file, pos)}
}

// verify checks that the last batch read is still where it was, unchanged: Kafka
// truncates a diverged tail in place and then appends new batches, possibly of the
// same sizes, so a longer file does not prove that nothing changed.
func (f *follower) verify(ls *listing) error {
	l := f.last
	if l == nil {
		return nil
	}
	path := segmentPath(f.dir, l.seg)
	var file *os.File
	if f.cur != nil && f.cur.base == l.seg {
		file = f.cur.f
	}
	present := ls.hasSegment(l.seg)
	if present && file != nil {
		a, err1 := os.Stat(path)
		b, err2 := file.Stat()
		present = err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	if !present {
		// Kafka deletes a segment only once a snapshot covers it; a truncation cannot
		// remove what a snapshot covers.
		if ls.maxSnapshotEnd() >= f.next {
			return nil
		}
		return &errReset{why: fmt.Sprintf("segment %s holding offset %d is gone and no snapshot covers it", path, f.next-1)}
	}
	if file == nil {
		fh, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return &errReset{why: fmt.Sprintf("segment %s holding offset %d is gone", path, f.next-1)}
		}
		if err != nil {
			return err
		}
		defer fh.Close()
		file = fh
	}
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < l.pos+int64(l.size) {
		return &errReset{why: fmt.Sprintf("segment %s was truncated to %d bytes, below offset %d", path, fi.Size(), f.next-1)}
	}
	// BaseOffset, Length, PartitionLeaderEpoch, Magic, CRC: the first 21 bytes.
	var hdr [21]byte
	if _, err := file.ReadAt(hdr[:], l.pos); err != nil {
		return err
	}
	base := int64(binary.BigEndian.Uint64(hdr[0:]))
	size := int(int32(binary.BigEndian.Uint32(hdr[8:]))) + recordbatch.LogOverhead
	epoch := int32(binary.BigEndian.Uint32(hdr[12:]))
	crc := binary.BigEndian.Uint32(hdr[17:])
	if base != l.base || epoch != l.epoch || crc != l.crc || size != l.size {
		return &errReset{why: fmt.Sprintf("the batch at offset %d (epoch %d) in %s was replaced (now offset %d, epoch %d)",
			l.base, l.epoch, path, base, epoch)}
	}
	return nil
}

// readAvailable reads every complete batch the log holds after f.next and yields the
// units they make, and in a catch-up its flushes.
func (f *follower) readAvailable(ls *listing, y yielder) error {
	if f.cur != nil {
		f.cur.rewind()
	}
	f.tried = nil
	defer func() {
		f.stopPrefetch()
		f.catchUp, f.held = false, 0
	}()
	for {
		if f.cur == nil {
			if open, err := f.openSegment(ls); !open || err != nil {
				return err
			}
		}
		f.prefetch()
		r, err := f.nextBatch()
		if err == nil {
			if err := f.consumeBatch(&r, y); err != nil {
				return err
			}
			continue
		}
		if more, err := f.readFailed(ls, err); !more || err != nil {
			return err
		}
	}
}

// openSegment opens the segment holding f.next; open is false when there is none to
// read yet (a snapshot alone, or a segment gone since the listing).
func (f *follower) openSegment(ls *listing) (open bool, err error) {
	base, ok := ls.segmentFor(f.next)
	if !ok {
		if len(ls.segments) == 0 {
			return false, nil // a snapshot alone: wait for the log
		}
		return false, f.problem(f.dir, 0, "the log starts at offset %d, after offset %d", ls.segments[0], f.next)
	}
	seg, err := openSegment(f.dir, base)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // gone since the listing; look again next time
	}
	if err != nil {
		return false, err
	}
	f.cur = seg
	return true, nil
}

// prefetch starts reading the current segment ahead on a second goroutine when a
// live read finds at least prefetchAbove bytes unread in it (once per segment), and
// notes whether that is a catch-up. A rebuild reads on this goroutine: its replay
// into one delta takes the time a live read spends applying and publishing, so
// reading ahead saved no wall time on two cores and cost CPU (the hand-off) and
// memory (the buffers and framed records of batches in flight);
// BenchmarkLoadSnapshot in observer/bench_test.go and bench/burst.sh guard this.
func (f *follower) prefetch() {
	if f.pf != nil || f.cur == f.tried || f.replaying {
		return
	}
	f.tried = f.cur
	fi, err := f.cur.f.Stat()
	if err != nil {
		return
	}
	if unread := fi.Size() - f.cur.pos - int64(len(f.cur.buf)); unread >= prefetchAbove {
		f.catchUp = unread >= catchUpAbove
		f.pf = startPrefetch(f.cur, f.catchUp && f.reuse)
		f.prefetches++
	}
}

// stopPrefetch stops the prefetcher, if one runs.
func (f *follower) stopPrefetch() {
	if f.pf != nil {
		f.pf.close()
		f.pf = nil
	}
}

// nextBatch reads the next batch of the current segment, from the prefetcher if one
// runs (its records framed, and in a catch-up decoded), as segment.read returns it.
func (f *follower) nextBatch() (batchRead, error) {
	if f.pf == nil {
		// Segment buffers are reused only when no decoded record outlives its unit.
		f.cur.recycle = f.reuse && f.txn == nil
		b, pos, err := f.cur.read()
		return batchRead{b: b, pos: pos}, err
	}
	r, err := f.pf.next(f.reuse && f.txn == nil, f.txn != nil)
	if f.pf.done {
		f.stopPrefetch()
		f.catchUp = false
	}
	return r, err
}

// consumeBatch consumes a batch read (consume) and, in a catch-up, yields a flush
// once catchUpFlush bytes of batches were read since the consumer last published.
func (f *follower) consumeBatch(r *batchRead, y yielder) error {
	f.pre = r.pre
	err := f.consume(&r.b, r.pos, r.recs, r.ferr, y)
	f.pre = nil
	if err != nil || !f.catchUp {
		return err
	}
	if f.held += int64(r.b.Size()); f.held >= catchUpFlush {
		f.held = 0
		return y.send(item{kind: itemFlush})
	}
	return nil
}

// readFailed handles what reading the current segment returned instead of a batch:
// the end of what is written (more is false: wait for the log), a newer segment to go
// on with (more is true), a torn tail, or an error or a reason to rebuild.
func (f *follower) readFailed(ls *listing, err error) (more bool, _ error) {
	switch {
	case errors.Is(err, errShrunk):
		return false, f.problem(f.cur.path, f.cur.pos, "segment shrank below the read position")
	case errors.Is(err, errWait):
		return f.nextSegment(ls)
	case errors.Is(err, recordbatch.ErrCorrupt):
		return false, f.corrupt(ls, err)
	}
	return false, err
}

// nextSegment moves on to the segment after the current one, which is then complete,
// if there is one.
func (f *follower) nextSegment(ls *listing) (more bool, _ error) {
	nb, ok := ls.after(f.cur.base)
	if !ok {
		if !ls.hasSegment(f.cur.base) {
			return false, f.problem(f.cur.path, f.cur.pos, "segment is gone and no newer segment follows it")
		}
		return false, nil // the end of the log, for now
	}
	// A newer segment exists, so this one is complete.
	if n := f.cur.pending(); n > 0 {
		f.m.CorruptBatches.Add(1)
		return false, &PosError{File: f.cur.path, Position: f.cur.pos, Offset: f.next,
			Err: fmt.Errorf("segment ends inside a batch (%d bytes) although segment %d follows it: %w", n, nb, ErrCorrupt)}
	}
	if nb > f.next || (nb < f.next && f.last != nil) {
		return false, f.problem(segmentPath(f.dir, nb), 0, "segment starts at offset %d, expected %d", nb, f.next)
	}
	f.close()
	seg, err := openSegment(f.dir, nb)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, f.problem(segmentPath(f.dir, nb), 0, "segment vanished")
		}
		return false, err
	}
	f.cur = seg
	return true, nil
}

// corrupt handles bytes that are not a batch: at the very end of the newest segment
// while following, a torn write waited for (nil); anywhere else, or while
// rebuilding, an error: no image is published until the log reads cleanly (Kafka's
// recovery cuts such a tail off).
func (f *follower) corrupt(ls *listing, err error) error {
	if _, newer := ls.after(f.cur.base); !newer && !f.replaying && f.cur.corruptAtTail() {
		// Kafka writes whole batches; bytes that are not one at the very end of
		// the newest segment are a torn write that its recovery will cut off.
		if f.torn.seg != f.cur.base || f.torn.pos != f.cur.pos {
			f.torn = batchRef{seg: f.cur.base, pos: f.cur.pos}
			f.m.TornTails.Add(1)
			f.log.Warn("waiting at an unreadable tail of the newest segment",
				"segment", f.cur.path, "position", f.cur.pos, "offset", f.next, "error", err)
		}
		return nil
	}
	f.m.CorruptBatches.Add(1)
	return &PosError{File: f.cur.path, Position: f.cur.pos, Offset: f.next, Err: fmt.Errorf("%w: %w", err, ErrCorrupt)}
}

// consume checks that b continues the log and hands on its records: recs, which
// frame cut from it, or ferr, why it could not; it frames b itself when both are nil.
func (f *follower) consume(b *recordbatch.Batch, pos int64, recs []rawRecord, ferr error, y yielder) error {
	skipBelow := int64(-1)
	if f.last == nil && b.BaseOffset < f.next {
		if b.LastOffset() < f.next {
			return nil // before the snapshot
		}
		skipBelow = f.next // Kafka's snapshots are batch-aligned, but be safe
	} else if b.BaseOffset != f.next {
		return f.problem(f.cur.path, pos, "batch has offset %d, expected %d", b.BaseOffset, f.next)
	}
	if b.PartitionLeaderEpoch < f.epoch {
		return f.problem(f.cur.path, pos, "epoch went down from %d to %d at offset %d", f.epoch, b.PartitionLeaderEpoch, b.BaseOffset)
	}
	// Check every record's framing before handing any on: a batch is taken whole or not.
	if recs == nil && ferr == nil {
		if n := min(int(b.NumRecords), len(b.Records)); cap(f.framed) < n {
			// Room for every record at once (each takes a byte at least), not
			// append's steps, which a 10,000-record batch grows it through.
			f.framed = make([]rawRecord, 0, n)
		}
		f.framed, ferr = frame(b, f.framed[:0])
		recs = f.framed
		defer clear(recs) // no segment buffer kept alive through them
	}
	if ferr != nil {
		f.m.CorruptBatches.Add(1)
		return &PosError{File: f.cur.path, Position: pos, Offset: b.BaseOffset, Err: fmt.Errorf("%w: %w", ferr, ErrCorrupt)}
	}
	f.m.Batches.Add(1)
	err := f.records(b, recs, skipBelow, f.cur.path, y)
	if f.reuse && f.txn == nil {
		f.bdec.Reset() // every unit of the batch has been handed on
	}
	if err != nil {
		return err
	}
	f.next = b.NextOffset()
	f.epoch = b.PartitionLeaderEpoch
	f.lastRef = batchRef{seg: f.cur.base, pos: pos, base: b.BaseOffset, epoch: b.PartitionLeaderEpoch, crc: b.CRC, size: b.Size()}
	f.last = &f.lastRef
	return nil
}

// rawRecord is a record of a batch whose framing was checked: its offset, as its
// delta from the batch's base offset, and its value, where it is in the batch's
// bytes: 16 bytes, not the 32 of an int64 and a slice, for the records framed ahead
// of a catch-up and a rebuild's; bench/burst.sh (the rolling restart's large
// batches) guards this.
type rawRecord struct {
	data  *byte // the value's first byte; nil for a null value
	n     uint32
	delta int32
}

// offset is r's offset in b, the batch it was framed from.
func (r rawRecord) offset(b *recordbatch.Batch) int64 { return b.BaseOffset + int64(r.delta) }

// value is r's value.
func (r rawRecord) value() []byte { return unsafe.Slice(r.data, r.n) }

// frame appends the records of b to recs, or returns the error of the first that is
// not framed right: consume checks a whole batch with it and hands its records to
// records, which need not cut them out again.
func frame(b *recordbatch.Batch, recs []rawRecord) ([]rawRecord, error) {
	it := b.Iter()
	for it.Next() {
		v := it.Value()
		recs = append(recs, rawRecord{data: unsafe.SliceData(v), n: uint32(len(v)), delta: int32(it.Offset() - b.BaseOffset)})
	}
	return recs, it.Err()
}
