package publish

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// worker publishes the events of one shard of the subjects (Publisher.shard). It holds
// at most window events at once, one per subject: the others of a subject wait behind
// it in Enqueue order. In ModeJetStream the held events are published without waiting,
// all in flight together, each with its own reply subject (ack.go); onReply hands each
// answer back through acks, whose room (window) is the publishes in flight, so the
// reply subscription's goroutine seldom waits on it. A worker's fields and the attempt
// fields of the events it holds belong to its goroutine (run).
type worker struct {
	p      *Publisher
	index  int
	window int
	in     chan *pending  // from Enqueue; closed by Run
	acks   chan *nats.Msg // from onReply

	held    map[string]*pending   // by target subject: the event being published, in flight or waiting for a retry
	queued  map[string][]*pending // by target subject: later events of a held subject, in Enqueue order
	waiting []*pending            // held events waiting for their next attempt (pending.due)
	n       int                   // events taken from in and not finished
	timer   *time.Timer           // fires at the earliest due of waiting

	msg      *nats.Msg           // reused for every publish (PublishMsg copies it out)
	token    uint64              // the last token given to a publish
	inflight map[uint64]*pending // by token: the events whose publish awaits its answer
	// deadlines lists the publishes in flight in the order sent, when each times out:
	// one Config.PublishTimeout for all, so they time out in that order. Entries of
	// answered publishes stay until they come first.
	deadlines   []deadline
	ackTimer    *time.Timer // fires at deadlines[0].due
	reply       []byte      // scratch for reply subjects
	replyPrefix string      // "<inbox>.<index>."
}

type deadline struct {
	token uint64
	due   time.Time
}

// run publishes events until in is closed and every event taken is finished, or until
// ctx ends (the drain timeout): then every event held or left in in is dropped, and run
// returns how many.
func (w *worker) run(ctx context.Context) uint64 {
	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	defer w.timer.Stop()
	w.ackTimer = time.NewTimer(time.Hour)
	w.ackTimer.Stop()
	defer w.ackTimer.Stop()
	w.msg = newJSMsg()
	w.replyPrefix = w.p.inbox + "." + strconv.Itoa(w.index) + "."
	in := w.in
	for in != nil || w.n > 0 {
		recv := in
		if w.n >= w.window {
			recv = nil
		}
		select {
		case pm, ok := <-recv:
			if !ok {
				in = nil
				continue
			}
			w.n++
			w.admit(ctx, pm)
		case m := <-w.acks:
			w.acked(ctx, m)
		case <-w.ackTimer.C:
			w.expire(ctx)
		case <-w.timer.C:
			w.retryDue(ctx)
		case <-ctx.Done():
			return w.dropAll(ctx, in)
		}
	}
	return 0
}

// admit starts pm, or queues it behind the held event of its subject.
func (w *worker) admit(ctx context.Context, pm *pending) {
	if _, busy := w.held[pm.target]; busy {
		w.queued[pm.target] = append(w.queued[pm.target], pm)
		return
	}
	w.held[pm.target] = pm
	w.attempt(ctx, pm)
}

// attempt makes one attempt at pm: in ModeJetStream it ends here only when the event is
// unnecessary or the attempt failed at once; otherwise its outcome comes through acks.
func (w *worker) attempt(ctx context.Context, pm *pending) {
	if w.p.js == nil {
		out, err := w.p.tryCore(ctx, pm)
		if err != nil {
			w.failed(ctx, pm, err)
			return
		}
		w.finish(ctx, pm, out, 0)
		return
	}
	w.token++
	w.reply = strconv.AppendUint(append(w.reply[:0], w.replyPrefix...), w.token, 10)
	out, done, err := w.p.publishAsync(ctx, pm, w.msg, string(w.reply))
	switch {
	case err != nil:
		w.failed(ctx, pm, err)
	case done:
		w.finish(ctx, pm, out, 0)
	default:
		pm.token = w.token
		w.inflight[pm.token] = pm
		w.deadlines = append(w.deadlines, deadline{token: pm.token, due: time.Now().Add(w.p.cfg.PublishTimeout)})
		if len(w.deadlines) == 1 {
			w.ackTimer.Reset(w.p.cfg.PublishTimeout)
		}
	}
}

