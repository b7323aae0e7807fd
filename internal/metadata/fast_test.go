package metadata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// decodeGeneral decodes value on the general path only.
func decodeGeneral(value []byte) (Record, int16, error) {
	r := &reader{}
	r.Reset(value)
	return decode(r, nil)
}

// sameDecode fails unless Decode, a Decoder and a BatchDecoder (fast path or not, and
// one whose buffers hold records of every type it keeps before a Reset) decode value
// exactly as the general path does: the same record (nil and empty slices told
// apart), version and error.
func sameDecode(t *testing.T, value []byte) {
	t.Helper()
	want, wv, werr := decodeGeneral(value)
	var d Decoder
	var bd, reused BatchDecoder
	bd.Decode([]byte{1, 3, 0}) // something decoded before, to be kept
	for _, typ := range []RecordType{TypePartition, TypePartitionChange, TypeTopic} {
		b, _ := Append(nil, samples(typ, typ.MaxVersion()), typ.MaxVersion())
		reused.Decode(b)
	}
	reused.Reset()
	reused.Expect(1)
	for name, dec := range map[string]func([]byte) (Record, int16, error){"Decode": Decode, "Decoder": d.Decode,
		"BatchDecoder": bd.Decode, "BatchDecoder after Reset": reused.Decode} {
		got, v, err := dec(value)
		if fmt.Sprint(err) != fmt.Sprint(werr) || v != wv || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %#v v%d %v\ngeneral: %#v v%d %v", name, got, v, err, want, wv, werr)
		}
	}
	// What DecodeLeaderChange takes, the general path decodes alike.
	var c LeaderChange
	if v, ok := DecodeLeaderChange(value, &c); ok {
		if got := bd.LeaderChange(&c); werr != nil || v != wv || !reflect.DeepEqual(Record(got), want) {
			t.Fatalf("DecodeLeaderChange: %#v v%d\ngeneral: %#v v%d %v", got, v, want, wv, werr)
		}
	}
}

// TestPartitionFastMatchesGeneral: PartitionRecords the fast path takes, and ones it
// leaves to the general path, decode alike.
func TestPartitionFastMatchesGeneral(t *testing.T) {
	full := &PartitionRecord{PartitionID: 7, TopicID: topicU, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2},
		RemovingReplicas: []int32{3}, AddingReplicas: []int32{4}, Leader: 1, LeaderEpoch: 5, PartitionEpoch: 9,
		LeaderRecoveryState: 1, Directories: []UUID{dirA, {}, dirA}, EligibleLeaderReplicas: []int32{2}, LastKnownELR: []int32{}}
	var values [][]byte
	for v := int16(0); v <= 2; v++ {
		for _, r := range []*PartitionRecord{full, {TopicID: topicU}, {Replicas: []int32{1}, EligibleLeaderReplicas: []int32{}, LastKnownELR: []int32{5, 6}}} {
			b, err := Append(nil, r, v)
			if err != nil {
				t.Fatal(err)
			}
			values = append(values, b)
			// Every prefix, and extra bytes after it.
			for i := range b {
				values = append(values, b[:i])
			}
			values = append(values, append(bytes.Clone(b), 0))
		}
	}
	body := func(v byte, tags ...[]byte) []byte {
		b := []byte{1, 3, v}
		b = binary.BigEndian.AppendUint32(b, 1)
		b = append(b, topicU[:]...)
		b = append(b, 2, 0, 0, 0, 1, 1, 1, 1) // replicas [1], isr, removing, adding empty
		b = append(b, make([]byte, 12)...)
		if v >= 1 {
			b = append(b, 1) // no directories
		}
		b = kbin.AppendUvarint(b, uint64(len(tags)))
		for _, tg := range tags {
			b = append(b, tg...)
		}
		return b
	}
	values = append(values,
		body(2),
		body(2, []byte{0, 1, 1}),                               // leader recovery state
		body(2, []byte{0, 0}),                                  // tag 0 empty
		body(2, []byte{0, 2, 1, 0}),                            // tag 0 too long
		body(2, []byte{1, 1, 0}),                               // null ELR
		body(2, []byte{1, 1, 1}),                               // empty ELR
		body(2, []byte{1, 5, 2, 0, 0, 0, 4}),                   // ELR [4]
		body(2, []byte{1, 6, 2, 0, 0, 0, 4, 9}),                // ELR with a byte left over
		body(2, []byte{1, 1, 3}),                               // ELR count beyond the payload
		body(1, []byte{1, 1, 1}),                               // ELR tag at v1
		body(2, []byte{2, 1, 1}, []byte{1, 1, 1}),              // tags out of order
		body(2, []byte{0, 1, 1}, []byte{0, 1, 1}),              // tag repeated
		body(2, []byte{9, 3, 1, 2, 3}),                         // unknown tag
		body(2, []byte{9, 9, 1}),                               // unknown tag beyond the input
		body(0, []byte{0x80, 0x80, 0x80, 0x80, 0x01, 0}),       // five-byte tag varint
		body(0, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0}), // six-byte tag varint
		body(2, []byte{0x81, 0x00, 1, 1}),                      // non-canonical tag varint
		[]byte{1, 3, 3, 0},                                     // unknown version
		[]byte{0x81, 0, 3, 0},                                  // non-canonical frame
	)
	nullReplicas := body(0)
	nullReplicas[3+4+16] = 0
	values = append(values, nullReplicas)
	for i, v := range values {
		t.Run(fmt.Sprint(i), func(t *testing.T) { sameDecode(t, v) })
	}
}

