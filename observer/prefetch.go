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
// at most 16 groups of batches (and 24 x 1,024 framed records: recordRoom) and two
// windows (of 128 KiB, or 1.25 times the largest batch) ahead of consume, and its
// buffers hold about four such batches. (Smaller windows kept the read too close
// behind consume: each waited for the other again and again. bench/burst.sh, the
// live bursts of tools/metabench -child-live, guards the size.)
const prefetchBuffers = 3

var prefetchChunk int64 = 128 << 10 // tests lower it

// fetched is a batch the prefetcher read and framed, or (err set) why it stopped.
type fetched struct {
	b      recordbatch.Batch
	pos    int64
	lo, hi int   // its records: the group's recs[lo:hi] (and, decoded, pre.out[lo:hi])
	ferr   error // from frame: the records are not valid
	err    error // from segment.read; the last item
	// released are buffers that no batch after this one is cut from (nil entries:
	// buffers consume never had): consume gives them back once done with the batches
	// before.
	released [][]byte
}

// A group is the batches the prefetcher hands on at once: those it read and framed
// before it would wait for a buffer, as long as they hold at most groupRecords
// records between them (a larger batch goes alone), up to the first that fails to
// read or frame. Their records are framed into one slice (and in a catch-up decoded
// into one predecoded), which go back to the pools once consume is done with the
// group's last batch.
type group struct {
	items  []fetched
	recs   []rawRecord
	pre    *predecoded // recs decoded, in a catch-up (startPrefetch's decode)
	tokens int         // of room, taken for recs (recordTokens)
}

// groupRecords is the most records a group of several batches holds: the sequential
// order's batches of 100 go two at a time (5,000 hand-offs through items for 1M
// changes, not 10,000, and as many takes of room and of each pool), a rolling
// restart's of 1,000 or more one at a time as before. Larger groups were hardly
// faster and kept more heap live; bench/burst.sh (tools/metabench -child-live)
// guards the size. A variable for tests.
var groupRecords = 256

// prefetcher reads and frames the batches of one segment on its own goroutine while
// the follower decodes and hands on the batches before them: segment.read (reads and
// CRC checks) and frame (cutting out records) take about half the CPU of a catch-up
// that only replays, a quarter of one that applies each unit. Batches reach consume
// in order (a group at a time) and as if read there; consume logs, counts, decodes
// and hands them on as before, so what the follower yields and logs is the same. In a
// live catch-up (the replay of the caller's goroutine and the applies are then the
// longest part) it decodes the records too (predecode), and consume only logs and
// counts what did not decode, in the same order. It stops at the first error of read,
// at the first batch frame refuses, or when stopped.
type prefetcher struct {
	seg   *segment
	items chan group
	free  chan []byte   // buffers (or nil tokens) consume gives back
	recs  recPool       // record slices consume is done with
	room  chan struct{} // a token per recordRoom framed records in flight (recordTokens)
	stop  chan struct{}
	done  bool  // the last item was received
	end   int64 // the segment position after the last batch received
	// cur is the group consume takes its batches from, at the next.
	cur group
	at  int
	// spareItems are item slices of groups consume is done with.
	spareItems chan []fetched
	// decode is set in a catch-up: the records are decoded here too.
	decode bool
	decs   decPool
	// inTxn are the predecoded buffers of groups consume is done with whose records
	// an open transaction may still hold: back to decs once none is open.
	inTxn []*predecoded
}

// A batchRead is a batch as the follower consumes it: where it was read, its records
// framed (or why they could not be: ferr) and, in a catch-up, decoded. recs and pre
// are nil when the batch is not framed or decoded yet.
type batchRead struct {
	b    recordbatch.Batch
	pos  int64
	recs []rawRecord
	pre  []decodedRecord
	ferr error
}

// A predecoded is the records of one batch decoded on the prefetcher's goroutine
// (a live catch-up: startPrefetch's decode): out[i] is what decoding the batch's i-th
// framed record gave, the record valid until the predecoded goes back to the pool
// (decPool.put), which it does once no unit handed on holds the records: after the
// group, or after the transaction that took them (next's txnOpen). Errors are only
// kept: the follower logs and counts them in order, as when it decodes
// (decoder.result).
type predecoded struct {
	dec metadata.BatchDecoder
	out []decodedRecord
}

