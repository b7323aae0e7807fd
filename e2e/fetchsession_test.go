//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/kraftwatch/kraftwatch/groups"
)

// TestGroupsReaderFetchSession: real Kafka takes the Reader's fetch sessions. Through
// a proxy on loopback that sees every request and answer: each connection's first
// Fetch is full and the broker answers with a session id; every later Fetch carries
// that id and the next epoch and is answered without error; while the groups are
// quiet a request lists no partition and the answer holds none; an offset committed
// then is read through an answer that holds only its partition's change.
func TestGroupsReaderFetchSession(t *testing.T) {
	c := sidecarCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := fmt.Sprintf("fetch-session-%d", time.Now().UnixNano()) // the shared Kafka may have run this before (-count)
	if err := c.CreateTopic(ctx, topic, 1, 1); err != nil {
		t.Fatal(err)
	}
	commitOffset(ctx, t, c.Bootstrap(), topic, topic+"-start") // __consumer_offsets exists
	px := startFetchProxy(t)
	r, err := groups.NewReader(groups.ReaderConfig{Brokers: []string{px.front(t, c.Bootstrap())}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx, func([]groups.Message) error { return nil }) }()
	select {
	case <-r.CaughtUp():
	case <-ctx.Done():
		t.Fatal("the reader did not catch up")
	}
	// Quiet: wait for an incremental Fetch that lists nothing and gets nothing.
	for px.count(func(f proxiedFetch) bool { return f.epoch > 0 && f.listed == 0 && f.answered == 0 }) == 0 {
		if !sleepCtx(ctx, 50*time.Millisecond) {
			t.Fatalf("no incremental fetch of nothing while the groups were quiet: %+v", px.all())
		}
	}
	before := r.Records()
	commitOffset(ctx, t, c.Bootstrap(), topic, topic)
	for r.Records() == before {
		if !sleepCtx(ctx, 20*time.Millisecond) {
			t.Fatal("the offset commit was not read")
		}
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}

	fetches := px.all()
	partial := 0 // incremental answers holding some of the session's partitions
	session := map[int]proxiedFetch{}
	for i, f := range fetches {
		if f.version < 7 {
			t.Fatalf("fetch %d: version %d, want sessions (7+)", i, f.version)
		}
		prev, ok := session[f.conn]
		switch {
		case f.answerErr != 0:
			t.Errorf("fetch %d (connection %d, session %d epoch %d): answer error %d", i, f.conn, f.session, f.epoch, f.answerErr)
		case !ok && (f.session != 0 || f.epoch != 0 || f.answerSession == 0):
			t.Errorf("fetch %d: the connection's first: session %d epoch %d, answered with session %d; want 0, 0 and a session",
				i, f.session, f.epoch, f.answerSession)
		case ok && (f.session != prev.answerSession || f.epoch != prev.epoch+1 || f.answerSession != f.session):
			t.Errorf("fetch %d: session %d epoch %d answered with session %d, after epoch %d of session %d",
				i, f.session, f.epoch, f.answerSession, prev.epoch, prev.answerSession)
		case ok && f.answered > 0 && f.answered < prev.partitions:
			partial++
		}
		if ok {
			f.partitions = prev.partitions
		} else {
			f.partitions = f.listed
		}
		session[f.conn] = f
	}
	if partial == 0 {
		t.Errorf("no incremental answer held only some of the session's partitions (the commit's)")
	}
	t.Logf("%d fetches on %d connections, %d answers of some partitions; first session id %d", len(fetches), len(session),
		partial, fetches[0].answerSession)
}

