package observer

import (
	"encoding/binary"
	"errors"
	"io"
	"os"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// Loading a snapshot in one pass.
//
// The careful path reads a snapshot whole, checks every batch and every record's
// framing, and only then decodes and replays its records, logging what it skips. For
// a snapshot of a million partitions that is three passes over 120 MB and one goroutine.
// loadSnapshot does it in one pass on two goroutines: a reader goroutine reads the
// file a batch at a time into reused buffers, checks each batch (CRC, framing, the
// header and footer) and decodes its records into reused chunks; the caller's
// goroutine replays each chunk into a new Delta while the next is decoded.
//
// It only accepts a clean snapshot: every batch valid and uncompressed, every record
// decoded and replayed without error. For anything else it gives up, before anything
// was logged, counted or published, and rebuild takes the careful path, which reports
// exactly what is wrong (or loads the snapshot with the records it skips logged), as
// it always did. So what the observer logs, counts and publishes does not depend on
// which path loaded a snapshot (TestFastSnapshotMatchesCareful).

const (
	// chunkRecords is the most records one decoded chunk holds.
	chunkRecords = 1024
	// loadChunks and loadBuffers bound the chunks and batch buffers in flight. A
	// decoded record shares no memory with its batch (strings are copied, arrays live
	// in the chunk's decoder) unless it has byte fields (UserScramCredentialRecord),
	// so the reader reads the next batch into the same buffer while the chunks of the
	// last one are replayed: the load holds the image and one batch (issue 14).
	loadChunks  = 8
	loadBuffers = 1
)

// loadChunk is a run of decoded records of one batch, valid until dec is Reset.
type loadChunk struct {
	recs []metadata.Record
	dec  metadata.BatchDecoder
	// buf is the batch's buffer, handed back after the batch's last chunk; nil on the
	// others.
	buf *loadBuffer
}

type loadBuffer struct{ b []byte }

// loadSnapshot reads, checks, decodes and replays the snapshot at path into a new
// Delta on image.Empty. It returns nil when the snapshot is not clean or cannot be
// read; the caller then takes the careful path.
func loadSnapshot(path string, id SnapshotID) *snapshot {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	r := &snapReader{f: f, size: fi.Size(), stop: make(chan struct{}),
		chunks: make(chan *loadChunk, loadChunks), freeChunks: make(chan *loadChunk, loadChunks),
		freeBufs: make(chan *loadBuffer, loadBuffers)}
	for range loadChunks {
		r.freeChunks <- &loadChunk{recs: make([]metadata.Record, 0, chunkRecords)}
	}
	for range loadBuffers {
		r.freeBufs <- &loadBuffer{}
	}
	go r.run()
	failed, done := false, false
	defer func() {
		if !done { // a panic while replaying: stop the reader and wait for it
			if !failed {
				close(r.stop)
			}
			for range r.chunks {
			}
		}
	}()
	d := image.NewDelta(image.Empty)
	for c := range r.chunks { // closed by run when it is done
		if !failed {
			for _, rec := range c.recs {
				if d.Replay(rec) != nil {
					failed = true
					close(r.stop)
					break
				}
			}
		}
		c.recs = c.recs[:0]
		c.dec.Reset()
		if c.buf != nil {
			r.freeBufs <- c.buf
			c.buf = nil
		}
		r.freeChunks <- c
	}
	done = true
	if failed || !r.ok {
		return nil
	}
	return &snapshot{id: id, path: path, size: r.size, header: r.header, delta: d, records: r.records}
}

// snapReader is the reading and decoding side of loadSnapshot, on its own goroutine.
// It sends chunks in file order and closes chunks when it is done; ok, header and
// records are valid after that.
type snapReader struct {
	f    *os.File
	size int64
	stop chan struct{} // closed by the replaying side when it gives up

	chunks     chan *loadChunk
	freeChunks chan *loadChunk
	freeBufs   chan *loadBuffer

	ok      bool
	header  recordbatch.SnapshotHeaderRecord
	records int64 // records of data batches, decoded or not
}

func (r *snapReader) run() {
	defer close(r.chunks)
	r.ok = r.read()
}

// read reads the whole file; it returns false as soon as something is not as in a
// clean snapshot, or the other side stopped.
func (r *snapReader) read() bool {
	var pos int64
	batches := 0
	footer := false // the last batch read is a control batch with a SnapshotFooter
	for pos < r.size {
		var head [recordbatch.LogOverhead]byte
		if _, err := r.f.ReadAt(head[:], pos); err != nil {
			return false
		}
		n := int64(int32(binary.BigEndian.Uint32(head[8:]))) + recordbatch.LogOverhead
		if n < recordbatch.HeaderSize || n > r.size-pos {
			return false
		}
		buf := r.buffer()
		if buf == nil {
			return false
		}
		if int64(cap(buf.b)) < n {
			buf.b = make([]byte, n)
		}
		raw := buf.b[:n]
		if _, err := r.f.ReadAt(raw, pos); err != nil {
			return false
		}
		b, err := recordbatch.Decode(raw)
		if err != nil || int64(b.Size()) != n || b.Codec() != recordbatch.CodecNone {
			return false
		}
		if batches == 0 && !r.readHeader(&b) {
			return false
		}
		batches++
		pos += n
		if b.IsControl() {
			footer = false
			it := b.Iter()
			for it.Next() {
				if _, typ, err := recordbatch.ParseControlKey(it.Record().Key); err == nil && typ == recordbatch.ControlSnapshotFooter {
					footer = true
				}
			}
			r.freeBufs <- buf // nothing refers to it
			if it.Err() != nil {
				return false
			}
			continue
		}
		footer = false
		if !r.decode(&b, buf) {
			return false
		}
	}
	// The file must end where its size said: os.ReadFile would read on.
	var one [1]byte
	if n, err := r.f.ReadAt(one[:], r.size); n != 0 || !errors.Is(err, io.EOF) {
		return false
	}
	return batches >= 2 && footer
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

// decode decodes the records of a data batch into chunks and sends them. When a
// record shares memory with the batch, the last chunk carries buf, which must stay
// untouched until it has been replayed; else buf is free again at once.
func (r *snapReader) decode(b *recordbatch.Batch, buf *loadBuffer) bool {
	c := r.chunk()
	if c == nil {
		return false
	}
	shared := false
	it := b.Iter()
	for it.Next() {
		r.records++
		rec, _, err := c.dec.Decode(it.Record().Value)
		if err != nil {
			r.freeChunks <- c
			return false
		}
		if _, ok := rec.(*metadata.UserScramCredentialRecord); ok {
			shared = true
		}
		c.recs = append(c.recs, rec)
		if len(c.recs) == chunkRecords {
			r.chunks <- c
			if c = r.chunk(); c == nil {
				return false
			}
		}
	}
	if it.Err() != nil {
		r.freeChunks <- c
		return false
	}
	if shared {
		c.buf = buf
	} else {
		r.freeBufs <- buf
	}
	r.chunks <- c
	return true
}

// chunk returns an empty chunk, nil when the other side stopped.
func (r *snapReader) chunk() *loadChunk {
	select {
	case c := <-r.freeChunks:
		return c
	case <-r.stop:
		return nil
	}
}

// buffer returns a free batch buffer, nil when the other side stopped.
func (r *snapReader) buffer() *loadBuffer {
	select {
	case b := <-r.freeBufs:
		return b
	case <-r.stop:
		return nil
	}
}
