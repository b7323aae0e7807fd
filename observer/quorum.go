package observer

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// The network source: __cluster_metadata-0 fetched from the controller quorum, the
// way a broker (itself a KRaft observer) fetches it, with replica id -1 so that the
// observer stays invisible in the quorum's state.
//
//   - Leader: Fetch is sent to the leader known (its address from the NodeEndpoints of
//     a response, Fetch v16+), else to the bootstrap servers in turn. NOT_LEADER_OR_FOLLOWER,
//     FENCED_LEADER_EPOCH and UNKNOWN_LEADER_EPOCH carry CurrentLeader, which is
//     followed; an answer that teaches nothing new is retried with backoff. A
//     controller that does not answer within Config.RequestTimeout (beyond the long
//     poll) is left for the other bootstrap servers, as Kafka's observers leave it,
//     and not gone back to for a RequestTimeout even if they still name it.
//   - Snapshot: a Fetch answered with a SnapshotId (the log starts after the offset
//     asked) loads that snapshot with FetchSnapshot, chunk by chunk (snapStream), into
//     a new delta, and starts a rebuild.
//   - Commit: batches are applied only once they are at or below the high watermark
//     (every record below it): the leader also returns records not committed yet,
//     which are kept until it moves, and which the leader may still truncate. What is
//     kept is bounded (Config.MaxUncommitted): at the bound, the records of an answer
//     are dropped (fetched again later) and only its high watermark counts, asked for
//     every FetchMaxWait, until half of the bound is free again.
//   - DivergingEpoch: fetched batches past the leader's end offset for that epoch are
//     dropped. They are above the high watermark, so nothing applied changes; should
//     the leader diverge below what was applied (a broken quorum), the observer
//     rebuilds from offset 0 (and so from the leader's snapshot), as the disk source
//     does after a truncation.
//   - Rebuild: the initial load folds the snapshot and the log up to the high
//     watermark of the first answer into one Update with Reset set; Ready is closed
//     after it. A later rebuild (falling behind the leader's log start, a divergence
//     below what was applied) folds only the snapshot, and the log up to what was
//     already handed on when that ends later: every batch after it is handed on as
//     its own Update, as if no rebuild had happened. Units are cut from batches
//     exactly as the disk source cuts them (cutter.records).
//   - Errors (a network error, a timeout, garbage, a corrupt batch, a missing
//     snapshot, an authorization failure) are logged, counted and retried with
//     bounded exponential backoff. Nothing is applied from an answer that is not
//     valid; the last good image stays published.

// quorum is the network source's state. One goroutine (Run's) owns it. Each step
// (one Fetch and what follows from its answer) yields items to the Observer, which
// holds the delta and publishes.
type quorum struct {
	cfg   *Config
	conns *conns
	cut   cutter      // cuts batches into units and holds an open metadata transaction
	recs  []rawRecord // the records of the batch being cut (frame)

	// sleep waits d or until ctx ends (false); now is the clock. Tests replace both.
	sleep func(ctx context.Context, d time.Duration) bool
	now   func() time.Time

	// The leader as known: its id (-1 unknown), epoch, and address ("" to ask the
	// bootstrap servers, from seed on).
	leader     int32
	epoch      int32
	leaderAddr string
	seed       int
	// avoid is the controller whose last request failed without an answer (a
	// timeout, a refused connection): the next bootstrap server asked is another one,
	// if there is another. After a timeout, until avoidUntil (one RequestTimeout
	// later), it is not gone back to either when another names it as the leader in
	// the epoch known: Kafka's
	// voters notice a hung leader only after controller.quorum.fetch.timeout.ms, and
	// answer until then that it leads.
	avoid      string
	avoidUntil time.Time

	next         int64 // offset of the next record to fetch
	lastEpoch    int32 // epoch of the last batch fetched (of the snapshot, after one)
	applied      int64 // offset of the next record to apply
	appliedEpoch int32 // epoch of the last batch applied (of the snapshot, after one)
	hwm          int64 // the highest high watermark seen, -1 before one
	pending      []pendingBatch
	pendingWait  time.Duration // the long poll while pending is not empty
	// full is set once the batches past the high watermark reached
	// Config.MaxUncommitted, until half of it is free again: no more are taken.
	full bool
	// build is the rebuild in progress; nil once it is published.
	build *netBuild
	// loadedSnapshot and loadedSnapshotEnd are the snapshot of the last rebuild
	// published ("none" and 0 without one).
	loadedSnapshot    string
	loadedSnapshotEnd int64
}

type pendingBatch struct {
	b         recordbatch.Batch
	skipBelow int64
}