// acked ends the attempt the answer m is for.
func (w *worker) acked(ctx context.Context, m *nats.Msg) {
	token, ok := replyToken(m.Subject)
	pm := w.inflight[token]
	if !ok || pm == nil {
		return // answered after it timed out: the retry reads the subject's last event
	}
	delete(w.inflight, token)
	pm.token = 0
	seq, duplicate, err := parseAck(m)
	w.answered(ctx, pm, seq, duplicate, err)
}

// expire fails the publishes in flight whose answer is overdue.
func (w *worker) expire(ctx context.Context) {
	now := time.Now()
	i := 0
	for ; i < len(w.deadlines) && !w.deadlines[i].due.After(now); i++ {
		if pm := w.inflight[w.deadlines[i].token]; pm != nil {
			delete(w.inflight, pm.token)
			pm.token = 0
			w.answered(ctx, pm, 0, false, errAckTimeout)
		}
	}
	w.deadlines = w.deadlines[i:]
	if len(w.deadlines) == 0 {
		w.deadlines = w.deadlines[:0:0] // let the array go
		return
	}
	w.ackTimer.Reset(time.Until(w.deadlines[0].due))
}

// answered ends pm's attempt with the server's answer (or errAckTimeout).
func (w *worker) answered(ctx context.Context, pm *pending, seq uint64, duplicate bool, err error) {
	out, seq, err := w.p.outcome(pm, seq, duplicate, err)
	switch {
	case err != nil:
		w.failed(ctx, pm, err)
	case out == outConflict:
		p := w.p
		p.stats.conflicts.Add(1)
		pm.conflicts++
		pm.refresh = true
		p.log.Debug("subject written by another publisher; reading it again", "group", pm.key.ID,
			"group_type", pm.key.Type.String(), "subject", pm.subject, "msg_id", pm.id, "conflicts", pm.conflicts)
		if pm.conflicts > 3 { // many publishers racing on one group: let them breathe
			w.wait(pm, jitter(backoff(p.cfg.RetryMin, p.cfg.RetryMax, pm.conflicts-3)))
			return
		}
		w.attempt(ctx, pm)
	default:
		w.finish(ctx, pm, out, seq)
	}
}

// failed counts a failed attempt at pm and schedules the next one with backoff, or
// drops pm when no retry can help.
func (w *worker) failed(ctx context.Context, pm *pending, err error) {
	p := w.p
	p.stats.failed.Add(1)
	if permanent(err) {
		if pm.failures > 0 {
			p.unfail()
		}
		p.drop(pm, pm.failures+1, err)
		w.release(ctx, pm)
		return
	}
	if pm.failures == 0 {
		p.failing.Add(1)
	}
	pm.failures++
	pm.refresh = true
	d := jitter(backoff(p.cfg.RetryMin, p.cfg.RetryMax, pm.failures))
	p.logFailure(pm, w.index, d, err)
	p.stats.retried.Add(1)
	w.wait(pm, d)
}

// wait holds pm until its next attempt, d from now.
func (w *worker) wait(pm *pending, d time.Duration) {
	pm.due = time.Now().Add(d)
	w.waiting = append(w.waiting, pm)
	w.resetTimer()
}

// retryDue attempts the waiting events that are due.
func (w *worker) retryDue(ctx context.Context) {
	now := time.Now()
	var due []*pending
	kept := w.waiting[:0]
	for _, pm := range w.waiting {
		if pm.due.After(now) {
			kept = append(kept, pm)
		} else {
			due = append(due, pm)
		}
	}
	clear(w.waiting[len(kept):])
	w.waiting = kept
	w.resetTimer()
	for _, pm := range due {
		w.attempt(ctx, pm)
	}
}

