package e2etest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/eventschema"
)

// Event is one event as a subscriber or the stream saw it.
type Event struct {
	Subject string
	MsgID   string    // Nats-Msg-Id header
	Seq     uint64    // stream sequence (core deliveries: Nats-Sequence of the republish)
	At      time.Time // arrival at the core subscriber
	Env     events.Envelope[events.RebalanceNeeded]
}

func (e Event) String() string {
	d := e.Env.Data
	prev := "null"
	if d.PreviousHash.Valid {
		prev = strconv.FormatInt(int64(d.PreviousHash.Hash), 10)
	}
	var rs []string
	for _, r := range d.Reasons {
		rs = append(rs, fmt.Sprintf("%s %s %d->%d", r.Kind, r.Topic, r.OldPartitions, r.NewPartitions))
	}
	return fmt.Sprintf("%s %q %s -> %d at metadata offset %d [%s] (%s)", d.GroupType, d.GroupID, prev, int64(d.NewHash),
		d.MetadataOffset, strings.Join(rs, "; "), e.MsgID)
}

// Reason returns the single reason of e, failing t when there is not exactly one.
func (e Event) Reason(t testing.TB) events.Reason {
	t.Helper()
	if len(e.Env.Data.Reasons) != 1 {
		t.Fatalf("event %v: want exactly one reason", e)
	}
	return e.Env.Data.Reasons[0]
}

// SameReason reports whether r is want apart from where its change was written, and
// says that: a time, and a metadata offset unless r is a subscription change.
func SameReason(r, want events.Reason) bool {
	stamped := !r.Time.IsZero() && (r.MetadataOffset > 0) == (r.Kind != events.SubscriptionChanged)
	r.MetadataOffset, r.Time = 0, time.Time{}
	return stamped && r == want
}

// Events are events in the order they were received or stored.
type Events []Event

// Group returns the events of group id g.
func (es Events) Group(g string) Events {
	var out Events
	for _, e := range es {
		if e.Env.Data.GroupID == g {
			out = append(out, e)
		}
	}
	return out
}

// Counts counts events per group id.
func (es Events) Counts() map[string]int {
	n := map[string]int{}
	for _, e := range es {
		n[e.Env.Data.GroupID]++
	}
	return n
}

// String lists the events, one indented line each.
func (es Events) String() string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "  %v\n", e)
	}
	return b.String()
}

// The event schemas read strictly (eventschema.CompileStrict): what kraftwatch publishes
// declares every member it writes, though subscribers ignore members they do not know.
var (
	schema = sync.OnceValues(func() (*jsonschema.Schema, error) { return eventschema.CompileStrict(events.RebalanceNeededSchema) })
	// RebalancedSchema is the compiled JSON Schema of rebalanced events, read strictly.
	RebalancedSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return eventschema.CompileStrict(events.GroupRebalancedSchema)
	})
)

// Check validates one message of kraftwatch: events.DecodeRebalanceNeeded, the JSON Schema, the
// cluster, the subject derived from the group, the Nats-Msg-Id and Content-Type
// headers and the hash scheme.
func Check(clusterID, subject string, hdr nats.Header, data []byte) (events.Envelope[events.RebalanceNeeded], error) {
	env, err := events.DecodeRebalanceNeeded(data)
	if err != nil {
		return env, fmt.Errorf("%s: events.DecodeRebalanceNeeded: %w", subject, err)
	}
	sch, err := schema()
	if err != nil {
		return env, fmt.Errorf("compiling the event schema: %w", err)
	}
	if err := eventschema.Validate(sch, data); err != nil {
		return env, fmt.Errorf("%s: event does not satisfy the schema: %w\n%s", subject, err, data)
	}
	d := env.Data
	want := events.DefaultPrefix + "." + events.EscapeToken(clusterID) + ".group." + d.GroupType.String() + "." + events.EscapeToken(d.GroupID)
	switch {
	case d.ClusterID != clusterID || env.Source != "kraftwatch/"+clusterID:
		return env, fmt.Errorf("%s: cluster %q, source %q; want %q", subject, d.ClusterID, env.Source, clusterID)
	case subject != want:
		return env, fmt.Errorf("event of %s group %q on subject %s, want %s", d.GroupType, d.GroupID, subject, want)
	case hdr.Get(jetstream.MsgIDHeader) != env.ID:
		return env, fmt.Errorf("%s: Nats-Msg-Id %q, CloudEvent id %q", subject, hdr.Get(jetstream.MsgIDHeader), env.ID)
	case hdr.Get("Content-Type") != events.ContentType:
		return env, fmt.Errorf("%s: Content-Type %q", subject, hdr.Get("Content-Type"))
	case d.HashScheme != events.SchemeMurmur3:
		return env, fmt.Errorf("%s: hash scheme %q", subject, d.HashScheme)
	}
	return env, nil
}