// netBuild is a whole state being assembled: a snapshot and the log after it, handed
// on (itemRebuild, the units, itemRebuilt) to be published once the log is applied up
// to target.
type netBuild struct {
	why         string
	target      int64  // high watermark to reach; -1 until a Fetch reports one
	snapshot    string // the snapshot loaded, "none" without one
	snapshotEnd int64
	started     bool // its itemRebuild was yielded
}

func newQuorum(cfg *Config) *quorum {
	q := &quorum{cfg: cfg, conns: newConns(cfg), leader: -1, hwm: -1, pendingWait: pendingMinWait,
		cut: newCutter(cfg.Logger, cfg.Metrics), now: time.Now}
	q.sleep = func(ctx context.Context, d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	q.restart("initial load", -1)
	return q
}

// restart starts a rebuild from offset 0: the leader answers with its snapshot when its
// log starts later. The rebuild folds the log up to target into its Update; -1 (the
// initial load) takes the high watermark of the first answer.
func (q *quorum) restart(why string, target int64) {
	q.next, q.lastEpoch, q.applied, q.appliedEpoch = 0, 0, 0, 0
	q.pending = nil
	q.cut.txn = nil
	q.build = &netBuild{why: why, target: target, snapshot: "none"}
	q.setUncommitted()
}

// rebuild starts a rebuild after the initial load. Its Update folds only what was
// handed on already (up to q.applied) or what the snapshot covers, whichever ends
// later: the log after that is handed on batch by batch (transaction by
// transaction), as if no rebuild had happened, so that no transition the snapshot
// does not hide is folded away, and none already handed on is handed on twice. A
// rebuild in progress, not published yet, keeps its target.
func (q *quorum) rebuild(why string) {
	q.cfg.Metrics.Resets.Add(1)
	target := q.applied
	if q.build != nil {
		target = q.build.target
	}
	q.restart(why, target)
}

// retryIn is how long to back off after err, the previous backoff being backoff; it
// logs the failure.
func (q *quorum) retryIn(err error, backoff time.Duration) time.Duration {
	log := q.cfg.Logger
	backoff = min(max(2*backoff, q.cfg.MinBackoff), q.cfg.MaxBackoff)
	if leaderTrouble(err) {
		// A node gone or an election: one takes a few seconds at most, so look
		// again soon (the other bootstrap servers, the new leader).
		backoff = min(backoff, max(noLeaderBackoff, q.cfg.MinBackoff))
	}
	switch {
	case errors.Is(err, ErrNotAuthorized):
		log.Error("the controllers refuse to serve the metadata log: add the ACL "+
			"`"+GrantCommand(q.cfg, q.lastAddr())+"`; retrying", "retry_in", backoff, "error", err)
	case errors.Is(err, ErrNoLeader):
		log.Warn("no quorum leader known; retrying", "epoch", q.epoch, "retry_in", backoff, "error", err)
	default:
		log.Error("fetching the metadata log failed; retrying", "leader", q.leader, "epoch", q.epoch,
			"offset", q.next, "retry_in", backoff, "error", err)
	}
	return backoff
}

// leaderTrouble reports whether err is about reaching the leader (no leader known, a
// connection that failed or timed out) rather than about what a controller answered
// (a Kafka error code, corrupt data, a refusal).
func leaderTrouble(err error) bool {
	if errors.Is(err, ErrNoLeader) {
		return true
	}
	var ke *kerr.Error
	return !errors.As(err, &ke) && !errors.Is(err, ErrNotAuthorized) && !errors.Is(err, ErrCorrupt) &&
		!errors.Is(err, ErrBadSnapshot) && !errors.Is(err, ErrProtocol)
}

// target is the address the next request goes to: the leader's, else the next
// bootstrap server.
func (q *quorum) target() (string, int32) {
	if q.leaderAddr != "" {
		return q.leaderAddr, q.leader
	}
	n := len(q.cfg.Controllers)
	addr := q.cfg.Controllers[q.seed%n]
	q.seed++
	if addr == q.avoid && n > 1 {
		addr = q.cfg.Controllers[q.seed%n]
		q.seed++
	}
	return addr, -1
}

// lastAddr is the controller asked last, for messages.
func (q *quorum) lastAddr() string {
	if q.leaderAddr != "" {
		return q.leaderAddr
	}
	return q.cfg.Controllers[(q.seed+len(q.cfg.Controllers)-1)%len(q.cfg.Controllers)]
}

// noAnswer notes that addr failed to answer with err: it is skipped among the
// bootstrap servers next, and after a timeout (a hung node, not a closed connection)
// not gone back to within a RequestTimeout either.
func (q *quorum) noAnswer(addr string, err error) {
	q.avoid, q.avoidUntil = addr, time.Time{}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		q.avoidUntil = q.now().Add(q.cfg.RequestTimeout)
	}
}

// forget makes the next request go to the bootstrap servers.
func (q *quorum) forget() {
	q.leaderAddr = ""
}

