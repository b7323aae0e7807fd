package observer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// loadOnce builds the observer's image of dir without running it.
func loadOnce(t *testing.T, dir string) (*Observer, []Update) {
	t.Helper()
	var ups []Update
	o, err := New(Config{Dir: dir, Handler: func(u Update) { ups = append(ups, u) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.poll(); err != nil {
		t.Fatal(err)
	}
	return o, ups
}

// TestFixtureImages checks, on each real log, that the image built from the newest
// snapshot and the log after it is the image built from every older snapshot, and
// from the whole log replayed from offset 0, at the same offset.
func TestFixtureImages(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			o, ups := loadOnce(t, dir)
			want := o.Image()
			if len(ups) != 1 || !ups[0].Reset || ups[0].Image != want {
				t.Fatalf("updates %+v", ups)
			}
			if want.NumTopics() == 0 || want.NumBrokers() < 2 {
				t.Fatalf("image has %d topics, %d brokers", want.NumTopics(), want.NumBrokers())
			}
			if m := o.Metrics(); m.ReplayErrors.Load()+m.UnknownRecords.Load()+m.CorruptRecords.Load() != 0 {
				t.Fatalf("replay errors %d, unknown %d, corrupt %d", m.ReplayErrors.Load(), m.UnknownRecords.Load(), m.CorruptRecords.Load())
			}
			starts := []string{"none"}
			for _, s := range fixtureFiles(t, dir, "*.checkpoint") {
				starts = append(starts, filepath.Base(s))
			}
			for _, start := range starts {
				tmp := t.TempDir()
				for _, seg := range fixtureFiles(t, dir, "*.log") {
					copyFile(t, seg, filepath.Join(tmp, filepath.Base(seg)))
				}
				if start != "none" {
					copyFile(t, filepath.Join(dir, start), filepath.Join(tmp, start))
				}
				_, ups := loadOnce(t, tmp)
				got := ups[len(ups)-1].Image
				if d := image.Diff(want, got); !d.Empty() || got.Provenance() != want.Provenance() {
					t.Fatalf("from snapshot %s: provenance %+v, want %+v; differences:\n%s", start, got.Provenance(), want.Provenance(), d)
				}
			}
			t.Logf("%d topics, %d partitions, %d brokers at %+v: same from %d starting points",
				want.NumTopics(), want.NumPartitions(), want.NumBrokers(), want.Provenance(), len(starts))
		})
	}
}

// recorder keeps a running observer's updates.
type recorder struct {
	mu  sync.Mutex
	ups []Update
}

func (r *recorder) handle(u Update) {
	r.mu.Lock()
	r.ups = append(r.ups, u)
	r.mu.Unlock()
}

func (r *recorder) take() []Update {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.ups
	r.ups = nil
	return u
}

