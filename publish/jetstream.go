package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
)

// ensureStream returns the stream that captures this cluster's internal subjects,
// checked (checkStream), after updating a stream of the older shape (upgradeStream) or
// creating one from the Config when no stream captures the cluster's subjects.
func (p *Publisher) ensureStream(ctx context.Context) (jetstream.Stream, error) {
	p.streamMu.Lock()
	defer p.streamMu.Unlock()
	if p.stream != nil {
		return p.stream, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	public := p.Subject(events.ConsumerGroup, "")
	probe := internal(public)
	name, err := p.js.StreamNameBySubject(ctx, probe)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		if name, err = p.upgradeOrCreate(ctx, public); err != nil {
			return nil, err
		}
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
		return nil, fmt.Errorf("%w: stream %s exists but does not capture %s (want %s)", ErrStreamConfig, name, p.StreamSubjects(), p.shape())
	}
	if err := p.checkStream(s.CachedInfo().Config); err != nil {
		return nil, err
	}
	p.stream = s
	p.streamName.Store(&name)
	if err := p.checkEvents(ctx, name); err != nil {
		p.log.Warn("events stream not checked; Run retries", "stream", p.cfg.EventsStream, "error", err)
	}
	return s, nil
}

// checkEvents runs ensureEvents and records its outcome.
func (p *Publisher) checkEvents(ctx context.Context, internal string) error {
	name, err := p.ensureEvents(ctx, internal)
	if err != nil {
		return err
	}
	if name != "" {
		p.eventsStream.Store(&name)
	} else {
		p.eventsStream.Store(nil)
	}
	p.eventsChecked.Store(true)
	return nil
}

// upgradeOrCreate runs when no stream captures the internal subjects: a stream of the
// older shape that captures the public subject is updated (upgradeStream), else the
// stream is created. A stream that captures the public subjects otherwise (the events
// stream, an operator's or a user's stream) is left alone: ensureEvents says what it
// means for subscribers. It returns the stream's name.
func (p *Publisher) upgradeOrCreate(ctx context.Context, public string) (string, error) {
	name, err := p.js.StreamNameBySubject(ctx, public)
	switch {
	case err == nil:
		s, err := p.js.Stream(ctx, name)
		if err != nil {
			return "", fmt.Errorf("stream %s: %w", name, err)
		}
		if p.olderShape(s.CachedInfo().Config) {
			return name, p.upgradeStream(ctx, name)
		}
	case !errors.Is(err, jetstream.ErrStreamNotFound):
		return "", fmt.Errorf("looking up the stream for %s: %w", public, err)
	}
	_, err = p.js.CreateStream(ctx, p.streamConfig())
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return "", fmt.Errorf("creating stream %s: %w", p.cfg.Stream, err)
	}
	if err == nil {
		p.log.Info("stream created", "stream", p.cfg.Stream, "subject", p.Subjects(), "stream_subjects", p.StreamSubjects(),
			"replicas", p.cfg.Replicas, "max_age", p.cfg.MaxAge, "max_msgs_per_subject", p.cfg.MaxMsgsPerSubject)
	}
	return p.cfg.Stream, nil
}

// olderShape reports whether cfg is a stream as older kraftwatch versions created it:
// its only subject is "<prefix>.<cluster token>.>", no subject transform, no republish,
// no mirror or sources, not sealed. Nothing but kraftwatch publishes into such a stream.
func (p *Publisher) olderShape(cfg jetstream.StreamConfig) bool {
	return len(cfg.Subjects) == 1 && cfg.Subjects[0] == p.Subjects() && cfg.SubjectTransform == nil && cfg.RePublish == nil &&
		cfg.Mirror == nil && len(cfg.Sources) == 0 && !cfg.Sealed
}

