// Package imagetest builds images for tests from metadata records in their text form
// (internal/metadata.ParseText).
package imagetest

import (
	"testing"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Lines replays the records of lines into d; ids reads their topic ids (nil: Kafka's
// form, metadata.ShortUUIDs: the short names of test scripts).
func Lines(t testing.TB, d *image.Delta, ids *metadata.TextUUID, lines ...string) {
	t.Helper()
	for _, l := range lines {
		rec, err := metadata.ParseText(l, ids)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if err := d.Replay(rec); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
}

// Replay applies the records of lines (short topic ids) to base and returns the new
// image, at p.
func Replay(t testing.TB, base *image.Image, p image.Provenance, lines ...string) *image.Image {
	t.Helper()
	d := image.NewDelta(base)
	Lines(t, d, metadata.ShortUUIDs, lines...)
	img, _ := d.Apply(p)
	return img
}