func topicNames(im *image.Image) string {
	if im == nil {
		return "<no image>"
	}
	var names []string
	for t := range im.Topics() {
		names = append(names, t.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// TestRunLive runs the observer with a fake clock (polling only) over a log written
// step by step.
func TestRunLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
		rec := &recorder{}
		o, err := New(Config{Dir: dir, NoNotify: true, PollInterval: 50 * time.Millisecond,
			Handler: rec.handle, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- o.Run(ctx) }()
		step := func(d time.Duration) {
			time.Sleep(d)
			synctest.Wait()
		}

		// No directory yet: wait, not ready.
		step(time.Second)
		if !errors.Is(o.LastError(), os.ErrNotExist) || o.Image() != nil {
			t.Fatalf("missing dir: error %v, image %v", o.LastError(), o.Image())
		}
		l := observertest.New(t, dir)
		step(time.Second)
		if !errors.Is(o.LastError(), ErrNoLog) {
			t.Fatalf("empty dir: error %v", o.LastError())
		}
		select {
		case <-o.Ready():
			t.Fatal("ready without a log")
		default:
		}

		l.AppendLeaderChange(1)
		l.Append(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1))
		step(10 * time.Second) // the backoff has grown meanwhile
		select {
		case <-o.Ready():
		default:
			t.Fatalf("not ready: %v", o.LastError())
		}
		ups := rec.take()
		if len(ups) != 1 || !ups[0].Reset || topicNames(o.Image()) != "a" || len(ups[0].Changes.Created) != 1 {
			t.Fatalf("initial updates %+v", ups)
		}

		// Appends are seen on the next poll, one update per batch.
		start := time.Now()
		l.Append(observertest.Topic("b", idB), observertest.Partition(idB, 0, 1))
		l.Append(observertest.Partition(idB, 1, 1))
		step(50 * time.Millisecond)
		ups = rec.take()
		if len(ups) != 2 || topicNames(o.Image()) != "a,b" || ups[1].Provenance.Offset != 6 {
			t.Fatalf("after appends: %d updates, topics %s", len(ups), topicNames(o.Image()))
		}
		if tb, _ := o.Image().TopicByName("b"); tb.NumPartitions() != 2 {
			t.Fatalf("b has %d partitions", tb.NumPartitions())
		}
		t.Logf("appends seen after %v (fake clock)", time.Since(start))

		// Truncation: b's partition 1 goes; a different batch takes its place.
		l.Truncate(6)
		l.Epoch = 2
		l.Append(observertest.Topic("c", idC))
		step(50 * time.Millisecond)
		ups = rec.take()
		if len(ups) != 1 || !ups[0].Reset || topicNames(o.Image()) != "a,b,c" {
			t.Fatalf("after truncation: %+v topics %s", ups, topicNames(o.Image()))
		}
		ch := ups[0].Changes
		if len(ch.Created) != 1 || ch.Created[0].Name != "c" || len(ch.Changed) != 1 || ch.Changed[0].Partitions != 1 {
			t.Fatalf("truncation reported as:\n%s", ch)
		}

		// Corruption in the middle of the log: an error, the image stays, then retry.
		fi, _ := os.Stat(l.SegmentPath(0))
		l.Append(observertest.Topic("d", observertest.ID(4)))
		l.Append(observertest.Topic("e", observertest.ID(5)))
		flip(t, l.SegmentPath(0), fi.Size()+40)
		step(50 * time.Millisecond)
		var pe *PosError
		if !errors.As(o.LastError(), &pe) || !errors.Is(pe, ErrCorrupt) || topicNames(o.Image()) != "a,b,c" {
			t.Fatalf("corruption: error %v, topics %s", o.LastError(), topicNames(o.Image()))
		}
		if o.Metrics().CorruptBatches.Load() == 0 || o.Metrics().Errors.Load() == 0 {
			t.Fatal("corruption not counted")
		}
		flip(t, l.SegmentPath(0), fi.Size()+40) // repaired
		step(20 * time.Second)
		if o.LastError() != nil || topicNames(o.Image()) != "a,b,c,d,e" {
			t.Fatalf("after repair: error %v, topics %s", o.LastError(), topicNames(o.Image()))
		}

		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestNotificationLatency measures, on the real clock, how long an appended batch
// takes to reach the handler when only file notifications can wake the observer
// (the polling timer is an hour).
func TestNotificationLatency(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	l := observertest.New(t, dir)
	l.Append(observertest.Topic("a", idA))
	seen := make(chan Provenance, 100)
	o, err := New(Config{Dir: dir, PollInterval: time.Hour, Handler: func(u Update) { seen <- u.Provenance }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	// Run must have returned before the next test changes the prefetch settings it
	// reads; seen holds more updates than the test makes, so the handler never blocks.
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-o.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	<-seen
	var lat []time.Duration
	for i := range 20 {
		if i == 10 {
			l.Roll()
		}
		start := time.Now()
		off := l.Append(observertest.NoOp())
		for p := range seen {
			if p.Offset == off {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	t.Logf("append to update: median %v, max %v over %d appends (one segment roll)", lat[len(lat)/2], lat[len(lat)-1], len(lat))
	if lat[len(lat)/2] > 100*time.Millisecond {
		t.Fatalf("median latency %v, want < 100ms", lat[len(lat)/2])
	}
}

// TestSnapshotCountedWhenPublished checks that a loaded snapshot is counted before its
// image is published, so that whoever the image wakes (Ready, the handler) sees it.
func TestSnapshotCountedWhenPublished(t *testing.T) {
	l := observertest.New(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"))
	l.Append(observertest.Topic("a", idA))
	l.Snapshot(observertest.Topic("a", idA))
	var o *Observer
	var seen []int64
	o, err := New(Config{Dir: l.Dir, Handler: func(u Update) {
		seen = append(seen, o.Metrics().SnapshotsLoaded.Load())
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.poll(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int64{1}) {
		t.Fatalf("snapshots counted when each update was handled: %v, want [1]", seen)
	}
}