func (q *quorum) setLeader(id, epoch int32, addr string) {
	if id != q.leader || epoch != q.epoch {
		q.cfg.Metrics.LeaderChanges.Add(1)
		q.cfg.Logger.Info("following the quorum leader", "leader", id, "leader_addr", addr, "epoch", epoch,
			"previous_leader", q.leader, "previous_epoch", q.epoch)
	}
	q.leader, q.epoch, q.leaderAddr = id, epoch, addr
	q.cfg.Metrics.LeaderID.Store(int64(id))
}

// step sends one Fetch and yields what its answer holds: a rebuild's start (the
// leader's snapshot), units, its end, and a catch-up's flushes. A sequence that ends
// without an error means progress (or a leader to follow); an error means: back off,
// then try again.
func (q *quorum) step(ctx context.Context) iter.Seq2[item, error] {
	return sequence(func(y yielder) error {
		err := q.fetch(ctx, y)
		if errors.Is(err, errStopped) {
			// What was cut is gone with the consumer, a batch perhaps in part: start
			// over from the leader's snapshot, as a rebuild does.
			target := q.applied
			if q.build != nil {
				target = q.build.target
			}
			q.restart("a read was stopped", target)
		}
		return err
	})
}

// fetch is step: one Fetch, its answer handed on through y.
func (q *quorum) fetch(ctx context.Context, y yielder) error {
	addr, node := q.target()
	start := q.now()
	hwm, leader, epoch := q.hwm, q.leader, q.epoch
	// Kafka's leader completes a held Fetch when its log grows, not when the high
	// watermark moves: with fetched records waiting for it, ask again soon rather
	// than at the next append (a NoOp every 500 ms): first after pendingMinWait (a
	// quorum commits within milliseconds), doubling up to pendingMaxWait while the
	// high watermark stays where it is.
	wait := q.cfg.FetchMaxWait
	if len(q.pending) > 0 {
		wait = min(wait, q.pendingWait)
	}
	req := q.fetchRequest(wait)
	q.cfg.Metrics.FetchRequests.Add(1)
	kresp, err := q.conns.request(ctx, addr, req, wait)
	cerr := func(err error) error {
		return &ControllerError{Addr: addr, Node: node, Request: "Fetch", Offset: req.Topics[0].Partitions[0].FetchOffset, Err: err}
	}
	if err != nil {
		// No answer: ask another controller next, which names the leader (a new one
		// if this one hangs), rather than this one again.
		q.forget()
		q.noAnswer(addr, err)
		return cerr(err)
	}
	if addr == q.avoid {
		// It answers again (named as the leader by another): the bootstrap servers
		// may be asked in turn again, it among them. Until then it is skipped, also
		// while the others answer that the election is not over.
		q.avoid = ""
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := q.topError(resp.ErrorCode); err != nil {
		q.forget()
		return cerr(err)
	}
	p, err := fetchPartition(resp)
	if err != nil {
		q.forget()
		return cerr(err)
	}
	endpoints := map[int32]string{}
	for _, b := range resp.Brokers {
		endpoints[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	if p.ErrorCode != 0 {
		return q.leaderError(p.ErrorCode, p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch, endpoints, addr, cerr)
	}
	// The node answered as the leader of q.epoch.
	id := node
	if p.CurrentLeader.LeaderID >= 0 {
		id = p.CurrentLeader.LeaderID
	}
	if id < 0 {
		id = q.leader // a bootstrap server with no CurrentLeader: keep what is known
	}
	q.setLeader(id, q.epoch, addr)
	if p.HighWatermark > q.hwm {
		q.hwm = p.HighWatermark
		q.cfg.Metrics.HighWatermark.Store(q.hwm)
	}
	if q.build != nil && q.build.target < 0 && q.hwm >= 0 {
		q.build.target = q.hwm
	}
	switch {
	case p.SnapshotID.EndOffset >= 0:
		id := SnapshotID{EndOffset: p.SnapshotID.EndOffset, Epoch: p.SnapshotID.Epoch}
		if id.EndOffset < q.applied || (q.build == nil && id.EndOffset == q.applied) {
			// Kafka points at a snapshot only when the offset asked is below its log start.
			return cerr(fmt.Errorf("snapshot %s asked for at offset %d, which is applied: %w", id, q.next, ErrProtocol))
		}
		if q.build == nil || q.applied > 0 {
			why := fmt.Sprintf("the leader's log starts after offset %d; loading its snapshot %s", q.next, id)
			q.cfg.Logger.Warn("metadata log moved on past what was read; rebuilding from the leader's snapshot",
				"reason", why, "offset", q.next, "epoch", q.lastEpoch)
			q.rebuild(why)
		}
		return q.loadSnapshot(ctx, addr, id, y)
	case p.DivergingEpoch.EndOffset >= 0:
		return q.diverge(p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset, addr)
	}
	got, err := q.appendBatches(p.RecordBatches, addr)
	if err != nil {
		return cerr(err)
	}
	if got || q.hwm > hwm {
		q.pendingWait = pendingMinWait
	} else {
		q.pendingWait = min(2*q.pendingWait, pendingMaxWait)
	}
	if err := q.applyCommitted(y); err != nil {
		return cerr(err)
	}
	// A leader holds a Fetch that has nothing new for up to MaxWaitMillis. One that
	// answers at once with nothing new must not make this a busy loop. With the
	// uncommitted records at their bound, an answer's records are dropped and only its
	// high watermark counts: ask for it every FetchMaxWait.
	if !got && q.hwm == hwm && q.leader == leader && q.epoch == epoch {
		pause := min(q.cfg.MinBackoff, wait)
		if q.full {
			pause = q.cfg.FetchMaxWait
		}
		if d := pause - q.now().Sub(start); d > 0 && !q.sleep(ctx, d) {
			return nil
		}
	}
	return nil
}

func (q *quorum) fetchRequest(wait time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	if q.cfg.ClusterID != "" {
		req.ClusterID = &q.cfg.ClusterID
	}
	req.ReplicaID = -1
	req.ReplicaState.ID = -1
	req.ReplicaState.Epoch = -1
	req.MaxWaitMillis = int32(wait.Milliseconds())
	req.MinBytes = 1
	req.MaxBytes = fetchMaxBytes
	req.SessionID = 0
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = metadataTopic
	t.TopicID = metadataTopicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition = 0
	p.CurrentLeaderEpoch = q.epoch
	p.FetchOffset = q.next
	p.LastFetchedEpoch = q.lastEpoch
	p.LogStartOffset = -1
	p.PartitionMaxBytes = fetchMaxBytes
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

const (
	// pendingMinWait and pendingMaxWait bound the long poll while fetched records
	// wait for the high watermark.
	pendingMinWait = 5 * time.Millisecond
	pendingMaxWait = 100 * time.Millisecond
	// noLeaderBackoff caps the backoff while the quorum has no leader known.
	noLeaderBackoff = time.Second
	// fetchMaxBytes bounds a Fetch answer (Kafka always returns a first batch whole).
	fetchMaxBytes = 8 << 20
	// snapshotChunk is the most snapshot bytes asked for at once.
	snapshotChunk = 4 << 20
)

// topError turns a response-level error code into an error.
func (q *quorum) topError(code int16) error {
	if code == 0 {
		return nil
	}
	err := kerr.ErrorForCode(code)
	if errors.Is(err, kerr.ClusterAuthorizationFailed) {
		q.cfg.Metrics.AuthorizationFailures.Add(1)
		return fmt.Errorf("%w: %w (%s needs ClusterAction on the cluster: %s)", ErrNotAuthorized, err, q.cfg.Principal,
			GrantCommand(q.cfg, q.lastAddr()))
	}
	if errors.Is(err, kerr.InconsistentClusterID) {
		return fmt.Errorf("%w (the observer expects cluster id %q: these controllers belong to another cluster)", err, q.cfg.ClusterID)
	}
	return err
}

func fetchPartition(resp *kmsg.FetchResponse) (*kmsg.FetchResponseTopicPartition, error) {
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("%d topics in the answer, want __cluster_metadata-0 alone: %w", len(resp.Topics), ErrProtocol)
	}
	t := &resp.Topics[0]
	p := &t.Partitions[0]
	if (resp.Version >= 13 && t.TopicID != metadataTopicID) || (resp.Version < 13 && t.Topic != metadataTopic) || p.Partition != 0 {
		return nil, fmt.Errorf("answer for topic %q (id %x) partition %d, want __cluster_metadata-0: %w",
			t.Topic, t.TopicID, p.Partition, ErrProtocol)
	}
	return p, nil
}

// leaderError handles a partition error of Fetch or FetchSnapshot: the leaders'
// errors are followed (nil when that teaches something new), the others are errors.
func (q *quorum) leaderError(code int16, id, epoch int32, endpoints map[int32]string, addr string, cerr func(error) error) error {
	err := kerr.ErrorForCode(code)
	switch {
	case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.FencedLeaderEpoch), errors.Is(err, kerr.UnknownLeaderEpoch):
	case errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TopicAuthorizationFailed):
		q.cfg.Metrics.AuthorizationFailures.Add(1)
		q.forget()
		return cerr(fmt.Errorf("%w: %w (%s needs ClusterAction on the cluster: %s)", ErrNotAuthorized, err, q.cfg.Principal,
			GrantCommand(q.cfg, addr)))
	default:
		q.forget()
		return cerr(err)
	}
	newer := epoch > q.epoch || (epoch == q.epoch && id >= 0 && id != q.leader)
	if !newer && epoch == q.epoch && id >= 0 && q.leaderAddr == "" && endpoints[id] != "" && endpoints[id] == q.avoid &&
		q.now().Before(q.avoidUntil) {
		// The leader that just did not answer: ask the others again, which name its
		// successor once they notice.
		return cerr(fmt.Errorf("%w: the node points at leader %d in epoch %d, which did not answer: %w", err, id, epoch, ErrNoLeader))
	}
	if !newer && epoch == q.epoch && id >= 0 && q.leaderAddr == "" && endpoints[id] != "" && endpoints[id] != addr {
		// The leader already known, whose address was dropped after an error: go back
		// to it. (If it is unreachable, that error backs off.)
		q.setLeader(id, epoch, endpoints[id])
		return nil
	}
	if !newer {
		// A node that knows no better than the observer (a stale node, or an election
		// in progress): ask another.
		q.forget()
		if id < 0 {
			return cerr(fmt.Errorf("%w (epoch %d): %w", err, epoch, ErrNoLeader))
		}
		return cerr(fmt.Errorf("%w: the node points at leader %d in epoch %d, which is not newer than what is known: %w",
			err, id, epoch, ErrNoLeader))
	}
	leaderAddr := endpoints[id]
	if id < 0 {
		q.leader, q.epoch = -1, epoch
		q.cfg.Metrics.LeaderID.Store(-1)
		q.forget()
		return cerr(fmt.Errorf("%w: epoch %d has no leader yet: %w", err, epoch, ErrNoLeader))
	}
	if leaderAddr == "" && id == q.leader {
		leaderAddr = q.leaderAddr // the same leader in a newer epoch
	}
	q.setLeader(id, epoch, leaderAddr)
	if leaderAddr == "" {
		// No NodeEndpoints (Fetch before v16): the bootstrap servers are asked with the
		// new epoch; the leader among them answers.
		q.cfg.Logger.Info("the controllers name no address for the leader; asking the bootstrap servers",
			"leader", id, "epoch", epoch, "asked", addr)
	}
	return nil
}

// loadSnapshot fetches snapshot id from the leader at addr, chunk by chunk, replaying
// it into a new delta; on success it yields the rebuild's start with that delta, and
// the build continues from the snapshot's end. The next chunk is fetched
// (fetchChunks) while one is replayed: at most three chunks are in memory.
func (q *quorum) loadSnapshot(ctx context.Context, addr string, id SnapshotID, y yielder) error {
	node := q.leader
	src := fmt.Sprintf("snapshot %s of controller %s", id, addr)
	s := newSnapStream(src, &q.cut.dec, q.cfg.Metrics)
	lctx, cancel := context.WithCancel(ctx)
	chunks := make(chan snapChunk, 1)
	go q.fetchChunks(lctx, addr, id, q.epoch, chunks) // the only user of q.conns until it closes chunks
	defer func() {
		cancel()
		for range chunks {
		}
	}()
	var pos int64
	for {
		c, ok := <-chunks
		if !ok {
			return &ControllerError{Addr: addr, Node: node, Request: "FetchSnapshot", Offset: pos,
				Err: fmt.Errorf("snapshot %s: stopped: %w", id, context.Cause(lctx))}
		}
		kresp, err := c.resp, c.err
		cerr := func(err error) error {
			return &ControllerError{Addr: addr, Node: node, Request: "FetchSnapshot", Offset: pos, Err: fmt.Errorf("snapshot %s: %w", id, err)}
		}
		if err != nil {
			q.forget()
			q.noAnswer(addr, err)
			return cerr(err)
		}
		resp := kresp.(*kmsg.FetchSnapshotResponse)
		if err := q.topError(resp.ErrorCode); err != nil {
			q.forget()
			return cerr(err)
		}
		if len(resp.Topics) != 1 || resp.Topics[0].Topic != metadataTopic || len(resp.Topics[0].Partitions) != 1 ||
			resp.Topics[0].Partitions[0].Partition != 0 {
			q.forget()
			return cerr(fmt.Errorf("the answer is not for __cluster_metadata-0: %w", ErrProtocol))
		}
		rp := &resp.Topics[0].Partitions[0]
		if rp.ErrorCode != 0 {
			endpoints := map[int32]string{}
			for _, e := range resp.NodeEndpoints {
				endpoints[e.NodeID] = net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
			}
			if errors.Is(kerr.ErrorForCode(rp.ErrorCode), kerr.SnapshotNotFound) {
				// Deleted since the Fetch named it (a newer one replaced it): ask again.
				return cerr(kerr.ErrorForCode(rp.ErrorCode))
			}
			if err := q.leaderError(rp.ErrorCode, rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch, endpoints, addr, cerr); err != nil {
				return err
			}
			// A new leader: start again from a Fetch, which names its snapshot.
			return nil
		}
		switch {
		case rp.SnapshotID.EndOffset != id.EndOffset || rp.SnapshotID.Epoch != id.Epoch:
			err = fmt.Errorf("answer for snapshot %d-%d: %w", rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch, ErrProtocol)
		case rp.Position != pos:
			err = fmt.Errorf("chunk at byte %d, asked for %d: %w", rp.Position, pos, ErrProtocol)
		case rp.Size < pos+int64(len(rp.Bytes)):
			err = fmt.Errorf("chunk of %d bytes at byte %d runs past the snapshot's size %d: %w", len(rp.Bytes), pos, rp.Size, ErrProtocol)
		case len(rp.Bytes) == 0 && pos < rp.Size:
			err = fmt.Errorf("empty chunk at byte %d of %d: %w", pos, rp.Size, ErrProtocol)
		}
		if err != nil {
			q.forget()
			return cerr(err)
		}
		q.cfg.Metrics.SnapshotBytes.Add(int64(len(rp.Bytes)))
		if err := s.write(rp.Bytes); err != nil {
			q.cfg.Metrics.BadSnapshots.Add(1)
			return cerr(err)
		}
		pos += int64(len(rp.Bytes))
		if pos == rp.Size {
			break
		}
	}
	if err := s.finish(); err != nil {
		q.cfg.Metrics.BadSnapshots.Add(1)
		return &ControllerError{Addr: addr, Node: node, Request: "FetchSnapshot", Offset: pos, Err: err}
	}
	q.cfg.Metrics.SnapshotsLoaded.Add(1)
	q.cfg.Logger.Info("loaded the leader's snapshot", "snapshot", id.String(), "leader", node, "leader_addr", addr,
		"bytes", pos, "records", s.records)
	b := q.build
	b.snapshot, b.snapshotEnd, b.started = src, id.EndOffset, true
	q.next, q.applied, q.lastEpoch, q.appliedEpoch = id.EndOffset, id.EndOffset, id.Epoch, id.Epoch
	q.pending = nil
	q.cut.txn = nil
	q.setUncommitted()
	prov := Provenance{Offset: id.EndOffset - 1, Epoch: id.Epoch, Timestamp: s.header.LastContainedLogTimestamp}
	if err := y.send(item{kind: itemRebuild, build: &build{why: b.why, snapshot: src, delta: s.delta, prov: prov}}); err != nil {
		return err
	}
	return q.applyCommitted(y)
}

// startBuild yields the start of the rebuild in progress, from image.Empty, unless
// it was yielded (or a snapshot started it).
func (q *quorum) startBuild(y yielder) error {
	b := q.build
	if b.started {
		return nil
	}
	b.started = true
	return y.send(item{kind: itemRebuild, build: &build{why: b.why, snapshot: b.snapshot, prov: image.Empty.Provenance()}})
}

// diverge truncates what was fetched to the leader's end offset for epoch.
func (q *quorum) diverge(epoch int32, end int64, addr string) error {
	// Committed records cannot diverge in Raft; if the leader says they do (its log
	// ends below what was applied, or has another epoch at the last record applied),
	// the image rests on records the quorum no longer has: rebuild.
	if end < q.applied || (end == q.applied && epoch != q.appliedEpoch) {
		why := fmt.Sprintf("the leader's log diverges at offset %d (epoch %d), at or below offset %d (epoch %d) already applied",
			end, epoch, q.applied, q.appliedEpoch)
		q.cfg.Logger.Warn("metadata log truncated under what was applied; rebuilding from the leader's snapshot",
			"reason", why, "leader_addr", addr, "offset", q.applied-1)
		q.rebuild(why)
		return nil
	}
	kept := 0
	for kept < len(q.pending) && q.pending[kept].b.NextOffset() <= end {
		kept++
	}
	dropped := len(q.pending) - kept
	if dropped == 0 {
		// Nothing to drop: the next Fetch would be the same one.
		return &ControllerError{Addr: addr, Node: q.leader, Request: "Fetch", Offset: q.next,
			Err: fmt.Errorf("DivergingEpoch %d at offset %d, but the log fetched (to offset %d, epoch %d) already ends there: %w",
				epoch, end, q.next, q.lastEpoch, ErrProtocol)}
	}
	q.pending = q.pending[:kept]
	q.next, q.lastEpoch = q.applied, q.appliedEpoch
	if kept > 0 {
		last := &q.pending[kept-1].b
		q.next, q.lastEpoch = last.NextOffset(), last.PartitionLeaderEpoch
	}
	q.cfg.Metrics.Truncations.Add(1)
	q.cfg.Logger.Info("dropping fetched records past the high watermark: the leader's log diverges from them",
		"diverging_epoch", epoch, "end_offset", end, "batches_dropped", dropped, "offset", q.next, "epoch", q.lastEpoch)
	q.setUncommitted()
	return nil
}

// appendBatches checks the batches of a Fetch answer and keeps them until they are
// committed. got reports whether any batch was new. A trailing incomplete batch
// (Kafka cuts answers at MaxBytes) is fetched again next time.
func (q *quorum) appendBatches(data []byte, addr string) (got bool, err error) {
	pos := 0
	over := q.uncommittedBytes()
	for pos < len(data) {
		b, err := recordbatch.Decode(data[pos:])
		if errors.Is(err, recordbatch.ErrTruncated) {
			if pos == 0 {
				return false, fmt.Errorf("the answer holds only part of a batch (%d bytes): %v: %w", len(data), err, ErrProtocol)
			}
			break
		}
		bad := func(format string, args ...any) error {
			q.cfg.Metrics.CorruptBatches.Add(1)
			return &PosError{File: "Fetch answer", Position: int64(pos), Offset: q.next,
				Err: fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrCorrupt)}
		}
		if err != nil {
			return got, bad("%v", err)
		}
		skipBelow := int64(-1)
		switch {
		case b.LastOffset() < q.next:
			pos += b.Size()
			continue // already fetched
		case b.BaseOffset > q.next:
			return got, bad("batch has offset %d, expected %d", b.BaseOffset, q.next)
		case b.BaseOffset < q.next:
			skipBelow = q.next // a fetch offset inside a batch (after a snapshot)
		}
		if b.PartitionLeaderEpoch < q.lastEpoch {
			return got, bad("epoch went down from %d to %d at offset %d", q.lastEpoch, b.PartitionLeaderEpoch, b.BaseOffset)
		}
		if b.NextOffset() > q.hwm {
			// Past the high watermark: kept only within the bound (one batch always).
			if over > 0 && (q.full || over+int64(b.Size()) > q.cfg.MaxUncommitted) {
				q.setFull(true, over)
				break // fetched again once the high watermark has moved
			}
			over += int64(b.Size())
		}
		it := b.Iter()
		for it.Next() {
		}
		if err := it.Err(); err != nil {
			return got, bad("batch at offset %d: %v", b.BaseOffset, err)
		}
		q.pending = append(q.pending, pendingBatch{b: b, skipBelow: skipBelow})
		q.next, q.lastEpoch = b.NextOffset(), b.PartitionLeaderEpoch
		got = true
		pos += b.Size()
	}
	q.setUncommitted()
	return got, nil
}

