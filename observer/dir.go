package observer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// SnapshotID names a KRaft snapshot: the offset after its last record and the epoch
// of its last batch (Kafka's OffsetAndEpoch).
type SnapshotID struct {
	EndOffset int64
	Epoch     int32
}

// Compare orders snapshot ids the way Kafka's OffsetAndEpoch does: epoch first, then
// offset.
func (a SnapshotID) Compare(b SnapshotID) int {
	if a.Epoch != b.Epoch {
		if a.Epoch < b.Epoch {
			return -1
		}
		return 1
	}
	switch {
	case a.EndOffset < b.EndOffset:
		return -1
	case a.EndOffset > b.EndOffset:
		return 1
	}
	return 0
}

func (a SnapshotID) String() string { return fmt.Sprintf("%d-%d", a.EndOffset, a.Epoch) }

// FileName is the snapshot's file name, OOOOOOOOOOOOOOOOOOOO-EEEEEEEEEE.checkpoint.
func (a SnapshotID) FileName() string {
	return fmt.Sprintf("%020d-%010d.checkpoint", a.EndOffset, a.Epoch)
}

// SegmentFileName is the name of the log segment whose first batch is at base.
func SegmentFileName(base int64) string { return fmt.Sprintf("%020d.log", base) }

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// ParseSegmentName returns the base offset of a segment file name (20 digits + .log).
// Anything else (.index, .timeindex, producer .snapshot, .deleted, .cleaned, .swap)
// is not a segment.
func ParseSegmentName(name string) (int64, bool) {
	if len(name) != 24 || name[20:] != ".log" || !digits(name[:20]) {
		return 0, false
	}
	n, err := strconv.ParseInt(name[:20], 10, 64)
	return n, err == nil
}

// ParseSnapshotName returns the id of a KRaft snapshot file name
// (20 digits, '-', 10 digits, .checkpoint). Partial (.checkpoint.part) and deleted
// (.checkpoint.deleted) snapshots and producer-state .snapshot files are not snapshots.
func ParseSnapshotName(name string) (SnapshotID, bool) {
	if len(name) != 42 || name[20] != '-' || name[31:] != ".checkpoint" || !digits(name[:20]) || !digits(name[21:31]) {
		return SnapshotID{}, false
	}
	off, err1 := strconv.ParseInt(name[:20], 10, 64)
	ep, err2 := strconv.ParseInt(name[21:31], 10, 32)
	if err1 != nil || err2 != nil {
		return SnapshotID{}, false
	}
	return SnapshotID{EndOffset: off, Epoch: int32(ep)}, true
}

// listing is what a metadata log dir holds, as far as the observer cares.
type listing struct {
	segments  []int64      // base offsets, ascending
	snapshots []SnapshotID // ascending in Kafka's order (epoch, then offset)
}

func listDir(dir string) (listing, error) {
	var l listing
	ents, err := os.ReadDir(dir)
	if err != nil {
		return l, err
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if base, ok := ParseSegmentName(e.Name()); ok {
			l.segments = append(l.segments, base)
		} else if id, ok := ParseSnapshotName(e.Name()); ok {
			l.snapshots = append(l.snapshots, id)
		}
	}
	slices.Sort(l.segments)
	slices.SortFunc(l.snapshots, SnapshotID.Compare)
	return l, nil
}

func (l *listing) hasSegment(base int64) bool {
	_, ok := slices.BinarySearch(l.segments, base)
	return ok
}

// segmentFor returns the segment that would hold offset: the greatest base <= offset.
func (l *listing) segmentFor(offset int64) (int64, bool) {
	i, found := slices.BinarySearch(l.segments, offset)
	if found {
		return offset, true
	}
	if i == 0 {
		return 0, false
	}
	return l.segments[i-1], true
}

// after returns the first segment whose base is above base.
func (l *listing) after(base int64) (int64, bool) {
	i, found := slices.BinarySearch(l.segments, base)
	if found {
		i++
	}
	if i < len(l.segments) {
		return l.segments[i], true
	}
	return 0, false
}

// maxSnapshotEnd is the highest end offset of any snapshot, -1 when there is none.
func (l *listing) maxSnapshotEnd() int64 {
	m := int64(-1)
	for _, s := range l.snapshots {
		m = max(m, s.EndOffset)
	}
	return m
}

func segmentPath(dir string, base int64) string { return filepath.Join(dir, SegmentFileName(base)) }

// PartitionDir is the __cluster_metadata-0 directory named by dir: dir itself when it
// is one, else Kafka's metadata.log.dir holding it.
func PartitionDir(dir string) string {
	if filepath.Base(filepath.Clean(dir)) == "__cluster_metadata-0" {
		return filepath.Clean(dir)
	}
	return filepath.Join(dir, "__cluster_metadata-0")
}
