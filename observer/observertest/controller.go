package observertest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// Controller is a fake KRaft controller on loopback, for tests of the network source
// that a real Kafka cannot be made to run: a TCP server speaking Kafka's framing, with
// kmsg's codecs. It answers ApiVersions, DescribeCluster, Fetch and FetchSnapshot of
// __cluster_metadata-0 from a model of one node's log (batches with epochs, a high
// watermark, a snapshot, who leads in which epoch), with the Raft checks Kafka makes:
// the leader epoch (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER
// with CurrentLeader and NodeEndpoints), SnapshotId below the log start, DivergingEpoch,
// a long poll until the log grows (a move of the high watermark alone does not end it,
// as in Kafka), INCONSISTENT_CLUSTER_ID for a Fetch carrying another cluster id. A Hook can replace any
// answer: garbage bytes, a cut response, silence, a closed connection.
//
// Its methods are safe for concurrent use; the server stops at the test's end.
type Controller struct {
	ID        int32
	Addr      string
	ClusterID string

	t    testing.TB
	ln   net.Listener
	done chan struct{}
	wg   sync.WaitGroup

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced at every change
	leader    int32
	epoch     int32
	endpoints map[int32]string
	start     int64 // log start offset: the snapshot's end
	snapEpoch int32
	snapshot  []byte
	batches   []fakeBatch
	hwm       int64
	ts        int64
	hook      func(req kmsg.Request) *Reply
	counts    map[int16]int
	conns     map[net.Conn]bool
	// SnapshotChunk caps the bytes of one FetchSnapshot answer below the request's
	// MaxBytes (0: no cap), to split batches across chunks.
	snapshotChunk int
}

type fakeBatch struct {
	base, next int64
	epoch      int32
	data       []byte
}

// Reply replaces the answer to one request.
type Reply struct {
	// Resp is encoded at the request's version. With Cut > 0 only the first Cut bytes
	// of the framed response (size prefix included) are written, then the connection
	// is closed.
	Resp kmsg.Response
	Cut  int
	// Raw, when not nil, is written as the whole response after a size prefix that
	// counts it: garbage, or a response for another correlation id.
	Raw []byte
	// Hang leaves the request unanswered (the connection stays open); Close closes the
	// connection without answering.
	Hang, Close bool
}

// NewController starts a fake controller with node id id that leads epoch 1, with
// an empty log.
func NewController(t testing.TB, id int32) *Controller {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{ID: id, Addr: ln.Addr().String(), ClusterID: "fake-cluster-id", t: t, ln: ln,
		done: make(chan struct{}), changed: make(chan struct{}), leader: id, epoch: 1,
		endpoints: map[int32]string{id: ln.Addr().String()}, ts: 1_700_000_000_000,
		counts: map[int16]int{}, conns: map[net.Conn]bool{}}
	c.wg.Go(c.accept)
	t.Cleanup(c.Close)
	return c
}

// Close stops the server and closes every connection.
func (c *Controller) Close() {
	select {
	case <-c.done:
		return
	default:
	}
	close(c.done)
	c.ln.Close()
	c.mu.Lock()
	for cn := range c.conns {
		cn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// change wakes held fetches; c.mu is held.
func (c *Controller) change() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Hook makes fn answer every request first: a nil *Reply lets the model answer.
func (c *Controller) Hook(fn func(req kmsg.Request) *Reply) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hook = fn
}

// Requests returns how many requests with API key key were received (1 Fetch, 59
// FetchSnapshot, 60 DescribeCluster, 18 ApiVersions).
func (c *Controller) Requests(key int16) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}

// SetLeader makes id the leader of epoch as this node sees it; addr, when not empty,
// is the address it names for id in NodeEndpoints.
func (c *Controller) SetLeader(id, epoch int32, addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leader, c.epoch = id, epoch
	if addr != "" {
		c.endpoints[id] = addr
	}
	c.change()
}

// SetSnapshotChunk caps the bytes of each FetchSnapshot answer.
func (c *Controller) SetSnapshotChunk(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snapshotChunk = n
}

