package groups

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// scriptedLeaders is two Kafka brokers on loopback for the three partitions of
// __consumer_offsets: broker 1 leads them all until moved, when broker 2 leads
// partition 2. They answer ApiVersions (Fetch up to v11), Metadata and ListOffsets
// (every partition from offset 0) themselves, and hand each Fetch to the test, which
// answers it: the session errors real Kafka gives only when its session cache evicts
// a session, or a client gets its epochs wrong.
type scriptedLeaders struct {
	ln      [2]net.Listener
	moved   atomic.Bool
	fetches [2]chan scriptedFetch
	done    chan struct{}
}

// scriptedFetch is a Fetch a scripted leader got: its session and epoch, the offset
// of each partition it lists, the partitions it forgets; reply answers it.
type scriptedFetch struct {
	session, epoch int32
	offsets        map[int32]int64
	forgotten      []int32
	corr           int32
	answer         chan []byte
}

func startScriptedLeaders(t *testing.T) *scriptedLeaders {
	t.Helper()
	s := &scriptedLeaders{done: make(chan struct{})}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	for i := range s.ln {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.ln[i] = ln
		s.fetches[i] = make(chan scriptedFetch)
	}
	for i := range s.ln {
		wg.Go(func() {
			for {
				c, err := s.ln[i].Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				wg.Go(func() { s.serve(c, i) })
			}
		})
	}
	t.Cleanup(func() {
		close(s.done)
		for _, ln := range s.ln {
			ln.Close()
		}
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

func (s *scriptedLeaders) addr(id int32) string { return s.ln[id-1].Addr().String() }

func (s *scriptedLeaders) serve(c net.Conn, i int) {
	for {
		v, corr, _, msg, err := protocol.ReadRequest(c)
		if err != nil {
			return
		}
		var res protocol.Message
		switch req := msg.(type) {
		case *apiversions.Request:
			res = fakeAPIVersions(4)
		case *metadata.Request:
			brokers := fakeBrokers(len(s.ln), s.addr)
			t := metadata.ResponseTopic{Name: ConsumerOffsetsTopic, IsInternal: true}
			for p := range int32(3) {
				leader := int32(1)
				if p == 2 && s.moved.Load() {
					leader = 2
				}
				t.Partitions = append(t.Partitions, metadata.ResponsePartition{PartitionIndex: p, LeaderID: leader,
					ReplicaNodes: []int32{1, 2}, IsrNodes: []int32{1, 2}})
			}
			res = &metadata.Response{Brokers: brokers, ClusterID: "scripted", ControllerID: 1, Topics: []metadata.ResponseTopic{t}}
		case *listoffsets.Request:
			t := listoffsets.ResponseTopic{Topic: ConsumerOffsetsTopic}
			for _, p := range req.Topics[0].Partitions {
				off := int64(1)
				if p.Timestamp == kafka.FirstOffset {
					off = 0
				}
				t.Partitions = append(t.Partitions, listoffsets.ResponsePartition{Partition: p.Partition, Timestamp: -1, Offset: off})
			}
			res = &listoffsets.Response{Topics: []listoffsets.ResponseTopic{t}}
		case *fetch.Request:
			f := scriptedFetch{session: req.SessionID, epoch: req.SessionEpoch, offsets: map[int32]int64{}, corr: corr,
				answer: make(chan []byte, 1)}
			for _, t := range req.Topics {
				for _, p := range t.Partitions {
					f.offsets[p.Partition] = p.FetchOffset
				}
			}
			for _, t := range req.ForgottenTopics {
				f.forgotten = append(f.forgotten, t.Partitions...)
			}
			select {
			case s.fetches[i] <- f:
			case <-s.done:
				return
			}
			select {
			case b := <-f.answer:
				if _, err := c.Write(b); err != nil {
					return
				}
			case <-s.done:
				return
			}
			continue
		default:
			return
		}
		if err := protocol.WriteResponse(c, v, corr, res); err != nil {
			return
		}
	}
}

// next is the next Fetch broker id gets, which must be of session at epoch, list
// exactly offsets and forget forgotten.
func (s *scriptedLeaders) next(t *testing.T, id, session, epoch int32, offsets map[int32]int64, forgotten ...int32) scriptedFetch {
	t.Helper()
	select {
	case f := <-s.fetches[id-1]:
		if f.session != session || f.epoch != epoch || !maps.Equal(f.offsets, offsets) || !slices.Equal(f.forgotten, forgotten) {
			t.Fatalf("broker %d got a fetch of session %d epoch %d, offsets %v, forgotten %v; want session %d epoch %d, offsets %v, forgotten %v",
				id, f.session, f.epoch, f.offsets, f.forgotten, session, epoch, offsets, forgotten)
		}
		return f
	case <-time.After(5 * time.Second):
		t.Fatalf("broker %d got no fetch (session %d epoch %d)", id, session, epoch)
		return scriptedFetch{}
	}
}

// reply answers f with top-level error code, session id and parts.
func (f scriptedFetch) reply(code kafka.Error, session int32, parts ...fakePartition) {
	f.answer <- fetchAnswerV11(f.corr, int16(code), session, parts...)
}

// groupRecord is partition p's one group record at offset off.
func groupRecord(p int32, off int64) fakePartition {
	records := recordbatch.AppendBatch(nil, recordbatch.NewBatchHeader(off, 0, time.Now().UnixMilli(), false),
		[]recordbatch.Record{{Key: movedGroupKey, Value: []byte{0, 3}}})
	return fakePartition{p: p, hwm: off + 1, records: records}
}

// lockedBuffer is a bytes.Buffer for a logger that goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestReaderFetchSession: the Reader fetches each leader's partitions in a fetch
// session. The first request is full; the next ones carry the broker's session id
// and the next epoch, list only the partitions whose offset moved, and forget a
// partition whose leader moved; FETCH_SESSION_ID_NOT_FOUND and
// INVALID_FETCH_SESSION_EPOCH are logged with the leader and followed by a full
// request (a new session, or the old id at epoch 0), and count no retry.
func TestReaderFetchSession(t *testing.T) {
	s := startScriptedLeaders(t)
	var logs lockedBuffer
	r, err := NewReader(ReaderConfig{Brokers: []string{s.addr(1)}, StallAfter: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan Message, 10)
	done := make(chan error, 1)
	go func() {
		done <- r.Run(ctx, EachRecord(func(msg Message) error {
			got <- msg
			return nil
		}))
	}()
	want := func(p int, off int64) {
		t.Helper()
		if msg := <-got; msg.Partition != p || msg.Offset != off {
			t.Fatalf("record %d/%d handed on, want %d/%d", msg.Partition, msg.Offset, p, off)
		}
	}

	s.next(t, 1, 0, 0, map[int32]int64{0: 0, 1: 0, 2: 0}).reply(0, 7, groupRecord(0, 0), groupRecord(1, 0), groupRecord(2, 0))
	for p := range 3 {
		want(p, 0)
	}
	s.next(t, 1, 7, 1, map[int32]int64{0: 1, 1: 1, 2: 1}).reply(0, 7) // every offset moved
	s.next(t, 1, 7, 2, map[int32]int64{}).reply(0, 7, groupRecord(1, 1))
	want(1, 1)
	s.next(t, 1, 7, 3, map[int32]int64{1: 2}).reply(kafka.FetchSessionIDNotFound, 0)
	s.next(t, 1, 0, 0, map[int32]int64{0: 1, 1: 2, 2: 1}).reply(0, 8)
	s.next(t, 1, 8, 1, map[int32]int64{}).reply(kafka.InvalidFetchSessionEpoch, 0)
	s.next(t, 1, 8, 0, map[int32]int64{0: 1, 1: 2, 2: 1}).reply(0, 9)
	s.moved.Store(true)
	s.next(t, 1, 9, 1, map[int32]int64{}).reply(0, 9, fakePartition{p: 2, code: int16(kafka.NotLeaderForPartition), hwm: -1})
	s.next(t, 1, 9, 2, map[int32]int64{}, 2).reply(0, 9)
	s.next(t, 2, 0, 0, map[int32]int64{2: 1}).reply(0, 3, groupRecord(2, 1))
	want(2, 1)
	s.next(t, 2, 3, 1, map[int32]int64{2: 2}).reply(0, 3)

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if r.Retries() != 0 {
		t.Errorf("Retries %d, want 0", r.Retries())
	}
	l := logs.String()
	if n := strings.Count(l, "refused the fetch session"); n != 2 || !strings.Contains(l, "Fetch Session ID Not Found") ||
		!strings.Contains(l, "Invalid Fetch Session Epoch") || !strings.Contains(l, s.addr(1)) {
		t.Errorf("%d log lines of a refused session, want 2, naming both errors and %s:\n%s", n, s.addr(1), l)
	}
}

// TestFetchSessionEpochs: a session's epoch runs 1, 2, … after the full request that
// opened it and wraps from the largest int32 to 1, never to 0 or -1; a broker below
// Fetch v7 is fetched without a session, every request full.
func TestFetchSessionEpochs(t *testing.T) {
	s := newFetchSession(11)
	if s.answered(5, 0); s.id != 5 || s.epoch != 1 {
		t.Fatalf("after a full answer of session 5: %+v", s)
	}
	s.epoch = math.MaxInt32
	if s.answered(5, 0); s.id != 5 || s.epoch != 1 {
		t.Fatalf("after epoch MaxInt32: %+v, want epoch 1", s)
	}
	old := newFetchSession(6)
	for range 2 {
		send, forget := old.next([]int{3, 4}, []int64{10, 20})
		if !slices.Equal(send, []int{0, 1}) || forget != nil || old.answered(9, 0) || old.id != 0 || old.epoch != finalEpoch {
			t.Fatalf("Fetch v6: send %v, forget %v, session %+v; want every partition and no session", send, forget, old)
		}
	}
}
