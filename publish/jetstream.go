package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ensureStream returns the stream that captures this cluster's subjects, creating it from
// the Config when no stream does.
func (p *Publisher) ensureStream(ctx context.Context) (jetstream.Stream, error) {
	p.streamMu.Lock()
	defer p.streamMu.Unlock()
	if p.stream != nil {
		return p.stream, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	probe := p.Subject(ConsumerGroup, "")
	name, err := p.js.StreamNameBySubject(ctx, probe)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		_, err = p.js.CreateStream(ctx, p.streamConfig())
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil, fmt.Errorf("creating stream %s: %w", p.cfg.Stream, err)
		}
		if err == nil {
			p.log.Info("stream created", "stream", p.cfg.Stream, "subject", p.StreamSubjects(),
				"replicas", p.cfg.Replicas, "max_age", p.cfg.MaxAge, "max_msgs_per_subject", p.cfg.MaxMsgsPerSubject)
		}
		name = p.cfg.Stream
	case err != nil:
		return nil, fmt.Errorf("looking up the stream for %s: %w", probe, err)
	case name != p.cfg.Stream:
		p.log.Info("using existing stream", "stream", name, "configured_stream", p.cfg.Stream, "subject", probe)
	}
	s, err := p.js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	// A stream of that name that does not capture our subjects (created with other
	// subjects) is a configuration error that retrying will not fix by itself.
	if got, err := p.js.StreamNameBySubject(ctx, probe); err != nil || got != name {
		return nil, fmt.Errorf("stream %s exists but does not capture %s", name, p.StreamSubjects())
	}
	p.stream = s
	p.streamName.Store(&name)
	return s, nil
}

// forgetStream makes the next attempt look the stream up again (deleted, or replaced),
// and forgets every subject's last message: a new stream numbers from 1 again.
func (p *Publisher) forgetStream() {
	p.streamMu.Lock()
	p.stream = nil
	p.streamName.Store(nil)
	p.streamMu.Unlock()
	p.mu.Lock()
	clear(p.last)
	p.loaded = false
	p.mu.Unlock()
}

func (p *Publisher) streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              p.cfg.Stream,
		Description:       "kraftwatch rebalance-needed events of Kafka cluster " + p.cfg.ClusterID,
		Subjects:          []string{p.StreamSubjects()},
		Retention:         jetstream.LimitsPolicy,
		Storage:           p.cfg.Storage,
		Replicas:          p.cfg.Replicas,
		MaxAge:            p.cfg.MaxAge,
		MaxMsgsPerSubject: p.cfg.MaxMsgsPerSubject,
		MaxBytes:          p.cfg.MaxBytes,
		MaxMsgs:           -1,
		Discard:           jetstream.DiscardOld,
		Duplicates:        p.cfg.DuplicateWindow,
		// Reads of a subject's last message go to the stream leader: direct gets may be
		// answered by a replica that lags.
		AllowDirect: false,
	}
}

// tryJetStream makes one attempt: know the subject's last message (from memory, or read
// when refresh is set or nothing is known), skip the event if that message makes it
// unnecessary, else publish it expecting that last sequence.
func (p *Publisher) tryJetStream(ctx context.Context, pm *pending, refresh bool) (outcome, uint64, error) {
	if !p.nc.IsConnected() {
		return 0, 0, errNotConnected
	}
	s, err := p.ensureStream(ctx)
	if err != nil {
		return 0, 0, err
	}
	st, err := p.lastFor(ctx, s, pm.subject, refresh)
	if err != nil {
		return 0, 0, err
	}
	if out, done := judge(st.ev, pm); done {
		return out, 0, nil
	}
	actx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	ack, err := p.js.PublishMsg(actx, pm.newMsg(),
		jetstream.WithExpectLastSequencePerSubject(st.seq),
		jetstream.WithExpectStream(s.CachedInfo().Config.Name))
	switch {
	case wrongLastSeq(err):
		return outConflict, 0, nil
	case noStream(err):
		p.forgetStream()
		return 0, 0, err
	case err != nil:
		return 0, 0, err
	case ack.Duplicate:
		// Stored earlier (an attempt whose ack was lost, within the duplicate window).
		p.markStale(pm.subject)
		return outAlready, ack.Sequence, nil
	}
	p.remember(pm.subject, lastState{seq: ack.Sequence, ev: pm.lastEvent()})
	return outPublished, ack.Sequence, nil
}

func wrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

func noStream(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamNotFound ||
			apiErr.ErrorCode == errCodeStreamMismatch)
}

// errCodeStreamMismatch is nats-server's JSStreamMismatchErr, "expected stream does not
// match": the subject is now captured by another stream.
const errCodeStreamMismatch jetstream.ErrorCode = 10060

// lastFor returns what is known of subject's last message, reading it from the stream
// when refresh is set or nothing is known.
func (p *Publisher) lastFor(ctx context.Context, s jetstream.Stream, subject string, refresh bool) (lastState, error) {
	if !refresh {
		p.mu.Lock()
		st, ok := p.last[subject]
		loaded := p.loaded
		p.mu.Unlock()
		switch {
		case ok && !st.stale:
			return *st, nil
		case !ok && loaded:
			return lastState{}, nil
		}
	}
	st, err := p.readLast(ctx, s, subject)
	if err != nil {
		return lastState{}, err
	}
	return p.remember(subject, st), nil
}

// readLast reads subject's last message from the stream.
func (p *Publisher) readLast(ctx context.Context, s jetstream.Stream, subject string) (lastState, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return lastState{}, nil
	}
	if err != nil {
		if noStream(err) {
			p.forgetStream()
		}
		return lastState{}, fmt.Errorf("reading the last event of %s: %w", subject, err)
	}
	return lastState{seq: m.Sequence, ev: p.decodeLast(subject, m.Sequence, m.Data)}, nil
}