// upgradeStream updates stream name, a stream of the older shape (olderShape) that
// captures the public subjects directly, to capture the internal subjects, store them as
// the public ones and republish what it stores. Stored events keep their subjects and
// sequences, so last-per-subject reads and the expected-last-sequence checks go on where
// they were; the events stream then sources them all.
func (p *Publisher) upgradeStream(ctx context.Context, name string) error {
	s, err := p.js.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	cfg := s.CachedInfo().Config
	if !p.olderShape(cfg) {
		return fmt.Errorf("%w: stream %s is no longer of the older kraftwatch shape (one subject %s): %q",
			ErrStreamConfig, name, p.Subjects(), cfg.Subjects)
	}
	p.withShape(&cfg)
	if _, err := p.js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("updating stream %s to %s: %w", name, p.shape(), err)
	}
	p.log.Warn("stream updated: it captured the public subjects directly; kraftwatch now publishes to internal subjects "+
		"and the stream republishes only the events it stores (older kraftwatch versions cannot use it any more)",
		"stream", name, "subject", p.Subjects(), "stream_subjects", p.StreamSubjects())
	return nil
}

// withShape sets the subjects, subject transform and republish of a kraftwatch stream.
func (p *Publisher) withShape(cfg *jetstream.StreamConfig) {
	cfg.Subjects = []string{p.StreamSubjects()}
	cfg.SubjectTransform = &jetstream.SubjectTransformConfig{Source: p.StreamSubjects(), Destination: p.Subjects()}
	cfg.RePublish = &jetstream.RePublish{Source: p.Subjects(), Destination: p.Subjects()}
}

// shape describes withShape's settings, for error messages.
func (p *Publisher) shape() string {
	return fmt.Sprintf("subjects [%s], subject transform %s -> %s, republish %s -> %s (not headers only)",
		p.StreamSubjects(), p.StreamSubjects(), p.Subjects(), p.Subjects(), p.Subjects())
}

// checkStream returns an error wrapping ErrStreamConfig unless a stream with cfg stores
// what is published to each group type's internal subject under the public subject and
// republishes it, whole, to that same public subject. The stream is not required to be
// exactly withShape's (an operator's stream for several clusters may use wider filters);
// the transforms are evaluated as nats-server evaluates them.
func (p *Publisher) checkStream(cfg jetstream.StreamConfig) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: stream %s: %s; want %s", ErrStreamConfig, cfg.Name, fmt.Sprintf(format, args...), p.shape())
	}
	st, rp := cfg.SubjectTransform, cfg.RePublish
	if st == nil {
		return bad("no subject transform, so events would be stored under %s", p.StreamSubjects())
	}
	if rp == nil || rp.HeadersOnly {
		return bad("no republish (or headers only), so core subscribers of %s would receive nothing", p.Subjects())
	}
	store, err := server.NewSubjectTransform(st.Source, st.Destination)
	if err != nil {
		return bad("subject transform %s -> %s: %v", st.Source, st.Destination, err)
	}
	src, dst := cmp.Or(rp.Source, ">"), cmp.Or(rp.Destination, ">")
	republish, err := server.NewSubjectTransform(src, dst)
	if err != nil {
		return bad("republish %s -> %s: %v", src, dst, err)
	}
	for t := events.ClassicGroup; t <= events.StreamsGroup; t++ {
		public := p.Subject(t, "")
		got, err := store.Match(internal(public))
		if err != nil {
			got = internal(public) // the server stores a subject the transform does not match as it is
		}
		if got != public {
			return bad("subject transform %s -> %s stores %s as %s", st.Source, st.Destination, internal(public), got)
		}
		if got, err := republish.Match(public); err != nil {
			return bad("republish %s -> %s does not republish %s", src, dst, public)
		} else if got != public {
			return bad("republish %s -> %s sends %s to %s", src, dst, public, got)
		}
	}
	return nil
}

// forgetStream makes the next attempt look the stream up again (deleted, or replaced),
// and forgets every subject's last message: a new stream numbers from 1 again.
func (p *Publisher) forgetStream() {
	p.streamMu.Lock()
	p.stream = nil
	p.streamName.Store(nil)
	p.eventsChecked.Store(false)
	p.streamMu.Unlock()
	p.mu.Lock()
	clear(p.last)
	p.loaded = false
	p.mu.Unlock()
}

