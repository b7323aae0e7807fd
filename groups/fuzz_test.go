package groups_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
)

// FuzzRecord checks that Decode never panics, never keeps or changes its input, fails
// only with a *DecodeError, and that what it decodes re-encodes to bytes that decode
// to the same record. Applying the record to a State must not panic either.
func FuzzRecord(f *testing.F) {
	for _, kv := range groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 2, Members: 2, Topics: 5, TopicsPerMember: 2, RegexEvery: 2, OffsetCommits: 1}) {
		f.Add(kv.Key, kv.Value, kv.Value == nil)
	}
	for _, kv := range fixtureRecords(f) {
		f.Add(kv.Key, kv.Value, kv.Value == nil)
	}
	f.Add(h("0002", s16("cg")), h("0003", s16("consumer"), "00000001", s16("range"), s16("m1"), "0000000000000000", "00000001",
		s16("m1"), "ffff", s16("c"), s16("h"), "00000000 00000000", "00000004 00000000", "00000000"), false)
	f.Add(h("0011", s16("app")), h("0000 00000002 0000000000000063 02", cs("k"), cs("v"), "00 | 01 00 04 00000001"), false)
	f.Add(h("0063"), []byte(nil), true)
	// An array beyond Kafka 4.4's cap of 1 000 000 elements (TestDecodeErrors).
	f.Add(h("0005", s16("g"), s16("m")), h("0000 00 00 01 01 ffffffff07"), false)

	state := groups.NewState()
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		}
		keyCopy, valueCopy := bytes.Clone(key), bytes.Clone(value)
		rec, err := groups.Decode(key, value)
		if !bytes.Equal(key, keyCopy) || !bytes.Equal(value, valueCopy) {
			t.Fatal("Decode modified its input")
		}
		if err != nil {
			var de *groups.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError: %v", err, err)
			}
			if rec.Value != nil {
				t.Fatal("value returned with an error")
			}
			return
		}
		if rec.Value != nil && rec.Value.RecordType() != rec.Type {
			t.Fatalf("value %T for record type %v", rec.Value, rec.Type)
		}
		_ = rec.String()
		if state.Len() > 1000 {
			state = groups.NewState()
		}
		state.Apply(&rec)
		_ = state.String()

		if rec.Value == nil || hasSubscriptionErr(rec.Value) {
			return
		}
		k1, v1, err := groupstest.Encode(&rec)
		if err != nil {
			t.Fatalf("encode %s: %v", rec.String(), err)
		}
		// The record must not share memory with the input.
		for i := range key {
			key[i] ^= 0xff
		}
		for i := range value {
			value[i] ^= 0xff
		}
		k2, v2, _ := groupstest.Encode(&rec)
		if !bytes.Equal(k1, k2) || !bytes.Equal(v1, v2) {
			t.Fatal("decoded record shares memory with its input")
		}
		again, err := groups.Decode(k1, v1)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", rec.String(), err)
		}
		if !reflect.DeepEqual(again, rec) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", again.Value, rec.Value)
		}
	})
}

func hasSubscriptionErr(v groups.Value) bool {
	if g, ok := v.(*groups.GroupMetadataValue); ok {
		for _, m := range g.Members {
			if m.SubscriptionErr != nil {
				return true
			}
		}
	}
	return false
}
