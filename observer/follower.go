package observer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// rebuild is a full state: a snapshot (nil when the log is replayed from offset 0) and
// the units of the log that follow it, as far as the log went when it was read.
type rebuild struct {
	snap  *snapshot
	units []Unit
	why   string
	// streamed is set when a streamer replayed the units as they were read (units is
	// then empty); what it keeps of them is its own.
	streamed bool
	delta    *image.Delta
	prov     Provenance
	failed   []failedEntry
}

// failedEntry is a record Replay refused while a rebuild streamed, logged and counted
// when the rebuild is published, as if it had been replayed then.
type failedEntry struct {
	offset int64
	typ    metadata.RecordType
	err    error
}

// sink receives what the follower reads, in log order.
type sink interface {
	rebuild(f *follower, r *rebuild) error
	unit(u Unit) error
}

// A holdingSink is a sink that can replay units without publishing them: a live catch-up
// (catchUpAbove) hands it the plain units of a long backlog with hold, and release
// publishes what they made, if anything, as one update.
type holdingSink interface {
	sink
	hold(u Unit)
	release()
}

// catchUpAbove is how many unread bytes a segment must hold, at least prefetchAbove
// too, for a live read to be a catch-up (for the network source: how many fetched
// bytes the high watermark must cover): its plain units (no transaction, no Abort)
// are held (holdingSink), and released every catchUpFlush bytes of batches, before any
// other unit, and at the end of what is readable now. Tests lower it.
var catchUpAbove int64 = 1 << 20

// catchUpFlush is Kafka's KafkaRaftClient.MAX_FETCH_SIZE_BYTES (8 MiB): the most a
// broker's Raft client reads from its log at once (KafkaMetadataLog.read up to
// maxFetchSizeInBytes) and hands its listener as one commit, which MetadataLoader
// replays into one delta and publishes once. Tests lower it.
var catchUpFlush int64 = 8 << 20

// A streamer is a sink that replays each unit of a rebuild as it is read, so a
// rebuild holds one batch beyond its image instead of the whole log after the
// snapshot, and that is done with each unit once unit or the returned function
// returns, so the follower may reuse the units' memory. stream is called before the
// first unit when the snapshot was loaded in one pass (or there is none), so that
// nothing is logged out of the order the careful path logs it in.
type streamer interface {
	sink
	stream(r *rebuild) func(Unit) error
}

// batchRef remembers the last batch consumed, to notice when the log under it changes.
type batchRef struct {
	seg   int64 // segment base offset
	pos   int64 // byte position in the segment
	base  int64 // batch base offset
	epoch int32
	crc   uint32
	size  int
}

// follower is the observer's reading state: where it is in which segment, the open
// metadata transaction, and what it read last. It does file I/O and reads no clock:
// poll reads everything available now and returns; a prefetcher it starts to read a
// long segment ahead has ended by then. Not safe for concurrent use.
type follower struct {
	dir string
	log *slog.Logger
	m   *Metrics
	dec decoder

	loaded    bool  // a rebuild succeeded and the state below is valid
	next      int64 // offset of the next record to read
	epoch     int32 // epoch of the last batch read (of the snapshot after a rebuild)
	cur       *segment
	last      *batchRef // nil, or &lastRef
	lastRef   batchRef
	txn       *Unit  // open metadata transaction: its entries so far
	replaying bool   // inside a rebuild: inconsistencies are errors, not rebuilds
	why       string // why the next rebuild is needed ("" for the initial load)
	torn      batchRef
	// oneShot makes rebuild load clean snapshots in one pass, replayed into
	// snapshot.delta (loadSnapshot); the Observer sets it. Without it, or for a
	// snapshot that is not clean, snapshots are read whole and checked, and their
	// records left to snapshotRecords.
	oneShot bool
	loadGC  bool // the one-pass load may raise the GC percent (Config.LoadGC)
	// reuse is set while units go to a streamer: their records are decoded into bdec,
	// reset after each batch once no transaction is open, and segment buffers are
	// reused.
	reuse  bool
	bdec   metadata.BatchDecoder
	spare  []Entry     // a handed-on unit's Entries, for the next unit's (see spareEntries)
	framed []rawRecord // the records of the batch being read (frame)
	// prefetches counts the prefetchers started, for tests.
	prefetches int
	// hs is the sink of a live read while it can hold units; catchUp is set while
	// the segment being read is a catch-up (catchUpAbove); held counts the batch bytes
	// read since the last release.
	hs      holdingSink
	catchUp bool
	held    int64
	// pre is the batch being consumed decoded by the prefetcher (a catch-up), or nil;
	// inTxn are the predecoded buffers whose records an open transaction holds
	// (doneDecoded).
	pre   []decodedRecord
	inTxn []*predecoded
}