// decodeLast decodes a stored event, or logs why it cannot and returns nil: such a
// message still gives the subject's last sequence, but announces nothing.
func (p *Publisher) decodeLast(subject string, seq uint64, data []byte) *lastEvent {
	env, err := Decode(data)
	if err == nil && p.Subject(env.Data.GroupType, env.Data.GroupID) != subject {
		err = fmt.Errorf("its group %s %q belongs on another subject", env.Data.GroupType, env.Data.GroupID)
	}
	if err != nil {
		p.log.Warn("stored message is not a rebalance-needed event of this subject; ignored",
			"subject", subject, "seq", seq, "error", err)
		return nil
	}
	d := &env.Data
	return &lastEvent{key: d.Key(), id: env.ID, hash: int64(d.NewHash), scheme: d.HashScheme, cause: d.Cause, time: env.Time}
}

// remember records st as subject's last message and returns it. The latest read or ack
// wins even when its sequence is lower: the stream may have been purged or made anew, and
// a read that raced with a newer ack only costs a refused publish and a new read.
func (p *Publisher) remember(subject string, st lastState) lastState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.stale = false
	p.last[subject] = &st
	return st
}

func (p *Publisher) markStale(subject string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.last[subject]; ok {
		cur.stale = true
	} else if p.loaded {
		p.last[subject] = &lastState{stale: true}
	}
}

// LastPublished returns the hash last announced for a group: the new hash of the last
// event on its subject, read from the stream the first time a group is asked for (or
// primed by LoadLastPublished) and then kept up to date by this publisher's own
// publishes. ok is false when the group has no event, when its last message is not a
// readable event, or when that event used another hash scheme than the Config's. Events
// still queued are not counted. Like LoadLastPublished, it creates the stream when it is
// missing. In ModeCore only this process's publishes are known.
func (p *Publisher) LastPublished(ctx context.Context, t GroupType, groupID string) (hash int64, ok bool, err error) {
	subject := p.Subject(t, groupID)
	var st lastState
	if p.js == nil {
		p.mu.Lock()
		if cur := p.last[subject]; cur != nil {
			st = *cur
		}
		p.mu.Unlock()
	} else {
		s, err := p.ensureStream(ctx)
		if err != nil {
			return 0, false, err
		}
		if st, err = p.lastFor(ctx, s, subject, false); err != nil {
			return 0, false, err
		}
	}
	if st.ev == nil || st.ev.scheme != p.cfg.HashScheme {
		return 0, false, nil
	}
	return st.ev.hash, true, nil
}

// LoadLastPublished reads the last event of every group subject of this cluster in one
// pass (a JetStream consumer delivering the last message per subject) and returns them
// by group, whatever their hash scheme. It also primes what LastPublished and the workers
// know: afterwards a group without an entry is taken to have no event, without asking the
// server (a publish that finds otherwise is refused by the server and re-reads). In
// ModeCore it returns what this process published.
func (p *Publisher) LoadLastPublished(ctx context.Context) (map[GroupKey]Last, error) {
	out := make(map[GroupKey]Last)
	if p.js == nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, st := range p.last {
			if st.ev != nil {
				out[st.ev.key] = st.ev.export(st.seq)
			}
		}
		return out, nil
	}
	s, err := p.ensureStream(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Description:       "kraftwatch: read the last event of each group",
		DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		FilterSubject:     p.root + ".group.>",
		MemoryStorage:     true,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("creating a consumer on %s: %w", s.CachedInfo().Config.Name, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.PublishTimeout)
		defer cancel()
		if err := s.DeleteConsumer(dctx, c.CachedInfo().Name); err != nil {
			p.log.Debug("deleting the load consumer", "error", err) // it expires anyway
		}
	}()
	states := make(map[string]lastState)
	for left := c.CachedInfo().NumPending; left > 0; {
		if left, err = p.fetchLast(ctx, c, left, states); err != nil {
			return nil, fmt.Errorf("reading last events: %w", err)
		}
	}
	p.mu.Lock()
	for subject, st := range states {
		p.last[subject] = &st
	}
	p.loaded = true
	for _, st := range p.last {
		if st.ev != nil {
			out[st.ev.key] = st.ev.export(st.seq)
		}
	}
	p.mu.Unlock()
	p.log.Info("last events loaded", "stream", s.CachedInfo().Config.Name, "groups", len(out), "subjects", len(states),
		"elapsed", time.Since(start))
	return out, nil
}

// fetchLast reads up to left messages (at most 1000) of the last-per-subject consumer c
// into states and returns how many the consumer has left.
func (p *Publisher) fetchLast(ctx context.Context, c jetstream.Consumer, left uint64, states map[string]lastState) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	batch, err := c.Fetch(int(min(left, 1000)), jetstream.FetchContext(ctx))
	if err != nil {
		return 0, err
	}
	n := 0
	for m := range batch.Messages() {
		n++
		meta, err := m.Metadata()
		if err != nil {
			return 0, err
		}
		left = meta.NumPending
		states[m.Subject()] = lastState{seq: meta.Sequence.Stream, ev: p.decodeLast(m.Subject(), meta.Sequence.Stream, m.Data())}
	}
	if n == 0 {
		return 0, fmt.Errorf("none arrived within %v, %d pending: %w", p.cfg.PublishTimeout, left, batch.Error())
	}
	if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return 0, err
	}
	return left, nil
}
