package observer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/kraftwatch/kraftwatch/observer/observertest"
)

// Tests of the network source against observertest.Controller, a fake controller on
// loopback, for what a real Kafka cannot be made to do.

// syncBuffer is a log sink safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is an Observer of fake controllers, run until the test ends.
type running struct {
	*Observer
	logs    *syncBuffer
	mu      sync.Mutex
	updates []Update
}

func (r *running) Updates() []Update {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Update(nil), r.updates...)
}

// runQuorum runs an observer of addrs with short timeouts; edit adjusts the config.
func runQuorum(t *testing.T, addrs []string, edit func(*Config)) *running {
	t.Helper()
	r := &running{logs: &syncBuffer{}}
	cfg := Config{Controllers: addrs, FetchMaxWait: 100 * time.Millisecond, RequestTimeout: 500 * time.Millisecond,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Handler: func(u Update) {
			r.mu.Lock()
			r.updates = append(r.updates, u)
			r.mu.Unlock()
		}}
	if edit != nil {
		edit(&cfg)
	}
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Observer = o
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if t.Failed() {
			t.Logf("observer logs:\n%s", r.logs.String())
		}
	})
	return r
}

// eventually waits up to 10 s for ok.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hasTopic(o *Observer, name string) bool {
	im := o.Image()
	if im == nil {
		return false
	}
	_, ok := im.TopicByName(name)
	return ok
}

// idA, idB and idC are in follower_test.go.

func TestQuorumFollowsAndGatesOnHighWatermark(t *testing.T) {
	c := observertest.NewController(t, 1)
	c.Append(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1))
	c.Commit()
	r := runQuorum(t, []string{c.Addr}, nil)
	eventually(t, "ready", func() bool { return hasTopic(r.Observer, "a") })
	<-r.Ready()
	if u := r.Updates(); len(u) != 1 || !u[0].Reset || u[0].Reason != "initial load" || u[0].Provenance.Offset != 2 {
		t.Fatalf("updates %+v, want one initial load at offset 2", u)
	}

	// Past the high watermark: fetched and kept, not applied.
	base := c.Append(observertest.Topic("b", idB), observertest.Partition(idB, 0, 1))
	eventually(t, "the uncommitted batch to be fetched", func() bool { return r.Metrics().Uncommitted.Load() > 0 })
	before := c.Requests(1)
	time.Sleep(300 * time.Millisecond) // three long polls
	if hasTopic(r.Observer, "b") {
		t.Fatal("a topic past the high watermark was applied")
	}
	if n := c.Requests(1) - before; n > 6 {
		t.Errorf("%d fetches in 300 ms while waiting for the high watermark: not a long poll", n)
	}
	c.SetHighWatermark(base + 1) // the first record of two: the batch is not committed whole
	time.Sleep(150 * time.Millisecond)
	if hasTopic(r.Observer, "b") {
		t.Fatal("a batch only partly below the high watermark was applied")
	}
	c.Commit()
	eventually(t, "topic b", func() bool { return hasTopic(r.Observer, "b") })
	u := r.Updates()
	last := u[len(u)-1]
	if last.Reset || last.Unit == nil || last.Provenance.Offset != base+1 || last.Provenance.Epoch != 1 || len(last.Unit.Entries) != 2 {
		t.Errorf("last update %+v, want the batch at %d..%d", last, base, base+1)
	}
	if got := r.Metrics().Uncommitted.Load(); got != 0 {
		t.Errorf("uncommitted bytes %d after the commit", got)
	}
	if r.Metrics().HighWatermark.Load() != base+2 || r.Metrics().LeaderID.Load() != 1 {
		t.Errorf("high watermark %d, leader %d", r.Metrics().HighWatermark.Load(), r.Metrics().LeaderID.Load())
	}
}

