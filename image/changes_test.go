package image

import (
	"fmt"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// TestCreatedSizedOnce: the Changes of a rebuild (a delta on Empty, every topic
// created) hold Created at its length, not grown by append (grown, it was several
// times its length at the load's peak RSS, which bench/burst.sh's at-load peak RSS
// target guards),
// and a delta that deletes more topics than it creates still lists them all.
func TestCreatedSizedOnce(t *testing.T) {
	topics := func(d *Delta, from, n int) {
		for i := from; i < from+n; i++ {
			id := UUID{byte(i >> 8), byte(i), 1}
			if err := d.Replay(&metadata.TopicRecord{TopicID: id, Name: fmt.Sprintf("t%04d", i)}); err != nil {
				t.Fatal(err)
			}
			if err := d.Replay(&metadata.PartitionRecord{TopicID: id, Replicas: []int32{1}, ISR: []int32{1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	d := NewDelta(Empty)
	topics(d, 0, 300)
	im, ch := d.Apply(Provenance{Offset: 1})
	if len(ch.Created) != 300 || cap(ch.Created) != 300 {
		t.Fatalf("a rebuild of 300 topics: Created of length %d, capacity %d; want 300, 300", len(ch.Created), cap(ch.Created))
	}
	d = NewDelta(im)
	for i := range 100 {
		if err := d.Replay(&metadata.RemoveTopicRecord{TopicID: UUID{byte(i >> 8), byte(i), 1}}); err != nil {
			t.Fatal(err)
		}
	}
	topics(d, 300, 40)
	_, ch = d.Apply(Provenance{Offset: 2})
	if len(ch.Created) != 40 || len(ch.Deleted) != 100 || ch.Created[0].Name != "t0300" || ch.Created[39].Name != "t0339" {
		t.Fatalf("100 topics deleted, 40 created: %d deleted, %d created (%v)", len(ch.Deleted), len(ch.Created), ch.Created)
	}
}
