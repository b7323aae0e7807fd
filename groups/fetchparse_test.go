package groups_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// fixtureBatches puts the records of Kafka 4.3.1's consumer-offsets.txt fixture into
// batches of up to 7 records from offset 100, as one partition would hold them, and
// returns the batches and the records.
func fixtureBatches(tb testing.TB) ([]byte, []fixtureRecord) {
	tb.Helper()
	recs := readFixture(tb, fixture.ConsumerOffsets(tb, "4.3.1"))
	var b []byte
	for i := 0; i < len(recs); i += 7 {
		h := recordbatch.NewBatchHeader(int64(100+i), 3, 1_700_000_000_000, false)
		var batch []recordbatch.Record
		for j, r := range recs[i:min(i+7, len(recs))] {
			batch = append(batch, recordbatch.Record{OffsetDelta: int32(j), TimestampDelta: int64(j), Key: r.Key, Value: r.Value})
		}
		b = recordbatch.AppendBatch(b, h, batch)
	}
	return b, recs
}

// TestFilterRecords: from batches of real keys and values, exactly the records that
// are not offset commits are kept, in order, with copies of their keys and values;
// every record past the start offset is counted; next is past the last batch.
func TestFilterRecords(t *testing.T) {
	b, recs := fixtureBatches(t)
	for _, from := range []int64{0, 100, 103, 100 + int64(len(recs)) - 1} {
		batch, read, next, err := groups.FilterRecords(4, b, from)
		if err != nil {
			t.Fatalf("from %d: %v", from, err)
		}
		var want []fixtureRecord
		var wantRead int64
		for i, r := range recs {
			if int64(100+i) < from {
				continue
			}
			wantRead++
			if ty, ok := groups.PeekType(r.Key); ok && ty.IsOffsetCommit() {
				continue
			}
			want = append(want, r)
		}
		if read != wantRead || next != 100+int64(len(recs)) || len(batch) != len(want) {
			t.Fatalf("from %d: read %d next %d kept %d, want %d, %d, %d", from, read, next, len(batch), wantRead, 100+len(recs), len(want))
		}
		for i, m := range batch {
			if m.Partition != 4 || !bytes.Equal(m.Key, want[i].Key) || !bytes.Equal(m.Value, want[i].Value) || (m.Value == nil) != (want[i].Value == nil) {
				t.Fatalf("from %d: record %d = %+v, want key %x value %x", from, i, m, want[i].Key, want[i].Value)
			}
		}
	}
	batch, _, _, _ := groups.FilterRecords(0, b, 0)
	if len(batch) == 0 {
		t.Fatal("the fixture has no record but offset commits")
	}
	key := bytes.Clone(batch[0].Key)
	clear(b) // the next fetch overwrites the answer
	if !bytes.Equal(batch[0].Key, key) {
		t.Fatal("a kept record shares memory with the fetch answer")
	}
}

// TestFilterRecordsCompactedTail: a batch whose last records compaction removed
// (its last offset delta is beyond its last record), a control batch, and a batch
// cut short at the end of the answer: next moves past the first two, never into the
// third; the control record is counted, not kept.
func TestFilterRecordsCompactedTail(t *testing.T) {
	meta := []byte{0, 2, 0, 1, 'g'} // a group metadata key (version 2)
	b := recordbatch.AppendBatch(nil, recordbatch.NewBatchHeader(10, 0, 1, false),
		[]recordbatch.Record{{OffsetDelta: 0, Key: meta, Value: []byte{0, 3}}})
	binary.BigEndian.PutUint32(b[23:], 4) // last offset delta 4: offsets 11 to 14 were removed
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	b = recordbatch.AppendControlBatch(b, recordbatch.NewBatchHeader(15, 0, 1, true), &recordbatch.EndTxnMarker{Commit: true})
	whole := len(b)
	b = recordbatch.AppendBatch(b, recordbatch.NewBatchHeader(16, 0, 1, false), []recordbatch.Record{{Key: meta, Value: []byte{0, 3}}})
	batch, read, next, err := groups.FilterRecords(0, b[:len(b)-3], 10)
	if err != nil || read != 2 || next != 16 || len(batch) != 1 || batch[0].Offset != 10 {
		t.Fatalf("FilterRecords = %d kept, read %d, next %d, %v; want 1 kept (offset 10), read 2, next 16", len(batch), read, next, err)
	}
	b[whole+20]++ // corrupt the third batch's CRC
	if _, _, next, err := groups.FilterRecords(0, b, 10); !errors.Is(err, recordbatch.ErrCorrupt) || next != 16 {
		t.Fatalf("corrupt batch: next %d, %v; want 16 and ErrCorrupt", next, err)
	}
}

