// Package observertest writes KRaft metadata log directories the way Kafka does, for
// tests of code that reads them: segments of record batches that can be appended to
// (whole or half a batch at a time), rolled, truncated and deleted, and snapshots.
// Files are written with Kafka's names (00000000000000000000.log,
// 00000000000000000042-0000000003.checkpoint) and Kafka's batch fields.
//
// A Log is not safe for concurrent use.
package observertest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// Log writes one __cluster_metadata-0 directory.
type Log struct {
	t   testing.TB
	Dir string
	// Next is the offset the next batch gets; Epoch its partition leader epoch;
	// Timestamp its append time (it grows by one ms per batch).
	Next      int64
	Epoch     int32
	Timestamp int64

	active  int64 // base offset of the active segment, -1 when there is none
	batches []batch
}

type batch struct {
	seg, pos, base, last int64
	epoch                int32
	ts                   int64
}

// New creates dir (and its parents) and returns a Log with no segment yet, at offset
// 0 and epoch 1.
func New(t testing.TB, dir string) *Log {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &Log{t: t, Dir: dir, Epoch: 1, Timestamp: 1_700_000_000_000, active: -1}
}

// SegmentPath is the path of the segment starting at base.
func (l *Log) SegmentPath(base int64) string {
	return filepath.Join(l.Dir, fmt.Sprintf("%020d.log", base))
}

// Active is the base offset of the active segment (-1 before the first batch).
func (l *Log) Active() int64 { return l.active }

// Encode returns a data batch holding recs (each at its newest version) at offset
// l.Next, without writing it or moving on.
func (l *Log) Encode(recs ...metadata.Record) []byte {
	l.t.Helper()
	rs := make([]recordbatch.Record, len(recs))
	for i, r := range recs {
		v, err := metadata.Append(nil, r, r.Type().MaxVersion())
		if err != nil {
			l.t.Fatal(err)
		}
		rs[i] = recordbatch.Record{OffsetDelta: int32(i), Value: v}
	}
	return recordbatch.AppendBatch(nil, recordbatch.NewBatchHeader(l.Next, l.Epoch, l.Timestamp, false), rs)
}

// AppendValues writes a data batch whose records hold the given raw values (framed
// metadata records, or anything else).
func (l *Log) AppendValues(values ...[]byte) int64 {
	l.t.Helper()
	rs := make([]recordbatch.Record, len(values))
	for i, v := range values {
		rs[i] = recordbatch.Record{OffsetDelta: int32(i), Value: v}
	}
	b := recordbatch.AppendBatch(nil, recordbatch.NewBatchHeader(l.Next, l.Epoch, l.Timestamp, false), rs)
	return l.AppendRaw(b, int64(len(values)))
}

// Append writes a data batch holding recs to the active segment (creating segment 0
// first if there is none) and returns its base offset.
func (l *Log) Append(recs ...metadata.Record) int64 {
	l.t.Helper()
	return l.AppendRaw(l.Encode(recs...), int64(len(recs)))
}

// AppendLeaderChange writes the control batch a new leader writes first.
func (l *Log) AppendLeaderChange(leader int32) int64 {
	l.t.Helper()
	b := recordbatch.AppendControlBatch(nil, recordbatch.NewBatchHeader(l.Next, l.Epoch, l.Timestamp, true),
		&recordbatch.LeaderChangeMessage{LeaderID: leader, Voters: []int32{leader}, GrantingVoters: []int32{leader}})
	return l.AppendRaw(b, 1)
}

// AppendRaw writes encoded batch bytes holding n offsets to the active segment.
func (l *Log) AppendRaw(b []byte, n int64) int64 {
	l.t.Helper()
	if l.active < 0 {
		l.active = l.Next
	}
	pos := l.size(l.active)
	l.write(l.SegmentPath(l.active), b, pos)
	base := l.Next
	l.batches = append(l.batches, batch{seg: l.active, pos: pos, base: base, last: base + n - 1, epoch: l.Epoch, ts: l.Timestamp})
	l.Next += n
	l.Timestamp++
	return base
}

