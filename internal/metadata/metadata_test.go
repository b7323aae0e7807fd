package metadata

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", "[", "", "]", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr(s string) *string { return &s }

var (
	topicU = UUID{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}
	dirA   = UUID{0: 0xaa, 15: 1}
	dirB   = UUID{0: 0xbb, 15: 2}
)

func TestSpecExamples(t *testing.T) {
	tests := []struct {
		name    string
		hex     string
		want    Record
		version int16
	}{
		{"TopicRecord foo (docs/metadata-log.md#examples)", "01 02 00 04 66 6f 6f 01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77 00",
			&TopicRecord{Name: "foo", TopicID: topicU}, 0},
		{"NoOpRecord (docs/metadata-log.md#examples)", "01 14 00 00", &NoOpRecord{}, 0},
		{"PartitionChangeRecord v0 (docs/metadata-log.md#examples)", `01 05 00 00 00 00 00 [01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77] 02
			00 09 03 00 00 00 01 00 00 00 02  01 04 00 00 00 02`,
			&PartitionChangeRecord{TopicID: topicU, ISR: []int32{1, 2}, Leader: 2, LeaderRecoveryState: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := unhex(t, tt.hex)
			got, v, err := Decode(in)
			if err != nil {
				t.Fatal(err)
			}
			if v != tt.version || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got v%d %+v, want v%d %+v", v, got, tt.version, tt.want)
			}
			out, err := Append(nil, got, v)
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("re-encoded %x, want %x (%v)", out, in, err)
			}
		})
	}
}