// TestPartitionChangeFastMatchesGeneral: PartitionChangeRecords the fast path takes,
// and ones it leaves to the general path, decode alike.
func TestPartitionChangeFastMatchesGeneral(t *testing.T) {
	leader := NewPartitionChangeRecord(topicU, 3)
	leader.Leader = 2
	full := &PartitionChangeRecord{PartitionID: 7, TopicID: topicU, ISR: []int32{1, 2}, Leader: 1, Replicas: []int32{1, 2, 3},
		RemovingReplicas: []int32{3}, AddingReplicas: []int32{}, LeaderRecoveryState: 1, EligibleLeaderReplicas: []int32{2},
		LastKnownELR: []int32{}, Directories: []UUID{dirA, {}, dirA}}
	emptyDirs := NewPartitionChangeRecord(topicU, 0)
	emptyDirs.Directories = []UUID{}
	elected := NewPartitionChangeRecord(topicU, 4) // an unclean election
	elected.Leader, elected.LeaderRecoveryState = 3, 1
	var values [][]byte
	for v := int16(0); v <= 2; v++ {
		for _, r := range []*PartitionChangeRecord{leader, full, NewPartitionChangeRecord(topicU, 1), emptyDirs, elected} {
			b, err := Append(nil, r, v)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := decodePartitionChangeFast(b, new(PartitionChangeRecord), nil); !ok {
				t.Fatalf("the fast path refuses %+v at v%d as Kafka writes it", r, v)
			}
			// No list written (v0 has no directories), nothing but the leader and its recovery state.
			if _, ok := DecodeLeaderChange(b, new(LeaderChange)); ok != (r != full && (r != emptyDirs || v == 0)) {
				t.Fatalf("DecodeLeaderChange of %+v at v%d: %v", r, v, ok)
			}
			values = append(values, b)
			for i := range b { // every prefix, and extra bytes after it
				values = append(values, b[:i])
			}
			values = append(values, append(bytes.Clone(b), 0))
		}
	}
	body := func(v byte, tags ...[]byte) []byte {
		b := []byte{1, 5, v}
		b = binary.BigEndian.AppendUint32(b, 1)
		b = append(b, topicU[:]...)
		b = kbin.AppendUvarint(b, uint64(len(tags)))
		for _, tg := range tags {
			b = append(b, tg...)
		}
		return b
	}
	values = append(values,
		body(0, []byte{1, 4, 0, 0, 0, 9}),                           // leader 9
		body(0, []byte{1, 3, 0, 0, 9}),                              // leader of 3 bytes
		body(0, []byte{1, 5, 0, 0, 0, 9, 1}),                        // leader with a byte left over
		body(0, []byte{0, 1, 0}),                                    // null ISR
		body(0, []byte{0, 1, 1}),                                    // empty ISR
		body(0, []byte{0, 1, 3}),                                    // ISR count beyond the payload
		body(0, []byte{5, 1, 1}),                                    // leader recovery state
		body(0, []byte{5, 0}),                                       // leader recovery state empty
		body(0, []byte{6, 1, 1}),                                    // ELR tag at v0
		body(2, []byte{6, 5, 2, 0, 0, 0, 4}),                        // ELR [4]
		body(0, []byte{8, 1, 1}),                                    // directories tag at v0
		body(1, []byte{8, 1, 0}),                                    // null directories
		body(1, []byte{8, 1, 2}),                                    // directories beyond the payload
		body(0, []byte{2, 1, 1}, []byte{1, 4, 0, 0, 0, 1}),          // tags out of order
		body(0, []byte{1, 4, 0, 0, 0, 1}, []byte{1, 4, 0, 0, 0, 1}), // tag repeated
		body(0, []byte{9, 3, 1, 2, 3}),                              // unknown tag
		body(0, []byte{9, 9, 1}),                                    // unknown tag beyond the input
		body(0, []byte{0x80, 0x80, 0x80, 0x80, 0x01, 0}),            // five-byte tag varint
		body(0, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0}),      // six-byte tag varint
		body(0, []byte{0x81, 0x00, 1, 1}),                           // non-canonical tag varint
		[]byte{1, 5, 3, 0},                                          // unknown version
		[]byte{0x81, 0, 5, 0},                                       // non-canonical frame
	)
	for i, v := range values {
		t.Run(fmt.Sprint(i), func(t *testing.T) { sameDecode(t, v) })
	}
}