// AppendPart writes b[from:to] of an encoded batch at the end of the active segment
// without moving on: a batch being written. Write the rest with AppendPart and then
// call Commit(n).
func (l *Log) AppendPart(b []byte, from, to int) {
	l.t.Helper()
	if l.active < 0 {
		l.active = l.Next
	}
	l.write(l.SegmentPath(l.active), b[from:to], l.size(l.active))
}

// Commit records a batch of n offsets written with AppendPart, whose total size was
// size bytes.
func (l *Log) Commit(n int64, size int) {
	pos := l.size(l.active) - int64(size)
	l.batches = append(l.batches, batch{seg: l.active, pos: pos, base: l.Next, last: l.Next + n - 1, epoch: l.Epoch, ts: l.Timestamp})
	l.Next += n
	l.Timestamp++
}

func (l *Log) size(base int64) int64 {
	fi, err := os.Stat(l.SegmentPath(base))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		l.t.Fatal(err)
	}
	return fi.Size()
}

func (l *Log) write(path string, b []byte, at int64) {
	l.t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		l.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, at); err != nil {
		l.t.Fatal(err)
	}
}

// Roll starts a new, empty segment at l.Next, as Kafka does when a segment is full.
func (l *Log) Roll() int64 {
	l.t.Helper()
	l.active = l.Next
	l.write(l.SegmentPath(l.active), nil, 0)
	return l.active
}

// DeleteSegment deletes the segment at base as Kafka does: renamed to .deleted, then
// removed.
func (l *Log) DeleteSegment(base int64) {
	l.t.Helper()
	p := l.SegmentPath(base)
	if err := os.Rename(p, p+".deleted"); err != nil {
		l.t.Fatal(err)
	}
	if err := os.Remove(p + ".deleted"); err != nil {
		l.t.Fatal(err)
	}
}

// Truncate removes every batch from offset on, as Kafka's UnifiedLog.truncateTo does:
// the segment holding offset is cut at that batch, later segments are deleted.
// offset must be a batch's base offset. The next batch is written at offset.
func (l *Log) Truncate(offset int64) {
	l.t.Helper()
	i := 0
	for i < len(l.batches) && l.batches[i].base < offset {
		i++
	}
	if i == len(l.batches) {
		return
	}
	if l.batches[i].base != offset {
		l.t.Fatalf("observertest: offset %d is not a batch's base offset", offset)
	}
	cut := l.batches[i]
	segs := map[int64]bool{}
	for _, b := range l.batches[i:] {
		if b.seg != cut.seg {
			segs[b.seg] = true
		}
	}
	if l.active != cut.seg {
		segs[l.active] = true
	}
	for s := range segs {
		if _, err := os.Stat(l.SegmentPath(s)); err == nil {
			l.DeleteSegment(s)
		}
	}
	if err := os.Truncate(l.SegmentPath(cut.seg), cut.pos); err != nil {
		l.t.Fatal(err)
	}
	l.batches = l.batches[:i]
	l.active = cut.seg
	l.Next = offset
}

// TruncateBytes cuts the active segment to size bytes, without forgetting batches:
// for torn tails.
func (l *Log) TruncateBytes(size int64) {
	l.t.Helper()
	if err := os.Truncate(l.SegmentPath(l.active), size); err != nil {
		l.t.Fatal(err)
	}
}

