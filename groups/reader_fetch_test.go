package groups

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// movingLeader is a pair of Kafka brokers on loopback sharing the one partition of
// __consumer_offsets (end offset 4): broker 1 leads it and holds offsets 0-1, until
// moved, when broker 2 leads it and holds offsets 2-3 and broker 1 answers each Fetch
// with code, as a deposed leader does (NOT_LEADER_OR_FOLLOWER, or
// FENCED_LEADER_EPOCH, which real Kafka gives only to a client that sends epochs).
type movingLeader struct {
	ln    [2]net.Listener
	moved atomic.Bool
	code  int16
	wg    sync.WaitGroup
}

func startMovingLeader(t *testing.T, code int16) *movingLeader {
	m := &movingLeader{code: code}
	for i := range m.ln {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		m.ln[i] = ln
	}
	var mu sync.Mutex
	var conns []net.Conn
	for i := range m.ln {
		m.wg.Go(func() {
			for {
				c, err := m.ln[i].Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				m.wg.Go(func() { m.serve(c, int32(i+1)) })
			}
		})
	}
	t.Cleanup(func() {
		for _, ln := range m.ln {
			ln.Close()
		}
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		m.wg.Wait()
	})
	return m
}

func (m *movingLeader) addr(id int32) string { return m.ln[id-1].Addr().String() }

var (
	movedGroupKey = []byte{0, 2, 0, 1, 'g'} // group metadata keys
	movedCommit   = []byte{0, 1, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 0}
)

func (m *movingLeader) serve(c net.Conn, id int32) {
	leader := func() int32 {
		if m.moved.Load() {
			return 2
		}
		return 1
	}
	for {
		v, corr, _, msg, err := protocol.ReadRequest(c)
		if err != nil {
			return
		}
		var res protocol.Message
		switch req := msg.(type) {
		case *apiversions.Request:
			res = fakeAPIVersions(11)
		case *metadata.Request:
			brokers := fakeBrokers(len(m.ln), m.addr)
			res = &metadata.Response{Brokers: brokers, ClusterID: "moving", ControllerID: 1,
				Topics: []metadata.ResponseTopic{{Name: ConsumerOffsetsTopic, IsInternal: true,
					Partitions: []metadata.ResponsePartition{{PartitionIndex: 0, LeaderID: leader(), ReplicaNodes: []int32{1, 2}, IsrNodes: []int32{1, 2}}}}}}
		case *listoffsets.Request:
			off := int64(4)
			if req.Topics[0].Partitions[0].Timestamp == kafka.FirstOffset {
				off = 0
			}
			res = &listoffsets.Response{Topics: []listoffsets.ResponseTopic{{Topic: ConsumerOffsetsTopic,
				Partitions: []listoffsets.ResponsePartition{{Partition: 0, Timestamp: -1, Offset: off}}}}}
		case *fetch.Request:
			if _, err := c.Write(m.fetchAnswer(corr, id, leader(), req.Topics[0].Partitions[0].FetchOffset)); err != nil {
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

// fetchAnswer is broker id's Fetch answer for partition 0 from offset from.
func (m *movingLeader) fetchAnswer(corr, id, leader int32, from int64) []byte {
	var code int16
	var records []byte
	switch {
	case id != leader:
		code = m.code
	case from <= 2*int64(id)-1: // broker 1 holds 0-1, broker 2 holds 2-3
		base := 2 * int64(id-1)
		records = recordbatch.AppendBatch(nil, recordbatch.NewBatchHeader(base, id, time.Now().UnixMilli(), false),
			[]recordbatch.Record{{OffsetDelta: 0, Key: movedCommit, Value: []byte{0, 3}}, {OffsetDelta: 1, Key: movedGroupKey, Value: []byte{0, 3}}})
	default:
		time.Sleep(fetchMaxWait)
	}
	return fetchAnswerV11(corr, 0, 0, fakePartition{code: code, hwm: 4, records: records})
}

// fakePartition is one partition of __consumer_offsets in a fake broker's Fetch answer.
type fakePartition struct {
	p       int32
	code    int16
	hwm     int64
	records []byte
}

// fetchAnswerV11 is a Fetch v11 answer with its size and correlation id (encoded
// here: kafka-go's encoder numbers records from offset 0), with top-level error code
// and fetch session id.
func fetchAnswerV11(corr int32, code int16, session int32, parts ...fakePartition) []byte {
	b := kbin.AppendInt32(nil, 0) // size, set below
	b = kbin.AppendInt32(b, corr)
	b = kbin.AppendInt32(b, 0) // throttle
	b = kbin.AppendInt16(b, code)
	b = kbin.AppendInt32(b, session)
	if len(parts) == 0 {
		b = kbin.AppendInt32(b, 0)
	} else {
		b = kbin.AppendInt32(b, 1)
		b = kbin.AppendInt16(b, int16(len(ConsumerOffsetsTopic)))
		b = append(b, ConsumerOffsetsTopic...)
		b = kbin.AppendInt32(b, int32(len(parts)))
	}
	for _, p := range parts {
		b = kbin.AppendInt32(b, p.p)
		b = kbin.AppendInt16(b, p.code)
		b = kbin.AppendInt64(b, p.hwm) // high watermark
		b = kbin.AppendInt64(b, p.hwm) // last stable offset
		b = kbin.AppendInt64(b, 0)     // log start offset
		b = kbin.AppendInt32(b, -1)    // aborted transactions
		b = kbin.AppendInt32(b, -1)    // preferred read replica
		b = kbin.AppendInt32(b, int32(len(p.records)))
		b = append(b, p.records...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestReaderLeaderMoves: when the partition's leader answers a Fetch with
// NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH, the Reader reads the new leader from
// the metadata and goes on there from the next offset: every group record once, the
// offset commits counted and dropped, no retry counted.
func TestReaderLeaderMoves(t *testing.T) {
	for _, code := range []kafka.Error{kafka.NotLeaderForPartition, kafka.FencedLeaderEpoch} {
		t.Run(code.Title(), func(t *testing.T) {
			m := startMovingLeader(t, int16(code))
			r, err := NewReader(ReaderConfig{Brokers: []string{m.addr(1)}, StallAfter: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := make(chan Message, 10)
			done := make(chan error, 1)
			go func() {
				done <- r.Run(ctx, EachRecord(func(msg Message) error {
					got <- msg
					return nil
				}))
			}()
			if msg := <-got; msg.Offset != 1 {
				t.Fatalf("first record at %d, want 1", msg.Offset)
			}
			m.moved.Store(true)
			select {
			case msg := <-got:
				if msg.Offset != 3 {
					t.Fatalf("record at %d after the move, want 3", msg.Offset)
				}
			case <-ctx.Done():
				t.Fatal("no record from the new leader")
			}
			<-r.CaughtUp()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v", err)
			}
			if len(got) != 0 || r.Records() != 4 || r.Retries() != 0 {
				t.Fatalf("%d more records handed on, Records %d, Retries %d; want 0, 4, 0", len(got), r.Records(), r.Retries())
			}
		})
	}
}