// streamConfig is the stream kraftwatch creates: see withShape for its subjects.
func (p *Publisher) streamConfig() jetstream.StreamConfig {
	cfg := jetstream.StreamConfig{
		Name:              p.cfg.Stream,
		Description:       "kraftwatch rebalance-needed events of Kafka cluster " + p.cfg.ClusterID,
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
	p.withShape(&cfg)
	return cfg
}

// publishAsync makes one attempt at pm: know the subject's last message (from memory,
// or read when pm.refresh is set or nothing is known), skip the event if that message
// makes it unnecessary (done), else publish it as m (the worker's message, reused)
// expecting that last sequence, with reply as its reply subject: the answer comes to
// onReply (see ack.go), and outcome reads it.
func (p *Publisher) publishAsync(ctx context.Context, pm *pending, m *nats.Msg, reply string) (out outcome, done bool, err error) {
	if !p.nc.IsConnected() {
		return 0, false, errNotConnected
	}
	s, err := p.ensureStream(ctx)
	if err != nil {
		return 0, false, err
	}
	st, err := p.lastFor(ctx, s, pm.subject, pm.refresh)
	if err != nil {
		return 0, false, err
	}
	pm.refresh = false
	if out, done := p.judge(st.ev, st.seq, pm); done {
		return out, true, nil
	}
	m.Subject, m.Reply, m.Data = pm.target, reply, pm.body
	m.Header[jetstream.MsgIDHeader][0] = pm.id
	m.Header[jetstream.ExpectedStreamHeader][0] = s.CachedInfo().Config.Name
	m.Header[jetstream.ExpectedLastSubjSeqHeader][0] = strconv.FormatUint(st.seq, 10)
	err = p.nc.PublishMsg(m)
	m.Data = nil // PublishMsg has copied it into the connection's buffer
	return 0, false, err
}

// newJSMsg returns the message a worker publishes with: the headers jetstream.WithMsgID,
// WithExpectStream and WithExpectLastSequencePerSubject set, and Content-Type, whose
// values publishAsync fills.
func newJSMsg() *nats.Msg {
	return &nats.Msg{Header: nats.Header{
		jetstream.MsgIDHeader:               make([]string, 1),
		"Content-Type":                      contentType,
		jetstream.ExpectedStreamHeader:      make([]string, 1),
		jetstream.ExpectedLastSubjSeqHeader: make([]string, 1),
	}}
}

// contentType is the Content-Type header's value, shared by every message (never
// modified).
var contentType = []string{events.ContentType}

// outcome reads the server's answer to pm's publish (parseAck's), or the error the
// attempt ended with.
func (p *Publisher) outcome(pm *pending, seq uint64, duplicate bool, err error) (outcome, uint64, error) {
	switch {
	case wrongLastSeq(err):
		return outConflict, 0, nil
	case noStream(err):
		p.forgetStream()
		return 0, 0, err
	case err != nil:
		return 0, 0, err
	case duplicate:
		// Stored earlier (an attempt whose ack was lost, within the duplicate window).
		p.markStale(pm.subject)
		return outAlready, seq, nil
	}
	p.remember(pm.subject, lastState{seq: seq, ev: pm.lastEvent()})
	return outPublished, seq, nil
}

func wrongLastSeq(err error) bool {
	if err == nil {
		return false // without the errors.As below, which allocates
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

func noStream(err error) bool {
	if err == nil {
		return false
	}
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
			return st, nil
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
	ev := p.decodeLast(subject, m.Sequence, m.Data)
	if ev != nil {
		ev.topics = nil // only LoadLastPublished returns them
	}
	return lastState{seq: m.Sequence, ev: ev}, nil
}

// decodeLast decodes a stored event, or logs why it cannot and returns nil: such a
// message still gives the subject's last sequence, but announces nothing.
func (p *Publisher) decodeLast(subject string, seq uint64, data []byte) *lastEvent {
	if strings.HasPrefix(subject, p.root+"."+events.RebalancedFamily+".") {
		return p.decodeLastRebalanced(subject, seq, data)
	}
	env, err := events.DecodeRebalanceNeeded(data)
	if err == nil && p.Subject(env.Data.GroupType, env.Data.GroupID) != subject {
		err = fmt.Errorf("its group %s %q belongs on another subject", env.Data.GroupType, env.Data.GroupID)
	}
	if err != nil {
		p.log.Warn("stored message is not a rebalance-needed event of this subject; ignored",
			"subject", subject, "seq", seq, "error", err)
		return nil
	}
	d := &env.Data
	return &lastEvent{key: d.Key(), id: env.ID, hash: int64(d.NewHash), scheme: d.HashScheme, cause: d.Cause, time: env.Time,
		topics: d.Topics, truncated: d.TopicsTruncated}
}

// remember records st as subject's last message and returns it. The latest read or ack
// wins even when its sequence is lower: the stream may have been purged or made anew, and
// a read that raced with a newer ack only costs a refused publish and a new read.
func (p *Publisher) remember(subject string, st lastState) lastState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.stale = false
	p.last[subject] = st
	return st
}

func (p *Publisher) markStale(subject string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.last[subject]; ok || p.loaded {
		cur.stale = true
		p.last[subject] = cur
	}
}

// LastPublished returns the hash last announced for a group: the new hash of the last
// event on its subject, read from the stream the first time a group is asked for (or
// primed by LoadLastPublished) and then kept up to date by this publisher's own
// publishes. ok is false when the group has no event, when its last message is not a
// readable event, or when that event used another hash scheme than the Config's. Events
// still queued are not counted. Like LoadLastPublished, it creates the stream when it is
// missing. In ModeCore only this process's publishes are known.
func (p *Publisher) LastPublished(ctx context.Context, t events.GroupType, groupID string) (hash int64, ok bool, err error) {
	subject := p.Subject(t, groupID)
	var st lastState
	if p.js == nil {
		p.mu.Lock()
		st = p.last[subject]
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

// LoadLastPublished reads the last event of every group subject of this cluster, of both
// families (rebalance-needed and rebalanced), in one pass (a JetStream consumer
// delivering the last message per subject) and returns the rebalance-needed ones by
// group, whatever their hash scheme. It also primes what LastPublished and the workers
// know: afterwards a group without an entry is taken to have no event, without asking the
// server (a publish that finds otherwise is refused by the server and re-reads). In
// ModeCore it returns what this process published.
func (p *Publisher) LoadLastPublished(ctx context.Context) (map[events.GroupKey]Last, error) {
	out := make(map[events.GroupKey]Last)
	if p.js == nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, st := range p.last {
			if st.ev != nil && st.ev.kind == kindNeeded {
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
		FilterSubjects:    []string{p.root + ".group.>", p.root + "." + events.RebalancedFamily + ".>"},
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
		p.last[subject] = st
	}
	p.loaded = true
	for _, st := range p.last {
		if st.ev != nil && st.ev.kind == kindNeeded {
			out[st.ev.key] = st.ev.export(st.seq)
			st.ev.topics = nil // returned; not kept
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

// ensureEvents makes sure subscribers that look a stream up by a public subject find one
// holding kraftwatch's events: a stream that captures "<prefix>.<cluster token>.>" and
// sources the stream named internal (the one kraftwatch publishes into). When no stream
// captures the public subjects it creates Config.EventsStream so, unless
// Config.NoEventsStream is set (then it only looks). A stream that captures
// them and does not source internal is left alone with a warning: clients that find
// streams by subject would read it, and it stores none of kraftwatch's events (the
// copies internal republishes carry Nats-Expected-Stream, which it refuses). It returns
// the name of the events stream, "" when there is none, and an error only when asking
// the server failed (worth retrying).
func (p *Publisher) ensureEvents(ctx context.Context, internal string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	var names []string
	l := p.js.StreamNames(ctx, jetstream.WithStreamListSubject(p.Subjects()))
	for name := range l.Name() {
		names = append(names, name)
	}
	if err := l.Err(); err != nil {
		return "", fmt.Errorf("listing the streams that capture %s: %w", p.Subjects(), err)
	}
	if len(names) == 0 && p.cfg.NoEventsStream {
		return "", nil
	}
	if len(names) == 0 {
		_, err := p.js.CreateStream(ctx, p.eventsConfig(internal))
		switch {
		case err == nil:
			p.log.Info("events stream created", "stream", p.cfg.EventsStream, "subject", p.Subjects(), "source", internal,
				"replicas", p.cfg.Replicas)
			return p.cfg.EventsStream, nil
		case errors.Is(err, jetstream.ErrStreamNameAlreadyInUse):
			p.log.Warn("a stream named like the events stream exists and does not capture the public subjects: "+
				"clients that look streams up by subject will find none; give it the subject and the source, or delete it",
				"stream", p.cfg.EventsStream, "subject", p.Subjects(), "source", internal)
			return "", nil
		default:
			return "", fmt.Errorf("creating events stream %s: %w", p.cfg.EventsStream, err)
		}
	}
	found := ""
	for _, name := range names {
		s, err := p.js.Stream(ctx, name)
		if err != nil {
			return "", fmt.Errorf("stream %s: %w", name, err)
		}
		cfg := s.CachedInfo().Config
		switch {
		case name == internal:
			// A stream of the older shape not yet updated: ensureStream does it.
		case sources(cfg, internal, p.Subjects()) && p.cfg.NoEventsStream:
			found = name
			p.log.Warn("configured without an events stream, but one exists: it is left alone and goes on sourcing "+
				"kraftwatch's stream, so nats-server still stores each event twice and refuses each republished copy "+
				"(about half its CPU per event); subscribers that look it up by subject still read it. "+
				"When none does, delete it (nats stream rm "+name+"); kraftwatch will not create it again",
				"stream", name, "subject", p.Subjects(), "source", internal)
		case sources(cfg, internal, p.Subjects()):
			found = name
			if name != p.cfg.EventsStream {
				p.log.Info("using existing events stream", "stream", name, "subject", p.Subjects(), "source", internal)
			}
		case p.cfg.NoEventsStream:
			p.log.Warn("another stream captures kraftwatch's public subjects and does not source kraftwatch's stream: "+
				"clients that look streams up by subject read it, and it stores none of the events (the copies that "+
				"reach it carry Nats-Expected-Stream and are refused, which costs nats-server work for each event). "+
				"Add sources [{name: "+internal+"}] to it, or take "+p.Subjects()+" out of its subjects",
				"stream", name, "stream_subjects", cfg.Subjects, "subject", p.Subjects(), "source", internal)
		default:
			p.log.Warn("another stream captures kraftwatch's public subjects and does not source kraftwatch's stream: "+
				"clients that look streams up by subject (nats sub --all, nats-py js.subscribe, CloudEvents sdk-go) read it, "+
				"and it stores none of the events (the copies that reach it carry Nats-Expected-Stream and are refused). "+
				"Add sources [{name: "+internal+"}] to it, or take "+p.Subjects()+
				" out of its subjects so that kraftwatch creates "+p.cfg.EventsStream+", which does",
				"stream", name, "stream_subjects", cfg.Subjects, "subject", p.Subjects(), "source", internal)
		}
	}
	return found, nil
}

// sources reports whether cfg sources every message of stream name under subjects.
func sources(cfg jetstream.StreamConfig, name, subjects string) bool {
	for _, src := range cfg.Sources {
		if src == nil || src.Name != name || src.OptStartSeq > 1 || src.OptStartTime != nil || len(src.SubjectTransforms) > 0 {
			continue
		}
		if src.FilterSubject == "" || covers(src.FilterSubject, subjects) {
			return true
		}
	}
	return false
}

// covers reports whether every subject that filter f2 matches is matched by filter f.
func covers(f, f2 string) bool {
	a, b := strings.Split(f, "."), strings.Split(f2, ".")
	for i, tok := range a {
		switch {
		case tok == ">":
			return i < len(b)
		case i >= len(b):
			return false
		case tok == "*":
			if b[i] == ">" {
				return false
			}
		case tok != b[i]:
			return false
		}
	}
	return len(a) == len(b)
}

// eventsConfig is the events stream kraftwatch creates: the public subjects (nothing but
// the copies internal republishes is published there, and those it refuses), every
// message of internal by sourcing, and internal's limits.
func (p *Publisher) eventsConfig(internal string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: p.cfg.EventsStream,
		Description: "kraftwatch rebalance-needed events of Kafka cluster " + p.cfg.ClusterID +
			", for subscribers: a copy of stream " + internal + " found by the subjects " + p.Subjects(),
		Subjects:          []string{p.Subjects()},
		Sources:           []*jetstream.StreamSource{{Name: internal}},
		Retention:         jetstream.LimitsPolicy,
		Storage:           p.cfg.Storage,
		Replicas:          p.cfg.Replicas,
		MaxAge:            p.cfg.MaxAge,
		MaxMsgsPerSubject: p.cfg.MaxMsgsPerSubject,
		MaxBytes:          p.cfg.MaxBytes,
		MaxMsgs:           -1,
		Discard:           jetstream.DiscardOld,
		Duplicates:        p.cfg.DuplicateWindow,
		AllowDirect:       true,
	}
}