// Append adds a data batch of recs at the current epoch, not committed, and returns
// its base offset.
func (c *Controller) Append(recs ...metadata.Record) int64 {
	c.t.Helper()
	rs := make([]recordbatch.Record, len(recs))
	for i, r := range recs {
		v, err := metadata.Append(nil, r, r.Type().MaxVersion())
		if err != nil {
			c.t.Fatal(err)
		}
		rs[i] = recordbatch.Record{OffsetDelta: int32(i), Value: v}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.leo()
	b := recordbatch.AppendBatch(nil, recordbatch.NewBatchHeader(base, c.epoch, c.ts, false), rs)
	c.appendLocked(b, int64(len(recs)))
	return base
}

// AppendRaw adds the bytes b as a batch of n offsets at the end of the log, at the
// current epoch: a corrupt batch, say.
func (c *Controller) AppendRaw(b []byte, n int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.leo()
	c.appendLocked(b, n)
	return base
}

func (c *Controller) appendLocked(b []byte, n int64) {
	base := c.leo()
	c.batches = append(c.batches, fakeBatch{base: base, next: base + n, epoch: c.epoch, data: b})
	c.ts++
	c.change()
}

// Next is the log end offset: the offset the next batch gets.
func (c *Controller) Next() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leo()
}

func (c *Controller) leo() int64 {
	if n := len(c.batches); n > 0 {
		return c.batches[n-1].next
	}
	return c.start
}

// Commit moves the high watermark to the log end. As in Kafka, a held Fetch is not
// answered for that: only when the log grows, or at its MaxWaitMillis.
func (c *Controller) Commit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hwm = c.leo()
}

// SetHighWatermark sets the high watermark (without answering held fetches).
func (c *Controller) SetHighWatermark(off int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hwm = off
}

// Truncate drops the batches at or after offset (a new leader's log replacing an
// uncommitted tail).
func (c *Controller) Truncate(offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.batches) > 0 && c.batches[len(c.batches)-1].base >= offset {
		c.batches = c.batches[:len(c.batches)-1]
	}
	c.hwm = min(c.hwm, c.leo())
	c.change()
}

// SetSnapshot makes data the snapshot ending at endOffset with epoch, and the log
// start: batches below it are dropped.
func (c *Controller) SetSnapshot(endOffset int64, epoch int32, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start, c.snapEpoch, c.snapshot = endOffset, epoch, data
	for len(c.batches) > 0 && c.batches[0].base < endOffset {
		c.batches = c.batches[1:]
	}
	c.hwm = max(c.hwm, endOffset)
	c.change()
}

func (c *Controller) accept() {
	for {
		cn, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		c.conns[cn] = true
		c.mu.Unlock()
		c.wg.Go(func() {
			defer func() {
				cn.Close()
				c.mu.Lock()
				delete(c.conns, cn)
				c.mu.Unlock()
			}()
			c.serve(cn)
		})
	}
}

// serve answers the requests of one connection in order.
func (c *Controller) serve(cn net.Conn) {
	r := bufio.NewReader(cn)
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n > 64<<20 {
			return
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		req, corr, err := parseRequest(msg)
		if err != nil {
			c.t.Logf("fake controller: %v", err)
			return
		}
		c.mu.Lock()
		c.counts[req.Key()]++
		hook := c.hook
		c.mu.Unlock()
		var rep *Reply
		if hook != nil && req.Key() != 18 {
			rep = hook(req)
		}
		if rep == nil {
			rep = &Reply{Resp: c.answer(req)}
		}
		switch {
		case rep.Hang:
			<-c.done
			return
		case rep.Close:
			return
		case rep.Raw != nil:
			out := binary.BigEndian.AppendUint32(nil, uint32(len(rep.Raw)))
			if _, err := cn.Write(append(out, rep.Raw...)); err != nil {
				return
			}
			continue
		}
		out := frameResponse(req, rep.Resp, corr)
		if rep.Cut > 0 && rep.Cut < len(out) {
			cn.Write(out[:rep.Cut])
			return
		}
		if _, err := cn.Write(out); err != nil {
			return
		}
	}
}