// fetchAnswer encodes a Fetch answer of version v with kafka-go's encoder (another
// implementation than parseFetch's): partition 4 holds recs (kafka-go's encoder numbers them from 0),
// partition 7 an error, and another topic's partition is left out.
func fetchAnswer(tb testing.TB, v int16, recs []fixtureRecord) []byte {
	tb.Helper()
	var prs []protocol.Record
	for _, r := range recs {
		pr := protocol.Record{Key: protocol.NewBytes(r.Key)}
		if r.Value != nil {
			pr.Value = protocol.NewBytes(r.Value)
		}
		prs = append(prs, pr)
	}
	rs := protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(prs...)}
	other := protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(protocol.Record{Key: protocol.NewBytes([]byte{0, 2})})}
	res := &fetch.Response{Topics: []fetch.ResponseTopic{
		{Topic: "other", Partitions: []fetch.ResponsePartition{{Partition: 4, HighWatermark: 1, RecordSet: other}}},
		{Topic: groups.ConsumerOffsetsTopic, Partitions: []fetch.ResponsePartition{
			{Partition: 4, HighWatermark: 900, LastStableOffset: 900,
				AbortedTransactions: []fetch.ResponseTransaction{{ProducerID: 1, FirstOffset: 2}}, RecordSet: rs},
			{Partition: 7, ErrorCode: int16(kafka.NotLeaderForPartition), HighWatermark: -1,
				RecordSet: protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(protocol.Record{})}},
		}},
	}}
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, v, 9, res); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()[8:] // size, correlation id
}

// TestParseFetch reads answers of each version kraftwatch speaks, from kafka-go's
// encoder: partitions, errors, high watermarks and records, and only the topic asked
// for; an answer cut short is an error.
func TestParseFetch(t *testing.T) {
	recs := readFixture(t, fixture.ConsumerOffsets(t, "4.3.1"))[:40]
	for _, v := range []int16{4, 5, 7, 11} {
		var got []groups.FetchPartition
		answer := fetchAnswer(t, v, recs)
		_, err := groups.ParseFetch(answer, v, groups.ConsumerOffsetsTopic, func(fp groups.FetchPartition) error {
			got = append(got, fp)
			return nil
		})
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if len(got) != 2 || got[0].Partition != 4 || got[0].Err != nil || got[0].HighWatermark != 900 ||
			got[1].Partition != 7 || !errors.Is(got[1].Err, kafka.NotLeaderForPartition) {
			t.Fatalf("v%d: %+v", v, got)
		}
		batch, read, next, err := groups.FilterRecords(4, got[0].Records, 0)
		if err != nil || read != int64(len(recs)) || next != int64(len(recs)) {
			t.Fatalf("v%d: records: read %d, next %d, %v", v, read, next, err)
		}
		for _, m := range batch {
			if r := recs[m.Offset]; !bytes.Equal(m.Key, r.Key) || !bytes.Equal(m.Value, r.Value) {
				t.Fatalf("v%d: record at %d: %x %x, want %x %x", v, m.Offset, m.Key, m.Value, r.Key, r.Value)
			}
		}
		for n := range len(answer) {
			if _, err := groups.ParseFetch(answer[:n], v, groups.ConsumerOffsetsTopic, func(groups.FetchPartition) error { return nil }); err == nil {
				t.Fatalf("v%d: an answer cut at byte %d of %d read without error", v, n, len(answer))
			}
		}
	}
}

// sessionAnswer encodes, with kafka-go's encoder, a Fetch answer of version v without
// partitions: an incremental session's answer when nothing changed, or a refusal.
func sessionAnswer(tb testing.TB, v int16, code kafka.Error, session int32) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, v, 9, &fetch.Response{ErrorCode: int16(code), SessionID: session}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()[8:]
}

// TestParseFetchSession reads the top level of answers from v7 on: the session id,
// and a top-level error, which leaves the partitions unread.
func TestParseFetchSession(t *testing.T) {
	for _, v := range []int16{7, 11} {
		for _, c := range []struct {
			code    kafka.Error
			session int32
		}{{0, 42}, {kafka.FetchSessionIDNotFound, 0}, {kafka.InvalidFetchSessionEpoch, 0}} {
			top, err := groups.ParseFetch(sessionAnswer(t, v, c.code, c.session), v, groups.ConsumerOffsetsTopic,
				func(fp groups.FetchPartition) error { return fmt.Errorf("partition %d read", fp.Partition) })
			if err != nil || top.Err != c.code || top.SessionID != c.session {
				t.Errorf("v%d: %+v, %v; want error %d, session %d", v, top, err, c.code, c.session)
			}
		}
	}
}

