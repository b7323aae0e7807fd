package image

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// Tests on real metadata logs captured from Kafka (testdata/kafka-*/ at the root):
// every snapshot Kafka wrote must equal the image we build by replaying the log up
// to the snapshot's end offset, and the final image is checked in as a golden file.

func fixtureDirs(t *testing.T) []string {
	t.Helper()
	return fixture.MetadataDirs(t)
}

// replayFile replays the data records of one file with offsets in [from, to) into d,
// applying after every batch. It fails the test on any decode or replay error.
func replayFile(t *testing.T, d *Delta, path string, from, to int64) *Image {
	t.Helper()
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dec metadata.Decoder
	im := d.Base()
	n, err := recordbatch.Scan(in, func(b recordbatch.Batch) error {
		if b.LastOffset() < from || b.BaseOffset >= to {
			return nil
		}
		if !b.IsControl() {
			it := b.Iter()
			for it.Next() {
				if off := it.Offset(); off < from || off >= to {
					continue
				}
				rec, _, err := dec.Decode(it.Record().Value)
				if err != nil {
					return fmt.Errorf("offset %d: %w", it.Offset(), err)
				}
				if err := d.Replay(rec); err != nil {
					return fmt.Errorf("offset %d: %w", it.Offset(), err)
				}
			}
			if err := it.Err(); err != nil {
				return err
			}
		}
		im, _ = d.Apply(Provenance{Offset: min(b.LastOffset(), to-1), Epoch: b.PartitionLeaderEpoch, Timestamp: b.MaxTimestamp})
		return nil
	})
	if err != nil || n != len(in) {
		t.Fatalf("%s: %d of %d bytes: %v", path, n, len(in), err)
	}
	return im
}

// logImage replays every segment of dir from offset 0 up to (not including) to.
func logImage(t *testing.T, dir string, to int64) *Image {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	slices.Sort(segs)
	d := NewDelta(Empty)
	for _, s := range segs {
		replayFile(t, d, s, 0, to)
	}
	return d.Base()
}

func snapshotImage(t *testing.T, path string) *Image {
	t.Helper()
	d := NewDelta(Empty)
	return replayFile(t, d, path, 0, 1<<62)
}

func TestFixtureSnapshotsMatchLogReplay(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		snaps, _ := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
		for _, snap := range snaps {
			name := filepath.Base(snap)
			end, err := strconv.ParseInt(name[:20], 10, 64)
			if err != nil || end == 0 {
				continue // the bootstrap snapshot (0-0): no log before it to replay
			}
			t.Run(filepath.Base(filepath.Dir(dir))+"/"+name, func(t *testing.T) {
				fromSnap := snapshotImage(t, snap)
				fromLog := logImage(t, dir, end)
				if fromLog.Provenance().Offset != end-1 {
					t.Fatalf("log replay stopped at %d, want %d", fromLog.Provenance().Offset, end-1)
				}
				if ch := Diff(fromLog, fromSnap); !ch.Empty() {
					t.Fatalf("snapshot differs from the replayed log:\n%s", ch)
				}
				if !slices.Equal(imageLines(withProv(fromSnap)), imageLines(withProv(fromLog))) {
					t.Fatalf("printed images differ:\n%s\n---\n%s", strings.Join(imageLines(fromSnap), "\n"), strings.Join(imageLines(fromLog), "\n"))
				}
				if fromSnap.NumTopics() == 0 || fromSnap.NumBrokers() == 0 {
					t.Fatalf("empty snapshot image")
				}
			})
		}
	}
}

// withProv drops the provenance so images from different sources compare.
func withProv(im *Image) *Image { return &Image{s: im.s} }

func TestFixtureGolden(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		version := filepath.Base(filepath.Dir(dir))
		im := logImage(t, dir, 1<<62)
		got := strings.Join(imageLines(im), "\n") + "\n"
		golden := filepath.Join("testdata", version+".image.txt")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("%s: image differs from %s:\n%s", version, golden, got)
		}
	}
}