func (w *worker) resetTimer() {
	if len(w.waiting) == 0 {
		w.timer.Stop()
		return
	}
	first := w.waiting[0].due
	for _, pm := range w.waiting[1:] {
		if pm.due.Before(first) {
			first = pm.due
		}
	}
	w.timer.Reset(time.Until(first))
}

// finish ends pm normally (published, already there or superseded).
func (w *worker) finish(ctx context.Context, pm *pending, out outcome, seq uint64) {
	if pm.failures > 0 {
		w.p.unfail()
	}
	w.p.finish(pm, out, seq)
	w.release(ctx, pm)
}

// release lets go of a finished pm and starts the next event of its subject.
func (w *worker) release(ctx context.Context, pm *pending) {
	delete(w.held, pm.target)
	w.n--
	w.p.queued.Add(-1)
	q := w.queued[pm.target]
	if len(q) == 0 {
		return
	}
	next := q[0]
	if len(q) == 1 {
		delete(w.queued, pm.target)
	} else {
		q[0] = nil
		w.queued[pm.target] = q[1:]
	}
	w.held[next.target] = next
	w.attempt(ctx, next)
}

// dropAll drops every event held, queued or left in in (closed by now: ctx ends only
// after Run closed it) and returns how many.
func (w *worker) dropAll(ctx context.Context, in chan *pending) uint64 {
	cause := context.Cause(ctx)
	var n uint64
	drop := func(pm *pending) {
		if pm.failures > 0 {
			w.p.unfail()
		}
		w.p.drop(pm, pm.failures, cause)
		w.p.queued.Add(-1)
		n++
	}
	for _, pm := range w.held {
		drop(pm)
	}
	for _, q := range w.queued {
		for _, pm := range q {
			drop(pm)
		}
	}
	if in != nil {
		for pm := range in {
			drop(pm)
		}
	}
	clear(w.held)
	clear(w.queued)
	clear(w.inflight)
	w.waiting, w.n = nil, 0
	return n
}

// failLog rate-limits the lines about failing attempts, which all events share when a
// dependency fails: the first failure after a healthy spell is logged at once, then a
// summary every Config.FailureLogEvery while attempts keep failing (each attempt is
// counted in Stats.Failed), and one line when no event waits for a retry any more.
type failLog struct {
	mu       sync.Mutex
	failing  bool
	since    time.Time // the first failure
	logged   time.Time // the last line
	attempts uint64    // failed attempts since the first
	unlogged uint64    // failed attempts since the last line
}

// logFailure records a failed attempt at pm (worker w, retried in retryIn).
func (p *Publisher) logFailure(pm *pending, w int, retryIn time.Duration, err error) {
	last := err
	p.lastErr.Store(&last)
	if cerr := p.connErr(); cerr != nil && !p.nc.IsConnected() {
		err = cerr // the connection's cause, not the attempt's timeout
	}
	f := &p.failLog
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts++
	f.unlogged++
	switch {
	case !f.failing:
		f.failing, f.since, f.logged, f.attempts, f.unlogged = true, now, now, 1, 0
		p.log.Warn("publish failed; retrying (further failures are summed up every "+p.cfg.FailureLogEvery.String()+")",
			"group", pm.key.ID, "group_type", pm.key.Type.String(), "subject", pm.subject, "msg_id", pm.id,
			"worker", w, "retry_in", retryIn, "error", err)
	case now.Sub(f.logged) >= p.cfg.FailureLogEvery:
		p.log.Warn("publish still failing; retrying", "failed_attempts", f.unlogged, "events_waiting", p.failing.Load(),
			"queued", p.queued.Load(), "failing_for", now.Sub(f.since).Round(time.Second), "error", err)
		f.logged, f.unlogged = now, 0
	}
}

// unfail ends the failing spell of one event; the last one logs the recovery.
func (p *Publisher) unfail() {
	if p.failing.Add(-1) != 0 {
		return
	}
	f := &p.failLog
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failing || p.failing.Load() != 0 {
		return
	}
	f.failing = false
	p.log.Info("publish recovered", "failed_attempts", f.attempts, "failing_for", time.Since(f.since).Round(time.Millisecond))
}
