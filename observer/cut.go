package observer

import (
	"log/slog"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// cutter cuts the batches of the log into units and yields them: the part both
// sources share (the disk follower embeds one, the quorum client has its own). It
// holds the open metadata transaction between batches. Not safe for concurrent use.
type cutter struct {
	log *slog.Logger
	m   *Metrics
	dec decoder
	txn *Unit // open metadata transaction: its entries so far
	// reuse is set while units go to a consumer that is done with each unit once it
	// asks for the next: their records are decoded into bdec, reset after each
	// batch once no transaction is open, and units' Entries are reused (spare).
	reuse bool
	bdec  metadata.BatchDecoder
	spare []Entry // a handed-on unit's Entries, for the next unit's (see spareEntries)
	// pieces is set while a streamed rebuild reads: a batch's records are yielded
	// pieceRecords at a time.
	pieces bool
	// catchUp is set while the units are a catch-up's (catchUpAbove); held counts
	// the batch bytes read since the consumer last published what it held (before a
	// unit it does not hold, or at an itemFlush).
	catchUp bool
	held    int64
	// pre is the batch being cut decoded by the prefetcher (a catch-up), or nil.
	pre []decodedRecord
}

func newCutter(log *slog.Logger, m *Metrics) cutter {
	return cutter{log: log, m: m, dec: decoder{log: log, m: m}}
}

// spareEntries returns an empty slice for a unit's Entries: the array of a unit
// already handed on while reuse is set, else nil. It is handed out once.
func (c *cutter) spareEntries() []Entry {
	e := c.spare[:0]
	c.spare = nil
	return e
}

// setReuse turns the reuse of units' memory on or off (see cutter.reuse).
func (c *cutter) setReuse(on bool) {
	c.reuse = on
	c.dec.batch = nil
	if on {
		c.dec.batch = &c.bdec
	}
}

// records cuts a batch into units where Kafka's MetadataBatchLoader publishes when it
// reads the log one batch at a time (as kafka-metadata-shell does): at the end of a
// batch, unless a transaction is open, and before a BeginTransactionRecord that is not
// the first record of its batch. A transaction's records wait in c.txn for its End;
// the End does not end the unit, so the records after it in the same batch join the
// transaction's unit. An Abort drops the transaction's records, and only those: the
// records after it in the batch still make a unit (Kafka's loader applies the aborted
// records too in that case; docs/metadata-log.md#transactions says why kraftwatch does
// not). src names where the batch came from in log lines (a segment file, a
// controller). recs are b's records (frame). Each unit is counted and yielded as it
// ends (sendUnit).
func (c *cutter) records(b *recordbatch.Batch, recs []rawRecord, skipBelow int64, src string, y yielder) error {
	if b.IsControl() {
		if c.txn != nil {
			return nil
		}
		return c.sendUnit(Unit{Control: true, Provenance: provAt(b, b.LastOffset())}, y)
	}
	u := Unit{Entries: c.spareEntries()} // the unit being built: what Kafka's loader holds in its delta
	first := max(b.BaseOffset, skipBelow)
	skip := 0
	for skip < len(recs) && recs[skip].offset(b) < skipBelow {
		skip++
	}
	recs = recs[skip:]
	var pre []decodedRecord // recs decoded by the prefetcher, or nil
	if c.pre != nil {
		pre = c.pre[skip:]
	}
	c.m.Records.Add(int64(len(recs))) // once a batch: an atomic add per record costs more
	room := len(recs)
	piece := 0 // see pieceRecords
	if c.pieces && pre == nil {
		piece = pieceRecords
		room = min(room, piece)
	}
	if c.dec.batch != nil {
		c.dec.batch.Expect(room)
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
		switch {
		case pre != nil && pre[i].isLeader: // decoded without error or unknown tags
			rec, v, ok = c.leaderChange(&pre[i].leader), pre[i].v, true
		case pre != nil:
			p := &pre[i]
			rec, v, ok = c.dec.result(p.rec, p.v, p.err, int(p.unknownTags), off, src)
		default:
			rec, v, ok = c.dec.decode(r.value(), off, src, false)
		}
		if !ok {
			continue
		}
		switch typ := rec.Type(); typ {
		case metadata.TypeBeginTransaction:
			if err := c.begin(&u, b, off, first, y); err != nil {
				return err
			}
		case metadata.TypeEndTransaction, metadata.TypeAbortTransaction:
			c.end(&u, typ, off)
		default:
			// Appended, then written where it is (see metadata.DecodeLeaderChange).
			es := &u.Entries
			if c.txn != nil {
				es = &c.txn.Entries
			}
			*es = append(*es, Entry{})
			e := &(*es)[len(*es)-1]
			e.Offset, e.Version, e.Record = off, v, rec
			if c.txn == nil && len(u.Entries) == piece {
				if err := c.yieldPiece(&u, b, off, y); err != nil {
					return err
				}
			}
		}
	}
	if c.txn != nil {
		return nil
	}
	u.Provenance = provAt(b, b.LastOffset())
	return c.sendUnit(u, y)
}

// leaderChange returns a leader change the prefetcher decoded as its record: in bdec
// when units' memory is reused (the consumer's own, reset with the batch), else its own.
func (c *cutter) leaderChange(l *metadata.LeaderChange) metadata.Record {
	if c.dec.batch != nil {
		return c.dec.batch.LeaderChange(l)
	}
	r := l.Record()
	return &r
}

// provAt is the provenance of offset off of b.
func provAt(b *recordbatch.Batch, off int64) Provenance {
	return Provenance{Offset: off, Epoch: b.PartitionLeaderEpoch, Timestamp: b.MaxTimestamp}
}

// begin handles a BeginTransactionRecord of b at off: it ends the unit being built,
// u, before it (unless the Begin is the batch's first record) and opens a transaction.
func (c *cutter) begin(u *Unit, b *recordbatch.Batch, off, first int64, y yielder) error {
	if c.txn != nil {
		c.txnError("BeginTransactionRecord inside a transaction", off, c.txn.Provenance.Offset)
		return nil
	}
	if off > first {
		u.Provenance = provAt(b, off-1)
		if err := c.sendUnit(*u, y); err != nil {
			return err
		}
		*u = Unit{}
	}
	c.txn = &Unit{Transaction: true, Provenance: provAt(b, off)}
	return nil
}

// end handles an End (typ) or AbortTransactionRecord at off: the open transaction's
// records become the unit being built, u, or are dropped.
func (c *cutter) end(u *Unit, typ metadata.RecordType, off int64) {
	if c.txn == nil {
		c.txnError(typ.String()+" without a BeginTransactionRecord", off, -1)
		return
	}
	t := c.txn
	c.txn = nil
	if typ == metadata.TypeAbortTransaction {
		c.m.AbortedTransactions.Add(1)
		c.log.Info("dropping an aborted metadata transaction", "offset", off,
			"begin_offset", t.Provenance.Offset, "records", len(t.Entries))
		u.Aborted = true
		return
	}
	// A Begin is the first record of u, so u holds nothing yet.
	u.Transaction, u.Entries = true, t.Entries
}

// yieldPiece yields the records of u so far, a piece of a streamed rebuild's batch
// ending at off, which the consumer replays at once; u goes on empty, in the same
// array, and the decoder is reset.
func (c *cutter) yieldPiece(u *Unit, b *recordbatch.Batch, off int64, y yielder) error {
	if err := c.yieldUnit(Unit{Entries: u.Entries, Provenance: provAt(b, off)}, y); err != nil {
		return err
	}
	u.Entries = u.Entries[:0]
	c.spare = nil // yieldUnit kept u's array as the spare: it is the unit's again
	c.bdec.Reset()
	return nil
}

// sendUnit counts and yields a unit that ends.
func (c *cutter) sendUnit(u Unit, y yielder) error {
	c.m.Units.Add(1)
	return c.yieldUnit(u, y)
}

// pieceRecords is how many records of a batch a streamed rebuild (a load, not a live
// read: units are replayed into the rebuild's delta, not published) decodes and yields
// at a time while no transaction is open: the Observer replays them at once, so the
// decoder is reset after each piece and holds a piece's records, not a whole batch's
// (a rolling restart's batches hold 10,000 PartitionChangeRecords; bench/burst.sh,
// the rolling load's peak RSS, guards this). The pieces are not units: the batch's
// last piece is its unit, counted and at its provenance as before. A variable for
// tests.
var pieceRecords = 1024

// yieldUnit yields u, marked as read in a catch-up if it is. A unit the consumer will
// not hold (not a catch-up's, or not plain) makes it publish what it held first, so
// the bytes towards the next flush count from there. With reuse, u's Entries become
// the spare for the next unit once the consumer is done with it.
func (c *cutter) yieldUnit(u Unit, y yielder) error {
	if !c.catchUp || !u.plain() {
		c.held = 0
	}
	err := y.send(item{kind: itemUnit, unit: u, catchUp: c.catchUp})
	if c.reuse && cap(u.Entries) > cap(c.spare) {
		clear(u.Entries) // no records kept alive through the spare
		c.spare = u.Entries[:0]
	}
	return err
}

func (c *cutter) txnError(what string, off, begin int64) {
	c.m.TransactionErrors.Add(1)
	c.log.Error("ignoring a metadata transaction marker out of place", "what", what, "offset", off, "begin_offset", begin)
}
