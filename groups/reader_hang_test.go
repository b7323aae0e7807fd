package groups

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// silentBroker is a Kafka broker on loopback that leads the one partition of
// __consumer_offsets, whose end offset grows by one at each ListOffsets (from 5): it
// answers ApiVersions, Metadata and ListOffsets, and never a Fetch, like a leader
// whose fetches stall while records are written. Once hung, it
// answers nothing at all, like a SIGSTOPped process: connections are accepted (by the
// kernel) and requests read, but no answer ever comes.
type silentBroker struct {
	ln   net.Listener
	hung atomic.Bool
	grow atomic.Bool // the end offset grows
	end  atomic.Int64
	// controller makes it close the connection on a Metadata request, as a KRaft
	// controller listener does.
	controller atomic.Bool
	mu         sync.Mutex
	cs         []net.Conn
}

func startSilentBroker(t *testing.T) *silentBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &silentBroker{ln: ln}
	b.end.Store(5)
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.cs {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.cs = append(b.cs, c)
			b.mu.Unlock()
			go b.serve(c)
		}
	}()
	return b
}

func (b *silentBroker) addr() string { return b.ln.Addr().String() }

// next is the end offset to answer.
func (b *silentBroker) next() int64 {
	if b.grow.Load() {
		return b.end.Add(1)
	}
	return b.end.Load()
}

func (b *silentBroker) serve(c net.Conn) {
	host, port, _ := net.SplitHostPort(b.addr())
	p, _ := strconv.Atoi(port)
	for {
		v, id, _, msg, err := protocol.ReadRequest(c)
		if err != nil {
			return
		}
		if b.hung.Load() {
			continue
		}
		var res protocol.Message
		switch msg.(type) {
		case *apiversions.Request:
			res = fakeAPIVersions(0)
		case *metadata.Request:
			if b.controller.Load() {
				c.Close()
				return
			}
			res = &metadata.Response{
				Brokers:      []metadata.ResponseBroker{{NodeID: 7, Host: host, Port: int32(p)}},
				ClusterID:    "silent",
				ControllerID: 7,
				Topics: []metadata.ResponseTopic{{Name: ConsumerOffsetsTopic, IsInternal: true,
					Partitions: []metadata.ResponsePartition{{PartitionIndex: 0, LeaderID: 7, ReplicaNodes: []int32{7}, IsrNodes: []int32{7}}}}},
			}
		case *listoffsets.Request:
			res = &listoffsets.Response{Topics: []listoffsets.ResponseTopic{{Topic: ConsumerOffsetsTopic,
				Partitions: []listoffsets.ResponsePartition{{Partition: 0, Timestamp: -1, Offset: b.next()}}}}}
		default: // Fetch: never answered
			continue
		}
		if err := protocol.WriteResponse(c, v, id, res); err != nil {
			return
		}
	}
}

// TestReaderLeaderDoesNotAnswer: a fetch that times out is retried on a new
// connection without counting as a failed read, so the Reader measures progress
// against time. A partition behind an end offset that does not move is not stalled (compaction
// can leave the end above the last record for good); one whose end offset grows while
// nothing is read is stalled after
// StallAfter ("no record read"); once its leader answers nothing at all, the cause
// becomes the leader (id and address) that has not answered, and the lag is unknown
// (-1), never 0 or a stale figure.
func TestReaderLeaderDoesNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for three StallAfter periods (about 4 s)")
	}
	b := startSilentBroker(t)
	r := startReader(t, ReaderConfig{Brokers: []string{b.addr()}, StallAfter: time.Second, RefreshInterval: 100 * time.Millisecond})

	// Behind by 5, the end offset still: healthy for well over StallAfter.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if err := r.Health(); err != nil {
			t.Fatalf("behind a still end offset: Health %v", err)
		}
	}
	b.grow.Store(true)
	msg := waitHealth(t, r, "no record read")
	for _, want := range []string{"partition 0 stalled", "records behind", "leader 7 (" + b.addr() + ")"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Health %q does not say %q", msg, want)
		}
	}
	if l := r.Partitions(); len(l) != 1 || l[0].Records < 5 || l[0].Seconds <= 0 {
		t.Errorf("Partitions %+v, want at least 5 records and some seconds behind", l)
	}

	b.hung.Store(true)
	msg = waitHealth(t, r, "has not answered")
	for _, want := range []string{"partition 0 stalled", "lag unknown", "leader 7 (" + b.addr() + ") has not answered for"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Health %q does not say %q", msg, want)
		}
	}
	if l := r.Partitions(); len(l) != 1 || l[0].Records != -1 || l[0].Seconds != -1 {
		t.Errorf("Partitions %+v, want lag unknown (-1)", l)
	}
	if r.Stalled() != 1 {
		t.Errorf("Stalled %d, want 1", r.Stalled())
	}
}