// TestQuorumSameUpdatesAsDisk serves the same batches from a fake controller and a
// log directory: both sources hand on the same units, with the same offsets and
// epochs (transactions across batches, an aborted one, a control batch).
func TestQuorumSameUpdatesAsDisk(t *testing.T) {
	l := observertest.New(t, t.TempDir()+"/__cluster_metadata-0")
	c := observertest.NewController(t, 1)
	both := func(b []byte, n int64) {
		l.AppendRaw(b, n)
		c.AppendRaw(b, n)
	}
	data := func(recs ...metadata.Record) { both(l.Encode(recs...), int64(len(recs))) }
	control := func() {
		both(recordbatch.AppendControlBatch(nil, recordbatch.NewBatchHeader(l.Next, l.Epoch, l.Timestamp, true),
			&recordbatch.LeaderChangeMessage{LeaderID: 1, Voters: []int32{1}, GrantingVoters: []int32{1}}), 1)
	}
	control()
	data(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1))
	c.Commit()
	r := runQuorum(t, []string{c.Addr}, nil)
	<-r.Ready()
	data(observertest.Begin(), observertest.Topic("b", idB))
	data(observertest.Partition(idB, 0, 1), observertest.End(), observertest.NoOp())
	data(observertest.Begin(), observertest.Topic("c", idC))
	data(observertest.Abort())
	control()
	data(observertest.RemoveTopic(idA))
	c.Commit()
	eventually(t, "the end of the log", func() bool { return r.Metrics().Offset.Load() == l.Next-1 })

	disk, _ := loadOnce(t, l.Dir)
	// The disk source read everything at once (one reset); the network source got the
	// first batches in its reset and the rest as units. Compare those units with the
	// units the disk source cuts from the same log.
	net := r.Updates()
	if !net[0].Reset || net[0].Provenance.Offset != 3 {
		t.Fatalf("first network update %s", describe(net[0]))
	}
	f := newFollower(l.Dir, slog.New(slog.DiscardHandler), newMetrics())
	var units []string
	f.next, f.epoch = 0, -1
	ls, _ := listDir(l.Dir)
	if err := f.readAvailable(&ls, func(it item) bool {
		if u := it.unit; it.kind == itemUnit && u.Provenance.Offset > 3 {
			units = append(units, describe(Update{Unit: &u, Provenance: u.Provenance}))
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range net[1:] {
		got = append(got, describe(u))
	}
	if strings.Join(got, "\n") != strings.Join(units, "\n") {
		t.Errorf("network units:\n%s\ndisk units:\n%s", strings.Join(got, "\n"), strings.Join(units, "\n"))
	}
	if d := image.Diff(disk.Image(), r.Image()); !d.Empty() || disk.Image().Provenance() != r.Image().Provenance() {
		t.Errorf("images differ: %s (%+v vs %+v)", d, disk.Image().Provenance(), r.Image().Provenance())
	}
}

func describe(u Update) string {
	if u.Unit == nil {
		return fmt.Sprintf("reset %q at %d/%d", u.Reason, u.Provenance.Offset, u.Provenance.Epoch)
	}
	var types []string
	for _, e := range u.Unit.Entries {
		types = append(types, fmt.Sprintf("%d:%s", e.Offset, e.Record.Type()))
	}
	return fmt.Sprintf("unit at %d/%d ts %d txn=%v aborted=%v control=%v [%s]", u.Provenance.Offset, u.Provenance.Epoch,
		u.Provenance.Timestamp, u.Unit.Transaction, u.Unit.Aborted, u.Unit.Control, strings.Join(types, " "))
}

func snapshotOf(recs ...metadata.Record) []byte {
	return observertest.SnapshotBytes(1, 1_699_999_999_999, recs, 2, false)
}

// TestQuorumSnapshotBootstrap starts from a snapshot fetched in chunks smaller than
// its batches, then the log after it.
func TestQuorumSnapshotBootstrap(t *testing.T) {
	c := observertest.NewController(t, 1)
	recs := []metadata.Record{observertest.Broker(1, "r1"), observertest.Broker(2, "r2")}
	for i := range 20 {
		id := observertest.ID(byte(10 + i))
		recs = append(recs, observertest.Topic(fmt.Sprintf("t%02d", i), id), observertest.Partition(id, 0, 1, 2))
	}
	c.SetSnapshot(100, 1, snapshotOf(recs...))
	c.SetSnapshotChunk(37)
	c.Append(observertest.Topic("after", idA), observertest.Partition(idA, 0, 1))
	c.Commit()
	r := runQuorum(t, []string{c.Addr}, nil)
	<-r.Ready()
	im := r.Image()
	if im.NumTopics() != 21 || !hasTopic(r.Observer, "after") || im.Provenance().Offset != 101 {
		t.Fatalf("image of %d topics at %+v", im.NumTopics(), im.Provenance())
	}
	u := r.Updates()
	if len(u) != 1 || !u[0].Reset || !strings.Contains(r.logs.String(), "snapshot 100-1") {
		t.Errorf("updates %v", u)
	}
	if m := r.Metrics(); m.SnapshotsLoaded.Load() != 1 || m.SnapshotRecords.Load() != int64(len(recs)) || m.Errors.Load() != 0 {
		t.Errorf("snapshots %d, snapshot records %d, errors %d", m.SnapshotsLoaded.Load(), m.SnapshotRecords.Load(), m.Errors.Load())
	}
	if n := c.Requests(59); n < len(snapshotOf(recs...))/37 {
		t.Errorf("%d FetchSnapshot requests for chunks of 37 bytes", n)
	}

	// Falling behind the log start (the observer was slow, the leader took a new
	// snapshot and deleted the log): it rebuilds from the new snapshot, one Reset
	// with the difference, then the log after it as units.
	c.SetSnapshot(200, 1, snapshotOf(observertest.Broker(1, "r1"), observertest.Topic("new", idB), observertest.Partition(idB, 0, 1)))
	c.Append(observertest.NoOp())
	c.Commit()
	eventually(t, "the rebuild and the batch after it", func() bool { return r.Metrics().Offset.Load() == 200 })
	u = r.Updates()
	if rb := u[len(u)-2]; !rb.Reset || !strings.Contains(rb.Reason, "snapshot 200-1") || rb.Provenance.Offset != 199 ||
		len(rb.Changes.Deleted) != 21 || !hasTopic(r.Observer, "new") {
		t.Errorf("rebuild %s, %d deleted", describe(rb), len(rb.Changes.Deleted))
	}
	if last := u[len(u)-1]; last.Unit == nil || last.Provenance.Offset != 200 {
		t.Errorf("last update %s, want the NoOp batch at 200", describe(last))
	}
	if r.Metrics().Resets.Load() != 1 {
		t.Errorf("%d resets", r.Metrics().Resets.Load())
	}
}

// TestQuorumBadSnapshots: a snapshot with a bad CRC, one without a footer, one that
// ends inside a batch, and a snapshot id that does not exist give clear errors,
// publish nothing, and are retried with backoff.
func TestQuorumBadSnapshots(t *testing.T) {
	good := snapshotOf(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1))
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)/2] ^= 0xff
	noFooter := observertest.SnapshotBytes(1, 0, []metadata.Record{observertest.Topic("a", idA)}, 0, true)
	for _, tc := range []struct {
		name string
		data []byte
		hook func(kmsg.Request) *observertest.Reply
		want string
	}{
		{"bad crc", badCRC, nil, "crc"},
		{"no footer", noFooter, nil, "no SnapshotFooter"},
		{"ends inside a batch", good[:len(good)-5], nil, "ends inside a batch"},
		{"snapshot id that does not exist", good, func(req kmsg.Request) *observertest.Reply {
			r, ok := req.(*kmsg.FetchRequest)
			if !ok {
				return nil
			}
			resp := r.ResponseKind().(*kmsg.FetchResponse)
			tp := kmsg.NewFetchResponseTopic()
			tp.TopicID = r.Topics[0].TopicID
			p := kmsg.NewFetchResponseTopicPartition()
			p.HighWatermark = 50
			p.SnapshotID.EndOffset, p.SnapshotID.Epoch = 99, 3
			tp.Partitions = append(tp.Partitions, p)
			resp.Topics = append(resp.Topics, tp)
			return &observertest.Reply{Resp: resp}
		}, "snapshot 99-3: SNAPSHOT_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := observertest.NewController(t, 1)
			c.SetSnapshot(50, 1, tc.data)
			c.SetSnapshotChunk(30)
			c.Hook(tc.hook)
			r := runQuorum(t, []string{c.Addr}, nil)
			eventually(t, "an error", func() bool { return r.Metrics().Errors.Load() >= 3 })
			err := r.LastError()
			var ce *ControllerError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ce) || ce.Request != "FetchSnapshot" || ce.Addr != c.Addr {
				t.Fatalf("last error %v, want a FetchSnapshot error from %s naming %q", err, c.Addr, tc.want)
			}
			t.Logf("error: %v", err)
			if r.Image() != nil {
				t.Fatal("an image was published")
			}
			if tc.hook == nil && !errors.Is(err, ErrBadSnapshot) {
				t.Errorf("%v does not wrap ErrBadSnapshot", err)
			}
			// Fixed on the leader: loaded without a restart.
			c.Hook(nil)
			c.SetSnapshot(50, 1, good)
			eventually(t, "the good snapshot", func() bool { return hasTopic(r.Observer, "a") })
		})
	}
}