// spareEntries returns an empty slice for a unit's Entries: the array of a unit
// already handed on while reuse is set, else nil. It is handed out once.
func (f *follower) spareEntries() []Entry {
	e := f.spare[:0]
	f.spare = nil
	return e
}

// setReuse turns the reuse of units' memory on or off (see follower.reuse).
func (f *follower) setReuse(on bool) {
	f.reuse = on
	f.dec.batch = nil
	if on {
		f.dec.batch = &f.bdec
	}
}

func newFollower(dir string, log *slog.Logger, m *Metrics) *follower {
	return &follower{dir: dir, log: log, m: m, dec: decoder{log: log, m: m}}
}

func (f *follower) close() {
	f.cur.close()
	f.cur = nil
}

// poll reads what the log holds now and hands it to s: a rebuild first (the initial
// load, or after the log was truncated under what was read), then one unit at a time.
func (f *follower) poll(s sink) error {
	if !f.loaded {
		why := f.why
		if why == "" {
			why = "initial load"
		}
		return f.rebuild(s, why)
	}
	ls, err := listDir(f.dir)
	if err != nil {
		return err
	}
	err = f.verify(&ls)
	if err == nil {
		_, stream := s.(streamer)
		f.setReuse(stream)
		f.hs, _ = s.(holdingSink)
		err = f.readAvailable(&ls, s.unit)
		f.hs = nil
	}
	var r *errReset
	if errors.As(err, &r) {
		f.m.Resets.Add(1)
		f.log.Warn("metadata log changed under the observer; rebuilding from the newest snapshot",
			"reason", r.why, "offset", f.next-1, "epoch", f.epoch)
		f.loaded = false
		f.why = r.why // kept for the retries if this rebuild fails
		return f.rebuild(s, r.why)
	}
	return err
}

// rebuild loads the newest usable snapshot and replays the log after it.
func (f *follower) rebuild(s sink, why string) error {
	f.close()
	f.loaded = false
	ls, err := listDir(f.dir)
	if err != nil {
		return err
	}
	if len(ls.segments) == 0 && len(ls.snapshots) == 0 {
		return fmt.Errorf("%s: %w", f.dir, ErrNoLog)
	}
	var snap *snapshot
	for i := len(ls.snapshots) - 1; i >= 0 && snap == nil; i-- {
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
			continue
		}
		if len(ls.segments) > 0 && ls.segments[0] > id.EndOffset {
			return fmt.Errorf("%s: snapshot %s ends at offset %d but the log starts at %d: %w",
				f.dir, id, id.EndOffset, ls.segments[0], ErrNoStart)
		}
		snap = sn
	}
	f.next, f.epoch = 0, -1
	if snap == nil {
		if len(ls.segments) == 0 || ls.segments[0] != 0 {
			first := "no segment"
			if len(ls.segments) > 0 {
				first = fmt.Sprintf("the first segment starts at offset %d", ls.segments[0])
			}
			return fmt.Errorf("%s: no usable snapshot and %s: %w", f.dir, first, ErrNoStart)
		}
	} else {
		f.next, f.epoch = snap.id.EndOffset, snap.id.Epoch
	}
	f.last, f.txn, f.torn = nil, nil, batchRef{}
	r := &rebuild{snap: snap, why: why}
	emit := func(u Unit) error {
		r.units = append(r.units, u)
		return nil
	}
	f.setReuse(false)
	f.bdec.Reset()
	if st, ok := s.(streamer); ok && (snap == nil || snap.delta != nil) {
		emit = st.stream(r)
		r.streamed = true
		f.setReuse(true)
	}
	f.replaying = true
	err = f.readAvailable(&ls, emit)
	f.replaying = false
	if err != nil {
		f.close()
		return err
	}
	// Counted before s publishes the image: a reader woken by it (Ready) sees the
	// snapshot counted, as the network source's load does.
	if snap != nil {
		f.m.SnapshotsLoaded.Add(1)
	}
	if err := s.rebuild(f, r); err != nil {
		f.close()
		return err
	}
	f.loaded, f.why = true, ""
	return nil
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
			rec, v, ok := f.dec.decode(it.Record().Value, it.Offset(), s.path, true)
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

