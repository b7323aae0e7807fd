package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// fetchPos is where the Reader stands on one partition, owned by whichever goroutine
// fetches the partition now (a leader's fetcher, or the router between two).
type fetchPos struct {
	next      int64         // next offset to fetch; kafka.FirstOffset before the first
	routedAt  int64         // next when the partition last went to a fetcher
	backoff   time.Duration // pause after the next failure that counts as a retry
	redial    time.Duration // pause before routing again after the next reconnect error
	notBefore time.Time     // no fetch before this
}

// leaderFetch is the set of partitions one fetcher fetches from one leader. The
// router adds partitions while the fetcher runs; once done, the fetcher takes none.
type leaderFetch struct {
	leader Broker
	mu     sync.Mutex
	parts  []int
	done   bool
}

func (f *leaderFetch) add(p int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return false
	}
	f.parts = append(f.parts, p)
	return true
}

func (f *leaderFetch) snapshot() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.parts)
}

func (f *leaderFetch) remove(p int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.parts = slices.DeleteFunc(f.parts, func(q int) bool { return q == p })
}

// finish marks the fetcher done and returns the partitions it still held.
func (f *leaderFetch) finish() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	ps := f.parts
	f.parts = nil
	return ps
}

// deliverFunc hands one fetch's records of partition p on (batch without offset
// commits; read counts them; next is the offset to fetch next).
type deliverFunc func(p int, batch []Message, read, next int64) error

// fetcher runs the Reader's fetches: one goroutine per leader, each fetching all the
// partitions that broker leads in one request, and a router (route) that gives each
// partition to its leader's fetcher and takes back those a fetcher lost.
type fetcher struct {
	r       *Reader
	parts   []partition
	pos     []fetchPos
	deliver deliverFunc
	orphans chan []int // partitions a fetcher gave back
	wg      *sync.WaitGroup
	fail    context.CancelCauseFunc
}

