package image

import (
	"os"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// FuzzReplay replays arbitrary records (the input is a list of 1-byte-length-prefixed
// record values; a zero length means Apply) and checks that the Delta never panics
// and that every image it publishes is consistent, and the same with and without the
// bulk path for new topics.
func FuzzReplay(f *testing.F) {
	seed := func(recs ...metadata.Record) []byte {
		var in []byte
		for _, r := range recs {
			if r == nil {
				in = append(in, 0)
				continue
			}
			v, _ := metadata.Append(nil, r, r.Type().MaxVersion())
			if len(v) > 255 {
				continue
			}
			in = append(append(in, byte(len(v))), v...)
		}
		return in
	}
	t1 := UUID{1}
	f.Add(seed(&metadata.TopicRecord{Name: "a", TopicID: t1},
		&metadata.PartitionRecord{TopicID: t1, Replicas: []int32{1, 2}, ISR: []int32{1}},
		nil, metadata.NewPartitionChangeRecord(t1, 0), &metadata.BeginTransactionRecord{},
		&metadata.RemoveTopicRecord{TopicID: t1}, nil, &metadata.AbortTransactionRecord{}, nil,
		&metadata.ClearElrRecord{}, &metadata.RegisterBrokerRecord{BrokerID: 1}, nil))
	// Records of the captured logs, in order, cut into seeds of at most ~512 bytes:
	// small seeds keep the fuzzer fuzzing rather than replaying (and minimizing) kilobytes.
	for _, s := range fixture.MetadataFiles(f, "00000000000000000000.log") {
		in, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		var recs []byte
		recordbatch.Scan(in, func(b recordbatch.Batch) error {
			it := b.Iter()
			for it.Next() {
				if v := it.Record().Value; !b.IsControl() && len(v) < 256 {
					recs = append(append(recs, byte(len(v))), v...)
				}
			}
			recs = append(recs, 0)
			if len(recs) >= 512 {
				f.Add(recs)
				recs = nil
			}
			return nil
		})
		f.Add(recs)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, plain := newDelta(Empty, true), newDelta(Empty, false)
		check := func(im *Image) {
			n := 0
			for tp := range im.Topics() {
				n += tp.NumPartitions()
				byName, ok := im.TopicByName(tp.Name())
				if !ok || byName != tp {
					t.Fatalf("topic %s not found by name", tp.Name())
				}
				for p := range tp.Partitions() {
					_ = p.Directories()
				}
			}
			if n != im.NumPartitions() {
				t.Fatalf("partition count %d, topics hold %d", im.NumPartitions(), n)
			}
		}
		for len(in) > 0 {
			n := int(in[0])
			in = in[1:]
			if n == 0 || n > len(in) {
				im, ch := d.Apply(Provenance{})
				check(im)
				pim, pch := plain.Apply(Provenance{})
				if err := compareImages(im, pim); err != nil {
					t.Fatalf("bulk and plain images differ: %v", err)
				}
				if ch.String() != pch.String() {
					t.Fatalf("bulk and plain changes differ:\n%s---\n%s", ch, pch)
				}
				if n > len(in) {
					return
				}
				continue
			}
			rec, _, err := metadata.Decode(in[:n])
			in = in[n:]
			if err == nil {
				e1, e2 := d.Replay(rec), plain.Replay(rec)
				if (e1 == nil) != (e2 == nil) || (e1 != nil && e1.Error() != e2.Error()) {
					t.Fatalf("bulk and plain replay: %v, %v", e1, e2)
				}
			}
		}
		im, _ := d.Apply(Provenance{})
		check(im)
		if ch := Diff(Empty, im); len(ch.Created) != im.NumTopics() {
			t.Fatalf("Diff from empty: %d created, %d topics", len(ch.Created), im.NumTopics())
		}
	})
}
