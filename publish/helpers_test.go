package publish_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/eventschema"
	"github.com/kraftwatch/kraftwatch/publish"
)

// oddIDs are group ids that need the escape.
var oddIDs = []string{"", "plain", "my.app", "*", ">", "a.*.>", "with space", "tab\there", "100%",
	"%2E", "~tilde", "$SYS", "é-unicode-🚀", "\u2028", strings.Repeat("long.", 60), strings.Repeat("x", 5000)}

// connect opens a connection that reconnects forever; it is closed at the end of the test.
func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.Name(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// testLogger logs to the test at level Warn and above (Info with -v is too chatty).
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func baseConfig(t testing.TB, nc *nats.Conn) publish.Config {
	return publish.Config{
		Conn:      nc,
		ClusterID: clusterID,
		RetryMin:  20 * time.Millisecond,
		RetryMax:  200 * time.Millisecond,
		Logger:    testLogger(t),
	}
}

type running struct {
	p      *publish.Publisher
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// start runs p until stop or the end of the test.
func start(t testing.TB, p *publish.Publisher) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() { _ = r.stop() })
	return r
}

// stop ends Run and returns its error.
func (r *running) stop() error {
	r.once.Do(func() {
		r.cancel()
		r.err = <-r.done
	})
	return r.err
}