// route gives every partition to its leader's fetcher, and each partition a fetcher
// gives back (its leader moved, the connection broke, a fetch timed out, a dial
// failed) to the fetcher of its leader in a fresh metadata answer, until ctx ends.
func (fr *fetcher) route(ctx context.Context, transport *kafka.Transport) {
	fetchers := map[string]*leaderFetch{}
	waiting := make([]int, len(fr.parts))
	for i := range waiting {
		waiting[i] = i
	}
	fresh := true // the leaders are those of the answer Run started with
	for {
		if len(waiting) > 0 {
			if !fresh {
				fr.r.updateLeaders(ctx, transport, fr.parts)
			}
			fresh = false
			var unled []int
			start := map[*leaderFetch]bool{}
			for _, p := range waiting {
				b := fr.parts[p].leader.Load()
				if b == nil || b.Addr == "" {
					unled = append(unled, p)
					continue
				}
				fr.pos[p].routedAt = fr.pos[p].next
				f := fetchers[b.Addr]
				if f == nil || !f.add(p) {
					f = &leaderFetch{leader: *b}
					fetchers[b.Addr] = f
					f.add(p)
					start[f] = true
				}
			}
			for f := range start {
				fr.wg.Go(func() { fr.fetchLeader(ctx, f) })
			}
			waiting = unled
		}
		var retry <-chan time.Time
		if len(waiting) > 0 {
			retry = time.After(250 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case ps := <-fr.orphans:
			waiting = append(waiting, ps...)
			for more := true; more; { // take every partition given back by now
				select {
				case ps := <-fr.orphans:
					waiting = append(waiting, ps...)
				default:
					more = false
				}
			}
		case <-retry:
		}
	}
}

// updateLeaders reads the partitions' leaders from the metadata; on an error the
// leaders stay as they were (the refresh logs it).
func (r *Reader) updateLeaders(ctx context.Context, transport *kafka.Transport, parts []partition) {
	client := &kafka.Client{Addr: kafka.TCP(*r.brokers.Load()...), Timeout: r.askTimeout(), Transport: transport}
	answers, err := r.metadata(ctx, client)
	if err != nil || len(answers) != len(parts) {
		return
	}
	for i, a := range answers {
		if a.leader.Addr != "" {
			parts[i].leader.Store(&a.leader)
		}
	}
}

// fetchLeader fetches f's partitions from f's leader on one connection, in the
// connection's fetch session, until the connection fails or no partition is left;
// every partition it held then goes back to the router. Each fetch has a deadline of
// fetchMaxWait plus askTimeout. A dial that fails, and an error Kafka gives for a
// partition that a new connection does not cure, count as a retry of that partition
// and pause it with a growing backoff; a leader change, a fetch that times out or a
// broken connection send the partition back to the router at once (then after a
// pause that grows while no record is read); so a broker restart never loses or
// repeats a record.
func (fr *fetcher) fetchLeader(ctx context.Context, f *leaderFetch) {
	r := fr.r
	defer func() {
		if ps := f.finish(); len(ps) > 0 {
			fr.orphans <- ps
		}
	}()
	if !fr.waitReady(ctx, f.snapshot()) {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, r.askTimeout())
	conn, err := dialBroker(dctx, r.cfg.Dialer, f.leader.Addr)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			for _, p := range f.snapshot() {
				fr.failed(p, err)
			}
		}
		return
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.setDeadline(time.Now()) })
	defer stop()
	var (
		ready   []int
		offsets []int64
		turn    int
	)
	for {
		ps := f.snapshot()
		if len(ps) == 0 {
			return
		}
		conn.setDeadline(time.Now().Add(fetchMaxWait + r.askTimeout()))
		if ctx.Err() != nil { // after the deadline: a cancel from now on ends the request
			return
		}
		if err := fr.positionFirst(conn, f, ps); err != nil {
			fr.reroute(ctx, f.snapshot(), err)
			return
		}
		// Partitions in backoff wait, out of the session; the others are asked in an
		// order that turns at each full request, so that a full answer favours none (in
		// a session the broker turns them: one that returned records goes last).
		now := time.Now()
		ready, offsets = ready[:0], offsets[:0]
		wake := time.Time{}
		turn++
		for i := range ps {
			p := ps[(i+turn)%len(ps)]
			pos := &fr.pos[p]
			switch {
			case pos.next < 0: // positionFirst failed for it
			case pos.notBefore.After(now):
				if wake.IsZero() || pos.notBefore.Before(wake) {
					wake = pos.notBefore
				}
			default:
				ready = append(ready, p)
				offsets = append(offsets, pos.next)
			}
		}
		if len(ready) == 0 {
			if wake.IsZero() {
				wake = now.Add(fetchMaxWait)
			}
			if !sleep(ctx, time.Until(wake)) {
				return
			}
			continue
		}
		id, epoch := conn.session.id, conn.session.epoch
		answer, err := conn.fetch(r.cfg.Topic, ready, offsets)
		if err == nil {
			var top fetchTop
			top, err = parseFetch(answer, conn.fetchV, r.cfg.Topic, func(fp fetchPartition) error {
				return fr.fetched(conn, f, ready, fp)
			})
			switch {
			case err != nil:
			case conn.session.answered(top.SessionID, top.Err):
				// The broker dropped the session (evicted from its cache, or restarted):
				// the next request is full, and opens a new one.
				r.log.Info("reading group records: the leader refused the fetch session; starting a new one",
					"topic", r.cfg.Topic, "leader", f.leader.String(), "session_id", id, "session_epoch", epoch,
					"error", top.Err)
				continue
			case top.Err != 0:
				err = fmt.Errorf("fetch from %s: %w", conn.addr, top.Err)
			case epoch == initialEpoch && conn.session.epoch == 1:
				r.log.Debug("reading group records: fetch session opened", "topic", r.cfg.Topic,
					"leader", f.leader.String(), "session_id", top.SessionID, "partitions", len(ready))
			}
		}
		var herr handlerError
		if errors.As(err, &herr) {
			fr.fail(herr.err)
			return
		}
		if err != nil { // f no longer holds the partitions it gave back since ps
			fr.reroute(ctx, f.snapshot(), err)
			return
		}
	}
}