// applyCommitted hands on the fetched batches at or below the high watermark, and
// the end of the rebuild as soon as it reaches its target: the batches after it are
// handed on one by one. When they hold catchUpAbove bytes or more (a catch-up, as on
// disk: a broker's Raft client hands its listener what it read below the high
// watermark as one commit), their units are marked so, and a flush follows every
// catchUpFlush bytes of batches.
func (q *quorum) applyCommitted(y yielder) error {
	src := "controller " + q.leaderAddr
	catchUp := q.build == nil && q.committedBytes() >= catchUpAbove
	held := int64(0)
	q.cut.catchUp = catchUp
	defer func() { q.cut.catchUp = false }()
	for {
		if b := q.build; b != nil && b.target >= 0 && q.applied >= b.target {
			if err := q.startBuild(y); err != nil {
				return err
			}
			q.build = nil
			q.loadedSnapshot, q.loadedSnapshotEnd = b.snapshot, b.snapshotEnd
			if err := y.send(item{kind: itemRebuilt}); err != nil {
				return err
			}
		}
		if len(q.pending) == 0 || q.pending[0].b.NextOffset() > q.hwm {
			break
		}
		if q.build != nil {
			if err := q.startBuild(y); err != nil {
				return err
			}
		}
		pb := &q.pending[0]
		q.cfg.Metrics.Batches.Add(1)
		q.recs, _ = frame(&pb.b, q.recs[:0]) // checked when it was fetched
		if err := q.cut.records(&pb.b, q.recs, pb.skipBelow, src, y); err != nil {
			return err
		}
		if catchUp {
			if held += int64(pb.b.Size()); held >= catchUpFlush {
				if err := y.send(item{kind: itemFlush}); err != nil {
					return err
				}
				held = 0
			}
		}
		q.applied, q.appliedEpoch = pb.b.NextOffset(), pb.b.PartitionLeaderEpoch
		q.pending[0] = pendingBatch{}
		q.pending = q.pending[1:]
	}
	q.setUncommitted()
	return nil
}