// TestBatchDecoderKeepsRecords: records stay valid until Reset, and Reset reuses the
// memory.
func TestBatchDecoderKeepsRecords(t *testing.T) {
	var d BatchDecoder
	decodeKept(t, &d, 3000, func(i int) Record {
		if i%100 == 0 {
			return &TopicRecord{Name: fmt.Sprint("t", i), TopicID: topicU}
		}
		return &PartitionRecord{PartitionID: int32(i), TopicID: topicU, Replicas: []int32{int32(i), 1}, Directories: []UUID{dirA, {byte(i)}}}
	}, nil)
	d.Reset()
	b, _ := Append(nil, &PartitionRecord{Replicas: []int32{1, 2, 3}}, 2)
	if n := testing.AllocsPerRun(100, func() {
		d.Reset()
		for range 1000 {
			d.Decode(b)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per 1000 records after Reset", n)
	}
}

// TestBatchDecoderExpect: records stay valid whatever count Expect was given (the
// batch's, too small, one per record as a transaction's batches of one give), on the
// fast path and decode's; and after Expect(n) a batch of n partition changes makes its
// buffer once, where growing it by append takes many steps.
func TestBatchDecoderExpect(t *testing.T) {
	change := func(i int) Record {
		c := NewPartitionChangeRecord(topicU, int32(i))
		c.Leader = int32(i % 7)
		return c
	}
	for _, tc := range []struct {
		name      string
		expect, n int
		rec       func(int) Record
	}{
		{"changes", 2000, 2000, change},
		{"changes, count too small", 500, 2000, change},
		{"changes, one a batch", 1, 2000, change},
		{"partitions", 512, 512, func(i int) Record {
			return &PartitionRecord{PartitionID: int32(i), TopicID: topicU, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1}
		}},
		{"topics, decode's path", 700, 700, func(i int) Record { return &TopicRecord{Name: fmt.Sprint("t", i), TopicID: topicU} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d BatchDecoder
			d.Expect(tc.expect)
			var each func()
			if tc.expect == 1 {
				each = func() { d.Expect(1) }
			}
			decodeKept(t, &d, tc.n, tc.rec, each)
		})
	}
	b, _ := Append(nil, change(3), TypePartitionChange.MaxVersion())
	// moved reports whether the buffer of changes was made again after the first record.
	moved := func(expect int) bool {
		var d BatchDecoder
		d.Expect(expect)
		d.Decode(b)
		first := &d.changes[0]
		for range 9999 {
			d.Decode(b)
		}
		return &d.changes[0] != first
	}
	if with, without := moved(10000), moved(0); with || !without {
		t.Fatalf("10,000 partition changes into a new BatchDecoder: buffer made again after Expect(10000) %v, without %v; want false, true", with, without)
	}
}

// decodeKept decodes n records rec(i) with d, calling before (if set) ahead of each,
// and checks that every record it returned is still the one encoded once all are
// decoded.
func decodeKept(t *testing.T, d *BatchDecoder, n int, rec func(int) Record, before func()) {
	t.Helper()
	var want []string
	var got []Record
	for i := range n {
		if before != nil {
			before()
		}
		r := rec(i)
		b, _ := Append(nil, r, r.Type().MaxVersion())
		dec, _, err := d.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%+v", r))
		got = append(got, dec)
	}
	for i := range got {
		if g := fmt.Sprintf("%+v", got[i]); g != want[i] {
			t.Fatalf("record %d: %s, want %s", i, g, want[i])
		}
	}
}