// samples returns a record of type t with every field valid at version v set to a
// non-default value, so a round trip exercises every field.
func samples(t RecordType, v int16) Record {
	switch t {
	case TypeRegisterBroker:
		r := &RegisterBrokerRecord{BrokerID: 7, IncarnationID: dirA, BrokerEpoch: 1 << 33,
			EndPoints: []BrokerEndpoint{{"PLAINTEXT", "h1", 9092, 0}, {"SSL", "h1", 9093, 1}},
			Features:  []BrokerFeature{{"metadata.version", 7, 33}},
			Rack:      ptr("rack-a"), Fenced: true}
		if v >= 1 {
			r.InControlledShutdown = true
		}
		if v >= 2 {
			r.IsMigratingZkBroker = true
		}
		if v >= 3 {
			r.LogDirs = []UUID{dirA, dirB}
		}
		if v >= 4 {
			r.CordonedLogDirs = []UUID{dirB}
		}
		return r
	case TypeUnregisterBroker:
		return &UnregisterBrokerRecord{BrokerID: 3, BrokerEpoch: 99}
	case TypeTopic:
		return &TopicRecord{Name: "orders", TopicID: topicU}
	case TypePartition:
		r := &PartitionRecord{PartitionID: 5, TopicID: topicU, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2},
			RemovingReplicas: []int32{3}, AddingReplicas: []int32{4}, Leader: 1, LeaderRecoveryState: 1,
			LeaderEpoch: 12, PartitionEpoch: 40}
		if v >= 1 {
			r.Directories = []UUID{dirA, dirB, {}}
		}
		if v >= 2 {
			r.EligibleLeaderReplicas = []int32{3}
			r.LastKnownELR = []int32{}
		}
		return r
	case TypeConfig:
		return &ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: ptr("1000")}
	case TypePartitionChange:
		r := &PartitionChangeRecord{PartitionID: 2, TopicID: topicU, ISR: []int32{}, Leader: NoLeader,
			Replicas: []int32{1, 2}, RemovingReplicas: []int32{}, AddingReplicas: []int32{2}, LeaderRecoveryState: 0}
		if v >= 1 {
			r.Directories = []UUID{dirA, dirB}
		}
		if v >= 2 {
			r.EligibleLeaderReplicas = []int32{1}
			r.LastKnownELR = []int32{}
		}
		return r
	case TypeFenceBroker:
		return &FenceBrokerRecord{ID: 1, Epoch: 10}
	case TypeUnfenceBroker:
		return &UnfenceBrokerRecord{ID: 1, Epoch: 10}
	case TypeRemoveTopic:
		return &RemoveTopicRecord{TopicID: topicU}
	case TypeDelegationToken:
		return &DelegationTokenRecord{Owner: "User:a", Requester: "User:b", Renewers: []string{"User:c", "User:d"},
			IssueTimestamp: 1, MaxTimestamp: 2, ExpirationTimestamp: 3, TokenID: "tok"}
	case TypeUserScramCredential:
		return &UserScramCredentialRecord{Name: "alice", Mechanism: 2, Salt: []byte{1, 2}, StoredKey: []byte{3},
			ServerKey: []byte{}, Iterations: 4096}
	case TypeFeatureLevel:
		return &FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33}
	case TypeClientQuota:
		return &ClientQuotaRecord{Entity: []EntityData{{"user", ptr("alice")}, {"client-id", nil}}, Key: "producer_byte_rate",
			Value: 1024.5, Remove: true}
	case TypeProducerIDs:
		return &ProducerIdsRecord{BrokerID: 1, BrokerEpoch: -1, NextProducerID: 5000}
	case TypeBrokerRegistrationChange:
		r := &BrokerRegistrationChangeRecord{BrokerID: 2, BrokerEpoch: 77, Fenced: FenceUnfenced}
		if v >= 1 {
			r.InControlledShutdown = 1
		}
		if v >= 2 {
			r.LogDirs = []UUID{dirA}
		}
		if v >= 3 {
			r.CordonedLogDirs = []UUID{}
		}
		return r
	case TypeAccessControlEntry:
		return &AccessControlEntryRecord{ID: dirA, ResourceType: 2, ResourceName: "orders", PatternType: 3,
			Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}
	case TypeRemoveAccessControlEntry:
		return &RemoveAccessControlEntryRecord{ID: dirA}
	case TypeNoOp:
		return &NoOpRecord{}
	case TypeZkMigrationState:
		return &ZkMigrationStateRecord{ZkMigrationState: 3}
	case TypeRemoveUserScramCredential:
		return &RemoveUserScramCredentialRecord{Name: "alice", Mechanism: 1}
	case TypeBeginTransaction:
		return &BeginTransactionRecord{Name: ptr("Bootstrap records")}
	case TypeEndTransaction:
		return &EndTransactionRecord{}
	case TypeAbortTransaction:
		return &AbortTransactionRecord{Reason: ptr("Controller failover")}
	case TypeRemoveDelegationToken:
		return &RemoveDelegationTokenRecord{TokenID: "tok"}
	case TypeRegisterController:
		return &RegisterControllerRecord{ControllerID: 3000, IncarnationID: dirB, ZkMigrationReady: true,
			EndPoints: []BrokerEndpoint{{"CONTROLLER", "c1", 9093, 0}}, Features: []BrokerFeature{{"kraft.version", 0, 1}}}
	case TypeClearElr:
		return &ClearElrRecord{TopicName: "orders"}
	case TypeUnregisterController:
		return &UnregisterControllerRecord{ControllerID: 3000}
	}
	return nil
}

func allTypes() []RecordType {
	var ts []RecordType
	for t := RecordType(0); t <= maxType; t++ {
		if t.Known() {
			ts = append(ts, t)
		}
	}
	return ts
}

func TestRoundTripEveryTypeAndVersion(t *testing.T) {
	var d Decoder
	n := 0
	for _, typ := range allTypes() {
		for v := int16(0); v <= typ.MaxVersion(); v++ {
			n++
			t.Run(typ.String()+"/v"+string(rune('0'+v)), func(t *testing.T) {
				rec := samples(typ, v)
				if rec == nil || rec.Type() != typ {
					t.Fatalf("no sample for %s", typ)
				}
				b, err := Append(nil, rec, v)
				if err != nil {
					t.Fatal(err)
				}
				got, gv, err := Decode(b)
				if err != nil {
					t.Fatal(err)
				}
				if gv != v || !reflect.DeepEqual(got, rec) {
					t.Fatalf("v%d\n got %+v\nwant %+v", gv, got, rec)
				}
				got2, _, err := d.Decode(b)
				if err != nil || !reflect.DeepEqual(got2, rec) {
					t.Fatalf("Decoder: %+v, %v", got2, err)
				}
				// Every strict prefix is corrupt, never a success or a panic.
				for i := range len(b) {
					if _, _, err := Decode(b[:i]); err == nil {
						t.Fatalf("prefix of %d bytes decoded", i)
					}
				}
			})
		}
	}
	if n != 27+4+2+2+3 { // 27 types at v0, plus the extra versions
		t.Fatalf("%d type/versions tested", n)
	}
}