// fetched handles one partition of a Fetch answer: its records, or its error.
func (fr *fetcher) fetched(conn *fetchConn, f *leaderFetch, asked []int, fp fetchPartition) error {
	r := fr.r
	p := fp.Partition
	if !slices.Contains(asked, p) {
		return nil
	}
	pos := &fr.pos[p]
	st := &fr.parts[p]
	switch {
	case fp.Err == nil:
		got, err := filterRecords(p, fp.Records, pos.next)
		if got.read > 0 || got.next > pos.next {
			pos.next = got.next
			if herr := fr.deliver(p, got.batch, got.read, got.next); herr != nil {
				return handlerError{herr}
			}
			r.progressed(p, st, got.next, fp.HighWatermark, got.last)
			pos.backoff = 250 * time.Millisecond
		}
		if err != nil {
			fr.failed(p, err)
		}
	case errors.Is(fp.Err, kafka.OffsetOutOfRange):
		// Retention or compaction removed pos.next, or the leader is behind it (a new
		// leader that has not caught up): start at its first offset, or wait for the
		// records.
		first, errs, err := conn.earliest(r.cfg.Topic, []int{p})
		if err != nil {
			return err // the connection is gone
		}
		switch {
		case errs[0] != nil:
			fr.failed(p, errs[0])
		case pos.next < first[0]:
			r.log.Warn("group records removed before they were read; skipping them", "topic", r.cfg.Topic,
				"partition", p, "offset", pos.next, "first_offset", first[0])
			pos.next = first[0]
		default:
			pos.notBefore = time.Now().Add(fetchMaxWait)
		}
	case reconnect(fp.Err):
		r.log.Debug("reading group records: the partition's leader changed", "topic", r.cfg.Topic, "partition", p,
			"leader", f.leader.String(), "offset", pos.next, "error", fp.Err)
		f.remove(p)
		fr.pause(p)
		fr.orphans <- []int{p}
	case errors.Is(fp.Err, kafka.RequestTimedOut):
	default:
		fr.failed(p, fp.Err)
	}
	return nil
}

// positionFirst asks the leader for the first offset of each of ps not read yet.
// Only a failed request is returned; a partition's error counts as its retry.
func (fr *fetcher) positionFirst(conn *fetchConn, f *leaderFetch, ps []int) error {
	var need []int
	for _, p := range ps {
		if fr.pos[p].next < 0 && !fr.pos[p].notBefore.After(time.Now()) {
			need = append(need, p)
		}
	}
	if len(need) == 0 {
		return nil
	}
	first, errs, err := conn.earliest(fr.r.cfg.Topic, need)
	if err != nil {
		return err
	}
	for i, p := range need {
		switch {
		case errs[i] == nil:
			fr.pos[p].next = first[i]
		case reconnect(errs[i]):
			f.remove(p)
			fr.pause(p)
			fr.orphans <- []int{p}
		default:
			fr.failed(p, errs[i])
		}
	}
	return nil
}

// reroute gives ps back to the router after err broke their fetcher's connection.
func (fr *fetcher) reroute(ctx context.Context, ps []int, err error) {
	if ctx.Err() != nil {
		return
	}
	for _, p := range ps {
		fr.pause(p)
	}
	fr.r.log.Debug("reading group records: dialing the leader again", "topic", fr.r.cfg.Topic, "partitions", ps,
		"error", err)
}

// pause sets the pause before partition p is fetched again after a reconnect error:
// none at first, then growing to 1 s while no record of p is read.
func (fr *fetcher) pause(p int) {
	pos := &fr.pos[p]
	if pos.next != pos.routedAt {
		pos.redial = 0
	}
	pos.notBefore = time.Now().Add(pos.redial)
	pos.redial = min(max(2*pos.redial, 50*time.Millisecond), time.Second)
}

// failed counts a failed read of partition p (a retry) and pauses the partition with
// a growing backoff.
func (fr *fetcher) failed(p int, err error) {
	r := fr.r
	pos := &fr.pos[p]
	st := &fr.parts[p]
	r.retries.Add(1)
	st.lastErr.Store(&err)
	st.failingSince.CompareAndSwap(0, r.now().UnixNano())
	r.log.Warn("reading group records failed; retrying", "topic", r.cfg.Topic, "partition", p,
		"offset", pos.next, "error", err, "retry_in", pos.backoff)
	pos.notBefore = time.Now().Add(pos.backoff)
	pos.backoff = min(2*pos.backoff, 10*time.Second)
}

// waitReady sleeps until the earliest time one of ps may be fetched.
func (fr *fetcher) waitReady(ctx context.Context, ps []int) bool {
	var wake time.Time
	for i, p := range ps {
		if t := fr.pos[p].notBefore; i == 0 || t.Before(wake) {
			wake = t
		}
	}
	return sleep(ctx, time.Until(wake))
}

// handlerError is an error of Run's handler, which ends Run.
type handlerError struct{ err error }

func (e handlerError) Error() string { return e.err.Error() }

// reconnect reports whether an error Kafka gives for a partition is cured by asking
// the partition's leader again, on a new connection: the leader moved. Other errors
// (authorization, an unknown codec) are retried after a backoff, and counted.
func reconnect(err error) bool {
	return errors.Is(err, kafka.NotLeaderForPartition) || errors.Is(err, kafka.UnknownTopicOrPartition) ||
		errors.Is(err, kafka.LeaderNotAvailable) || errors.Is(err, kafka.FencedLeaderEpoch) ||
		errors.Is(err, kafka.UnknownLeaderEpoch)
}