// fetchResponse is a Fetch answer with the given partition fields.
func fetchResponse(req *kmsg.FetchRequest, edit func(p *kmsg.FetchResponseTopicPartition)) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	tp := kmsg.NewFetchResponseTopic()
	tp.TopicID = req.Topics[0].TopicID
	p := kmsg.NewFetchResponseTopicPartition()
	p.HighWatermark = 0
	if edit != nil {
		edit(&p)
	}
	tp.Partitions = append(tp.Partitions, p)
	resp.Topics = append(resp.Topics, tp)
	return resp
}

// TestQuorumBadAnswers: garbage, a cut response, a closed connection, a corrupt batch,
// a gap in offsets, an answer for another partition: each a clear error naming the
// controller, the last good image kept, retried with backoff.
func TestQuorumBadAnswers(t *testing.T) {
	corrupt := func() []byte {
		l := observertest.New(t, t.TempDir())
		l.Next = 1
		b := l.Encode(observertest.Topic("bad", idC))
		b[len(b)-3] ^= 0xff
		return b
	}
	for _, tc := range []struct {
		name string
		hook func(req *kmsg.FetchRequest) *observertest.Reply
		want string
	}{
		{"garbage", func(*kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Raw: []byte("HTTP/1.1 400 Bad Request\r\n\r\nthis is not kafka")}
		}, "controller"},
		{"cut response", func(req *kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Resp: fetchResponse(req, nil), Cut: 9}
		}, "controller"},
		{"closed connection", func(*kmsg.FetchRequest) *observertest.Reply { return &observertest.Reply{Close: true} }, "controller"},
		{"corrupt batch", func(req *kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Resp: fetchResponse(req, func(p *kmsg.FetchResponseTopicPartition) {
				p.HighWatermark = 2
				p.RecordBatches = corrupt()
			})}
		}, "crc"},
		{"gap", func(req *kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Resp: fetchResponse(req, func(p *kmsg.FetchResponseTopicPartition) {
				l := observertest.New(t, t.TempDir())
				l.Next = 7
				p.HighWatermark = 8
				p.RecordBatches = l.Encode(observertest.Topic("bad", idC))
			})}
		}, "batch has offset 7, expected 1"},
		{"only part of a batch", func(req *kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Resp: fetchResponse(req, func(p *kmsg.FetchResponseTopicPartition) {
				p.HighWatermark = 2
				p.RecordBatches = corrupt()[:30]
			})}
		}, "only part of a batch"},
		{"another partition", func(req *kmsg.FetchRequest) *observertest.Reply {
			resp := fetchResponse(req, nil)
			resp.Topics[0].Partitions[0].Partition = 3
			return &observertest.Reply{Resp: resp}
		}, "want __cluster_metadata-0"},
		{"unknown topic id (a broker listener)", func(req *kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Resp: fetchResponse(req, func(p *kmsg.FetchResponseTopicPartition) {
				p.ErrorCode = kerr.UnknownTopicID.Code
			})}
		}, "UNKNOWN_TOPIC_ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := observertest.NewController(t, 1)
			c.Append(observertest.Topic("a", idA))
			c.Commit()
			r := runQuorum(t, []string{c.Addr}, nil)
			eventually(t, "topic a", func() bool { return hasTopic(r.Observer, "a") })
			c.Hook(func(req kmsg.Request) *observertest.Reply {
				if f, ok := req.(*kmsg.FetchRequest); ok {
					return tc.hook(f)
				}
				return nil
			})
			errs := r.Metrics().Errors.Load()
			eventually(t, "errors", func() bool { return r.Metrics().Errors.Load() >= errs+3 })
			err := r.LastError()
			var ce *ControllerError
			if err == nil || !errors.As(err, &ce) || ce.Addr != c.Addr || ce.Request != "Fetch" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("last error %v, want a Fetch error from %s containing %q", err, c.Addr, tc.want)
			}
			t.Logf("error: %v", err)
			if hasTopic(r.Observer, "bad") || !hasTopic(r.Observer, "a") || r.Image().Provenance().Offset != 0 {
				t.Fatalf("image changed: %+v", r.Image().Provenance())
			}
			c.Hook(nil)
			c.Append(observertest.Topic("b", idB))
			c.Commit()
			eventually(t, "recovery", func() bool { return hasTopic(r.Observer, "b") && r.LastError() == nil })
		})
	}
}

// TestQuorumNoBusyLoop counts requests per second against a controller that answers
// every Fetch at once with an error, and one that answers at once with nothing.
func TestQuorumNoBusyLoop(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func(req *kmsg.FetchRequest) *observertest.Reply
		max  int
	}{
		// Backoff 20, 40, 80, 160, 200, 200 ms...: about 7 in one second.
		{"error", func(req *kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Resp: fetchResponse(req, func(p *kmsg.FetchResponseTopicPartition) {
				p.ErrorCode = kerr.KafkaStorageError.Code
			})}
		}, 12},
		// No long poll: one request per MinBackoff (20 ms) at most.
		{"empty at once", func(req *kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Resp: fetchResponse(req, func(p *kmsg.FetchResponseTopicPartition) {
				p.HighWatermark = 0
			})}
		}, 55},
		{"garbage", func(*kmsg.FetchRequest) *observertest.Reply {
			return &observertest.Reply{Raw: []byte{0, 0, 0, 0, 1, 2, 3}}
		}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := observertest.NewController(t, 1)
			c.Hook(func(req kmsg.Request) *observertest.Reply {
				if f, ok := req.(*kmsg.FetchRequest); ok {
					return tc.hook(f)
				}
				return nil
			})
			runQuorum(t, []string{c.Addr}, nil)
			time.Sleep(time.Second)
			if n := c.Requests(1); n > tc.max || n == 0 {
				t.Errorf("%d fetches in one second, want 1..%d", n, tc.max)
			}
		})
	}
}