// readAvailable reads every complete batch the log holds after f.next and hands the
// units they make to emit.
func (f *follower) readAvailable(ls *listing, emit func(Unit) error) error {
	if f.cur != nil {
		f.cur.rewind()
	}
	var pf *prefetcher // reading f.cur ahead, or nil
	var tried *segment // the segment a prefetch was considered for
	defer func() {
		if pf != nil {
			pf.close()
		}
	}()
	if f.hs != nil {
		next := emit
		emit = func(u Unit) error {
			if f.catchUp && !u.Transaction && !u.Aborted {
				f.hs.hold(u)
				return nil
			}
			f.release() // what came before is published first
			return next(u)
		}
		defer func() {
			f.release()
			f.catchUp = false
		}()
	}
	if f.reuse {
		next := emit
		emit = func(u Unit) error {
			err := next(u)
			if cap(u.Entries) > cap(f.spare) {
				clear(u.Entries) // no records kept alive through the spare
				f.spare = u.Entries[:0]
			}
			return err
		}
	}
	for {
		if f.cur == nil {
			base, ok := ls.segmentFor(f.next)
			if !ok {
				if len(ls.segments) == 0 {
					return nil // a snapshot alone: wait for the log
				}
				return f.problem(f.dir, 0, "the log starts at offset %d, after offset %d", ls.segments[0], f.next)
			}
			seg, err := openSegment(f.dir, base)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone since the listing; look again next time
			}
			if err != nil {
				return err
			}
			f.cur = seg
		}
		var (
			b         recordbatch.Batch
			pos       int64
			recs      []rawRecord
			pre       []decodedRecord
			ferr, err error
		)
		// A rebuild reads on this goroutine: its replay into one delta takes the
		// time a live read spends applying and publishing, so reading ahead saved no
		// wall time on 2 cores and cost CPU (the hand-off) and memory (the buffers
		// and framed records of batches in flight, 2.3 MB of a rolling restart's
		// 10,000-record batches at the load's peak RSS: issue 14, bench/README.md).
		if pf == nil && f.cur != tried && !f.replaying {
			tried = f.cur
			if fi, err := f.cur.f.Stat(); err == nil {
				if unread := fi.Size() - f.cur.pos - int64(len(f.cur.buf)); unread >= prefetchAbove {
					f.catchUp = f.hs != nil && unread >= catchUpAbove
					pf = startPrefetch(f.cur, f.catchUp && f.reuse)
					f.prefetches++
				}
			}
		}
		if pf != nil {
			b, pos, recs, pre, ferr, err = pf.next(f)
			if pf.done {
				pf.close()
				pf = nil
				f.catchUp = false
			}
		} else {
			// Segment buffers are reused only when no decoded record outlives its unit.
			f.cur.recycle = f.reuse && f.txn == nil
			b, pos, err = f.cur.read()
		}
		switch {
		case err == nil:
			f.pre = pre
			err := f.consume(&b, pos, recs, ferr, emit)
			f.pre = nil
			if pf == nil {
				f.doneDecoded(nil, nil) // a prefetcher's groups: its finish
			}
			if err != nil {
				return err
			}
			if f.catchUp {
				if f.held += int64(b.Size()); f.held >= catchUpFlush {
					f.release()
				}
			}
		case errors.Is(err, errShrunk):
			return f.problem(f.cur.path, f.cur.pos, "segment shrank below the read position")
		case errors.Is(err, errWait):
			nb, ok := ls.after(f.cur.base)
			if !ok {
				if !ls.hasSegment(f.cur.base) {
					return f.problem(f.cur.path, f.cur.pos, "segment is gone and no newer segment follows it")
				}
				return nil // the end of the log, for now
			}
			// A newer segment exists, so this one is complete.
			if n := f.cur.pending(); n > 0 {
				f.m.CorruptBatches.Add(1)
				return &PosError{File: f.cur.path, Position: f.cur.pos, Offset: f.next,
					Err: fmt.Errorf("segment ends inside a batch (%d bytes) although segment %d follows it: %w", n, nb, ErrCorrupt)}
			}
			if nb > f.next || (nb < f.next && f.last != nil) {
				return f.problem(segmentPath(f.dir, nb), 0, "segment starts at offset %d, expected %d", nb, f.next)
			}
			f.close()
			seg, err := openSegment(f.dir, nb)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return f.problem(segmentPath(f.dir, nb), 0, "segment vanished")
				}
				return err
			}
			f.cur = seg
		case errors.Is(err, recordbatch.ErrCorrupt):
			// While rebuilding, an unreadable tail is an error: no image is published
			// until the log reads cleanly (Kafka's recovery cuts such a tail off).
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
		default:
			return err
		}
	}
}

