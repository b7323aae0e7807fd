package observer

import (
	"errors"
	"slices"
	"sync"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// prefetchAbove is how many unread bytes a segment must hold for a live read to read
// it ahead on a second goroutine (a catch-up: a burst that arrived while the observer
// was busy; a rebuild reads on its own goroutine); tests lower it.
var prefetchAbove int64 = 1 << 20

// prefetchBuffers is how many segment buffers a prefetch uses: the one being read
// into, a spare for the next read, and one that consume is still decoding (a batch
// larger than a read makes one more, dropped when it comes back). prefetchChunk is
// the least one read takes; it takes as much as its buffer holds, so once a large
// batch made the buffers that large, each like it is read in one go. So the read runs
// at most 16 batches (and 24 x 1,024 framed records: recordRoom) and two windows (of
// 128 KiB, or 1.25 times the largest batch) ahead of consume, and its buffers hold
// about 400 KiB, or four such batches. (Windows of 32 KiB, 8 of the sequential
// order's batches of 100 changes, kept the read too close behind consume: in a burst
// of 1M changes it waited for a buffer, and consume for it, about 600 times each.)
const prefetchBuffers = 3

var prefetchChunk int64 = 128 << 10 // tests lower it

// fetched is a batch the prefetcher read and framed, or (err set) why it stopped.
type fetched struct {
	b    recordbatch.Batch
	pos  int64
	recs []rawRecord
	ferr error       // from frame: recs are not valid
	err  error       // from segment.read; the last item
	pre  *predecoded // recs decoded, in a catch-up (startPrefetch's decode)
	// released are buffers that no batch after this one is cut from (nil entries:
	// buffers consume never had): consume gives them back once done with the batches
	// before.
	released [][]byte
}

// prefetcher reads and frames the batches of one segment on its own goroutine while
// the follower decodes and hands on the batches before them: segment.read (reads and
// CRC checks) and frame (cutting out records) take about half the CPU of a catch-up
// that only replays, a quarter of one that applies each unit. Batches reach consume
// in order and as if read there; consume logs, counts, decodes and hands them on as
// before, so what the follower emits and logs is the same. In a live catch-up (the
// replay of the caller's goroutine and the applies are then the longest part) it
// decodes the records too (predecode), and consume only logs and counts what did not
// decode, in the same order. It stops at the first error of read, at the first batch
// frame refuses, or when stopped.
type prefetcher struct {
	seg   *segment
	items chan fetched
	free  chan []byte   // buffers (or nil tokens) consume gives back
	recs  recPool       // record slices consume is done with
	room  chan struct{} // a token per recordRoom framed records in flight (recordTokens)
	stop  chan struct{}
	done  bool  // the last item was received
	end   int64 // the segment position after the last batch received
	// decode is set in a catch-up: the records are decoded here too.
	decode bool
	decs   decPool
}

// A predecoded is the records of one batch decoded on the prefetcher's goroutine
// (a live catch-up: startPrefetch's decode): out[i] is what decoding the batch's i-th
// framed record gave, the record valid until the follower gives the predecoded back
// (decPool.put), which it does once no unit it handed on holds the records: after the
// batch, or after the transaction that took them. Errors are only kept: the follower
// logs and counts them in order, as when it decodes (decoder.result).
type predecoded struct {
	dec metadata.BatchDecoder
	out []decodedRecord
}

type decodedRecord struct {
	rec metadata.Record
	v   int16
	err error
}

// decPool keeps the predecoded buffers the follower gave back for the batches read
// next. As with recPool, a batch takes the smallest that has room for its records
// and at most 4 times that. It keeps no more buffers than batches can be in flight,
// with room for at most as many records as the room for framed records twice over
// (recordRoom x prefetchRoom, the most that are decoded ahead), dropping the
// smallest: a decoded record takes about 200 bytes, so that is 10 MB at most, with
// as much again in flight.
type decPool struct {
	mu   sync.Mutex
	free []*predecoded
}

func (pd *predecoded) room() int { return cap(pd.out) }

// get returns a predecoded buffer, emptied, for n records.
func (q *decPool) get(n int) *predecoded {
	q.mu.Lock()
	pd := takeFit(&q.free, (*predecoded).room, n)
	q.mu.Unlock()
	if pd == nil {
		pd = new(predecoded)
	}
	return pd
}

// put keeps pd for a later get, dropping the smallest buffers beyond the bounds.
func (q *decPool) put(pd *predecoded) {
	pd.dec.Reset()
	clear(pd.out) // no record kept alive through it
	pd.out = pd.out[:0]
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free = append(q.free, pd)
	kept := 0
	for _, f := range q.free {
		kept += f.room()
	}
	for len(q.free) > prefetchItems+2 || kept > 2*recordRoom*prefetchRoom {
		small := 0
		for i, f := range q.free {
			if f.room() < q.free[small].room() {
				small = i
			}
		}
		kept -= q.free[small].room()
		last := len(q.free) - 1
		q.free[small], q.free[last] = q.free[last], nil
		q.free = q.free[:last]
	}
}

// startPrefetch starts reading s ahead; with decode, its records are decoded too (a
// live catch-up; the follower sets reuse). Until close, only the prefetcher uses s.
func startPrefetch(s *segment, decode bool) *prefetcher {
	p := &prefetcher{seg: s, items: make(chan fetched, prefetchItems), free: make(chan []byte, prefetchBuffers),
		room: make(chan struct{}, prefetchRoom), stop: make(chan struct{}), end: s.pos, decode: decode}
	s.recycle, s.prefetching = false, true
	for range prefetchBuffers - 1 { // the segment holds the other one
		p.free <- nil
	}
	for range prefetchRoom {
		p.room <- struct{}{}
	}
	go p.run()
	return p
}

func (p *prefetcher) run() {
	defer close(p.items)
	s := p.seg
	for {
		for len(s.spares) == 0 {
			select {
			case b := <-p.free:
				s.spares = append(s.spares, b)
			case <-p.stop:
				return
			}
		}
		b, pos, err := s.read()
		it := fetched{b: b, pos: pos, err: err, released: s.released}
		s.released = nil
		if err == nil {
			// Room for every record at once (each takes a byte at least), so that a
			// slice from a smaller batch is not grown by doubling.
			it.recs, it.ferr = frame(&b, p.recs.get(min(int(b.NumRecords), len(b.Records))))
			for range recordTokens(len(it.recs)) {
				select {
				case <-p.room:
				case <-p.stop:
					return
				}
			}
			if p.decode && it.ferr == nil {
				it.pre = p.predecode(it.recs)
			}
		}
		select {
		case p.items <- it:
		case <-p.stop:
			return
		}
		if err != nil || it.ferr != nil {
			return
		}
	}
}

// predecode decodes the records of a batch into a predecoded buffer.
func (p *prefetcher) predecode(recs []rawRecord) *predecoded {
	pd := p.decs.get(len(recs))
	pd.dec.Expect(len(recs))
	pd.out = slices.Grow(pd.out, len(recs))
	for _, r := range recs {
		rec, v, err := pd.dec.Decode(r.value())
		pd.out = append(pd.out, decodedRecord{rec: rec, v: v, err: err})
	}
	return pd
}

// next is the next batch, as segment.read returns it, with its records framed (or
// the framing's error) and, in a catch-up, decoded.
func (p *prefetcher) next(f *follower) (recordbatch.Batch, int64, []rawRecord, *predecoded, error, error) {
	it, ok := <-p.items
	if !ok {
		return recordbatch.Batch{}, 0, nil, nil, nil, errors.New("observer: prefetch ended early")
	}
	for _, b := range it.released {
		if !f.reuse || f.txn != nil {
			b = nil // records handed on may still use it (see segment.recycle)
		}
		select {
		case p.free <- b:
		default: // full: a read that took more buffers than it had spares made one
		}
	}
	if it.err != nil {
		p.done = true
		return it.b, it.pos, nil, nil, nil, it.err
	}
	if it.ferr != nil {
		p.done = true
	}
	p.end = it.pos + int64(it.b.Size())
	return it.b, it.pos, it.recs, it.pre, it.ferr, nil
}

// recycle gives back the record slice of a batch consume is done with.
func (p *prefetcher) recycle(recs []rawRecord) {
	for range recordTokens(len(recs)) {
		p.room <- struct{}{}
	}
	clear(recs)
	p.recs.put(recs[:0])
}

// The records framed ahead of consume are bounded too, not only the batches
// (prefetchItems) and buffers: a batch takes a token of room per recordRoom records
// (at least one, at most all) once it is framed, and gives them back once consume is
// done with it. So of the 10,000-record batches of a rolling restart's shutdown one
// is in consume, one waits for it and a third, framed, waits for room: their record
// slices are 160 KB each. Smaller batches are bounded by prefetchItems first. (Taking
// the room before framing saved no RSS and cost the pipelining: the wall time of the
// rolling load went from 1.1-1.3 s to 1.7 s in two alternating pairs.)
var recordRoom, prefetchRoom = 1024, 24 // tests lower them

// recordTokens is how many tokens of room a batch of n framed records takes.
func recordTokens(n int) int { return min(max((n+recordRoom-1)/recordRoom, 1), prefetchRoom) }

// prefetchItems is how many framed batches the prefetcher may have handed on that
// consume has not taken yet.
const prefetchItems = 16

// recPool keeps the record slices consume is done with for the batches read next. A
// batch takes the smallest that holds its records and is at most 4 times its size,
// so that the slices made for the largest batches (10,000 records, 160 KB) go to
// batches like them: with a first-in first-out queue, the shutdown batches of a
// rolling restart that followed an election's 16 small ones in flight found small
// slices, or large ones still held by those, made their own, and 20 of the large
// ones ended up in circulation (6.5 MB).
type recPool struct {
	mu   sync.Mutex
	free [][]rawRecord
}

// get returns an empty slice with room for n records.
func (q *recPool) get(n int) []rawRecord {
	q.mu.Lock()
	s := takeFit(&q.free, func(s []rawRecord) int { return cap(s) }, n)
	q.mu.Unlock()
	if s == nil {
		s = make([]rawRecord, 0, n)
	}
	return s
}

// takeFit removes from free and returns its smallest item whose size is at least n
// and at most 4 times n (256 for n below 64), or the zero T if none fits.
func takeFit[T any](free *[]T, size func(T) int, n int) T {
	best := -1
	for i, x := range *free {
		if c := size(x); c >= n && c <= 4*max(n, 64) && (best < 0 || c < size((*free)[best])) {
			best = i
		}
	}
	var x T
	if best >= 0 {
		f := *free
		x = f[best]
		last := len(f) - 1
		f[best] = f[last]
		clear(f[last:])
		*free = f[:last]
	}
	return x
}

// put keeps s for a later get. No more slices than batches can be in flight are kept
// (the smallest is dropped), so the pool stays bounded.
func (q *recPool) put(s []rawRecord) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.free) < prefetchItems+2 {
		q.free = append(q.free, s)
		return
	}
	small := 0
	for i, t := range q.free {
		if cap(t) < cap(q.free[small]) {
			small = i
		}
	}
	if cap(s) > cap(q.free[small]) {
		q.free[small] = s
	}
}

// close stops the goroutine and leaves the segment as if the batches consume took
// had been read there, and none after them.
func (p *prefetcher) close() {
	close(p.stop)
	for range p.items { // until run returns
	}
	s := p.seg
	s.prefetching, s.spares, s.released = false, nil, nil
	if !p.done {
		s.pos, s.buf = p.end, nil
	}
}