// committedBytes is the size of the fetched batches at or below the high watermark.
func (q *quorum) committedBytes() int64 {
	n := int64(0)
	for i := range q.pending {
		if q.pending[i].b.NextOffset() <= q.hwm {
			n += int64(q.pending[i].b.Size())
		}
	}
	return n
}

// uncommittedBytes is the size of the fetched batches past the high watermark.
func (q *quorum) uncommittedBytes() int64 {
	n := int64(0)
	for i := range q.pending {
		if q.pending[i].b.NextOffset() > q.hwm {
			n += int64(q.pending[i].b.Size())
		}
	}
	return n
}

func (q *quorum) setUncommitted() {
	n := q.uncommittedBytes()
	q.cfg.Metrics.Uncommitted.Store(n)
	// Once the bound was reached, half of it must be free again before the records
	// of an answer count once more, so that a quorum committing slowly does not make
	// every answer a full one, mostly dropped.
	if q.full && (n == 0 || n <= q.cfg.MaxUncommitted/2) {
		q.setFull(false, n)
	}
}

// setFull notes that the uncommitted records reached Config.MaxUncommitted (on), or
// that there is room again.
func (q *quorum) setFull(on bool, uncommitted int64) {
	if q.full == on {
		return
	}
	q.full = on
	if on {
		// The bytes first: whoever sees the count sees what reached the bound.
		q.cfg.Metrics.Uncommitted.Store(uncommitted)
		q.cfg.Metrics.UncommittedFull.Add(1)
		q.cfg.Logger.Warn("fetched records waiting for the high watermark reached their bound; "+
			"taking no more until the quorum commits (is a majority of the controllers down or slow?)",
			"uncommitted_bytes", uncommitted, "max_uncommitted_bytes", q.cfg.MaxUncommitted,
			"high_watermark", q.hwm, "offset", q.next)
		return
	}
	q.cfg.Logger.Info("the high watermark moved; fetching records again",
		"uncommitted_bytes", uncommitted, "high_watermark", q.hwm, "offset", q.next)
}