func TestDefaults(t *testing.T) {
	// A PartitionChangeRecord v2 with no tagged fields changes nothing.
	b := unhex(t, "01 05 02 00 00 00 03 [01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77] 00")
	got, _, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := NewPartitionChangeRecord(topicU, 3)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// A v0 RegisterBrokerRecord: no IsMigratingZkBroker, no InControlledShutdown, no dirs.
	rb := &RegisterBrokerRecord{BrokerID: 1, Rack: nil, Fenced: false}
	b, _ = Append(nil, rb, 0)
	got, _, err = Decode(b)
	if err != nil || !reflect.DeepEqual(got, rb) {
		t.Fatalf("got %+v, %v", got, err)
	}
	// Fields that do not exist at a version are not written.
	full := samples(TypeRegisterBroker, 4).(*RegisterBrokerRecord)
	b, _ = Append(nil, full, 0)
	got, _, _ = Decode(b)
	g := got.(*RegisterBrokerRecord)
	if g.InControlledShutdown || g.IsMigratingZkBroker || g.LogDirs != nil || g.CordonedLogDirs != nil {
		t.Fatalf("v0 kept newer fields: %+v", g)
	}
}

func TestUnknownTagsAreSkipped(t *testing.T) {
	// TopicRecord v0 with an unknown tag 9 of 3 bytes.
	b := unhex(t, "01 02 00 04 66 6f 6f [01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77] 01 09 03 aa bb cc")
	got, _, err := Decode(b)
	if err != nil || got.(*TopicRecord).Name != "foo" {
		t.Fatalf("got %+v, %v", got, err)
	}
	// PartitionChangeRecord v0 with a known tag and an unknown tag 20.
	b = unhex(t, "01 05 00 00 00 00 00 [01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77] 02 01 04 00 00 00 02 14 01 00")
	got, _, err = Decode(b)
	if err != nil || got.(*PartitionChangeRecord).Leader != 2 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	u := "[01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77]"
	tests := []struct {
		name     string
		hex      string
		want     error
		key, ver int
	}{
		{"empty", "", ErrCorrupt, -1, -1},
		{"frame version 0 (2.8 preview)", "00 14 00 00", ErrCorrupt, -1, -1},
		{"frame version 2", "02 14 00 00", ErrCorrupt, -1, -1},
		{"frame cut after frame version", "01", ErrCorrupt, -1, -1},
		{"unknown apiKey 30", "01 1e 00 00", ErrUnknownType, 30, 0},
		{"removed AccessControlRecord 6", "01 06 00 00", ErrUnknownType, 6, 0},
		{"removed RemoveFeatureLevelRecord 16", "01 10 00 00", ErrUnknownType, 16, 0},
		{"unassigned 13", "01 0d 00 00", ErrUnknownType, 13, 0},
		{"NoOp v1", "01 14 01 00", ErrUnknownVersion, 20, 1},
		{"RegisterBroker v5", "01 00 05 00", ErrUnknownVersion, 0, 5},
		{"garbage after NoOp", "01 14 00 00 00", ErrCorrupt, 20, 0},
		{"TopicRecord cut in the uuid", "01 02 00 04 66 6f 6f 01 23", ErrCorrupt, 2, 0},
		{"TopicRecord null name", "01 02 00 00 " + u + " 00", ErrCorrupt, 2, 0},
		{"PartitionRecord v0 with v2 tag 1", "01 03 00 00000000 " + u + " 01 01 01 01 00000000 00000000 00000000 01 01 01 01", ErrCorrupt, 3, 0},
		{"PartitionRecord null replicas", "01 03 00 00000000 " + u + " 00 01 01 01 00000000 00000000 00000000 00", ErrCorrupt, 3, 0},
		{"tagged field with leftover bytes", "01 05 00 00000000 " + u + " 01 01 05 00 00 00 02 ff", ErrCorrupt, 5, 0},
		{"tagged field cut short", "01 05 00 00000000 " + u + " 01 01 02 00 00", ErrCorrupt, 5, 0},
		{"tags out of order", "01 05 00 00000000 " + u + " 02 01 04 00 00 00 02 00 01 01", ErrCorrupt, 5, 0},
		{"array count beyond input", "01 05 00 00000000 " + u + " 01 00 02 7f 00", ErrCorrupt, 5, 0},
		{"apiKey out of int16 range", "01 80 80 04 00 00", ErrCorrupt, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, _, err := Decode(unhex(t, tt.hex))
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, tt.want) || rec != nil {
				t.Fatalf("err = %v (rec %v), want %v", err, rec, tt.want)
			}
			if de.APIKey != tt.key || de.Version != tt.ver || de.Offset != -1 {
				t.Fatalf("DecodeError{APIKey %d, Version %d, Offset %d}, want %d/%d", de.APIKey, de.Version, de.Offset, tt.key, tt.ver)
			}
			if de.Unknown() != (tt.want != ErrCorrupt) {
				t.Fatalf("Unknown() = %v", de.Unknown())
			}
		})
	}
}