type decodedRecord struct {
	rec metadata.Record // nil when isLeader: the consumer makes the record (cutter.records)
	err error
	// leader is a leader change, the bulk of a leader-change burst, when isLeader:
	// a seventh of the record's size crosses to the consumer's core.
	leader      metadata.LeaderChange
	unknownTags int32
	v           int16
	isLeader    bool
}

// decPool keeps the predecoded buffers the follower gave back for the batches read
// next. As with recPool, a batch takes the smallest that has room for its records
// and at most 4 times that. It keeps no more buffers than batches can be in flight,
// with room for at most as many records as the room for framed records twice over
// (recordRoom x prefetchRoom, the most that are decoded ahead), dropping the
// smallest, with as much again in flight.
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
	p := &prefetcher{seg: s, items: make(chan group, prefetchItems), free: make(chan []byte, prefetchBuffers),
		room: make(chan struct{}, prefetchRoom), stop: make(chan struct{}), end: s.pos, decode: decode,
		spareItems: make(chan []fetched, prefetchItems+2)}
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
	var g group
	for {
		for len(s.spares) == 0 {
			select {
			case b := <-p.free:
				s.spares = append(s.spares, b)
				continue
			default:
			}
			// Hand on what is grouped before waiting: the buffers come back as consume
			// takes the batches cut from them.
			if !p.send(&g) {
				return
			}
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
			n := min(int(b.NumRecords), len(b.Records))
			if len(g.items) > 0 && len(g.recs)+n > groupRecords {
				if !p.send(&g) {
					return
				}
			}
			if g.recs == nil {
				// Room for every record at once (each takes a byte at least), so that a
				// slice from a smaller batch is not grown by doubling.
				g.recs = p.recs.get(max(n, groupRecords, 1))
			}
			it.lo = len(g.recs)
			g.recs, it.ferr = frame(&b, g.recs)
			it.hi = len(g.recs)
		}
		if g.items == nil {
			select {
			case g.items = <-p.spareItems:
			default:
			}
		}
		g.items = append(g.items, it)
		if err != nil || it.ferr != nil {
			p.send(&g)
			return
		}
	}
}

// send hands g on, if it holds any batch, once there is room for its records, which
// it decodes first in a catch-up, and empties it; false if the prefetcher was stopped.
func (p *prefetcher) send(g *group) bool {
	if len(g.items) == 0 {
		return true
	}
	if g.recs != nil {
		g.tokens = recordTokens(len(g.recs))
	}
	for range g.tokens {
		select {
		case <-p.room:
		case <-p.stop:
			return false
		}
	}
	if p.decode {
		g.pre = p.predecode(g)
	}
	select {
	case p.items <- *g:
	case <-p.stop:
		return false
	}
	*g = group{}
	return true
}

// predecode decodes the records of a group's batches (up to one frame refused) into a
// predecoded buffer, record i of the group at out[i].
func (p *prefetcher) predecode(g *group) *predecoded {
	pd := p.decs.get(len(g.recs))
	pd.dec.Expect(len(g.recs))
	pd.out = slices.Grow(pd.out, len(g.recs))
	for _, it := range g.items {
		if it.err != nil || it.ferr != nil {
			break
		}
		for _, r := range g.recs[it.lo:it.hi] {
			// Written in place, not built and copied (see metadata.DecodeLeaderChange).
			pd.out = pd.out[:len(pd.out)+1]
			d := &pd.out[len(pd.out)-1]
			if d.v, d.isLeader = metadata.DecodeLeaderChange(r.value(), &d.leader); d.isLeader {
				d.rec, d.err, d.unknownTags = nil, nil, 0
				continue
			}
			d.rec, d.v, d.err = pd.dec.Decode(r.value())
			d.unknownTags = int32(pd.dec.UnknownTags())
		}
	}
	return pd
}