// TestQuorumBackoff checks the backoff sequence with an injected sleep: doubling from
// MinBackoff to MaxBackoff, back to nothing after a success.
func TestQuorumBackoff(t *testing.T) {
	c := observertest.NewController(t, 1)
	var fail sync.Mutex
	failing := true
	c.Hook(func(req kmsg.Request) *observertest.Reply {
		fail.Lock()
		defer fail.Unlock()
		if f, ok := req.(*kmsg.FetchRequest); ok && failing {
			return &observertest.Reply{Resp: fetchResponse(f, func(p *kmsg.FetchResponseTopicPartition) { p.ErrorCode = kerr.KafkaStorageError.Code })}
		}
		return nil
	})
	o, err := New(Config{Controllers: []string{c.Addr}, MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
		FetchMaxWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var slept []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.q.sleep = func(_ context.Context, d time.Duration) bool {
		slept = append(slept, d)
		if len(slept) == 7 {
			fail.Lock()
			failing = false
			fail.Unlock()
		}
		return ctx.Err() == nil
	}
	go func() {
		<-o.Ready()
		cancel()
	}()
	if err := o.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if len(slept) < len(want) || fmt.Sprint(slept[:len(want)]) != fmt.Sprint(want) {
		t.Errorf("slept %v, want %v first", slept, want)
	}
	if o.Image() == nil {
		t.Error("no image after the errors stopped")
	}
}

// TestQuorumLeaderNeverAnswers: the first bootstrap server accepts connections and
// never answers; the observer times out and loads from the second.
func TestQuorumLeaderNeverAnswers(t *testing.T) {
	silent := observertest.NewController(t, 1)
	silent.Hook(func(kmsg.Request) *observertest.Reply { return &observertest.Reply{Hang: true} })
	c := observertest.NewController(t, 2)
	c.Append(observertest.Topic("a", idA))
	c.Commit()
	start := time.Now()
	r := runQuorum(t, []string{silent.Addr, c.Addr}, nil)
	eventually(t, "ready", func() bool { return hasTopic(r.Observer, "a") })
	if r.Metrics().Errors.Load() < 1 || !strings.Contains(r.logs.String(), "timeout") {
		t.Errorf("errors %d; logs lack the timeout", r.Metrics().Errors.Load())
	}
	t.Logf("ready after %v", time.Since(start))

	// Alone, the silent node: errors with backoff, no image.
	r2 := runQuorum(t, []string{silent.Addr}, nil)
	eventually(t, "two timeouts", func() bool { return r2.Metrics().Errors.Load() >= 2 })
	if r2.Image() != nil || !strings.Contains(r2.LastError().Error(), silent.Addr) {
		t.Errorf("image %v, error %v", r2.Image(), r2.LastError())
	}
}

// TestQuorumLeaderChange: the observer starts on a follower, which names the leader;
// then the leader steps down (new epoch, new leader elsewhere) and the observer
// follows it, fenced by epoch.
func TestQuorumLeaderChange(t *testing.T) {
	a := observertest.NewController(t, 1)
	b := observertest.NewController(t, 2)
	for _, c := range []*observertest.Controller{a, b} {
		c.Append(observertest.Topic("a", idA))
		c.Commit()
	}
	// b follows a in epoch 1.
	b.SetLeader(1, 1, a.Addr)
	r := runQuorum(t, []string{b.Addr}, nil)
	eventually(t, "topic a", func() bool { return hasTopic(r.Observer, "a") })
	if r.Metrics().LeaderID.Load() != 1 || a.Requests(1) == 0 {
		t.Fatalf("leader %d, fetches to a %d", r.Metrics().LeaderID.Load(), a.Requests(1))
	}
	// b wins epoch 2: a answers FENCED_LEADER_EPOCH... once it knows; first it is told.
	b.SetLeader(2, 2, b.Addr)
	a.SetLeader(2, 2, b.Addr)
	b.Append(observertest.Topic("b", idB))
	b.Commit()
	eventually(t, "topic b from the new leader", func() bool { return hasTopic(r.Observer, "b") })
	if r.Metrics().LeaderID.Load() != 2 || r.Metrics().LeaderChanges.Load() < 2 {
		t.Errorf("leader %d after %d changes", r.Metrics().LeaderID.Load(), r.Metrics().LeaderChanges.Load())
	}
	u := r.Updates()
	if last := u[len(u)-1]; last.Provenance.Epoch != 2 || last.Provenance.Offset != 1 {
		t.Errorf("last update %s", describe(last))
	}
	// The same leader in a newer epoch: a fetch with epoch 2 is fenced, the observer moves
	// to epoch 3 on the same node.
	b.SetLeader(2, 3, "")
	b.Append(observertest.Topic("c", idC))
	b.Commit()
	eventually(t, "topic c in epoch 3", func() bool { return hasTopic(r.Observer, "c") })
	if r.Metrics().Errors.Load() != 0 {
		t.Errorf("%d errors; logs:\n%s", r.Metrics().Errors.Load(), r.logs.String())
	}

	// An election in progress: no leader yet in epoch 4; retried with backoff.
	b.SetLeader(-1, 4, "")
	eventually(t, "no leader", func() bool { return errors.Is(r.LastError(), ErrNoLeader) })
	b.SetLeader(2, 4, "")
	b.Append(observertest.NoOp())
	b.Commit()
	eventually(t, "back", func() bool { return r.LastError() == nil && r.Metrics().Offset.Load() == 3 })
}

// TestQuorumDivergingEpoch: a new leader's log drops the old leader's uncommitted
// tail, which the observer had fetched but not applied: it is dropped, never applied.
// A divergence below what was applied (a broken quorum) rebuilds through a Reset.
func TestQuorumDivergingEpoch(t *testing.T) {
	c := observertest.NewController(t, 1)
	c.Append(observertest.Topic("a", idA))
	c.Commit()
	r := runQuorum(t, []string{c.Addr}, nil)
	eventually(t, "topic a", func() bool { return hasTopic(r.Observer, "a") })
	c.Append(observertest.Topic("lost", idB)) // offset 1, epoch 1, never committed
	eventually(t, "the uncommitted batch", func() bool { return r.Metrics().Uncommitted.Load() > 0 })
	// Epoch 2 on the same node (a re-election without the tail): offset 1 is replaced.
	c.Truncate(1)
	c.SetLeader(1, 2, "")
	c.Append(observertest.Topic("kept", idC))
	c.Commit()
	eventually(t, "topic kept", func() bool { return hasTopic(r.Observer, "kept") })
	if hasTopic(r.Observer, "lost") {
		t.Fatal("an uncommitted, truncated record was applied")
	}
	for _, u := range r.Updates() {
		if u.Unit != nil {
			for _, e := range u.Unit.Entries {
				if tr, ok := e.Record.(*metadata.TopicRecord); ok && tr.Name == "lost" {
					t.Fatal("an update carried the truncated record")
				}
			}
		}
	}
	if r.Metrics().Truncations.Load() != 1 || r.Metrics().Resets.Load() != 0 {
		t.Errorf("truncations %d, resets %d", r.Metrics().Truncations.Load(), r.Metrics().Resets.Load())
	}

	// Below the high watermark: committed records replaced (not Raft, but it must not
	// give a wrong image): rebuild from offset 0.
	c.Truncate(1)
	c.SetLeader(1, 3, "")
	c.Append(observertest.Topic("other", idB))
	c.Commit()
	eventually(t, "the rebuild", func() bool { return hasTopic(r.Observer, "other") })
	u := r.Updates()
	last := u[len(u)-1]
	if !last.Reset || !strings.Contains(last.Reason, "diverges") || hasTopic(r.Observer, "kept") {
		t.Errorf("last update %s", describe(last))
	}
	if r.Metrics().Resets.Load() != 1 {
		t.Errorf("resets %d", r.Metrics().Resets.Load())
	}

	// A leader that keeps answering DivergingEpoch where the fetched log already
	// ends: an error, retried with backoff, not a loop.
	c.Hook(func(req kmsg.Request) *observertest.Reply {
		f, ok := req.(*kmsg.FetchRequest)
		if !ok {
			return nil
		}
		p := f.Topics[0].Partitions[0]
		return &observertest.Reply{Resp: fetchResponse(f, func(rp *kmsg.FetchResponseTopicPartition) {
			rp.HighWatermark = p.FetchOffset
			rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = p.LastFetchedEpoch, p.FetchOffset
		})}
	})
	before := c.Requests(1)
	time.Sleep(time.Second)
	if n := c.Requests(1) - before; n > 12 {
		t.Errorf("%d fetches in a second of useless DivergingEpoch answers", n)
	}
	if err := r.LastError(); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "DivergingEpoch") {
		t.Errorf("last error %v", err)
	}
	if !hasTopic(r.Observer, "other") {
		t.Error("the image changed")
	}
}

// TestQuorumAuthorization: CLUSTER_AUTHORIZATION_FAILED gives an error log naming the
// ACL to add, no image and no readiness, and retries; a later grant is picked up.
func TestQuorumAuthorization(t *testing.T) {
	c := observertest.NewController(t, 1)
	c.Append(observertest.Topic("a", idA))
	c.Commit()
	var mu sync.Mutex
	denied := true
	c.Hook(func(req kmsg.Request) *observertest.Reply {
		mu.Lock()
		defer mu.Unlock()
		f, ok := req.(*kmsg.FetchRequest)
		if !ok || !denied {
			return nil
		}
		resp := f.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return &observertest.Reply{Resp: resp}
	})
	r := runQuorum(t, []string{c.Addr}, func(cfg *Config) { cfg.Principal = "User:kraftwatch" })
	eventually(t, "refusals", func() bool { return r.Metrics().AuthorizationFailures.Load() >= 3 })
	want := "kafka-acls --bootstrap-controller " + c.Addr + " --add --allow-principal User:kraftwatch --operation ClusterAction --cluster"
	if !strings.Contains(r.logs.String(), want) || !strings.Contains(r.logs.String(), "level=ERROR") {
		t.Errorf("logs lack %q:\n%s", want, r.logs.String())
	}
	if !errors.Is(r.LastError(), ErrNotAuthorized) || r.Image() != nil {
		t.Errorf("error %v, image %v", r.LastError(), r.Image())
	}
	select {
	case <-r.Ready():
		t.Fatal("ready while refused")
	default:
	}
	if err := r.Health(time.Hour); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Health while refused = %v, want the ACL %q", err, want)
	}
	mu.Lock()
	denied = false
	mu.Unlock()
	eventually(t, "ready after the grant", func() bool { return hasTopic(r.Observer, "a") && r.Health(time.Hour) == nil })

	// Revoked while running: not healthy at the first refusal, whatever stallAfter
	// (an hour here), and healthy again at the first Fetch after the grant returns.
	refused := r.Metrics().AuthorizationFailures.Load()
	mu.Lock()
	denied = true
	mu.Unlock()
	eventually(t, "a refusal after the revoke", func() bool { return r.Metrics().AuthorizationFailures.Load() > refused })
	if err := r.Health(time.Hour); !errors.Is(err, ErrNotAuthorized) || !strings.Contains(err.Error(), want) {
		t.Errorf("Health after a revoke = %v, want ErrNotAuthorized naming %q", err, want)
	}
	mu.Lock()
	denied = false
	mu.Unlock()
	eventually(t, "healthy after the re-grant", func() bool { return r.Health(time.Hour) == nil })
}