// doneDecoded gives the predecoded records of a consumed group of batches (or nil)
// back to the prefetcher pf (nil: to the collector), and with them those an open
// transaction held, once none is open.
func (f *follower) doneDecoded(pf *prefetcher, pre *predecoded) {
	if pre != nil {
		f.inTxn = append(f.inTxn, pre)
	}
	if f.txn != nil || len(f.inTxn) == 0 {
		return
	}
	if pf != nil {
		for _, pd := range f.inTxn {
			pf.decs.put(pd)
		}
	}
	clear(f.inTxn)
	f.inTxn = f.inTxn[:0]
}

// release publishes the units held in a catch-up, if any (holdingSink).
func (f *follower) release() {
	f.held = 0
	f.hs.release()
}

// consume checks that b continues the log and hands on its records: recs, which
// frame cut from it, or ferr, why it could not; it frames b itself when both are nil.
func (f *follower) consume(b *recordbatch.Batch, pos int64, recs []rawRecord, ferr error, emit func(Unit) error) error {
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
			// append's steps: a 10,000-record batch grew it through 0.6 MB.
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
	err := f.records(b, recs, skipBelow, f.cur.path, emit)
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
// bytes. 16 bytes, not the 32 of an int64 and a slice: a rolling restart's
// 10,000-record batches are framed ahead in slices of 160 KB, not 320 KB, at a
// rebuild's peak RSS (issue 14; bench/README.md).
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
		v := it.Record().Value
		recs = append(recs, rawRecord{data: unsafe.SliceData(v), n: uint32(len(v)), delta: int32(it.Offset() - b.BaseOffset)})
	}
	return recs, it.Err()
}