func newPublisher(t testing.TB, cfg publish.Config) *publish.Publisher {
	t.Helper()
	p, err := publish.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// transition returns the k-th hash change of a group: hashes alternate between two values
// and one fresh value every third step, so "same hash again" cases occur.
func transition(group string, k int) events.RebalanceNeeded {
	h := func(k int) int64 {
		if k < 0 {
			return 0
		}
		if k%3 == 2 {
			return int64(len(group))*1_000_003 + int64(k)*-7_777_777_777_777
		}
		return int64(k%2)*-6148914691236517206 + int64(len(group))
	}
	ev := events.RebalanceNeeded{
		GroupID:   group,
		GroupType: events.ConsumerGroup,
		NewHash:   events.Hash(h(k)),
		Reasons: []events.Reason{{Kind: events.PartitionsAdded, Topic: "t" + fmt.Sprint(k),
			TopicID: "AAAAAAAAAAAAAAAAAAAAAA", OldPartitions: int32(k + 1), NewPartitions: int32(k + 2)}},
		Cause:            events.Cause{MetadataOffset: int64(100 * (k + 1)), MetadataEpoch: 1},
		CoordinatorEpoch: int32(k),
		Time:             time.Date(2025, 1, 1, 0, 0, k, 0, time.UTC),
	}
	if k > 0 {
		ev.PreviousHash = events.SomeHash(h(k - 1))
	}
	return ev
}

func enqueue(t testing.TB, p *publish.Publisher, ev events.RebalanceNeeded) {
	t.Helper()
	if err := tryEnqueue(p, ev); err != nil {
		t.Fatal(err)
	}
}

// tryEnqueue is enqueue for goroutines other than the test's, which must not call Fatal.
func tryEnqueue(p *publish.Publisher, ev events.RebalanceNeeded) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Enqueue(ctx, ev); err != nil {
		return fmt.Errorf("Enqueue %.40q: %w", ev.GroupID, err)
	}
	return nil
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// finished reports whether every enqueued event of p has ended.
func finished(p *publish.Publisher, want uint64) func() bool {
	return func() bool {
		s := p.Stats()
		return s.Queued == 0 && s.Published+s.AlreadyPublished+s.Superseded+s.Dropped >= want
	}
}

type stored struct {
	seq uint64
	env events.Envelope[events.RebalanceNeeded]
}

// readStream reads every message of the stream capturing this cluster's subjects, checks
// each (schema, Nats-Msg-Id = id, subject = Subject of its group, ids unique) and returns
// them by subject in stream order.
func readStream(t testing.TB, nc *nats.Conn, prefix string) map[string][]stored {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	root := prefix + "." + events.EscapeToken(clusterID)
	var s jetstream.Stream
	var c jetstream.Consumer
	// A cluster whose node was just started again may answer no JetStream API request
	// for a moment (nats.ErrNoResponders) while its routes settle: ask again.
	for {
		name, err := js.StreamNameBySubject(ctx, events.InternalPrefix+"."+root+".>")
		if err == nil {
			s, err = js.Stream(ctx, name)
		}
		if err == nil {
			c, err = s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{root + ".>"}})
		}
		if err == nil {
			break
		}
		if !errors.Is(err, nats.ErrNoResponders) || ctx.Err() != nil {
			t.Fatalf("reading the stream of %s: %v", root, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	total := s.CachedInfo().State.Msgs
	out := make(map[string][]stored)
	if total == 0 {
		return out
	}
	ids := make(map[string]uint64)
	for n := uint64(0); n < total; {
		batch, err := c.Fetch(int(min(total-n, 1000)), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			validateEvent(t, m.Data())
			env, err := events.DecodeRebalanceNeeded(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			if h := m.Headers().Get(jetstream.MsgIDHeader); h != env.ID {
				t.Fatalf("seq %d: Nats-Msg-Id %q, event id %q", meta.Sequence.Stream, h, env.ID)
			}
			if ct := m.Headers().Get("Content-Type"); ct != events.ContentType {
				t.Fatalf("seq %d: Content-Type %q", meta.Sequence.Stream, ct)
			}
			if want := events.Subject(prefix, clusterID, env.Data.GroupType, env.Data.GroupID); m.Subject() != want {
				t.Fatalf("seq %d: subject %q, want %q", meta.Sequence.Stream, m.Subject(), want)
			}
			if prev, dup := ids[env.ID]; dup {
				t.Fatalf("event %s stored twice: seq %d and %d (group %q)", env.ID, prev, meta.Sequence.Stream, env.Data.GroupID)
			}
			ids[env.ID] = meta.Sequence.Stream
			out[m.Subject()] = append(out[m.Subject()], stored{meta.Sequence.Stream, env})
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			t.Fatal(err)
		}
		if got == 0 {
			t.Fatalf("stream %s: read %d of %d messages, then nothing", s.CachedInfo().Config.Name, n, total)
		}
		n += uint64(got)
	}
	return out
}

// checkTransitions fails unless subject holds exactly transitions 0..n-1 of group, in order.
func checkTransitions(t testing.TB, msgs map[string][]stored, prefix, group string, n int) {
	t.Helper()
	subject := events.Subject(prefix, clusterID, events.ConsumerGroup, group)
	got := msgs[subject]
	var ids []string
	for _, s := range got {
		ids = append(ids, s.env.ID)
	}
	var want []string
	for k := range n {
		ev := transition(group, k)
		ev.ClusterID, ev.HashScheme = clusterID, events.SchemeMurmur3
		want = append(want, ev.MsgID())
	}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("group %.40q: stored %d events %v, want transitions 0..%d %v", group, len(ids), ids, n-1, want)
	}
	for i, s := range got {
		if s.env.Data.GroupID != group {
			t.Fatalf("group %.40q: event %d names group %.40q", group, i, s.env.Data.GroupID)
		}
	}
}

func containsWord(s, w string) bool { return strings.Contains(s, w) }

func splitLines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

// delivery is one message a core subscriber received.
type delivery struct {
	subject string
	id      string // Nats-Msg-Id
	seq     string // Nats-Sequence, set by the stream's republish
	env     events.Envelope[events.RebalanceNeeded]
	data    []byte
}

// coreSub collects what a plain core-NATS subscriber of subject receives.
type coreSub struct {
	mu   sync.Mutex
	got  []delivery
	errs []error
}

// subscribeCore subscribes nc to subject (no pending limits) until the end of the test.
func subscribeCore(t testing.TB, nc *nats.Conn, subject string) *coreSub {
	t.Helper()
	c := &coreSub{}
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		env, err := events.DecodeRebalanceNeeded(m.Data)
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s: %w", m.Subject, err))
			return
		}
		c.got = append(c.got, delivery{subject: m.Subject, id: m.Header.Get(jetstream.MsgIDHeader),
			seq: m.Header.Get(jetstream.SequenceHeader), env: env, data: m.Data})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return c
}

func (c *coreSub) deliveries() []delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]delivery(nil), c.got...)
}