// TestGrantCommand: a listener with TLS or SASL (client options set) needs an admin
// that connects the same way: the command has --command-config.
func TestGrantCommand(t *testing.T) {
	plain := GrantCommand(&Config{}, "c1:9093")
	if want := "kafka-acls --bootstrap-controller c1:9093 --add --allow-principal User:ANONYMOUS --operation ClusterAction --cluster"; plain != want {
		t.Errorf("plain listener: %q, want %q", plain, want)
	}
	sasl := GrantCommand(&Config{Principal: "User:kw", ClientOpts: []kgo.Opt{kgo.DialTLS()}}, "c1:9093")
	if want := "kafka-acls --bootstrap-controller c1:9093 --command-config <admin client properties> --add --allow-principal User:kw --operation ClusterAction --cluster"; sasl != want {
		t.Errorf("secured listener: %q, want %q", sasl, want)
	}
}

// TestConfirmClusterIDFake: the controllers accept the id they hold and refuse another
// with INCONSISTENT_CLUSTER_ID (the error names the controller), a controller that
// closes the connection is skipped, and a refusal for lack of ClusterAction is
// ErrNotAuthorized.
func TestConfirmClusterIDFake(t *testing.T) {
	silent := observertest.NewController(t, 1)
	silent.Hook(func(kmsg.Request) *observertest.Reply { return &observertest.Reply{Close: true} })
	c := observertest.NewController(t, 2)
	c.SetLeader(3, 1, "") // a follower: it checks the id all the same
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := Config{Controllers: []string{silent.Addr, c.Addr}, RequestTimeout: time.Second, ClusterID: "fake-cluster-id"}
	if err := ConfirmClusterID(ctx, cfg); err != nil {
		t.Fatalf("the right id: %v", err)
	}
	cfg.ClusterID = "wrong-id"
	err := ConfirmClusterID(ctx, cfg)
	if !errors.Is(err, kerr.InconsistentClusterID) || !strings.Contains(err.Error(), c.Addr) || !strings.Contains(err.Error(), "wrong-id") {
		t.Fatalf("a wrong id: %v, want INCONSISTENT_CLUSTER_ID naming %s and the id", err, c.Addr)
	}
	c.Hook(func(req kmsg.Request) *observertest.Reply {
		if f, ok := req.(*kmsg.FetchRequest); ok {
			resp := f.ResponseKind().(*kmsg.FetchResponse)
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return &observertest.Reply{Resp: resp}
		}
		return nil
	})
	if err := ConfirmClusterID(ctx, cfg); !errors.Is(err, ErrNotAuthorized) || errors.Is(err, kerr.InconsistentClusterID) {
		t.Fatalf("refused: %v, want ErrNotAuthorized", err)
	}
}