// LoadQuorum fetches the metadata log from the controllers in cfg.Controllers once, as
// Run's initial load does (the leader's snapshot, then the log up to the high
// watermark of the first answer), and returns its image. It gives up at an
// authorization failure, when every controller failed a few times in a row, or when
// ctx ends. Loaded.Snapshot names the snapshot fetched ("none" without one);
// Loaded.Segments is empty.
func LoadQuorum(ctx context.Context, cfg Config) (*Loaded, error) {
	if len(cfg.Controllers) == 0 {
		return nil, errors.New("observer: LoadQuorum without Controllers")
	}
	cfg.Handler = nil
	o, err := New(cfg)
	if err != nil {
		return nil, err
	}
	q := o.q
	if err := o.runQuorum(ctx, true); err != nil {
		return nil, err
	}
	if o.Image() == nil {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("observer: loading the metadata log from the controllers: %w", err)
		}
		return nil, errors.New("observer: loading the metadata log from the controllers stopped")
	}
	return &Loaded{Image: o.Image(), Snapshot: q.loadedSnapshot, SnapshotEnd: q.loadedSnapshotEnd, Metrics: o.Metrics()}, nil
}

// snapChunk is one FetchSnapshot answer, or the error of asking.
type snapChunk struct {
	resp kmsg.Response
	err  error
}