func TestRecordTypeNames(t *testing.T) {
	if TypePartitionChange.String() != "PartitionChangeRecord" || TypePartitionChange.EnumName() != "PARTITION_CHANGE_RECORD" {
		t.Fatal(TypePartitionChange.String())
	}
	if RecordType(6).String() != "Unknown(6)" || TypeUnknown.Known() || RecordType(6).MaxVersion() != -1 {
		t.Fatal("type 6 should be unknown")
	}
	for _, typ := range allTypes() {
		if got, ok := ParseRecordType(typ.EnumName()); !ok || got != typ {
			t.Fatalf("ParseRecordType(%s) = %v", typ.EnumName(), got)
		}
		if New(typ).Type() != typ {
			t.Fatalf("New(%s)", typ)
		}
	}
	if len(allTypes()) != 27 {
		t.Fatalf("%d known types, want 27", len(allTypes()))
	}
}

// fixtureFiles lists the Kafka-written metadata files this test can find: the
// bootstrap snapshot of 4.4.0 and every segment and snapshot of the fixtures.
func fixtureFiles(t testing.TB) []string {
	t.Helper()
	files := []string{fixture.Path(t, "4.4.0", bootstrapSnapshot)}
	files = append(files, fixture.MetadataFiles(t, "*.log")...)
	return append(files, fixture.MetadataFiles(t, "*.checkpoint")...)
}

// bootstrapSnapshot is the snapshot kafka-storage format wrote (testdata/kafka-4.4.0/README.md).
const bootstrapSnapshot = "bootstrap-00000000000000000000-0000000000.checkpoint"

// decodeFile decodes every batch and record of a metadata file and counts record
// types; any error fails the test.
func decodeFile(t *testing.T, path string) map[string]int {
	t.Helper()
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var d Decoder
	n, err := recordbatch.Scan(in, func(b recordbatch.Batch) error {
		it := b.Iter()
		for it.Next() {
			rec := it.Record()
			if b.IsControl() {
				c, err := recordbatch.DecodeControl(rec.Key, rec.Value)
				if err != nil {
					t.Errorf("%s offset %d: %v", path, it.Offset(), err)
					continue
				}
				counts[c.ControlType().String()]++
				continue
			}
			m, _, err := d.Decode(rec.Value)
			if err != nil {
				t.Errorf("%s offset %d: %v", path, it.Offset(), err)
				continue
			}
			counts[m.Type().String()]++
		}
		return it.Err()
	})
	if err != nil || n != len(in) {
		t.Errorf("%s: %d of %d bytes valid: %v", path, n, len(in), err)
	}
	return counts
}