// TestQuorumHungLeaderLeft: the leader stops answering (a SIGSTOPped process: the
// connection stays open). After one request timeout the observer asks another
// controller, never the hung one again (though it comes next among the bootstrap
// servers), neither while the others still name it as the leader nor while they
// answer that the election is not over, and follows the new leader they name; the
// hung one gets no other Fetch.
func TestQuorumHungLeaderLeft(t *testing.T) {
	c1, c2, c3 := observertest.NewController(t, 1), observertest.NewController(t, 2), observertest.NewController(t, 3)
	for _, c := range []*observertest.Controller{c1, c2, c3} {
		c.Append(observertest.Topic("a", idA))
		c.Commit()
	}
	c2.SetLeader(1, 1, c1.Addr)
	c3.SetLeader(1, 1, c1.Addr)
	// c2 is asked first and names c1; c1 comes next among the bootstrap servers.
	// A request timeout longer than the election modelled below.
	r := runQuorum(t, []string{c2.Addr, c1.Addr, c3.Addr}, func(cfg *Config) { cfg.RequestTimeout = 2 * time.Second })
	eventually(t, "following c1", func() bool { return hasTopic(r.Observer, "a") && r.Metrics().LeaderID.Load() == 1 })
	var mu sync.Mutex
	hungFetches := 0
	c1.Hook(func(req kmsg.Request) *observertest.Reply {
		if _, ok := req.(*kmsg.FetchRequest); ok {
			mu.Lock()
			hungFetches++
			mu.Unlock()
		}
		return &observertest.Reply{Hang: true}
	})
	// The others first still name the hung leader (they have not noticed yet), then
	// know only that epoch 2 has no leader yet (an election).
	hung := time.Now()
	n2, n3 := c2.Requests(1), c3.Requests(1)
	eventually(t, "the others asked after the timeout", func() bool { return c2.Requests(1) > n2 && c3.Requests(1) > n3 })
	c2.SetLeader(-1, 2, "")
	c3.SetLeader(-1, 2, "")
	n2, n3 = c2.Requests(1), c3.Requests(1)
	eventually(t, "the election asked about", func() bool { return c2.Requests(1) > n2 && c3.Requests(1) > n3 })
	c2.SetLeader(3, 2, c3.Addr)
	c3.SetLeader(3, 2, c3.Addr)
	c3.Append(observertest.Topic("b", idB))
	c3.Commit()
	eventually(t, "following c3", func() bool { return hasTopic(r.Observer, "b") && r.Metrics().LeaderID.Load() == 3 })
	left := time.Since(hung)
	mu.Lock()
	defer mu.Unlock()
	if hungFetches > 1 {
		t.Errorf("the hung leader got %d Fetches, want 1 (the one that timed out): it was asked again", hungFetches)
	}
	t.Logf("left the hung leader %v after the hang (FetchMaxWait 100ms, RequestTimeout 2s)", left.Round(time.Millisecond))
}

func TestDescribeClusterFake(t *testing.T) {
	silent := observertest.NewController(t, 1)
	silent.Hook(func(kmsg.Request) *observertest.Reply { return &observertest.Reply{Close: true} })
	c := observertest.NewController(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := DescribeCluster(ctx, Config{Controllers: []string{silent.Addr, c.Addr}, RequestTimeout: time.Second})
	if err != nil || id != "fake-cluster-id" {
		t.Fatalf("DescribeCluster = %q, %v", id, err)
	}
	_, err = DescribeCluster(ctx, Config{Controllers: []string{silent.Addr}, RequestTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), silent.Addr) || !strings.Contains(err.Error(), "DescribeCluster") {
		t.Fatalf("error %v should name %s and DescribeCluster", err, silent.Addr)
	}
}

func TestLoadQuorumFake(t *testing.T) {
	c := observertest.NewController(t, 1)
	c.SetSnapshot(10, 1, snapshotOf(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1)))
	c.Append(observertest.Topic("b", idB))
	c.Commit()
	c.Append(observertest.Topic("uncommitted", idC))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := LoadQuorum(ctx, Config{Controllers: []string{c.Addr}, FetchMaxWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if l.Image.NumTopics() != 2 || l.SnapshotEnd != 10 || !strings.Contains(l.Snapshot, "snapshot 10-1") {
		t.Fatalf("%d topics, snapshot %q end %d", l.Image.NumTopics(), l.Snapshot, l.SnapshotEnd)
	}
	if _, ok := l.Image.TopicByName("uncommitted"); ok {
		t.Fatal("LoadQuorum applied a record past the high watermark")
	}
	// Refused: an error at once, naming the ACL's operation.
	c.Hook(func(req kmsg.Request) *observertest.Reply {
		resp := req.ResponseKind()
		if f, ok := resp.(*kmsg.FetchResponse); ok {
			f.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return &observertest.Reply{Resp: f}
		}
		return nil
	})
	_, err = LoadQuorum(ctx, Config{Controllers: []string{c.Addr}})
	if !errors.Is(err, ErrNotAuthorized) || !strings.Contains(err.Error(), "ClusterAction") {
		t.Fatalf("error %v", err)
	}
}

// FuzzSnapStream checks the chunked snapshot reader: it never panics, and the result
// (error or not, records replayed) does not depend on where the chunks are cut.
func FuzzSnapStream(f *testing.F) {
	good := snapshotOf(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1))
	f.Add(good, uint16(1), uint16(7))
	f.Add(good[:len(good)-3], uint16(20), uint16(3))
	f.Add(observertest.SnapshotBytes(1, 0, nil, 0, true), uint16(5), uint16(5))
	f.Add([]byte("not a snapshot at all"), uint16(2), uint16(3))
	for _, path := range fixture.MetadataFiles(f, "*.checkpoint") { // real Kafka snapshots
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint16(len(data)/3), uint16(61))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut1, cut2 uint16) {
		run := func(chunks ...[]byte) (int64, error) {
			m := newMetrics()
			s := newSnapStream("fuzz", &decoder{log: slog.New(slog.DiscardHandler), m: m}, m)
			for _, c := range chunks {
				if err := s.write(bytes.Clone(c)); err != nil {
					return s.replayed, err
				}
			}
			return s.replayed, s.finish()
		}
		n1, err1 := run(data)
		a := min(int(cut1), len(data))
		b := min(a+int(cut2), len(data))
		n2, err2 := run(data[:a], data[a:b], data[b:])
		if (err1 == nil) != (err2 == nil) || (err1 == nil && n1 != n2) {
			t.Fatalf("one chunk: %d records, %v; cut at %d and %d: %d records, %v", n1, err1, a, b, n2, err2)
		}
		if err1 != nil && !errors.Is(err1, ErrBadSnapshot) {
			t.Fatalf("error %v does not wrap ErrBadSnapshot", err1)
		}
	})
}