// SnapshotBytes encodes a snapshot file: a header batch, recs in batches of at most
// perBatch records (all in one when perBatch <= 0), and a footer batch. With
// noFooter the footer batch is left out.
func SnapshotBytes(epoch int32, lastTimestamp int64, recs []metadata.Record, perBatch int, noFooter bool) []byte {
	h := func(off int64, control bool) recordbatch.BatchHeader {
		return recordbatch.NewBatchHeader(off, epoch, lastTimestamp, control)
	}
	b := recordbatch.AppendControlBatch(nil, h(0, true),
		&recordbatch.SnapshotHeaderRecord{LastContainedLogTimestamp: lastTimestamp},
		&recordbatch.KRaftVersionRecord{KRaftVersion: 1})
	off := int64(2)
	if perBatch <= 0 {
		perBatch = max(len(recs), 1)
	}
	for i := 0; i < len(recs); i += perBatch {
		chunk := recs[i:min(i+perBatch, len(recs))]
		rs := make([]recordbatch.Record, len(chunk))
		for j, r := range chunk {
			v, err := metadata.Append(nil, r, r.Type().MaxVersion())
			if err != nil {
				panic(err)
			}
			rs[j] = recordbatch.Record{OffsetDelta: int32(j), Value: v}
		}
		b = recordbatch.AppendBatch(b, h(off, false), rs)
		off += int64(len(chunk))
	}
	if !noFooter {
		b = recordbatch.AppendControlBatch(b, h(off, true), &recordbatch.SnapshotFooterRecord{})
	}
	return b
}

// Snapshot writes a snapshot of recs ending at l.Next (the offset after the last
// record it covers) with the epoch of the last batch, as Kafka does: to a .part file
// renamed into place. It returns the file's path.
func (l *Log) Snapshot(recs ...metadata.Record) string {
	l.t.Helper()
	epoch, ts := l.Epoch, l.Timestamp-1
	if n := len(l.batches); n > 0 {
		epoch, ts = l.batches[n-1].epoch, l.batches[n-1].ts
	}
	return l.WriteSnapshot(l.Next, epoch, SnapshotBytes(epoch, ts, recs, 0, false))
}

// WriteSnapshot writes snapshot file bytes for id (endOffset, epoch) through a .part
// file, and returns the path.
func (l *Log) WriteSnapshot(endOffset int64, epoch int32, data []byte) string {
	l.t.Helper()
	name := fmt.Sprintf("%020d-%010d.checkpoint", endOffset, epoch)
	path := filepath.Join(l.Dir, name)
	part := filepath.Join(l.Dir, fmt.Sprintf("%020d-%010d-%d.checkpoint.part", endOffset, epoch, 12345))
	if err := os.WriteFile(part, data, 0o644); err != nil {
		l.t.Fatal(err)
	}
	if err := os.Rename(part, path); err != nil {
		l.t.Fatal(err)
	}
	return path
}

// Records helpers.

// ID returns a topic id derived from n (for readable tests).
func ID(n byte) kbin.UUID { return kbin.UUID{15: n} }

// Topic is a TopicRecord.
func Topic(name string, id kbin.UUID) *metadata.TopicRecord {
	return &metadata.TopicRecord{Name: name, TopicID: id}
}

// Partition is a PartitionRecord with replicas (all in sync, the first leading).
func Partition(id kbin.UUID, p int32, replicas ...int32) *metadata.PartitionRecord {
	return &metadata.PartitionRecord{PartitionID: p, TopicID: id, Replicas: replicas, ISR: replicas,
		Leader: replicas[0], LeaderEpoch: 0, PartitionEpoch: 0}
}

// Broker is a RegisterBrokerRecord for broker id with a rack ("" = none), unfenced.
func Broker(id int32, rack string) *metadata.RegisterBrokerRecord {
	r := &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: int64(id) * 10, IncarnationID: kbin.UUID{0: byte(id)}}
	if rack != "" {
		r.Rack = &rack
	}
	return r
}

// RemoveTopic is a RemoveTopicRecord.
func RemoveTopic(id kbin.UUID) *metadata.RemoveTopicRecord {
	return &metadata.RemoveTopicRecord{TopicID: id}
}

// NoOp is a NoOpRecord.
func NoOp() *metadata.NoOpRecord { return &metadata.NoOpRecord{} }

// Begin, End and Abort are metadata transaction markers.
func Begin() *metadata.BeginTransactionRecord { return &metadata.BeginTransactionRecord{} }

// End is an EndTransactionRecord.
func End() *metadata.EndTransactionRecord { return &metadata.EndTransactionRecord{} }

// Abort is an AbortTransactionRecord.
func Abort() *metadata.AbortTransactionRecord { return &metadata.AbortTransactionRecord{} }