func TestKafkaFixtures(t *testing.T) {
	files := fixtureFiles(t)
	if len(files) == 0 {
		t.Fatal("no fixture files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			counts := decodeFile(t, f)
			t.Logf("%v", counts)
		})
	}
	// The bootstrap snapshot written by kafka-storage format (Kafka 4.4.0).
	counts := decodeFile(t, fixture.Path(t, "4.4.0", bootstrapSnapshot))
	want := map[string]int{"SNAPSHOT_HEADER": 1, "KRAFT_VERSION": 1, "KRAFT_VOTERS": 1, "FeatureLevelRecord": 6, "SNAPSHOT_FOOTER": 1}
	if !reflect.DeepEqual(counts, want) {
		t.Fatalf("bootstrap counts %v, want %v", counts, want)
	}
}

func FuzzRecord(f *testing.F) {
	// Counts at Kafka 4.4's caps (TestDecodeKafkaCaps).
	uuid := bytes.Repeat([]byte{7}, 16)
	f.Add(slices.Concat([]byte{1, 3, 0, 0, 0, 0, 0}, uuid, []byte{0xc2, 0x84, 0x3d, 0}))
	f.Add(slices.Concat([]byte{1, 5, 0, 0, 0, 0, 0}, uuid, []byte{0x91, 0x4e, 0}))
	for _, typ := range allTypes() {
		for v := int16(0); v <= typ.MaxVersion(); v++ {
			b, _ := Append(nil, samples(typ, v), v)
			f.Add(b)
		}
	}
	for _, path := range fixtureFiles(f) {
		in, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		seen := map[RecordType]int{}
		recordbatch.Scan(in, func(b recordbatch.Batch) error {
			it := b.Iter()
			for it.Next() {
				if v := it.Record().Value; !b.IsControl() && len(v) > 1 && seen[RecordType(v[1])] < 3 {
					seen[RecordType(v[1])]++
					f.Add(append([]byte(nil), v...))
				}
			}
			return nil
		})
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := append([]byte(nil), in...)
		rec, v, err := Decode(in)
		var d Decoder
		rec2, v2, err2 := d.Decode(in)
		if !bytes.Equal(in, orig) {
			t.Fatal("decode modified its input")
		}
		// Records are compared through their encoding: a float64 field may hold NaN.
		enc := func(r Record, v int16) []byte {
			b, err := Append(nil, r, v)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if (err == nil) != (err2 == nil) || (err == nil && (v != v2 || !bytes.Equal(enc(rec, v), enc(rec2, v2)))) {
			t.Fatalf("Decode and Decoder disagree: %v / %v", err, err2)
		}
		// The fast paths for PartitionRecords and PartitionChangeRecords decode exactly
		// as the general path.
		if len(in) > 1 && (in[1] == byte(TypePartition) || in[1] == byte(TypePartitionChange)) {
			sameDecode(t, in)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			return
		}
		// Re-encoding and re-decoding is stable.
		out := enc(rec, v)
		again, v3, err := Decode(out)
		if err != nil || v3 != v || !bytes.Equal(enc(again, v3), out) {
			t.Fatalf("re-decode: %v\n%+v\n%+v", err, again, rec)
		}
		if len(out) > len(in) {
			t.Fatalf("re-encoding grew from %d to %d bytes", len(in), len(out))
		}
	})
}

func BenchmarkDecodePartitionChangeRecord(b *testing.B) {
	rec := NewPartitionChangeRecord(topicU, 5)
	rec.Leader = 2
	in, _ := Append(nil, rec, 2)
	for name, fast := range map[string]bool{"fast": true, "general": false} {
		b.Run(name, func(b *testing.B) {
			var d BatchDecoder
			b.ReportAllocs()
			for range b.N {
				var err error
				if fast {
					_, _, err = d.Decode(in)
				} else { // what BatchDecoder.Decode did before the fast path
					d.r = reader{arena: &d.arena}
					d.r.Reset(in)
					_, _, err = decode(&d.r, &d)
				}
				if err != nil {
					b.Fatal(err)
				}
				d.Reset()
			}
		})
	}
}