// Watcher is a core NATS subscriber to every kraftwatch subject; it reconnects
// forever. kraftwatch publishes on internal subjects and the stream republishes only
// what it stores, so every message must come from the republish of stream StreamName
// (Nats-Stream, Nats-Sequence) and each event must arrive once; a later delivery of an
// id already received (a refused or de-duplicated publish leaking through) is kept
// apart for NoRepeats to fail on. Its methods are safe for concurrent use.
//
// The subscription's callback only stamps each message's arrival and queues it: nats.go
// runs the callback one message at a time, and checking an event (Check decodes it and
// validates it against the schema, about 0.2 ms) there would delay the arrival stamps
// of the messages behind it, so a burst of 10k events would seem to take seconds to
// arrive. The queued messages are checked by the method that next reads the events.
type Watcher struct {
	nc        *nats.Conn
	clusterID string

	inMu sync.Mutex
	in   []arrival // received, not checked yet

	mu      sync.Mutex
	events  Events          // first delivery of each event id, in order
	repeats Events          // later deliveries of an id already received
	seen    map[string]bool // ids received
	errs    []error         // invalid messages
}

// arrival is a message as the subscription received it, and when.
type arrival struct {
	m  *nats.Msg
	at time.Time
}

// Watch subscribes to every kraftwatch subject of the server at url, checking each
// message with Check against clusterID; the connection closes at the end of the test.
func Watch(t testing.TB, url, clusterID string) *Watcher {
	t.Helper()
	w := &Watcher{clusterID: clusterID, seen: map[string]bool{}}
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	w.nc = nc
	t.Cleanup(nc.Close)
	if _, err := nc.Subscribe(events.DefaultPrefix+".>", func(m *nats.Msg) {
		at := time.Now()
		w.inMu.Lock()
		w.in = append(w.in, arrival{m, at})
		w.inMu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// Connected waits until the subscriber is connected and the server holds its
// subscription: after a server restart it reconnects on its own schedule, and an event
// published before that is not delivered to it.
func (w *Watcher) Connected(ctx context.Context, t testing.TB, timeout time.Duration) {
	t.Helper()
	err := Wait(ctx, timeout, func() error {
		if !w.nc.IsConnected() {
			return errors.New("core subscriber not connected")
		}
		return w.nc.FlushTimeout(time.Second) // the server has the subscription the reconnect sent before
	})
	if err != nil {
		t.Fatal(err)
	}
}

// check checks the messages received since the last call, in order of arrival; w.mu
// is held.
func (w *Watcher) check() {
	w.inMu.Lock()
	in := w.in
	w.in = nil
	w.inMu.Unlock()
	for _, a := range in {
		m := a.m
		env, err := Check(w.clusterID, m.Subject, m.Header, m.Data)
		if err != nil {
			w.errs = append(w.errs, err)
			continue
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if stream := m.Header.Get(jetstream.StreamHeader); stream != StreamName || err != nil || seq == 0 {
			w.errs = append(w.errs, fmt.Errorf("%s: event %s is not a republish of stream %s (Nats-Stream %q, Nats-Sequence %q)",
				m.Subject, env.ID, StreamName, stream, m.Header.Get(jetstream.SequenceHeader)))
			continue
		}
		var kinds []string
		for _, r := range env.Data.Reasons {
			kinds = append(kinds, r.Kind.String())
		}
		Capture("rebalance_needed", kinds, m.Data)
		e := Event{Subject: m.Subject, MsgID: m.Header.Get(jetstream.MsgIDHeader), Seq: seq, At: a.at, Env: env}
		if w.seen[e.MsgID] {
			w.repeats = append(w.repeats, e)
			continue
		}
		w.seen[e.MsgID] = true
		w.events = append(w.events, e)
	}
}

// All returns the events received so far, each id once, and fails t on any invalid
// message.
func (w *Watcher) All(t testing.TB) Events {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.check()
	if len(w.errs) > 0 {
		t.Fatalf("core subscriber received %d invalid message(s); first: %v", len(w.errs), w.errs[0])
	}
	return slices.Clone(w.events)
}

// Repeated returns the deliveries of ids already received.
func (w *Watcher) Repeated() Events {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.check()
	return slices.Clone(w.repeats)
}

// NoRepeats fails t if the subscriber received any event twice.
func (w *Watcher) NoRepeats(t testing.TB) {
	t.Helper()
	if r := w.Repeated(); len(r) > 0 {
		t.Fatalf("core subscriber received %d event(s) more than once:\n%s", len(r), r)
	}
}

// Expect waits (timeout at most) until the subscriber has received want events per
// group, then for Quiet, and fails t unless the counts are then exactly want (every
// group not named must have none). It returns the events by group.
func (w *Watcher) Expect(ctx context.Context, t testing.TB, want map[string]int, timeout time.Duration) map[string]Events {
	t.Helper()
	err := Wait(ctx, timeout, func() error {
		evs := w.All(t)
		got := evs.Counts()
		for g, n := range want {
			if got[g] < n {
				return fmt.Errorf("events per group %v, want %v; events:\n%s", got, want, evs)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(Quiet)
	evs := w.All(t)
	got := evs.Counts()
	want = maps.Clone(want)
	maps.DeleteFunc(want, func(_ string, n int) bool { return n == 0 })
	if !maps.Equal(got, want) {
		t.Fatalf("events per group %v, want exactly %v; events:\n%s", got, want, evs)
	}
	out := map[string]Events{}
	for g := range want {
		out[g] = evs.Group(g)
	}
	return out
}

// Stream reads every message of stream StreamName on the server at url, checking each
// with Check against clusterID; it fails t on any error.
func Stream(t testing.TB, url, clusterID string) Events {
	t.Helper()
	evs, err := ReadStream(url, clusterID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// ReadStream is Stream returning its error, for conditions of Wait that must retry a
// server that has just restarted.
func ReadStream(url, clusterID string) (Events, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	s, err := js.Stream(ctx, StreamName)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", StreamName, err)
	}
	st := s.CachedInfo().State
	var out Events
	for seq := st.FirstSeq; st.Msgs > 0 && seq <= st.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("stream %s message %d: %w", StreamName, seq, err)
		}
		if Rebalanced(m.Subject) {
			continue // KRAFTWATCH_REBALANCED_EVENTS: another event type, read apart
		}
		env, err := Check(clusterID, m.Subject, m.Header, m.Data)
		if err != nil {
			return nil, fmt.Errorf("stream %s message %d: %w", StreamName, seq, err)
		}
		out = append(out, Event{Subject: m.Subject, MsgID: m.Header.Get(jetstream.MsgIDHeader), Seq: m.Sequence, Env: env})
	}
	return out, nil
}

// Rebalanced reports whether subject is one of the rebalanced events' family
// (<prefix>.<cluster>.rebalanced.<type>.<group>), which Stream and ReadStream skip.
func Rebalanced(subject string) bool {
	toks := strings.Split(subject, ".")
	return len(toks) >= 5 && toks[len(toks)-3] == events.RebalancedFamily
}

// JetStream connects to the server at url and returns its JetStream API; the
// connection is closed at the end of the test.
func JetStream(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, js := connect(t, url)
	t.Cleanup(nc.Close)
	return js
}

func connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	return nc, js
}

// SameEvents fails t unless a and b hold the same events (by id and stream sequence)
// in the same order.
func SameEvents(t testing.TB, what string, a, b Events) {
	t.Helper()
	ids := func(evs Events) []string {
		out := make([]string, len(evs))
		for i, e := range evs {
			out[i] = e.MsgID + "@" + strconv.FormatUint(e.Seq, 10)
		}
		return out
	}
	if !slices.Equal(ids(a), ids(b)) {
		t.Fatalf("%s differ:\nfirst:\n%ssecond:\n%s", what, a, b)
	}
}

// CheckStreamAndCore checks, per group, that the subscriber saw exactly the stream's
// events and that they form a chain (CheckChain), and that nothing was delivered twice.
func CheckStreamAndCore(t testing.TB, stream Events, w *Watcher, groups ...string) {
	t.Helper()
	for _, g := range groups {
		SameEvents(t, "stream and core subscriber events of "+g, stream.Group(g), w.All(t).Group(g))
		CheckChain(t, g, stream.Group(g))
	}
	w.NoRepeats(t)
}

// CheckChain checks one group's events in order: the first has no previous hash, each
// later one's previous hash is the new hash before it, no two consecutive events
// announce the same hash, no id repeats, and metadata offsets never go back.
func CheckChain(t testing.TB, group string, evs Events) {
	t.Helper()
	ids := map[string]bool{}
	for i, e := range evs {
		d := e.Env.Data
		if ids[e.MsgID] {
			t.Fatalf("group %s: event %d repeats id %s:\n%s", group, i, e.MsgID, evs)
		}
		ids[e.MsgID] = true
		if i == 0 {
			if d.PreviousHash.Valid {
				t.Fatalf("group %s: first event has a previous hash:\n%s", group, evs)
			}
			continue
		}
		p := evs[i-1].Env.Data
		switch {
		case !d.PreviousHash.Valid || d.PreviousHash.Hash != p.NewHash:
			t.Fatalf("group %s: event %d's previous hash is not the hash announced before it:\n%s", group, i, evs)
		case d.NewHash == p.NewHash:
			t.Fatalf("group %s: events %d and %d announce the same hash (a duplicate):\n%s", group, i-1, i, evs)
		case d.MetadataOffset < p.MetadataOffset:
			t.Fatalf("group %s: event %d goes back in the metadata log:\n%s", group, i, evs)
		case d.ConsumerOffsets != nil && p.ConsumerOffsets != nil && d.ConsumerOffsets.Partition == p.ConsumerOffsets.Partition &&
			d.ConsumerOffsets.Offset < p.ConsumerOffsets.Offset:
			t.Fatalf("group %s: event %d goes back in __consumer_offsets (a state the group had left):\n%s", group, i, evs)
		}
	}
}