// FuzzParseFetch: parseFetch and filterRecords never panic on any answer, and the
// records they keep are never offset commits.
func FuzzParseFetch(f *testing.F) {
	recs := readFixture(f, fixture.ConsumerOffsets(f, "4.3.1"))[:20]
	for _, v := range []int16{4, 7, 11} {
		f.Add(fetchAnswer(f, v, recs), v)
	}
	f.Add(sessionAnswer(f, 11, 0, 42), int16(11))
	f.Add(sessionAnswer(f, 11, kafka.FetchSessionIDNotFound, 0), int16(11))
	for _, v := range fixture.Versions(f) {
		answer, err := os.ReadFile(fixture.Path(f, v, "consumer-offsets-fetch.bin"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(answer, int16(11))
	}
	f.Fuzz(func(t *testing.T, answer []byte, v int16) {
		_, _ = groups.ParseFetch(answer, v, groups.ConsumerOffsetsTopic, func(fp groups.FetchPartition) error {
			batch, _, _, _ := groups.FilterRecords(fp.Partition, fp.Records, 0)
			for _, m := range batch {
				if ty, ok := groups.PeekType(m.Key); ok && ty.IsOffsetCommit() {
					t.Fatalf("kept an offset commit at %d", m.Offset)
				}
			}
			return nil
		})
	})
}

// BenchmarkFilterRecords cuts 8 MiB-class fetch answers of offset commits (batches of
// 50 records, as one OffsetCommit of 50 partitions writes) and group records (1 in 20)
// in place (filterRecords), against kafka-go's protocol decoding of the same bytes
// with a two-byte peek at each key (kafka-go): CPU and allocations per record.
//
//	go test ./groups -run '^$' -bench FilterRecords -benchmem
func BenchmarkFilterRecords(b *testing.B) {
	log := groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 200, Members: 3, Topics: 100, TopicsPerMember: 3, OffsetCommits: 500})
	var records []byte
	for i := 0; i < len(log); i += 50 {
		var batch []recordbatch.Record
		for j, kv := range log[i:min(i+50, len(log))] {
			batch = append(batch, recordbatch.Record{OffsetDelta: int32(j), Key: kv.Key, Value: kv.Value})
		}
		records = recordbatch.AppendBatch(records, recordbatch.NewBatchHeader(int64(i), 0, 1, false), batch)
	}
	n := float64(len(log))
	b.Run("kraftwatch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, read, _, err := groups.FilterRecords(0, records, 0); err != nil || read != int64(len(log)) {
				b.Fatal(read, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
	})
	b.Run("kafka-go", func(b *testing.B) {
		b.ReportAllocs()
		framed := binary.BigEndian.AppendUint32(nil, uint32(len(records)))
		framed = append(framed, records...)
		var peek [2]byte
		for b.Loop() {
			var rs protocol.RecordSet
			if _, err := rs.ReadFrom(bufio.NewReader(bytes.NewReader(framed))); err != nil {
				b.Fatal(err)
			}
			read := 0
			for {
				rec, err := rs.Records.ReadRecord()
				if err != nil {
					break
				}
				read++
				if rec.Key != nil {
					rec.Key.(io.ReaderAt).ReadAt(peek[:], 0)
				}
			}
			if read != len(log) {
				b.Fatal(read)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
	})
}

// TestFetchFixture reads each release's real Fetch answer (consumer-offsets-fetch.bin,
// every partition of __consumer_offsets from offset 0) and checks it against the same
// records as kafka-go read them (consumer-offsets-fetch.txt): every record counted,
// exactly those that are not offset commits kept, with their offsets, keys and values.
func TestFetchFixture(t *testing.T) {
	for _, v := range fixture.Versions(t) {
		answer, err := os.ReadFile(fixture.Path(t, v, "consumer-offsets-fetch.bin"))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]fixtureRecord{}
		var commits int
		for _, r := range readFixture(t, fixture.Path(t, v, "consumer-offsets-fetch.txt")) {
			if ty, ok := groups.PeekType(r.Key); ok && ty.IsOffsetCommit() {
				commits++
				continue
			}
			want[r.Partition+"/"+r.Offset] = r
		}
		var read int64
		kept := 0
		_, err = groups.ParseFetch(answer, 11, groups.ConsumerOffsetsTopic, func(fp groups.FetchPartition) error {
			if fp.Err != nil {
				return fp.Err
			}
			batch, n, _, err := groups.FilterRecords(fp.Partition, fp.Records, 0)
			read += n
			for _, m := range batch {
				r, ok := want[fmt.Sprintf("%d/%d", m.Partition, m.Offset)]
				if !ok || !bytes.Equal(m.Key, r.Key) || !bytes.Equal(m.Value, r.Value) || (m.Value == nil) != (r.Value == nil) {
					t.Errorf("%s: kept %d/%d %x %x, kafka-go read %x %x", v, m.Partition, m.Offset, m.Key, m.Value, r.Key, r.Value)
				}
				kept++
			}
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if kept != len(want) || read != int64(len(want)+commits) || commits == 0 {
			t.Errorf("%s: kept %d of %d records read; kafka-go read %d, %d of them offset commits", v, kept, read, len(want)+commits, commits)
		}
	}
}
