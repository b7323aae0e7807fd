// Package imagetest builds images for tests from metadata records in their text form
// (internal/metadata.ParseText, with short topic ids).
package imagetest

import (
	"testing"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Replay applies the records of lines to base and returns the new image, at p.
func Replay(t testing.TB, base *image.Image, p image.Provenance, lines ...string) *image.Image {
	t.Helper()
	d := image.NewDelta(base)
	for _, l := range lines {
		rec, err := metadata.ParseText(l, metadata.ShortUUIDs)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if err := d.Replay(rec); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	img, _ := d.Apply(p)
	return img
}