// commitOffset commits an offset of topic's partition 0 for group (with no members)
// at addr, retrying while the group's coordinator is not ready (the first commit
// creates __consumer_offsets).
func commitOffset(ctx context.Context, t *testing.T, addr, topic, group string) {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(addr)}
	for {
		res, err := client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1,
			Topics: map[string][]kafka.OffsetCommit{topic: {{Partition: 0, Offset: 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Topics[topic]
		if len(p) == 1 && p[0].Error == nil {
			return
		}
		var kerr kafka.Error
		if len(p) != 1 || !errors.As(p[0].Error, &kerr) || !kerr.Temporary() || !sleepCtx(ctx, 100*time.Millisecond) {
			t.Fatalf("offset commit of %s: %+v", group, p)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// proxiedFetch is a Fetch the proxy passed on: the request's session, epoch and
// partitions listed, and the answer's error, session id and partitions.
type proxiedFetch struct {
	conn           int // the client connection, numbered from 0
	version        int16
	session, epoch int32
	listed         int
	answerErr      int16
	answerSession  int32
	answered       int
	partitions     int  // the session's partitions (set by the test)
	done           bool // answered
}

// fetchProxy stands between a client and the brokers of a cluster on loopback: a
// listener per broker address, Metadata answers rewritten to name the listeners (so
// that every connection goes through it), and every Fetch and its answer recorded.
type fetchProxy struct {
	t       *testing.T
	mu      sync.Mutex
	fronts  map[string]string // broker address -> its listener's
	conns   int
	fetch   []proxiedFetch
	closers []io.Closer
	closed  bool // no more listeners
	wg      sync.WaitGroup
}

func startFetchProxy(t *testing.T) *fetchProxy {
	p := &fetchProxy{t: t, fronts: map[string]string{}}
	t.Cleanup(func() {
		p.mu.Lock()
		p.closed = true
		for _, c := range p.closers {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// front is the address of the listener that passes connections on to addr.
func (p *fetchProxy) front(t *testing.T, addr string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.fronts[addr]; ok {
		return f
	}
	if p.closed {
		return addr
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Error(err)
		return addr
	}
	p.fronts[addr] = ln.Addr().String()
	p.closers = append(p.closers, ln)
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.closers = append(p.closers, c, b)
			n := p.conns
			p.conns++
			p.mu.Unlock()
			pending := &sync.Map{} // correlation id -> request api key and version
			p.wg.Go(func() { p.requests(n, c, b, pending) })
			p.wg.Go(func() { p.answers(c, b, pending) })
		}
	})
	return p.fronts[addr]
}

type pendingRequest struct {
	key     protocol.ApiKey
	version int16
	fetch   int // index in p.fetch; -1 for another request
}

func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
	copy(b, size[:])
	_, err := io.ReadFull(r, b[4:])
	return b, err
}

// requests passes connection n's requests from c to b, recording each Fetch.
func (p *fetchProxy) requests(n int, c, b net.Conn, pending *sync.Map) {
	defer b.Close()
	for {
		frame, err := readFrame(c)
		if err != nil || len(frame) < 12 {
			return
		}
		pr := pendingRequest{key: protocol.ApiKey(binary.BigEndian.Uint16(frame[4:])),
			version: int16(binary.BigEndian.Uint16(frame[6:])), fetch: -1}
		corr := int32(binary.BigEndian.Uint32(frame[8:]))
		if pr.key == protocol.Fetch {
			_, _, _, msg, err := protocol.ReadRequest(bytes.NewReader(frame))
			if err != nil {
				p.t.Errorf("proxy: a Fetch request: %v", err)
				return
			}
			req := msg.(*fetch.Request)
			f := proxiedFetch{conn: n, version: pr.version, session: req.SessionID, epoch: req.SessionEpoch}
			for _, t := range req.Topics {
				f.listed += len(t.Partitions)
			}
			p.mu.Lock()
			pr.fetch = len(p.fetch)
			p.fetch = append(p.fetch, f)
			p.mu.Unlock()
		}
		pending.Store(corr, pr)
		if _, err := b.Write(frame); err != nil {
			return
		}
	}
}

// answers passes the answers from b to c, with each Metadata answer's brokers
// replaced by their fronts, recording the top of each Fetch answer.
func (p *fetchProxy) answers(c, b net.Conn, pending *sync.Map) {
	defer c.Close()
	for {
		frame, err := readFrame(b)
		if err != nil || len(frame) < 8 {
			return
		}
		corr := int32(binary.BigEndian.Uint32(frame[4:]))
		v, ok := pending.LoadAndDelete(corr)
		if !ok {
			p.t.Errorf("proxy: an answer to request %d, never sent", corr)
			return
		}
		pr := v.(pendingRequest)
		switch pr.key {
		case protocol.Metadata:
			if frame, err = p.rewrite(frame, pr.version, corr); err != nil {
				p.t.Errorf("proxy: a Metadata answer: %v", err)
				return
			}
		case protocol.Fetch:
			// v7 to v11: size, correlation id, throttle, error, session id, topics
			// (__consumer_offsets only: its name, then its partitions).
			a := frame[12:]
			if len(a) < 10 {
				p.t.Errorf("proxy: a Fetch answer of %d bytes", len(frame))
				return
			}
			answered := 0
			if binary.BigEndian.Uint32(a[6:]) > 0 {
				name := 0
				if len(a) >= 12 {
					name = int(binary.BigEndian.Uint16(a[10:]))
				}
				if len(a) < 16+name {
					p.t.Errorf("proxy: a Fetch answer of %d bytes", len(frame))
					return
				}
				answered = int(binary.BigEndian.Uint32(a[12+name:]))
			}
			p.mu.Lock()
			f := &p.fetch[pr.fetch]
			f.answerErr = int16(binary.BigEndian.Uint16(a))
			f.answerSession = int32(binary.BigEndian.Uint32(a[2:]))
			f.answered = answered
			f.done = true
			p.mu.Unlock()
		}
		if _, err := c.Write(frame); err != nil {
			return
		}
	}
}

// rewrite replaces each broker's address in a Metadata answer by its front's.
func (p *fetchProxy) rewrite(frame []byte, version int16, corr int32) ([]byte, error) {
	_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.Metadata, version)
	if err != nil {
		return nil, err
	}
	res := msg.(*metadata.Response)
	for i, br := range res.Brokers {
		host, port, err := net.SplitHostPort(p.front(p.t, net.JoinHostPort(br.Host, strconv.Itoa(int(br.Port)))))
		if err != nil {
			return nil, err
		}
		n, _ := strconv.Atoi(port)
		res.Brokers[i].Host, res.Brokers[i].Port = host, int32(n)
	}
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, version, corr, res); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// all is every Fetch answered so far, in the order sent.
func (p *fetchProxy) all() []proxiedFetch {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []proxiedFetch
	for _, f := range p.fetch {
		if f.done {
			out = append(out, f)
		}
	}
	return out
}

func (p *fetchProxy) count(match func(proxiedFetch) bool) int {
	n := 0
	for _, f := range p.all() {
		if match(f) {
			n++
		}
	}
	return n
}
