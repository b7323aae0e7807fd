package recordbatch

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// unhex decodes hex with spaces, newlines, '|', '[' and ']' allowed as separators.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", "|", "", "[", "", "]", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// specDataBatch is the first worked example of docs/metadata-log.md#worked-examples:
// base offset 42, epoch 3, a TopicRecord v0 "foo" and a NoOpRecord.
const specDataBatch = `
00 00 00 00 00 00 00 2a | 00 00 00 5b | 00 00 00 03 | 02 | 3a e2 3e c1 | 00 00 | 00 00 00 01 |
00 00 01 8b cf e5 68 00 | 00 00 01 8b cf e5 68 00 | ff ff ff ff ff ff ff ff | ff ff | ff ff ff ff | 00 00 00 02 |
3c 00 00 00 01 30 [01 02 00 04 66 6f 6f 01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77 00] 00
14 00 00 02 01 08 [01 14 00 00] 00`

const bootstrapFixture = "bootstrap-00000000000000000000-0000000000.checkpoint"

func TestSpecDataBatch(t *testing.T) {
	in := unhex(t, specDataBatch)
	if len(in) != 103 {
		t.Fatalf("example is %d bytes, want 103", len(in))
	}
	b, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	want := Batch{
		BaseOffset: 42, PartitionLeaderEpoch: 3, Magic: 2, CRC: 0x3ae23ec1, LastOffsetDelta: 1,
		BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000000, ProducerID: -1, ProducerEpoch: -1,
		BaseSequence: -1, NumRecords: 2, Records: in[61:],
	}
	if !reflect.DeepEqual(b, want) {
		t.Fatalf("batch = %+v\nwant %+v", b, want)
	}
	if b.Size() != 103 || b.LastOffset() != 43 || b.NextOffset() != 44 || b.IsControl() || b.Codec() != CodecNone {
		t.Fatalf("derived fields wrong: size %d last %d", b.Size(), b.LastOffset())
	}
	var values []string
	var offsets []int64
	it := b.Iter()
	for it.Next() {
		r := it.Record()
		if r.Key != nil || r.HeaderCount != 0 || r.TimestampDelta != 0 {
			t.Fatalf("record %+v: want null key, no headers", r)
		}
		values = append(values, hex.EncodeToString(r.Value))
		offsets = append(offsets, it.Offset())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	wantValues := []string{"01020004666f6f0123456789abcdef001122334455667700", "01140000"}
	if !reflect.DeepEqual(values, wantValues) || !reflect.DeepEqual(offsets, []int64{42, 43}) {
		t.Fatalf("values %v offsets %v", values, offsets)
	}

	// The encoder reproduces the example byte for byte.
	h := NewBatchHeader(42, 3, 1700000000000, false)
	out := AppendBatch(nil, h, []Record{
		{OffsetDelta: 0, Value: unhex(t, wantValues[0])},
		{OffsetDelta: 1, Value: unhex(t, wantValues[1])},
	})
	if !bytes.Equal(out, in) {
		t.Fatalf("encoded\n%x\nwant\n%x", out, in)
	}
}

func TestSpecSnapshotHeaderBatch(t *testing.T) {
	// The second worked example of docs/metadata-log.md#worked-examples; its
	// timestamps, not shown there, are the same 1700000000000 as the first example's
	// (the CRC confirms it).
	h := NewBatchHeader(0, 5, 1700000000000, true)
	out := AppendControlBatch(nil, h, &SnapshotHeaderRecord{LastContainedLogTimestamp: 1700000000000})
	if len(out) != 83 {
		t.Fatalf("len %d, want 83", len(out))
	}
	b, err := Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if b.CRC != 0xc7ac7804 || b.Attributes != 0x20 || !b.IsControl() {
		t.Fatalf("crc %08x attributes %x", b.CRC, b.Attributes)
	}
	wantTail := unhex(t, "2a 00 00 00 08 [00 00 00 03] 16 [00 00 00 00 01 8b cf e5 68 00 00] 00")
	if !bytes.HasSuffix(out, wantTail) {
		t.Fatalf("records section %x, want %x", b.Records, wantTail)
	}
}

// batchSummary is a printable digest of a batch and its records, used by the golden
// and fuzz tests.
func batchSummary(t testing.TB, b Batch) []string {
	t.Helper()
	var out []string
	it := b.Iter()
	for it.Next() {
		r := it.Record()
		if b.IsControl() {
			c, err := DecodeControl(r.Key, r.Value)
			if err != nil {
				out = append(out, "control error: "+err.Error())
				continue
			}
			out = append(out, c.ControlType().String())
			continue
		}
		out = append(out, hex.EncodeToString(r.Value))
	}
	if it.Err() != nil {
		out = append(out, "iter error: "+it.Err().Error())
	}
	return out
}

func TestKafkaBootstrapCheckpoint(t *testing.T) {
	in, err := os.ReadFile(fixture.Path(t, "4.4.0", bootstrapFixture))
	if err != nil {
		t.Fatal(err)
	}
	var batches []Batch
	n, err := Scan(in, func(b Batch) error { batches = append(batches, b); return nil })
	if err != nil || n != len(in) {
		t.Fatalf("scan: %d of %d bytes, %v", n, len(in), err)
	}
	if len(batches) != 3 {
		t.Fatalf("%d batches, want header, data, footer", len(batches))
	}
	// Header batch: SnapshotHeader, KRaftVersion 1, Voters with node 1.
	var ctl []ControlRecord
	it := batches[0].Iter()
	for it.Next() {
		c, err := DecodeControl(it.Record().Key, it.Record().Value)
		if err != nil {
			t.Fatal(err)
		}
		ctl = append(ctl, c)
	}
	if it.Err() != nil || len(ctl) != 3 {
		t.Fatalf("header batch: %d records, %v", len(ctl), it.Err())
	}
	if _, ok := ctl[0].(*SnapshotHeaderRecord); !ok {
		t.Fatalf("first record %T, want SnapshotHeaderRecord", ctl[0])
	}
	if kv, ok := ctl[1].(*KRaftVersionRecord); !ok || kv.KRaftVersion != 1 {
		t.Fatalf("second record %+v, want KRaftVersion 1", ctl[1])
	}
	voters, ok := ctl[2].(*VotersRecord)
	if !ok || len(voters.Voters) != 1 {
		t.Fatalf("third record %+v, want Voters with one voter", ctl[2])
	}
	v := voters.Voters[0]
	if v.VoterID != 1 || len(v.Endpoints) != 1 || v.Endpoints[0] != (VoterEndpoint{"CONTROLLER", "127.0.0.1", 19093}) ||
		v.MinSupportedVersion != 0 || v.MaxSupportedVersion != 1 {
		t.Fatalf("voter %+v", v)
	}
	// Data batch: six FeatureLevelRecords (frame 1, apiKey 12, version 0).
	got := batchSummary(t, batches[1])
	if len(got) != 6 {
		t.Fatalf("data batch: %v", got)
	}
	for _, v := range got {
		if !strings.HasPrefix(v, "010c00") {
			t.Fatalf("data record %s is not a FeatureLevelRecord v0", v)
		}
	}
	if got := batchSummary(t, batches[2]); !reflect.DeepEqual(got, []string{"SNAPSHOT_FOOTER"}) {
		t.Fatalf("footer batch: %v", got)
	}
	// Every batch re-encodes to the same bytes.
	var re []byte
	for _, b := range batches {
		var recs []Record
		it := b.Iter()
		for it.Next() {
			recs = append(recs, it.Record())
		}
		h := BatchHeader{b.BaseOffset, b.PartitionLeaderEpoch, b.Attributes, b.BaseTimestamp, b.MaxTimestamp, b.ProducerID, b.ProducerEpoch, b.BaseSequence}
		re = AppendBatch(re, h, recs)
	}
	if !bytes.Equal(re, in) {
		t.Fatalf("re-encoded file differs")
	}
}

func TestControlRecordsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rec  ControlRecord
	}{
		{"leader change", &LeaderChangeMessage{LeaderID: 3, Voters: []int32{1, 2, 3}, GrantingVoters: []int32{3}}},
		{"snapshot header", &SnapshotHeaderRecord{LastContainedLogTimestamp: 1 << 40}},
		{"snapshot footer", &SnapshotFooterRecord{}},
		{"kraft version", &KRaftVersionRecord{KRaftVersion: 1}},
		{"voters", &VotersRecord{Voters: []Voter{{VoterID: 1, VoterDirectoryID: kbin.UUID{1, 2}, Endpoints: []VoterEndpoint{{"CONTROLLER", "h", 9093}}, MaxSupportedVersion: 1}}}},
		{"commit marker", &EndTxnMarker{Commit: true, CoordinatorEpoch: 7}},
		{"abort marker", &EndTxnMarker{CoordinatorEpoch: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := AppendControlKey(nil, tt.rec.ControlType())
			got, err := DecodeControl(key, AppendControlValue(nil, tt.rec))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.rec) {
				t.Fatalf("got %+v, want %+v", got, tt.rec)
			}
		})
	}
}

