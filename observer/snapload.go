package observer

import (
	"errors"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// Loading a snapshot in one pass.
//
// The careful path reads a snapshot whole, checks every batch and every record's
// framing, and only then decodes and replays its records, logging what it skips: three
// passes over the file, held whole. loadSnapshot
// does it in one pass on the caller's goroutine: it reads the file a window at a time
// into a reused buffer, checks each batch (CRC, framing, the header and footer),
// decodes its records into a reused chunk and replays each full chunk into a new
// Delta. A batch's CRC is known only once its last window is read, after its first
// records were replayed: a batch that fails it fails the load, and the Delta is
// dropped.
//
// The records were once decoded on a second goroutine, chunks ahead of the one
// replaying them. That took more CPU (the hand-off of every chunk: a parked goroutine
// woken, another core's caches) and no less wall time than one goroutine on two
// cores. BenchmarkLoadSnapshot in observer/bench_test.go and bench/metadata.sh (the
// load against its decoding floor) guard this choice.
//
// It only accepts a clean snapshot: every batch valid and uncompressed, every record
// decoded, without unknown tagged fields, and replayed without error. For anything else it gives up, before anything
// was logged, counted or published, and rebuild takes the careful path, which reports
// exactly what is wrong (or loads the snapshot with the records it skips logged), as
// it always did. So what the observer logs, counts and publishes does not depend on
// which path loaded a snapshot (TestFastSnapshotMatchesCareful).

// chunkRecords is the most records decoded before they are replayed: a decoded
// record shares no memory with the bytes it was read from (strings are copied,
// arrays live in the chunk's decoder) unless it has byte fields
// (UserScramCredentialRecord).
const chunkRecords = 512

// loadWindow is how much of a data batch is read at a time: a batch of records
// (up to 8 MiB in a snapshot Kafka writes) is read, checked and decoded a window
// at a time through recordbatch.Stream, so the load holds the image and a window
// instead of a whole batch. The window grows for a record that does not fit. A
// smaller window costs no more CPU than a larger one and holds less at the load's
// peak; BenchmarkLoadSnapshot in observer/bench_test.go and bench/metadata.sh guard
// the size.
var loadWindow = 1 << 18 // a variable for tests

// loadSnapshot reads, checks, decodes and replays the snapshot at path into a new
// Delta on image.Empty, with the GC percent raised while it runs if relax is set
// (Config.LoadGC). It returns nil when the snapshot is not clean or cannot be read;
// the caller then takes the careful path.
func loadSnapshot(path string, id SnapshotID, relax bool) *snapshot {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	r := &snapReader{f: f, size: fi.Size(), delta: image.NewDelta(image.Empty),
		recs: make([]metadata.Record, 0, chunkRecords)}
	r.dec.Expect(chunkRecords)
	if relax {
		defer relaxGC()()
	}
	if !r.read() {
		return nil
	}
	return &snapshot{id: id, path: path, size: r.size, header: r.header, delta: r.delta, records: r.records}
}

// snapReader is loadSnapshot's state: the file, the window, the chunk of records
// decoded and not yet replayed, and the Delta they are replayed into.
type snapReader struct {
	f     *os.File
	size  int64
	delta *image.Delta

	recs []metadata.Record // decoded, not replayed yet; valid until dec.Reset
	dec  metadata.BatchDecoder
	buf  []byte // the window

	header  recordbatch.SnapshotHeaderRecord
	records int64 // records of data batches, decoded or not
}

// read reads the whole file; it returns false as soon as something is not as in a
// clean snapshot.
func (r *snapReader) read() bool {
	var pos int64
	batches := 0
	footer := false // the last batch read is a control batch with a SnapshotFooter
	for pos < r.size {
		var head [recordbatch.HeaderSize]byte
		if r.size-pos < int64(len(head)) {
			return false
		}
		if _, err := r.f.ReadAt(head[:], pos); err != nil {
			return false
		}
		st, n, err := recordbatch.NewStream(head[:])
		if err != nil || n > r.size-pos {
			return false
		}
		h := st.Header()
		if batches == 0 && !h.IsControl() {
			return false
		}
		footer = false
		if h.IsControl() {
			if !r.control(pos, n, batches == 0, &footer) {
				return false
			}
		} else if !r.stream(st, pos) || !r.replay() {
			return false
		}
		batches++
		pos += n
	}
	// The file must end where its size said: os.ReadFile would read on.
	var one [1]byte
	if n, err := r.f.ReadAt(one[:], r.size); n != 0 || !errors.Is(err, io.EOF) {
		return false
	}
	return batches >= 2 && footer
}

// control reads and checks the control batch of n bytes at pos whole, and notes
// whether it holds a SnapshotFooter; the first batch must hold the SnapshotHeader.
func (r *snapReader) control(pos, n int64, first bool, footer *bool) bool {
	if int64(cap(r.buf)) < n {
		r.buf = make([]byte, max(n, int64(loadWindow)))
	}
	raw := r.buf[:n]
	if _, err := r.f.ReadAt(raw, pos); err != nil {
		return false
	}
	b, err := recordbatch.Decode(raw)
	if err != nil || int64(b.Size()) != n {
		return false
	}
	if first && !r.readHeader(&b) {
		return false
	}
	it := b.Iter()
	for it.Next() {
		if _, typ, err := recordbatch.ParseControlKey(it.Record().Key); err == nil && typ == recordbatch.ControlSnapshotFooter {
			*footer = true
		}
	}
	return it.Err() == nil
}

// stream reads the data batch at pos a window at a time, decodes its records and
// replays each full chunk of them; it checks the batch's CRC once all are read.
func (r *snapReader) stream(st *recordbatch.Stream, pos int64) bool {
	if len(r.buf) < loadWindow {
		r.buf = make([]byte, loadWindow)
	}
	off := pos + recordbatch.HeaderSize // of the next byte to read
	have := 0                           // bytes at the start of buf not cut yet
	for st.Left() > 0 {
		if k := min(int64(len(r.buf)-have), st.Left()-int64(have)); k > 0 {
			if _, err := r.f.ReadAt(r.buf[have:have+int(k)], off); err != nil {
				return false
			}
			off += k
			have += int(k)
		}
		piece, used, err := st.Next(r.buf[:have])
		if err != nil {
			return false
		}
		if used == 0 { // a record longer than the window
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
			continue
		}
		shared, ok := r.decode(&piece)
		if !ok {
			return false
		}
		rest := r.buf[used:have]
		if shared { // records refer to buf: the next bytes go to a new window
			r.buf = make([]byte, len(r.buf))
		}
		have = copy(r.buf, rest)
	}
	return st.Close() == nil
}

// readHeader checks that the first batch is a control batch whose first record is the
// SnapshotHeader, and keeps it.
func (r *snapReader) readHeader(b *recordbatch.Batch) bool {
	if !b.IsControl() {
		return false
	}
	c, err := firstControl(b)
	if err != nil {
		return false
	}
	h, ok := c.(*recordbatch.SnapshotHeaderRecord)
	if ok {
		r.header = *h
	}
	return ok
}

// decode decodes the records of a piece of a data batch, replaying each full chunk.
// shared reports whether a record not replayed yet refers to the piece's bytes.
func (r *snapReader) decode(b *recordbatch.Batch) (shared, ok bool) {
	it := b.Iter()
	for it.Next() {
		r.records++
		rec, _, err := r.dec.Decode(it.Value())
		if err != nil || r.dec.UnknownTags() != 0 {
			return false, false // the careful path logs and counts what it skips
		}
		if _, ok := rec.(*metadata.UserScramCredentialRecord); ok {
			shared = true
		}
		r.recs = append(r.recs, rec)
		if len(r.recs) == chunkRecords {
			if !r.replay() {
				return false, false
			}
			shared = false
		}
	}
	return shared, it.Err() == nil
}

// replay replays the records decoded so far and resets the decoder; it returns false
// when one fails.
func (r *snapReader) replay() bool {
	for _, rec := range r.recs {
		if r.delta.Replay(rec) != nil {
			return false
		}
	}
	clear(r.recs)
	r.recs = r.recs[:0]
	r.dec.Reset()
	return true
}

// loadGCPercent is the GC percent while a one-pass load runs (Config.LoadGC). Nearly
// all that a load allocates is the image it builds, live until the end, so with
// GOGC=100 the collector marks the growing image at every doubling of the heap (five
// cycles for 1M partitions, marking about twice the image in all) and frees almost
// nothing. At 400 it runs once during the load and once as it ends: less CPU for the
// load and that GC together, the same peak RSS. bench/metadata.sh (metabench
// -child-load, with kraftwatch's LoadGC) guards this.
const loadGCPercent = 400

// loadGC counts the one-pass loads running in the process and keeps the GC percent to
// set back when the last one ends.
var loadGC struct {
	sync.Mutex
	n     int
	saved int
}

// relaxGC is relaxGCPercent; a variable for tests.
var relaxGC = relaxGCPercent

// relaxGCPercent raises the process's GC percent to loadGCPercent, unless the GC is
// off or set higher, until the function it returns is called. It changes a setting of
// the whole process, so other goroutines' garbage may also grow further during a
// load; a soft memory limit (GOMEMLIMIT) still holds.
func relaxGCPercent() (restore func()) {
	loadGC.Lock()
	defer loadGC.Unlock()
	if loadGC.n == 0 {
		loadGC.saved = debug.SetGCPercent(loadGCPercent)
		if loadGC.saved < 0 || loadGC.saved > loadGCPercent {
			debug.SetGCPercent(loadGC.saved)
		}
	}
	loadGC.n++
	return func() {
		loadGC.Lock()
		defer loadGC.Unlock()
		if loadGC.n--; loadGC.n == 0 {
			debug.SetGCPercent(loadGC.saved)
		}
	}
}