// TestSnapStreamRealSnapshots streams every real Kafka snapshot of the fixtures in
// small chunks: no error, and the records that ReadFile finds in the file.
func TestSnapStreamRealSnapshots(t *testing.T) {
	for _, path := range fixture.MetadataFiles(t, "*.checkpoint") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if err := ReadFile(path, func(r FileRecord) error {
			if r.Control == nil {
				want++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		m := newMetrics()
		s := newSnapStream(path, &decoder{log: slog.New(slog.DiscardHandler), m: m}, m)
		for len(data) > 0 {
			n := min(333, len(data))
			if err := s.write(data[:n]); err != nil {
				t.Fatal(err)
			}
			data = data[n:]
		}
		if err := s.finish(); err != nil {
			t.Fatal(err)
		}
		if int64(want) != s.records || s.replayed != int64(want) || m.ReplayErrors.Load() != 0 {
			t.Errorf("%s: %d records streamed (%d replayed, %d refused), ReadFile finds %d", path, s.records, s.replayed,
				m.ReplayErrors.Load(), want)
		}
	}
}

// TestQuorumLeaderChangeDuringSnapshot: the leader moves to a new epoch between two
// chunks of the snapshot; the half-read snapshot is dropped and read again in the new
// epoch, and nothing of the first attempt reaches the image.
func TestQuorumLeaderChangeDuringSnapshot(t *testing.T) {
	c := observertest.NewController(t, 1)
	var recs []metadata.Record
	for i := range 30 {
		id := observertest.ID(byte(10 + i))
		recs = append(recs, observertest.Topic(fmt.Sprintf("t%02d", i), id), observertest.Partition(id, 0, 1))
	}
	c.SetSnapshot(100, 1, snapshotOf(recs...))
	c.SetSnapshotChunk(200)
	var once sync.Once
	c.Hook(func(req kmsg.Request) *observertest.Reply {
		r, ok := req.(*kmsg.FetchSnapshotRequest)
		if !ok || r.Topics[0].Partitions[0].Position == 0 {
			return nil
		}
		var rep *observertest.Reply
		once.Do(func() {
			c.SetLeader(1, 2, "")
			resp := r.ResponseKind().(*kmsg.FetchSnapshotResponse)
			tp := kmsg.NewFetchSnapshotResponseTopic()
			tp.Topic = r.Topics[0].Topic
			p := kmsg.NewFetchSnapshotResponseTopicPartition()
			p.ErrorCode = kerr.FencedLeaderEpoch.Code
			p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 2
			tp.Partitions = append(tp.Partitions, p)
			resp.Topics = append(resp.Topics, tp)
			rep = &observertest.Reply{Resp: resp}
		})
		return rep
	})
	r := runQuorum(t, []string{c.Addr}, nil)
	<-r.Ready()
	if n := r.Image().NumTopics(); n != 30 {
		t.Fatalf("%d topics", n)
	}
	if m := r.Metrics(); m.LeaderChanges.Load() != 2 || m.Errors.Load() != 0 || m.SnapshotsLoaded.Load() != 1 {
		t.Errorf("leader changes %d, errors %d, snapshots %d", m.LeaderChanges.Load(), m.Errors.Load(), m.SnapshotsLoaded.Load())
	}
	if u := r.Updates(); len(u) != 1 || u[0].Provenance.Epoch != 1 || u[0].Provenance.Offset != 99 {
		t.Errorf("updates %v", u)
	}
}

// TestQuorumBackToTheLeaderThroughAFollower: with only a follower as bootstrap server,
// the observer reaches the leader again after an error on the leader's connection.
func TestQuorumBackToTheLeaderThroughAFollower(t *testing.T) {
	leader := observertest.NewController(t, 1)
	follower := observertest.NewController(t, 2)
	follower.SetLeader(1, 1, leader.Addr)
	leader.Append(observertest.Topic("a", idA))
	leader.Commit()
	r := runQuorum(t, []string{follower.Addr}, nil)
	eventually(t, "topic a", func() bool { return hasTopic(r.Observer, "a") })
	var mu sync.Mutex
	fail := 2
	leader.Hook(func(req kmsg.Request) *observertest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := req.(*kmsg.FetchRequest); ok && fail > 0 {
			fail--
			return &observertest.Reply{Close: true}
		}
		return nil
	})
	errs, asked := r.Metrics().Errors.Load(), follower.Requests(1)
	eventually(t, "the closed connections", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return fail == 0
	})
	leader.Append(observertest.Topic("b", idB))
	leader.Commit()
	eventually(t, "topic b", func() bool { return hasTopic(r.Observer, "b") })
	if n := r.Metrics().Errors.Load() - errs; n != 2 || follower.Requests(1)-asked != 2 {
		t.Errorf("%d errors and %d fetches to the follower, want 2 each", n, follower.Requests(1)-asked)
	}
}

// TestQuorumHighWatermarkLatency: Kafka's leader answers a held Fetch when its log
// grows, not when the high watermark moves. With a fetched batch waiting for the high
// watermark, the observer asks again soon instead of sitting out a long poll.
func TestQuorumHighWatermarkLatency(t *testing.T) {
	c := observertest.NewController(t, 1)
	c.Append(observertest.Topic("a", idA))
	c.Commit()
	r := runQuorum(t, []string{c.Addr}, func(cfg *Config) { cfg.FetchMaxWait = 5 * time.Second })
	eventually(t, "topic a", func() bool { return hasTopic(r.Observer, "a") })
	c.Append(observertest.Topic("b", idB))
	eventually(t, "the uncommitted batch", func() bool { return r.Metrics().Uncommitted.Load() > 0 })
	start := time.Now()
	c.Commit()
	eventually(t, "topic b", func() bool { return hasTopic(r.Observer, "b") })
	if d := time.Since(start); d > time.Second {
		t.Errorf("applied %v after the high watermark moved; the long poll is 5 s", d)
	}
}

func TestLeaderTrouble(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&ControllerError{Err: errors.New("dial tcp: connection refused")}, true},
		{&ControllerError{Err: fmt.Errorf("x: %w", ErrNoLeader)}, true},
		{&ControllerError{Err: kerr.KafkaStorageError}, false},
		{&ControllerError{Err: fmt.Errorf("%w: %w", ErrNotAuthorized, kerr.ClusterAuthorizationFailed)}, false},
		{&ControllerError{Err: &PosError{Err: ErrCorrupt}}, false},
		{&ControllerError{Err: fmt.Errorf("x: %w", ErrProtocol)}, false},
	} {
		if got := leaderTrouble(tc.err); got != tc.want {
			t.Errorf("leaderTrouble(%v) = %v", tc.err, got)
		}
	}
}