// fetchChunks asks the leader at addr for snapshot id from byte 0 on, one request at
// a time, and sends each answer in order. It stops after an error, after an answer
// it cannot step past (an error code, not the chunk asked for: the reader judges
// it), after the last chunk, or when ctx ends; then it closes out.
func (q *quorum) fetchChunks(ctx context.Context, addr string, id SnapshotID, epoch int32, out chan<- snapChunk) {
	defer close(out)
	var pos int64
	for {
		req := kmsg.NewPtrFetchSnapshotRequest()
		if q.cfg.ClusterID != "" {
			req.ClusterID = &q.cfg.ClusterID
		}
		req.ReplicaID = -1
		req.MaxBytes = snapshotChunk
		t := kmsg.NewFetchSnapshotRequestTopic()
		t.Topic = metadataTopic
		p := kmsg.NewFetchSnapshotRequestTopicPartition()
		p.Partition = 0
		p.CurrentLeaderEpoch = epoch
		p.SnapshotID.EndOffset, p.SnapshotID.Epoch = id.EndOffset, id.Epoch
		p.Position = pos
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		q.cfg.Metrics.FetchRequests.Add(1)
		resp, err := q.conns.request(ctx, addr, req, 0)
		select {
		case out <- snapChunk{resp: resp, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		r := resp.(*kmsg.FetchSnapshotResponse)
		if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return
		}
		rp := &r.Topics[0].Partitions[0]
		if rp.ErrorCode != 0 || rp.Position != pos || len(rp.Bytes) == 0 {
			return
		}
		pos += int64(len(rp.Bytes))
		if pos >= rp.Size {
			return
		}
	}
}