// TestReaderBootstrapDoesNotAnswer: a bootstrap server that accepts connections and
// never answers is named at once by Unlisted (each request has its own deadline), and
// by Health after StallAfter.
func TestReaderBootstrapDoesNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a request deadline (1 s)")
	}
	b := startSilentBroker(t)
	b.hung.Store(true)
	r := startReader(t, ReaderConfig{Brokers: []string{b.addr()}, StallAfter: 1500 * time.Millisecond})
	if msg := waitErr(t, "Unlisted with a bootstrap server that does not answer", r.Unlisted).Error(); !strings.Contains(msg, b.addr()) || !strings.Contains(msg, "deadline exceeded") {
		t.Errorf("Unlisted = %q, want the address and the deadline", msg)
	}
	waitHealth(t, r, "cannot list the partitions of __consumer_offsets")
}

// TestReaderControllerListener: a bootstrap address that is a controller listener
// (it closes the connection on Metadata) is named as such.
func TestReaderControllerListener(t *testing.T) {
	b := startSilentBroker(t)
	b.controller.Store(true)
	r := startReader(t, ReaderConfig{Brokers: []string{b.addr()}})
	if err := waitErr(t, "Unlisted", r.Unlisted); !errors.Is(err, ErrNotBroker) || !strings.Contains(err.Error(), "controller listener") {
		t.Fatalf("Unlisted = %v, want ErrNotBroker", err)
	}
}

// waitHealth waits (10 s at most) until Health's message holds want, and returns it.
// startReader runs a Reader of cfg that drops every record until the test ends, and
// fails the test if Run ends with an error other than the cancellation.
func startReader(t *testing.T, cfg ReaderConfig) *Reader {
	t.Helper()
	r, err := NewReader(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, func([]Message) error { return nil }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	return r
}

// waitErr waits up to 10 s for get to return an error and returns it.
func waitErr(t *testing.T, what string, get func() error) error {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := get(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed nil", what)
		}
	}
}

func waitHealth(t *testing.T, r *Reader, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var msg string
		if err := r.Health(); err != nil {
			msg = err.Error()
		}
		if strings.Contains(msg, want) {
			return msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("Health %q, want %q", msg, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fakeAPIVersions is a loopback broker's ApiVersions answer: the requests the Reader
// sends, Fetch from version fetchMin to 11.
func fakeAPIVersions(fetchMin int16) *apiversions.Response {
	return &apiversions.Response{ApiKeys: []apiversions.ApiKeyResponse{
		{ApiKey: int16(protocol.Fetch), MinVersion: fetchMin, MaxVersion: 11},
		{ApiKey: int16(protocol.ListOffsets), MinVersion: 1, MaxVersion: 5},
		{ApiKey: int16(protocol.Metadata), MinVersion: 0, MaxVersion: 8},
		{ApiKey: int16(protocol.ApiVersions), MinVersion: 0, MaxVersion: 2},
	}}
}

// fakeBrokers is a loopback cluster's broker list in a Metadata answer: nodes 1 to n,
// node id at addr(id).
func fakeBrokers(n int, addr func(id int32) string) []metadata.ResponseBroker {
	var brokers []metadata.ResponseBroker
	for id := range int32(n) {
		host, port, _ := net.SplitHostPort(addr(id + 1))
		p, _ := strconv.Atoi(port)
		brokers = append(brokers, metadata.ResponseBroker{NodeID: id + 1, Host: host, Port: int32(p)})
	}
	return brokers
}