// records cuts a batch into units where Kafka's MetadataBatchLoader publishes when it
// reads the log one batch at a time (as kafka-metadata-shell does): at the end of a
// batch, unless a transaction is open, and before a BeginTransactionRecord that is not
// the first record of its batch. A transaction's records wait in f.txn for its End;
// the End does not end the unit, so the records after it in the same batch join the
// transaction's unit. An Abort drops the transaction's records, and only those: the
// records after it in the batch still make a unit (Kafka's loader applies the aborted
// records too in that case; docs/metadata-log.md#transactions says why kraftwatch does
// not). src names where the batch came from in log lines (a segment file, a
// controller). recs are b's records (frame).
func (f *follower) records(b *recordbatch.Batch, recs []rawRecord, skipBelow int64, src string, emit func(Unit) error) error {
	at := func(off int64) Provenance {
		return Provenance{Offset: off, Epoch: b.PartitionLeaderEpoch, Timestamp: b.MaxTimestamp}
	}
	send := func(u Unit) error {
		f.m.Units.Add(1)
		return emit(u)
	}
	if b.IsControl() {
		if f.txn != nil {
			return nil
		}
		return send(Unit{Control: true, Provenance: at(b.LastOffset())})
	}
	u := Unit{Entries: f.spareEntries()} // the unit being built: what Kafka's loader holds in its delta
	first := max(b.BaseOffset, skipBelow)
	skip := 0
	for skip < len(recs) && recs[skip].offset(b) < skipBelow {
		skip++
	}
	recs = recs[skip:]
	var pre []decodedRecord // recs decoded by the prefetcher, or nil
	if f.pre != nil {
		pre = f.pre[skip:]
	}
	f.m.Records.Add(int64(len(recs))) // once a batch: an atomic add per record costs more
	room := len(recs)
	piece := 0 // see pieceRecords
	if f.replaying && f.reuse && pre == nil {
		piece = pieceRecords
		room = min(room, piece)
	}
	if f.dec.batch != nil && pre == nil {
		f.dec.batch.Expect(room)
	}
	if cap(u.Entries) < room {
		// Room for every record at once, not append's steps (a batch holds up to 10,000).
		u.Entries = make([]Entry, 0, room)
	}
	for i, r := range recs {
		off := r.offset(b)
		var rec metadata.Record
		var v int16
		var ok bool
		if pre != nil {
			rec, v, ok = f.dec.result(pre[i].rec, pre[i].v, pre[i].err, off, src)
		} else {
			rec, v, ok = f.dec.decode(r.value(), off, src, false)
		}
		if !ok {
			continue
		}
		switch rec.Type() {
		case metadata.TypeBeginTransaction:
			if f.txn != nil {
				f.txnError("BeginTransactionRecord inside a transaction", off, f.txn.Provenance.Offset)
				continue
			}
			if off > first {
				u.Provenance = at(off - 1)
				if err := send(u); err != nil {
					return err
				}
				u = Unit{}
			}
			f.txn = &Unit{Transaction: true, Provenance: at(off)}
		case metadata.TypeEndTransaction, metadata.TypeAbortTransaction:
			if f.txn == nil {
				f.txnError(rec.Type().String()+" without a BeginTransactionRecord", off, -1)
				continue
			}
			t := f.txn
			f.txn = nil
			if rec.Type() == metadata.TypeAbortTransaction {
				f.m.AbortedTransactions.Add(1)
				f.log.Info("dropping an aborted metadata transaction", "offset", off,
					"begin_offset", t.Provenance.Offset, "records", len(t.Entries))
				u.Aborted = true
				continue
			}
			// A Begin is the first record of u, so u holds nothing yet.
			u.Transaction, u.Entries = true, t.Entries
		default:
			e := Entry{Offset: off, Version: v, Record: rec}
			if f.txn != nil {
				f.txn.Entries = append(f.txn.Entries, e)
			} else if u.Entries = append(u.Entries, e); len(u.Entries) == piece {
				// A streamed rebuild: the piece is replayed, its records no longer used.
				if err := emit(Unit{Entries: u.Entries, Provenance: at(off)}); err != nil {
					return err
				}
				u.Entries = u.Entries[:0]
				f.spare = nil // emit kept u's array as the spare: it is the unit's again
				f.bdec.Reset()
			}
		}
	}
	if f.txn != nil {
		return nil
	}
	u.Provenance = at(b.LastOffset())
	return send(u)
}

// pieceRecords is how many records of a batch a streamed rebuild (a load, not a live
// read: units are replayed into the rebuild's delta, not published) decodes and hands
// on at a time while no transaction is open: the streamer replays them at once, so the
// decoder is reset after each piece and holds a piece's records, not a whole batch's
// (a rolling restart's batches hold 10,000 PartitionChangeRecords, 2 MB decoded; the
// rolling load's peak RSS 59.0 -> 57.0 MB). The pieces are not units: the batch's
// last piece is its unit, counted and at its provenance as before. A variable for
// tests.
var pieceRecords = 1024

func (f *follower) txnError(what string, off, begin int64) {
	f.m.TransactionErrors.Add(1)
	f.log.Error("ignoring a metadata transaction marker out of place", "what", what, "offset", off, "begin_offset", begin)
}