// exactlyStored waits until the subscriber has as many deliveries as msgs holds events,
// then a moment more for extra ones, and fails unless it received each stored event
// exactly once, on its subject, with its stream sequence (Nats-Sequence, so from the
// stream's republish), each subject's events in stream order, and nothing else.
func (c *coreSub) exactlyStored(t testing.TB, msgs map[string][]stored) {
	t.Helper()
	total := 0
	for _, evs := range msgs {
		total += len(evs)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(c.deliveries()) < total && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	c.mu.Lock()
	errs := c.errs
	c.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("core subscriber received %d message(s) that are not events; first: %v", len(errs), errs[0])
	}
	got := c.deliveries()
	seen := make(map[string]int)
	bySubject := make(map[string][]delivery)
	for _, d := range got {
		seen[d.id]++
		bySubject[d.subject] = append(bySubject[d.subject], d)
	}
	var dups []string
	for id, n := range seen {
		if n > 1 {
			dups = append(dups, fmt.Sprintf("%s x%d", id, n))
		}
	}
	if len(dups) > 0 {
		slices.Sort(dups)
		t.Fatalf("core subscriber received %d event(s) more than once, among them: %v", len(dups), dups[:min(len(dups), 5)])
	}
	if len(got) != total {
		t.Fatalf("core subscriber received %d events, the stream holds %d", len(got), total)
	}
	for subject, evs := range msgs {
		ds := bySubject[subject]
		if len(ds) != len(evs) {
			t.Fatalf("%s: core subscriber received %d events, the stream holds %d", subject, len(ds), len(evs))
		}
		for i, e := range evs {
			if ds[i].id != e.env.ID || ds[i].seq != fmt.Sprint(e.seq) || ds[i].env.ID != e.env.ID {
				t.Fatalf("%s: delivery %d is %s (Nats-Sequence %q); the stream holds %s at %d", subject, i, ds[i].id, ds[i].seq, e.env.ID, e.seq)
			}
		}
	}
}