func BenchmarkDecodePartitionRecord(b *testing.B) {
	rec := &PartitionRecord{PartitionID: 5, TopicID: topicU, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3},
		Leader: 1, LeaderEpoch: 3, PartitionEpoch: 3, Directories: []UUID{dirA, dirB, dirA}}
	in, _ := Append(nil, rec, 2)
	b.Run("Decoder", func(b *testing.B) {
		var d Decoder
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for range b.N {
			if _, _, err := d.Decode(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for range b.N {
			if _, _, err := Decode(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeKafkaCaps: an array of more than 1 000 000 elements or a tagged-field
// section of more than 10 000 fields is refused as Kafka 4.4 refuses it, with an error
// that says so (the PartitionRecord's fast path and the general decoder alike).
func TestDecodeKafkaCaps(t *testing.T) {
	u := "[01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77]"
	for _, tc := range []struct{ name, hex, says string }{
		{"PartitionRecord replicas", "01 03 00 00000000 " + u + " c2 84 3d 00", "array of 1000001 elements, more than 1000000"},
		{"PartitionChangeRecord tags", "01 05 00 00000000 " + u + " 91 4e 00", "10001 tagged fields, more than 10000"},
		{"PartitionRecord tags", "01 03 00 00000000 " + u + " 01 01 01 01 00000000 00000000 00000000 91 4e", "10001 tagged fields, more than 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, _, err := Decode(unhex(t, tc.hex))
			if rec != nil || !errors.Is(err, ErrCorrupt) || err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v (rec %v), want ErrCorrupt saying %q", err, rec, tc.says)
			}
		})
	}
}

// TestUnknownTags: the records real Kafka 4.1.1, 4.3.1 and 4.4.0 wrote have no tagged
// field this package does not know; a field a newer Kafka adds is skipped and counted,
// by the general decoder and through the PartitionRecord fast path alike, the record
// otherwise decoded as without it.
func TestUnknownTags(t *testing.T) {
	var d BatchDecoder
	records := 0
	for _, path := range fixtureFiles(t) {
		in, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recordbatch.Scan(in, func(b recordbatch.Batch) error {
			it := b.Iter()
			for it.Next() {
				if v := it.Record().Value; !b.IsControl() && len(v) > 1 {
					if _, _, err := d.Decode(v); err == nil {
						records++
						if n := d.UnknownTags(); n != 0 {
							t.Errorf("%s: a %s record with %d unknown tagged fields", path, RecordType(v[1]), n)
						}
					}
				}
			}
			return nil
		})
		d.Reset()
	}
	if records == 0 {
		t.Fatal("no fixture records")
	}
	u := "[01 23 45 67 89 ab cd ef 00 11 22 33 44 55 66 77]"
	for _, tc := range []struct{ name, plain, tagged string }{
		{"PartitionRecord", "01 03 00 00000000 " + u + " 02 00000001 02 00000001 01 01 00000001 00000000 00000000 00",
			"01 03 00 00000000 " + u + " 02 00000001 02 00000001 01 01 00000001 00000000 00000000 01 1e 01 ff"},
		{"TopicRecord", "01 02 00 04 666f6f " + u + " 00", "01 02 00 04 666f6f " + u + " 02 05 01 ff 09 00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			want, _, err := d.Decode(unhex(t, tc.plain))
			if err != nil || d.UnknownTags() != 0 {
				t.Fatalf("plain: %v, %d unknown tags", err, d.UnknownTags())
			}
			wantText := fmt.Sprint(want)
			got, _, err := d.Decode(unhex(t, tc.tagged))
			if err != nil || d.UnknownTags() == 0 || fmt.Sprint(got) != wantText {
				t.Fatalf("tagged: %v, %d unknown tags, %v; want %s", err, d.UnknownTags(), got, wantText)
			}
		})
	}
}