// parseRequest reads a request header (v1, or v2 with tagged fields for a flexible
// request) and body.
func parseRequest(msg []byte) (kmsg.Request, int32, error) {
	if len(msg) < 10 {
		return nil, 0, errors.New("request too short")
	}
	key := int16(binary.BigEndian.Uint16(msg))
	version := int16(binary.BigEndian.Uint16(msg[2:]))
	corr := int32(binary.BigEndian.Uint32(msg[4:]))
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, corr, errors.New("unknown API key " + strconv.Itoa(int(key)))
	}
	req.SetVersion(version)
	rest := msg[8:]
	idLen := int16(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if idLen > 0 {
		if int(idLen) > len(rest) {
			return nil, corr, errors.New("client id past the end")
		}
		rest = rest[idLen:]
	}
	if req.IsFlexible() {
		// Tagged fields of the header: a count, then (tag, size, bytes) each.
		var b kbinReader
		b.src = rest
		for range b.uvarint() {
			b.uvarint()
			b.skip(int(b.uvarint()))
		}
		if b.bad {
			return nil, corr, errors.New("bad header tags")
		}
		rest = b.src
	}
	if err := req.ReadFrom(rest); err != nil {
		return nil, corr, err
	}
	return req, corr, nil
}

type kbinReader struct {
	src []byte
	bad bool
}

func (r *kbinReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.src)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.src = r.src[n:]
	return v
}

func (r *kbinReader) skip(n int) {
	if n > len(r.src) {
		r.bad = true
		return
	}
	r.src = r.src[n:]
}