// syncLog collects log output from any goroutine.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sameEvents waits until the stream that a lookup by the public subjects finds (the
// events stream, which sources kraftwatch's) holds as many events as msgs (what
// readStream read from kraftwatch's stream), then fails unless it holds exactly those
// events, each subject's in the same order, and none of them carries a Nats-Expected-*
// header (a stream or forwarder that copies them stores them as they are).
func sameEvents(t testing.TB, nc *nats.Conn, prefix string, msgs map[string][]stored) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	root := prefix + "." + events.EscapeToken(clusterID)
	name, err := js.StreamNameBySubject(ctx, prefix+".>")
	if err != nil {
		t.Fatalf("no stream found by %s.>: %v", prefix, err)
	}
	total := 0
	for _, evs := range msgs {
		total += len(evs)
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	defer func() { t.Logf("stream %s caught up after %v", name, time.Since(begin).Round(time.Millisecond)) }()
	for deadline := time.Now().Add(sameEventsWait); ; time.Sleep(10 * time.Millisecond) {
		info, err := s.Info(ctx)
		if err == nil && info.State.Msgs >= uint64(total) {
			break
		}
		if time.Now().After(deadline) {
			if info != nil {
				t.Logf("stream %s: state %+v cluster %+v", name, info.State, info.Cluster)
				for _, src := range info.Sources {
					t.Logf("source %s: lag %d active %v error %+v", src.Name, src.Lag, src.Active, src.Error)
				}
			}
			t.Fatalf("timed out after 30s waiting for stream %s to hold %d events (err %v)", name, total, err)
		}
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{root + ".>"}})
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string][]string)
	ids := make(map[string]bool)
	for n := 0; n < total; {
		batch, err := c.Fetch(min(total-n, 1000), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for m := range batch.Messages() {
			k++
			env, err := events.DecodeRebalanceNeeded(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			for h := range m.Headers() {
				if strings.HasPrefix(h, "Nats-Expected-") {
					t.Fatalf("stream %s: %s carries %s", name, env.ID, h)
				}
			}
			if ids[env.ID] {
				t.Fatalf("stream %s holds %s twice", name, env.ID)
			}
			ids[env.ID] = true
			got[m.Subject()] = append(got[m.Subject()], env.ID)
		}
		if k == 0 {
			t.Fatalf("stream %s: read %d of %d, then nothing", name, n, total)
		}
		n += k
	}
	if info, _ := s.Info(ctx); info.State.Msgs != uint64(total) {
		t.Fatalf("stream %s holds %d messages, kraftwatch's stream %d", name, info.State.Msgs, total)
	}
	for subject, evs := range msgs {
		var want []string
		for _, e := range evs {
			want = append(want, e.env.ID)
		}
		if !slices.Equal(got[subject], want) {
			t.Fatalf("stream %s, %s: %v, kraftwatch's stream %v", name, subject, got[subject], want)
		}
	}
}

// sameEventsWait bounds how long sameEvents waits for the events stream to catch up.
var sameEventsWait = 30 * time.Second

// checkCopy waits until the stream name holds n events and checks that each is one of
// msgs (kraftwatch's stored events, by subject), by its Nats-Msg-Id and its decoded
// id, without the Nats-Expected-* headers of kraftwatch's publishes: what a stream
// sourcing kraftwatch's (or the events stream) must hold.
func checkCopy(ctx context.Context, t testing.TB, js jetstream.JetStream, name string, n int, msgs map[string][]stored) {
	t.Helper()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, fmt.Sprintf("%s to hold the %d events", name, n), func() bool {
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs == uint64(n)
	})
	for seq := uint64(1); seq <= uint64(n); seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		for h := range m.Header {
			if strings.HasPrefix(h, "Nats-Expected-") {
				t.Fatalf("%s seq %d carries %s", name, seq, h)
			}
		}
		env, err := events.DecodeRebalanceNeeded(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if env.ID != m.Header.Get(jetstream.MsgIDHeader) || !slices.ContainsFunc(msgs[m.Subject], func(s stored) bool { return s.env.ID == env.ID }) {
			t.Fatalf("%s seq %d on %s (id %s) is not an event of kraftwatch's stream", name, seq, m.Subject, env.ID)
		}
	}
}

const clusterID = "MkU3OEVBNTcwNTJENDM2Qk"

// The schemas read strictly (every member kraftwatch writes is declared), compiled once.
var (
	strictSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return eventschema.CompileStrict(events.RebalanceNeededSchema)
	})
	strictRebalancedSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return eventschema.CompileStrict(events.GroupRebalancedSchema)
	})
)

// validateEvent fails t unless body, an event kraftwatch published, satisfies
// events/schema/rebalance_needed.v1.json read strictly.
func validateEvent(t testing.TB, body []byte) {
	t.Helper()
	if err := checkSchema(strictSchema, body); err != nil {
		t.Fatalf("event does not satisfy the strict schema: %v\n%s", err, body)
	}
}

// checkRebalancedSchema validates body, a rebalanced event kraftwatch published, against
// events/schema/rebalanced.v1.json read strictly.
func checkRebalancedSchema(_ testing.TB, body []byte) error {
	return checkSchema(strictRebalancedSchema, body)
}

func checkSchema(s func() (*jsonschema.Schema, error), body []byte) error {
	sch, err := s()
	if err != nil {
		return err
	}
	return eventschema.Validate(sch, body)
}
