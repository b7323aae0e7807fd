package groups

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

// fetchPartition is one partition of a Fetch answer. Records are its record batches
// as the broker sent them, sharing memory with the answer; the last may be cut short.
type fetchPartition struct {
	Partition     int
	Err           error // the partition's error code as a kafka.Error; nil for none
	HighWatermark int64
	Records       []byte
}

// fetchTop is the top level of a Fetch answer, from v7 on (zero before).
type fetchTop struct {
	Err       kafka.Error // the answer's error code: the request was refused whole; 0 for none
	SessionID int32       // the broker's fetch session; 0 for none
}

// parseFetch reads a Fetch answer of version v (4 to 11), without its size and
// correlation id, calling fn for each partition of topic in it, unless the answer has
// a top-level error. It copies nothing: the records stay in b.
func parseFetch(b []byte, v int16, topic string, fn func(fetchPartition) error) (fetchTop, error) {
	var top fetchTop
	r := kbin.NewReader(b)
	r.Int32() // throttle time
	if v >= 7 {
		top.Err = kafka.Error(r.Int16())
		top.SessionID = r.Int32()
		if err := r.Err(); err != nil {
			return fetchTop{}, fmt.Errorf("fetch answer: %w", err)
		}
		if top.Err != 0 {
			return top, nil
		}
	}
	for range max(0, r.ArrayLen(6)) {
		name := r.String()
		for range max(0, r.ArrayLen(4+2+8+8+8+4+4)) {
			fp := fetchPartition{Partition: int(r.Int32())}
			if code := r.Int16(); code != 0 {
				fp.Err = kafka.Error(code)
			}
			fp.HighWatermark = r.Int64()
			r.Int64() // last stable offset: the broker returns no record past it
			if v >= 5 {
				r.Int64() // log start offset
			}
			// Aborted transactions: in __consumer_offsets only transactional offset
			// commits can be aborted, and Run drops every offset commit.
			for range max(0, r.ArrayLen(16)) {
				r.Int64()
				r.Int64()
			}
			if v >= 11 {
				r.Int32() // preferred read replica
			}
			fp.Records = r.Bytes()
			if r.Err() != nil {
				break
			}
			if name != topic {
				continue
			}
			if err := fn(fp); err != nil {
				return top, err
			}
		}
	}
	if err := r.Err(); err != nil {
		return top, fmt.Errorf("fetch answer: %w", err)
	}
	return top, nil
}

// fetched is what one partition's records in a Fetch answer hold past an offset.
type fetched struct {
	batch []Message // records kept (not offset commits), keys and values copied
	read  int64     // records at or past the offset, offset commits and control records included
	next  int64     // the offset after the last batch read whole
	last  time.Time // timestamp of the last record read
}

// filterRecords reads the record batches of partition p, from offset from on, into
// a fetched: offset commits (key versions 0 and 1) and control records (whose keys
// start with version 0 too) are recognised from their key's first two bytes, in place,
// and dropped without a copy; other records are copied out of records, which the
// next fetch overwrites. next moves past whole batches, so records that compaction
// removed from a batch's end are skipped too. A batch cut short at the end of records
// (the answer's size limit) is left for the next fetch; a corrupt batch is an error,
// after the batches before it.
func filterRecords(p int, records []byte, from int64) (fetched, error) {
	f := fetched{next: from}
	_, err := recordbatch.Scan(records, func(bt recordbatch.Batch) error {
		if bt.NextOffset() <= from {
			return nil
		}
		it, err := iterate(bt)
		if err != nil {
			return err
		}
		control := bt.IsControl()
		for it.Next() {
			off := it.Offset()
			if off < from {
				continue
			}
			rec := it.Record()
			f.read++
			ts := bt.BaseTimestamp + rec.TimestampDelta
			if bt.LogAppendTime() {
				ts = bt.MaxTimestamp
			}
			f.last = time.UnixMilli(ts)
			if t, ok := PeekType(rec.Key); control || (ok && t.IsOffsetCommit()) {
				continue
			}
			kv := make([]byte, len(rec.Key)+len(rec.Value))
			m := Message{Partition: p, Offset: off, Key: kv[:len(rec.Key):len(rec.Key)], Time: f.last}
			copy(kv, rec.Key)
			if rec.Value != nil {
				m.Value = kv[len(rec.Key):]
				copy(m.Value, rec.Value)
			}
			f.batch = append(f.batch, m)
		}
		if err := it.Err(); err != nil {
			return err
		}
		f.next = bt.NextOffset()
		return nil
	})
	if err != nil && !errors.Is(err, recordbatch.ErrTruncated) {
		return f, fmt.Errorf("partition %d at offset %d: %w", p, f.next, err)
	}
	return f, nil
}

// iterate returns an iterator over bt's records, decompressing them with kafka-go's
// codecs when the batch is compressed.
func iterate(bt recordbatch.Batch) (recordbatch.RecordIter, error) {
	if bt.Codec() == recordbatch.CodecNone {
		return bt.Iter(), nil
	}
	codec := compress.Compression(bt.Codec()).Codec()
	if codec == nil {
		return recordbatch.RecordIter{}, fmt.Errorf("batch at offset %d: codec %s: %w", bt.BaseOffset, bt.Codec(), recordbatch.ErrUnsupportedCodec)
	}
	zr := codec.NewReader(bytes.NewReader(bt.Records))
	data, err := io.ReadAll(zr)
	zr.Close()
	if err != nil {
		return recordbatch.RecordIter{}, fmt.Errorf("batch at offset %d: %s: %v: %w", bt.BaseOffset, bt.Codec(), err, recordbatch.ErrCorrupt)
	}
	bt.Records = data
	bt.Attributes &^= recordbatch.AttrCodecMask
	return bt.Iter(), nil
}