// frameResponse is the size-prefixed response: correlation id, the tagged fields of
// a flexible response header (ApiVersions always has header v0), the body.
func frameResponse(req kmsg.Request, resp kmsg.Response, corr int32) []byte {
	resp.SetVersion(req.GetVersion())
	out := make([]byte, 4, 64)
	out = binary.BigEndian.AppendUint32(out, uint32(corr))
	if resp.IsFlexible() && req.Key() != 18 {
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

// answer is the model's response to req.
func (c *Controller) answer(req kmsg.Request) kmsg.Response {
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := kmsg.NewPtrApiVersionsResponse()
		for _, k := range [][3]int16{{18, 0, 4}, {1, 4, 18}, {59, 0, 1}, {60, 0, 2}, {17, 0, 1}, {36, 0, 2}} {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MinVersion, ak.MaxVersion = k[0], k[1], k[2]
			resp.ApiKeys = append(resp.ApiKeys, ak)
		}
		return resp
	case *kmsg.DescribeClusterRequest:
		resp := kmsg.NewPtrDescribeClusterResponse()
		resp.ClusterID = c.ClusterID
		resp.ControllerID = c.ID
		resp.EndpointType = r.EndpointType
		return resp
	case *kmsg.FetchRequest:
		if r.ClusterID != nil && *r.ClusterID != c.ClusterID {
			// Kafka checks a cluster id sent before anything else, and only when sent.
			resp := r.ResponseKind().(*kmsg.FetchResponse)
			resp.ErrorCode = kerr.InconsistentClusterID.Code
			return resp
		}
		return c.fetch(r)
	case *kmsg.FetchSnapshotRequest:
		return c.fetchSnapshot(r)
	}
	c.t.Errorf("fake controller: unexpected request %T", req)
	return req.ResponseKind()
}

// leaderCheck is the error code of a request made with epoch as the current leader
// epoch, 0 when this node leads it.
func (c *Controller) leaderCheck(epoch int32) int16 {
	switch {
	case epoch == -1:
		return kerr.InvalidRequest.Code
	case epoch < c.epoch:
		return kerr.FencedLeaderEpoch.Code
	case epoch > c.epoch:
		return kerr.UnknownLeaderEpoch.Code
	case c.leader != c.ID:
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

func (c *Controller) fetch(req *kmsg.FetchRequest) kmsg.Response {
	deadline := time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	for {
		c.mu.Lock()
		resp, wait := c.fetchLocked(req)
		ch := c.changed
		c.mu.Unlock()
		d := time.Until(deadline)
		if !wait || d <= 0 {
			return resp
		}
		t := time.NewTimer(d)
		select {
		case <-ch:
		case <-t.C:
		case <-c.done:
		}
		t.Stop()
	}
}

// fetchLocked answers a Fetch; wait says that it has nothing to return yet.
func (c *Controller) fetchLocked(req *kmsg.FetchRequest) (*kmsg.FetchResponse, bool) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for id, addr := range c.endpoints {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		b := kmsg.NewFetchResponseBroker()
		b.NodeID, b.Host, b.Port = id, host, int32(p)
		resp.Brokers = append(resp.Brokers, b)
	}
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, false
	}
	rt := req.Topics[0]
	t := kmsg.NewFetchResponseTopic()
	t.Topic, t.TopicID = rt.Topic, rt.TopicID
	p := kmsg.NewFetchResponseTopicPartition()
	rp := rt.Partitions[0]
	p.Partition = rp.Partition
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = c.leader, c.epoch
	p.HighWatermark = -1
	defer func() {
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
	}()
	if rt.TopicID != [16]byte{15: 1} || rp.Partition != 0 {
		p.ErrorCode = kerr.UnknownTopicID.Code
		return resp, false
	}
	if code := c.leaderCheck(rp.CurrentLeaderEpoch); code != 0 {
		p.ErrorCode = code
		return resp, false
	}
	p.HighWatermark, p.LogStartOffset = c.hwm, c.start
	if rp.FetchOffset < c.start {
		p.SnapshotID.EndOffset, p.SnapshotID.Epoch = c.start, c.snapEpoch
		return resp, false
	}
	if !(rp.FetchOffset == 0 && rp.LastFetchedEpoch == 0) {
		epoch, end := c.endForEpoch(rp.LastFetchedEpoch)
		if epoch != rp.LastFetchedEpoch || end < rp.FetchOffset {
			p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = epoch, end
			return resp, false
		}
	}
	size := 0
	for _, b := range c.batches {
		if b.next <= rp.FetchOffset {
			continue
		}
		if size > 0 && size+len(b.data) > int(req.MaxBytes) {
			break
		}
		p.RecordBatches = append(p.RecordBatches, b.data...)
		size += len(b.data)
	}
	return resp, size == 0
}

// endForEpoch is Kafka's endOffsetForEpoch: the greatest epoch at or below epoch in
// the log, and the offset where it ends.
func (c *Controller) endForEpoch(epoch int32) (int32, int64) {
	found, end := c.snapEpoch, c.start
	if c.start == 0 {
		found = 0
	}
	for i, b := range c.batches {
		if b.epoch > epoch {
			return found, b.base
		}
		found = b.epoch
		end = c.batches[i].next
	}
	return found, end
}

func (c *Controller) fetchSnapshot(req *kmsg.FetchSnapshotRequest) kmsg.Response {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := req.ResponseKind().(*kmsg.FetchSnapshotResponse)
	for id, addr := range c.endpoints {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		e := kmsg.NewFetchSnapshotResponseNodeEndpoint()
		e.NodeID, e.Host, e.Port = id, host, uint16(p)
		resp.NodeEndpoints = append(resp.NodeEndpoints, e)
	}
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	rp := req.Topics[0].Partitions[0]
	t := kmsg.NewFetchSnapshotResponseTopic()
	t.Topic = req.Topics[0].Topic
	p := kmsg.NewFetchSnapshotResponseTopicPartition()
	p.Partition = rp.Partition
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = c.leader, c.epoch
	p.SnapshotID = kmsg.FetchSnapshotResponseTopicPartitionSnapshotID{EndOffset: rp.SnapshotID.EndOffset, Epoch: rp.SnapshotID.Epoch}
	switch {
	case c.leaderCheck(rp.CurrentLeaderEpoch) != 0:
		p.ErrorCode = c.leaderCheck(rp.CurrentLeaderEpoch)
	case c.snapshot == nil || rp.SnapshotID.EndOffset != c.start || rp.SnapshotID.Epoch != c.snapEpoch:
		p.ErrorCode = kerr.SnapshotNotFound.Code
	case rp.Position < 0 || rp.Position > int64(len(c.snapshot)):
		p.ErrorCode = kerr.PositionOutOfRange.Code
	default:
		n := int64(req.MaxBytes)
		if c.snapshotChunk > 0 {
			n = min(n, int64(c.snapshotChunk))
		}
		end := min(rp.Position+n, int64(len(c.snapshot)))
		p.Size, p.Position = int64(len(c.snapshot)), rp.Position
		p.Bytes = c.snapshot[rp.Position:end]
	}
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}