func TestControlErrors(t *testing.T) {
	tests := []struct {
		name       string
		key, value []byte
		want       error
	}{
		{"short key", []byte{0, 0, 3}, nil, ErrCorrupt},
		{"negative key version", []byte{0xff, 0xff, 0, 3}, nil, ErrCorrupt},
		{"unknown type", []byte{0, 0, 0, 9}, nil, ErrUnknownControlType},
		{"short header value", []byte{0, 0, 0, 3}, []byte{0, 0, 1}, ErrCorrupt},
		{"trailing bytes", []byte{0, 0, 0, 4}, []byte{0, 0, 0, 7}, ErrCorrupt},
		{"null voters", []byte{0, 0, 0, 6}, []byte{0, 0, 0, 0}, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeControl(tt.key, tt.value); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// rewrite applies f to a copy of in and recomputes the CRC.
func rewrite(in []byte, f func(b []byte)) []byte {
	b := append([]byte(nil), in...)
	f(b)
	binary.BigEndian.PutUint32(b[offsetCRC:], crc32.Checksum(b[offsetAttributes:], castagnoli))
	return b
}

func TestDecodeErrors(t *testing.T) {
	good := unhex(t, specDataBatch)
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"base offset only", good[:8], ErrTruncated},
		{"header cut before magic", good[:16], ErrTruncated},
		{"header cut after magic", good[:30], ErrTruncated},
		{"last byte missing", good[:len(good)-1], ErrTruncated},
		{"bad magic", rewrite(good, func(b []byte) { b[offsetMagic] = 1 }), ErrCorrupt},
		{"bad magic in a short prefix", append(append([]byte(nil), good[:16]...), 0), ErrCorrupt},
		{"length below header", rewrite(good, func(b []byte) { binary.BigEndian.PutUint32(b[offsetLength:], 10) }), ErrCorrupt},
		{"negative length", rewrite(good, func(b []byte) { binary.BigEndian.PutUint32(b[offsetLength:], 0xfffffff0) }), ErrCorrupt},
		{"bad crc", func() []byte { b := append([]byte(nil), good...); b[70] ^= 1; return b }(), ErrCorrupt},
		{"invalid codec", rewrite(good, func(b []byte) { b[22] = 6 }), ErrCorrupt},
		{"negative record count", rewrite(good, func(b []byte) { binary.BigEndian.PutUint32(b[57:], 0xffffffff) }), ErrCorrupt},
		{"record count beyond bytes", rewrite(good, func(b []byte) { binary.BigEndian.PutUint32(b[57:], 1000) }), ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decode(tt.in); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// Every proper prefix of a valid batch is truncated, never corrupt: a reader tailing a
// live file must wait, not fail.
func TestEveryPrefixIsTruncated(t *testing.T) {
	good := unhex(t, specDataBatch)
	for n := range len(good) {
		if _, err := Decode(good[:n]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
	}
}

func TestRecordErrors(t *testing.T) {
	good := unhex(t, specDataBatch)
	tests := []struct {
		name string
		in   []byte
	}{
		{"fewer records than counted", rewrite(good, func(b []byte) { b[60] = 3 })},
		{"more bytes than records", rewrite(good, func(b []byte) { b[60] = 1 })},
		{"record length too long", rewrite(good, func(b []byte) { b[61] = 0x3e })},
		{"record length too short", rewrite(good, func(b []byte) { b[61] = 0x3a })},
		{"value length past record", rewrite(good, func(b []byte) { b[66] = 0x32 })},
		{"negative header count", rewrite(good, func(b []byte) { b[91] = 1 })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Decode(tt.in)
			if err != nil {
				t.Fatalf("batch should decode, the damage is inside a record: %v", err)
			}
			it := b.Iter()
			for it.Next() {
			}
			if !errors.Is(it.Err(), ErrCorrupt) {
				t.Fatalf("iter err = %v, want ErrCorrupt", it.Err())
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	hs := []Header{{Key: []byte("k"), Value: []byte("v")}, {Key: []byte("n"), Value: nil}}
	rec := Record{Key: []byte("key"), Value: []byte("value"), TimestampDelta: -5, OffsetDelta: 0}
	var recs []byte
	recs = AppendRecord(recs, &rec, hs)
	h := NewBatchHeader(0, 0, 0, false)
	b := AppendBatch(nil, h, nil)
	// Splice the record with headers into an empty batch.
	b = append(b[:HeaderSize:HeaderSize], recs...)
	binary.BigEndian.PutUint32(b[57:], 1)
	binary.BigEndian.PutUint32(b[offsetLength:], uint32(len(b)-LogOverhead))
	binary.BigEndian.PutUint32(b[offsetCRC:], crc32.Checksum(b[offsetAttributes:], castagnoli))
	bt, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	it := bt.Iter()
	if !it.Next() {
		t.Fatal(it.Err())
	}
	got := it.Record()
	if string(got.Key) != "key" || string(got.Value) != "value" || got.TimestampDelta != -5 {
		t.Fatalf("record %+v", got)
	}
	if !reflect.DeepEqual(got.Headers(), []Header{{[]byte("k"), []byte("v")}, {[]byte("n"), nil}}) {
		t.Fatalf("headers %+v", got.Headers())
	}
	if it.Next() || it.Err() != nil {
		t.Fatal("want exactly one record")
	}
}

func TestCodecs(t *testing.T) {
	good := unhex(t, specDataBatch)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(good[HeaderSize:])
	zw.Close()
	gz := append(append([]byte(nil), good[:HeaderSize]...), z.Bytes()...)
	gz = rewrite(gz, func(b []byte) {
		b[22] = byte(CodecGzip)
		binary.BigEndian.PutUint32(b[offsetLength:], uint32(len(b)-LogOverhead))
	})
	b, err := Decode(gz)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := batchSummary(t, b), batchSummary(t, mustDecode(t, good)); !reflect.DeepEqual(got, want) {
		t.Fatalf("gzip records %v, want %v", got, want)
	}
	for _, c := range []Codec{CodecSnappy, CodecLZ4, CodecZstd} {
		b, err := Decode(rewrite(good, func(b []byte) { b[22] = byte(c) }))
		if err != nil {
			t.Fatal(err)
		}
		it := b.Iter()
		if it.Next() || !errors.Is(it.Err(), ErrUnsupportedCodec) || !strings.Contains(it.Err().Error(), c.String()) {
			t.Fatalf("%s: err = %v", c, it.Err())
		}
	}
}

func mustDecode(t testing.TB, in []byte) Batch {
	t.Helper()
	b, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScan(t *testing.T) {
	one := unhex(t, specDataBatch)
	two := append(append([]byte(nil), one...), one...)
	tests := []struct {
		name      string
		in        []byte
		wantValid int
		wantErr   error
	}{
		{"empty", nil, 0, nil},
		{"two batches", two, 2 * len(one), nil},
		{"torn tail", append(append([]byte(nil), two...), one[:40]...), 2 * len(one), ErrTruncated},
		{"tiny tail", append(append([]byte(nil), one...), 0, 0), len(one), ErrTruncated},
		{"corrupt second", append(append([]byte(nil), one...), rewrite(one, func(b []byte) { b[offsetMagic] = 0 })...), len(one), ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Scan(tt.in, nil)
			if n != tt.wantValid || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Scan = %d, %v; want %d, %v", n, err, tt.wantValid, tt.wantErr)
			}
		})
	}
	stop := errors.New("stop")
	if n, err := Scan(two, func(Batch) error { return stop }); n != 0 || err != stop {
		t.Fatalf("callback error: %d, %v", n, err)
	}
}

// fuzzSeeds returns the worked examples, the fixture in testdata and every metadata
// log or snapshot file of the fixtures (testdata/kafka-*/ at the root).
func fuzzSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{unhex(t, specDataBatch)}
	files := []string{fixture.Path(t, "4.4.0", bootstrapFixture)}
	files = append(files, fixture.MetadataFiles(t, "*.log")...)
	files = append(files, fixture.MetadataFiles(t, "*.checkpoint")...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// Seed whole small files and the first batches of large ones.
		if len(b) > 1<<16 {
			n, _ := Scan(b[:1<<16], nil)
			b = b[:n]
		}
		seeds = append(seeds, b)
	}
	return seeds
}

func FuzzBatch(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var first []string
		valid, err := Scan(in, func(b Batch) error {
			if b.Size() > len(in) {
				t.Fatalf("batch claims %d bytes of %d", b.Size(), len(in))
			}
			first = append(first, batchSummary(t, b)...)
			return nil
		})
		if valid < 0 || valid > len(in) {
			t.Fatalf("valid = %d of %d", valid, len(in))
		}
		if (err == nil) != (valid == len(in)) {
			t.Fatalf("valid %d of %d with err %v", valid, len(in), err)
		}
		if err != nil && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("unclassified error %v", err)
		}
		// Re-decoding the valid prefix is stable and complete.
		var again []string
		n, err := Scan(in[:valid], func(b Batch) error { again = append(again, batchSummary(t, b)...); return nil })
		if n != valid || err != nil || !reflect.DeepEqual(first, again) {
			t.Fatalf("valid prefix re-scan: %d/%d %v", n, valid, err)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	// A snapshot-like run of batches of 1024 PartitionRecord-sized values.
	value := make([]byte, 70)
	value[0], value[1], value[2] = 1, 3, 2
	recs := make([]Record, 1024)
	for i := range recs {
		recs[i] = Record{OffsetDelta: int32(i), Value: value}
	}
	var in []byte
	for i := range 16 {
		in = AppendBatch(in, NewBatchHeader(int64(i*1024), 1, 1, false), recs)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n, err := Scan(in, func(bt Batch) error {
			it := bt.Iter()
			for it.Next() {
				_ = it.Record().Value
			}
			return it.Err()
		})
		if err != nil || n != len(in) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16*1024), "ns/record")
}