// gateFetches holds every Fetch the controller receives until the returned function
// is called, then lets the model answer it, so that a test can change the log
// between two fetches. It returns once a Fetch is held.
func gateFetches(t *testing.T, c *observertest.Controller) (release func()) {
	t.Helper()
	gate, held := make(chan struct{}), make(chan struct{}, 1)
	c.Hook(func(req kmsg.Request) *observertest.Reply {
		if _, ok := req.(*kmsg.FetchRequest); ok {
			select {
			case held <- struct{}{}:
			default:
			}
			<-gate
		}
		return nil
	})
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("no Fetch held")
	}
	return func() {
		c.Hook(nil)
		close(gate)
	}
}

// TestQuorumRebuildHandsOnTheLogAfter: a rebuild after the initial load folds only the
// snapshot (or the log already handed on, when that ends later); the batches after
// it, committed before the observer asked, are handed on as their own units, a
// transaction across two batches as one.
func TestQuorumRebuildHandsOnTheLogAfter(t *testing.T) {
	units := func(r *running, from int) []string {
		var got []string
		for _, u := range r.Updates()[from:] {
			got = append(got, describe(u))
		}
		return got
	}
	check := func(t *testing.T, got, want []string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("updates after the initial load:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	idD, idE := observertest.ID(40), observertest.ID(41)

	t.Run("log start moved past the observer", func(t *testing.T) {
		c := observertest.NewController(t, 1)
		c.Append(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1))
		c.Commit()
		r := runQuorum(t, []string{c.Addr}, nil)
		<-r.Ready()
		release := gateFetches(t, c)
		c.SetSnapshot(100, 1, snapshotOf(observertest.Broker(1, "r1"), observertest.Topic("snap", idB), observertest.Partition(idB, 0, 1)))
		c.Append(observertest.Topic("b", idC))                                    // 100
		c.Append(observertest.Begin(), observertest.Topic("d", idD))              // 101-102
		c.Append(observertest.Partition(idD, 0, 1), observertest.End())           // 103-104
		c.Append(observertest.Topic("e", idE), observertest.Partition(idE, 0, 1)) // 105-106
		c.Commit()
		release()
		eventually(t, "topic e", func() bool { return hasTopic(r.Observer, "e") })
		check(t, units(r, 1), []string{
			`reset "the leader's log starts after offset 3; loading its snapshot 100-1" at 99/1`,
			"unit at 100/1 ts 1700000000001 txn=false aborted=false control=false [100:TopicRecord]",
			"unit at 104/1 ts 1700000000003 txn=true aborted=false control=false [102:TopicRecord 103:PartitionRecord]",
			"unit at 106/1 ts 1700000000004 txn=false aborted=false control=false [105:TopicRecord 106:PartitionRecord]",
		})
	})

	t.Run("diverged below what was applied", func(t *testing.T) {
		c := observertest.NewController(t, 1)
		c.Append(observertest.Broker(1, "r1"), observertest.Topic("a", idA), observertest.Partition(idA, 0, 1)) // 0-2
		c.Append(observertest.Topic("b", idB))                                                                  // 3
		c.Append(observertest.Topic("c", idC))                                                                  // 4
		c.Commit()
		r := runQuorum(t, []string{c.Addr}, nil)
		<-r.Ready()
		release := gateFetches(t, c)
		// A new leader whose log replaced committed records from offset 3 on (a broken
		// quorum): the image must not keep b and c.
		c.Truncate(3)
		c.SetLeader(1, 2, "")
		c.Append(observertest.Topic("x", idD))  // 3
		c.Append(observertest.Topic("y", idE))  // 4: the rebuild folds up to here, what was handed on
		c.Append(observertest.RemoveTopic(idA)) // 5
		c.Commit()
		release()
		eventually(t, "topic a deleted", func() bool { return r.Image().NumTopics() == 2 && !hasTopic(r.Observer, "a") })
		check(t, units(r, 1), []string{
			`reset "the leader's log diverges at offset 3 (epoch 1), at or below offset 5 (epoch 1) already applied" at 4/2`,
			"unit at 5/2 ts 1700000000005 txn=false aborted=false control=false [5:RemoveTopicRecord]",
		})
		if hasTopic(r.Observer, "b") || hasTopic(r.Observer, "c") {
			t.Error("records the leader replaced are in the image")
		}
	})
}

// TestQuorumUncommittedBound: while the quorum commits nothing, the records fetched
// past the high watermark stay within Config.MaxUncommitted; the observer then only
// asks for the high watermark, every FetchMaxWait (no busy loop), with a log line and
// a count, and takes every record once the quorum commits.
func TestQuorumUncommittedBound(t *testing.T) {
	c := observertest.NewController(t, 1)
	c.Append(observertest.Topic("a", idA))
	c.Commit()
	const bound = 300
	r := runQuorum(t, []string{c.Addr}, func(cfg *Config) { cfg.MaxUncommitted = bound })
	<-r.Ready()
	const stalled = 20
	for i := range stalled {
		c.Append(observertest.Topic(fmt.Sprintf("t%02d", i), observertest.ID(byte(50+i))))
	}
	m := r.Metrics()
	eventually(t, "the bound to be reached", func() bool { return m.UncommittedFull.Load() == 1 })
	before, held := c.Requests(1), m.Uncommitted.Load()
	time.Sleep(time.Second)
	if n := c.Requests(1) - before; n > 15 {
		t.Errorf("%d fetches in a second at the bound; FetchMaxWait is 100 ms", n)
	}
	if u := m.Uncommitted.Load(); u != held || u > bound || u == 0 {
		t.Errorf("uncommitted bytes %d then %d, bound %d", held, u, bound)
	}
	if !strings.Contains(r.logs.String(), "reached their bound") || m.UncommittedFull.Load() != 1 {
		t.Errorf("no log line, or the bound counted %d times", m.UncommittedFull.Load())
	}
	c.Commit()
	eventually(t, "every stalled record", func() bool { return m.Offset.Load() == stalled })
	if u := r.Updates(); len(u) != 1+stalled {
		t.Errorf("%d updates, want the initial load and one per batch", len(u))
	}
	if m.Uncommitted.Load() != 0 || !strings.Contains(r.logs.String(), "fetching records again") {
		t.Errorf("uncommitted bytes %d after the commit", m.Uncommitted.Load())
	}
	if im := r.Image(); im.NumTopics() != 1+stalled {
		t.Errorf("%d topics", im.NumTopics())
	}
}