// next is the next batch, as segment.read returns it, with its records framed (or
// the framing's error) and, in a catch-up, decoded. Taking the first batch of a group
// gives back what the group before held (finish). recycle says that the consumer is
// done with the records of the batches before (its units' memory is reused and no
// transaction is open), so that the buffers they were cut from may be read into
// again; txnOpen that a metadata transaction is open, whose records the decoded
// buffers may hold.
func (p *prefetcher) next(recycle, txnOpen bool) (batchRead, error) {
	if p.at == len(p.cur.items) {
		p.finish(txnOpen)
		g, ok := <-p.items
		if !ok {
			return batchRead{}, errors.New("observer: prefetch ended early")
		}
		p.cur, p.at = g, 0
	}
	it := &p.cur.items[p.at]
	p.at++
	for _, b := range it.released {
		if !recycle {
			b = nil // records handed on may still use it (see segment.recycle)
		}
		select {
		case p.free <- b:
		default: // full: a read that took more buffers than it had spares made one
		}
	}
	if it.err != nil {
		p.done = true
		return batchRead{b: it.b, pos: it.pos}, it.err
	}
	if it.ferr != nil {
		p.done = true
	}
	p.end = it.pos + int64(it.b.Size())
	r := batchRead{b: it.b, pos: it.pos, recs: p.cur.recs[it.lo:it.hi], ferr: it.ferr}
	if p.cur.pre != nil && it.ferr == nil {
		r.pre = p.cur.pre.out[it.lo:it.hi]
	}
	return r, nil
}

// finish gives back the room, the record slice and the decoded records (keepDecoded)
// of the group consume is done with, if any.
func (p *prefetcher) finish(txnOpen bool) {
	g := p.cur
	if g.items == nil {
		return
	}
	for range g.tokens {
		p.room <- struct{}{}
	}
	if g.recs != nil {
		clear(g.recs)
		p.recs.put(g.recs[:0])
	}
	p.keepDecoded(g.pre, txnOpen)
	clear(g.items) // no batch buffer kept alive through it
	select {
	case p.spareItems <- g.items[:0]:
	default:
	}
	p.cur, p.at = group{}, 0
}

// keepDecoded gives the predecoded records of a group consume is done with (or nil)
// back to the pool, with those an open transaction held, once none is open.
func (p *prefetcher) keepDecoded(pre *predecoded, txnOpen bool) {
	if pre != nil {
		p.inTxn = append(p.inTxn, pre)
	}
	if txnOpen || len(p.inTxn) == 0 {
		return
	}
	for _, pd := range p.inTxn {
		p.decs.put(pd)
	}
	clear(p.inTxn)
	p.inTxn = p.inTxn[:0]
}

// The records framed ahead of consume are bounded too, not only the groups
// (prefetchItems) and buffers: a group takes a token of room per recordRoom records
// (at least one, at most all) once it is framed, and gives them back once consume is
// done with it. So of the 10,000-record batches of a rolling restart's shutdown one
// is in consume, one waits for it and a third, framed, waits for room. Smaller
// batches are bounded by prefetchItems first. (Taking the room before framing saved
// no RSS and cost the pipelining; bench/burst.sh, the rolling burst, guards this.)
var recordRoom, prefetchRoom = 1024, 24 // tests lower them

// recordTokens is how many tokens of room a group of n framed records takes.
func recordTokens(n int) int { return min(max((n+recordRoom-1)/recordRoom, 1), prefetchRoom) }

// prefetchItems is how many groups of framed batches the prefetcher may have handed
// on that consume has not taken yet.
const prefetchItems = 16

// recPool keeps the record slices consume is done with for the batches read next. A
// batch takes the smallest that holds its records and is at most 4 times its size,
// so that the slices made for the largest batches (10,000 records) go to
// batches like them: with a first-in first-out queue, the shutdown batches of a
// rolling restart that followed an election's 16 small ones in flight found small
// slices, or large ones still held by those, made their own, and many of the large
// ones ended up in circulation (TestRecPool).
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
