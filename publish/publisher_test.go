package publish_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// TestJetStream publishes three transitions for groups with every kind of id: the stream
// holds each once, in order, on the right (public) subject, schema-valid; a plain
// core-NATS subscriber of "kraftwatch.>" receives each stored event exactly once, from the
// stream's republish; LastPublished and LoadLastPublished read them back.
func TestJetStream(t *testing.T) {
	checkJetStream(t, natstest.Start(t).ClientURL())
}

func checkJetStream(t *testing.T, url string) {
	nc := connect(t, url)
	core := subscribeCore(t, connect(t, url), "kraftwatch.>")

	cfg := baseConfig(t, nc)
	p := newPublisher(t, cfg)
	r := start(t, p)
	ctx := context.Background()
	if last, err := p.LoadLastPublished(ctx); err != nil || len(last) != 0 {
		t.Fatalf("LoadLastPublished on an empty stream = %v, %v", last, err)
	}
	const n = 3
	for k := range n {
		for _, g := range oddIDs {
			enqueue(t, p, transition(g, k))
		}
	}
	total := uint64(n * len(oddIDs))
	waitFor(t, 30*time.Second, "events published", finished(p, total))
	if s := p.Stats(); s.Published != total || s.Failed != 0 || s.Dropped != 0 {
		t.Fatalf("stats %+v, want %d published and no failures", s, total)
	}
	if !p.Ready() {
		t.Fatal("not ready after publishing")
	}

	msgs := readStream(t, nc, "kraftwatch")
	for _, g := range oddIDs {
		checkTransitions(t, msgs, "kraftwatch", g, n)
	}

	// Core subscribers see every stored event once.
	core.exactlyStored(t, msgs)
	for _, d := range core.deliveries() {
		validateEvent(t, d.data)
	}

	for _, g := range oddIDs {
		want := transition(g, n-1).NewHash
		h, ok, err := p.LastPublished(ctx, events.ConsumerGroup, g)
		if err != nil || !ok || h != int64(want) {
			t.Fatalf("LastPublished(%.40q) = %d, %v, %v; want %d", g, h, ok, err, want)
		}
	}
	if _, ok, err := p.LastPublished(ctx, events.ShareGroup, "plain"); ok || err != nil {
		t.Fatalf("LastPublished of a group without events = %v, %v", ok, err)
	}

	js, _ := jetstream.New(nc)
	s, err := js.Stream(ctx, "KRAFTWATCH_"+clusterID)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.CachedInfo().Config
	public, internal := "kraftwatch."+clusterID+".>", "_kraftwatch.kraftwatch."+clusterID+".>"
	if len(sc.Subjects) != 1 || sc.Subjects[0] != internal || p.StreamSubjects() != internal || p.Subjects() != public ||
		sc.SubjectTransform == nil || *sc.SubjectTransform != (jetstream.SubjectTransformConfig{Source: internal, Destination: public}) ||
		sc.RePublish == nil || *sc.RePublish != (jetstream.RePublish{Source: public, Destination: public}) ||
		sc.MaxMsgsPerSubject != publish.DefaultMaxMsgsPerSubject ||
		sc.Retention != jetstream.LimitsPolicy || sc.Duplicates != publish.DefaultDuplicateWindow {
		t.Fatalf("stream config %+v", sc)
	}
	if err := r.stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if p.Ready() {
		t.Fatal("ready after Run returned")
	}
	if err := p.Enqueue(ctx, transition("late", 0)); !errors.Is(err, publish.ErrClosed) {
		t.Fatalf("Enqueue after Run = %v, want ErrClosed", err)
	}
}

// TestTwoPublishers runs two publishers (two kraftwatch replicas, own connections) that
// enqueue the same transitions at the same time: each transition is stored once, in
// order, and a plain core-NATS subscriber receives each stored event exactly once,
// although the replicas race (publishes refused for a wrong last sequence, found already
// stored) on most groups.
func TestTwoPublishers(t *testing.T) {
	checkTwoPublishers(t, natstest.Start(t).ClientURL())
}

func checkTwoPublishers(t *testing.T, url string) {
	core := subscribeCore(t, connect(t, url), "kraftwatch.>")
	const groups, steps = 150, 5
	var ps []*publish.Publisher
	for range 2 {
		cfg := baseConfig(t, connect(t, url))
		cfg.Workers = 8
		p := newPublisher(t, cfg)
		start(t, p)
		ps = append(ps, p)
	}
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			for k := range steps {
				for g := range groups {
					// The second replica walks the groups backwards so that both lead
					// on some groups and lag on others.
					if i == 1 {
						g = groups - 1 - g
					}
					if err := tryEnqueue(p, transition(fmt.Sprintf("group-%03d", g), k)); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, p := range ps {
		waitFor(t, 60*time.Second, "both publishers done", finished(p, groups*steps))
	}
	msgs := readStream(t, connect(t, url), "kraftwatch")
	for g := range groups {
		checkTransitions(t, msgs, "kraftwatch", fmt.Sprintf("group-%03d", g), steps)
	}
	core.exactlyStored(t, msgs)
	sameEvents(t, connect(t, url), "kraftwatch", msgs)
	a, b := ps[0].Stats(), ps[1].Stats()
	t.Logf("replica A %+v", a)
	t.Logf("replica B %+v", b)
	if a.Published+b.Published != groups*steps {
		t.Fatalf("published %d + %d, want %d in all", a.Published, b.Published, groups*steps)
	}
	for _, s := range []publish.Stats{a, b} {
		if s.Published+s.AlreadyPublished+s.Superseded != groups*steps || s.Dropped != 0 {
			t.Fatalf("stats %+v: every event should be published or skipped", s)
		}
	}
	if a.Conflicts+b.Conflicts == 0 {
		t.Log("no sequence conflicts happened: the replicas did not race this time (TestRepublishStoredOnly races deterministically)")
	}
}

// TestRestart: a new publisher reads the last hashes back, does not republish what is
// stored, and publishes a change made while "kraftwatch was down" once.
func TestRestart(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	groups := oddIDs
	{
		p := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
		r := start(t, p)
		for k := range 3 {
			for _, g := range groups {
				enqueue(t, p, transition(g, k))
			}
		}
		if err := r.stop(); err != nil { // drains
			t.Fatal(err)
		}
		if s := p.Stats(); s.Published != uint64(3*len(groups)) {
			t.Fatalf("first run: %+v", s)
		}
	}

	// Bulk load.
	p := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
	last, err := p.LoadLastPublished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != len(groups) {
		t.Fatalf("LoadLastPublished: %d groups, want %d", len(last), len(groups))
	}
	for _, g := range groups {
		l, ok := last[events.GroupKey{Type: events.ConsumerGroup, ID: g}]
		want := transition(g, 2)
		if !ok || l.Hash != int64(want.NewHash) || l.HashScheme != events.SchemeMurmur3 || l.Cause.MetadataOffset != want.MetadataOffset || l.Seq == 0 {
			t.Fatalf("LoadLastPublished[%.40q] = %+v, %v; want hash %d", g, l, ok, want.NewHash)
		}
	}
	r := start(t, p)
	// The caller announces what it believes: the last transition again for every group
	// (nothing to do) and a new one for "plain" (changed while down).
	for _, g := range groups {
		enqueue(t, p, transition(g, 2))
	}
	enqueue(t, p, transition("plain", 3))
	waitFor(t, 30*time.Second, "restart events", finished(p, uint64(len(groups)+1)))
	if s := p.Stats(); s.Published != 1 || s.AlreadyPublished != uint64(len(groups)) {
		t.Fatalf("after restart: %+v, want 1 published and %d already published", s, len(groups))
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// Lazy: a third publisher, without LoadLastPublished.
	p3 := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
	h, ok, err := p3.LastPublished(ctx, events.ConsumerGroup, "plain")
	if want := transition("plain", 3).NewHash; err != nil || !ok || h != int64(want) {
		t.Fatalf("LastPublished(plain) = %d, %v, %v; want %d", h, ok, err, want)
	}
	start(t, p3)
	for _, g := range groups {
		enqueue(t, p3, transition(g, 1)) // older than what is stored: superseded
	}
	enqueue(t, p3, transition("plain", 3))
	waitFor(t, 30*time.Second, "lazy events", finished(p3, uint64(len(groups)+1)))
	if s := p3.Stats(); s.Published != 0 || s.AlreadyPublished != 1 || s.Superseded != uint64(len(groups)) {
		t.Fatalf("lazy publisher: %+v, want nothing published, 1 already, %d superseded", s, len(groups))
	}
	msgs := readStream(t, connect(t, srv.ClientURL()), "kraftwatch")
	for _, g := range groups {
		n := 3
		if g == "plain" {
			n = 4
		}
		checkTransitions(t, msgs, "kraftwatch", g, n)
	}
}

// TestSchemeChange: a stored event of another scheme counts as no announcement.
func TestSchemeChange(t *testing.T) {
	srv := natstest.Start(t)
	p := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
	r := start(t, p)
	enqueue(t, p, transition("g", 0))
	waitFor(t, 10*time.Second, "published", finished(p, 1))
	_ = r.stop()

	cfg := baseConfig(t, connect(t, srv.ClientURL()))
	cfg.HashScheme = events.SchemeKafka
	pk := newPublisher(t, cfg)
	if _, ok, err := pk.LastPublished(context.Background(), events.ConsumerGroup, "g"); ok || err != nil {
		t.Fatalf("LastPublished across schemes = %v, %v; want not ok", ok, err)
	}
	last, err := pk.LoadLastPublished(context.Background())
	if l := last[events.GroupKey{Type: events.ConsumerGroup, ID: "g"}]; err != nil || l.HashScheme != events.SchemeMurmur3 {
		t.Fatalf("LoadLastPublished = %+v, %v; want the murmur3 event", l, err)
	}
	ev := transition("g", 0)
	ev.HashScheme = events.SchemeMurmur3
	if err := pk.Enqueue(context.Background(), ev); !errors.Is(err, events.ErrInvalidEvent) {
		t.Fatalf("Enqueue of a murmur3 event to a kafka publisher = %v", err)
	}
}

// TestCoreMode publishes without JetStream: subscribers get every event, no stream is
// created, and the last hashes live in this process only.
func TestCoreMode(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv.ClientURL())
	sub, err := nc.SubscribeSync("kraftwatch.>")
	if err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(t, nc)
	cfg.Mode = publish.ModeCore
	p := newPublisher(t, cfg)
	r := start(t, p)
	for k := range 2 {
		for _, g := range oddIDs {
			enqueue(t, p, transition(g, k))
		}
	}
	enqueue(t, p, transition("plain", 1)) // same hash as the last published: skipped
	total := 2*len(oddIDs) + 1
	waitFor(t, 30*time.Second, "core events", finished(p, uint64(total)))
	if s := p.Stats(); s.Published != uint64(total-1) || s.AlreadyPublished != 1 {
		t.Fatalf("stats %+v", s)
	}
	got := map[string][]string{}
	for range total - 1 {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		validateEvent(t, m.Data)
		env, err := events.DecodeRebalanceNeeded(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != p.Subject(env.Data.GroupType, env.Data.GroupID) || m.Header.Get(jetstream.MsgIDHeader) != env.ID {
			t.Fatalf("message on %q: %+v", m.Subject, m.Header)
		}
		got[env.Data.GroupID] = append(got[env.Data.GroupID], env.ID)
	}
	if m, err := sub.NextMsg(100 * time.Millisecond); err == nil {
		t.Fatalf("extra event on %s", m.Subject)
	}
	for _, g := range oddIDs {
		if len(got[g]) != 2 {
			t.Fatalf("group %.40q: %d events", g, len(got[g]))
		}
		h, ok, err := p.LastPublished(context.Background(), events.ConsumerGroup, g)
		if err != nil || !ok || h != int64(transition(g, 1).NewHash) {
			t.Fatalf("LastPublished(%.40q) = %d, %v, %v", g, h, ok, err)
		}
	}
	if last, _ := p.LoadLastPublished(context.Background()); len(last) != len(oddIDs) {
		t.Fatalf("LoadLastPublished: %d groups", len(last))
	}
	js, _ := jetstream.New(nc)
	if names := js.StreamNames(context.Background()); func() int {
		n := 0
		for range names.Name() {
			n++
		}
		return n
	}() != 0 {
		t.Fatal("core mode created a stream")
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	p2 := newPublisher(t, cfg)
	if _, ok, err := p2.LastPublished(context.Background(), events.ConsumerGroup, "plain"); ok || err != nil {
		t.Fatalf("a new core publisher knows a last hash: %v, %v", ok, err)
	}
}

// TestBackpressure: a full buffer blocks Enqueue until there is room; nothing is dropped.
func TestBackpressure(t *testing.T) {
	srv := natstest.Start(t)
	cfg := baseConfig(t, connect(t, srv.ClientURL()))
	cfg.Workers, cfg.BufferSize = 1, 2
	p := newPublisher(t, cfg)
	enqueue(t, p, transition("a", 0)) // Run is not started: these fill the buffer
	enqueue(t, p, transition("b", 0))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.Enqueue(ctx, transition("c", 0)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enqueue into a full buffer = %v, want DeadlineExceeded", err)
	}
	if s := p.Stats(); s.Queued != 2 || s.Enqueued != 2 {
		t.Fatalf("stats %+v", s)
	}
	done := make(chan error, 1)
	go func() { done <- p.Enqueue(context.Background(), transition("c", 0)) }()
	r := start(t, p)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "published", finished(p, 3))
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Published != 3 {
		t.Fatalf("stats %+v", s)
	}
}

// TestDrain: events queued when the context ends are still published.
func TestDrain(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv.ClientURL())
	p := newPublisher(t, baseConfig(t, nc))
	for g := range 500 {
		enqueue(t, p, transition(fmt.Sprint("g", g), 0))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run starts already cancelled: it only drains
	if err := p.Run(ctx); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if s := p.Stats(); s.Published != 500 || s.Queued != 0 {
		t.Fatalf("stats %+v", s)
	}
	if n := len(readStream(t, nc, "kraftwatch")); n != 500 {
		t.Fatalf("%d subjects stored", n)
	}
	if err := p.Run(context.Background()); !errors.Is(err, publish.ErrClosed) {
		t.Fatalf("second Run = %v", err)
	}
}

// TestDrainTimeout: with NATS gone, Run gives up after the drain timeout and says how
// many events were left.
func TestDrainTimeout(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv.ClientURL())
	cfg := baseConfig(t, nc)
	cfg.DrainTimeout = 300 * time.Millisecond
	p := newPublisher(t, cfg)
	r := start(t, p)
	waitFor(t, 10*time.Second, "ready", p.Ready)
	srv.Shutdown()
	waitFor(t, 10*time.Second, "disconnected", func() bool { return !nc.IsConnected() })
	for g := range 5 {
		enqueue(t, p, transition(fmt.Sprint("g", g), 0))
	}
	waitFor(t, 10*time.Second, "failed attempts", func() bool { return p.Stats().Failed > 0 })
	if p.Ready() {
		t.Fatal("ready while NATS is down")
	}
	err := r.stop()
	if !errors.Is(err, publish.ErrDrainTimeout) {
		t.Fatalf("Run = %v, want ErrDrainTimeout", err)
	}
	if s := p.Stats(); s.Dropped != 5 || s.Published != 0 || s.Retried == 0 {
		t.Fatalf("stats %+v", s)
	}
	t.Log(err)
}

// TestExistingStream: streams that exist before kraftwatch starts.
func TestExistingStream(t *testing.T) {
	ctx := context.Background()
	const public, internal = "kraftwatch." + clusterID + ".>", "_kraftwatch.kraftwatch." + clusterID + ".>"

	// A stream made by an operator for every cluster, with wider filters than kraftwatch's
	// own, that stores and republishes as kraftwatch's would: used as it is.
	t.Run("operator stream", func(t *testing.T) {
		srv := natstest.Start(t)
		nc := connect(t, srv.ClientURL())
		core := subscribeCore(t, connect(t, srv.ClientURL()), "kraftwatch.>")
		js, _ := jetstream.New(nc)
		opsCfg := jetstream.StreamConfig{Name: "OPS", Subjects: []string{"_kraftwatch.kraftwatch.>"}, Storage: jetstream.MemoryStorage,
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: "_kraftwatch.kraftwatch.>", Destination: "kraftwatch.>"},
			RePublish:        &jetstream.RePublish{Source: "kraftwatch.>", Destination: "kraftwatch.>"}}
		if _, err := js.CreateStream(ctx, opsCfg); err != nil {
			t.Fatal(err)
		}
		p := newPublisher(t, baseConfig(t, nc))
		start(t, p)
		enqueue(t, p, transition("g", 0))
		waitFor(t, 10*time.Second, "published", finished(p, 1))
		s, _ := js.Stream(ctx, "OPS")
		if s.CachedInfo().State.Msgs != 1 {
			t.Fatalf("OPS holds %d messages", s.CachedInfo().State.Msgs)
		}
		if _, err := js.Stream(ctx, "KRAFTWATCH_"+clusterID); !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Fatalf("a second stream was created: %v", err)
		}
		msgs := readStream(t, nc, "kraftwatch")
		checkTransitions(t, msgs, "kraftwatch", "g", 1)
		core.exactlyStored(t, msgs)
	})

	// A stream made by an older kraftwatch (it captured the public subjects directly)
	// holding two events: updated in place, its events and sequences kept, so the new
	// publisher knows the last hash, publishes only the next transition, and core
	// subscribers receive that one once.
	t.Run("older kraftwatch stream", func(t *testing.T) {
		srv := natstest.Start(t)
		nc := connect(t, srv.ClientURL())
		js, _ := jetstream.New(nc)
		name := "KRAFTWATCH_" + clusterID
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{public},
			Retention: jetstream.LimitsPolicy, MaxMsgsPerSubject: publish.DefaultMaxMsgsPerSubject, MaxMsgs: -1, MaxBytes: -1,
			Duplicates: publish.DefaultDuplicateWindow, Description: "kraftwatch rebalance-needed events of Kafka cluster " + clusterID}); err != nil {
			t.Fatal(err)
		}
		subject := events.Subject("kraftwatch", clusterID, events.ConsumerGroup, "g")
		for k := range 2 { // as the older kraftwatch published
			m := rawMsg(t, subject, transition("g", k))
			if _, err := js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(uint64(k))); err != nil {
				t.Fatal(err)
			}
		}
		core := subscribeCore(t, connect(t, srv.ClientURL()), "kraftwatch.>")

		p := newPublisher(t, baseConfig(t, nc))
		last, err := p.LoadLastPublished(ctx)
		if l := last[events.GroupKey{Type: events.ConsumerGroup, ID: "g"}]; err != nil || l.Seq != 2 || l.Hash != int64(transition("g", 1).NewHash) {
			t.Fatalf("LoadLastPublished after the update = %+v, %v; want the older kraftwatch's second event", l, err)
		}
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		sc := s.CachedInfo().Config
		if len(sc.Subjects) != 1 || sc.Subjects[0] != internal || sc.SubjectTransform == nil || sc.SubjectTransform.Destination != public ||
			sc.RePublish == nil || sc.RePublish.Destination != public || sc.Description == "" || sc.MaxMsgsPerSubject != publish.DefaultMaxMsgsPerSubject {
			t.Fatalf("stream config after the update %+v", sc)
		}
		start(t, p)
		enqueue(t, p, transition("g", 1)) // already stored by the older kraftwatch
		enqueue(t, p, transition("g", 2))
		waitFor(t, 10*time.Second, "published", finished(p, 2))
		if st := p.Stats(); st.Published != 1 || st.AlreadyPublished != 1 {
			t.Fatalf("stats %+v, want 1 published and 1 already published", st)
		}
		msgs := readStream(t, nc, "kraftwatch")
		checkTransitions(t, msgs, "kraftwatch", "g", 3)
		core.exactlyStored(t, map[string][]stored{subject: msgs[subject][2:]})
	})

	// A stream that captures the public subjects but is not of the older kraftwatch's
	// shape (here: every prefix's subjects, a user's own stream) is left alone, with a
	// warning naming it and the fix: kraftwatch creates its own stream and publishes,
	// core subscribers receive the events, and no events stream is created (its subjects
	// would overlap). Once the user's stream sources kraftwatch's, it is the events stream.
	t.Run("captures the public subjects", func(t *testing.T) {
		srv := natstest.Start(t)
		nc := connect(t, srv.ClientURL())
		js, _ := jetstream.New(nc)
		core := subscribeCore(t, connect(t, srv.ClientURL()), "kraftwatch.>")
		opsCfg := jetstream.StreamConfig{Name: "OPS", Subjects: []string{"kraftwatch.>"}, Storage: jetstream.MemoryStorage}
		if _, err := js.CreateStream(ctx, opsCfg); err != nil {
			t.Fatal(err)
		}
		logs := &syncLog{}
		cfg := baseConfig(t, nc)
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		p := newPublisher(t, cfg)
		start(t, p)
		enqueue(t, p, transition("g", 0))
		waitFor(t, 10*time.Second, "published", finished(p, 1))
		if !p.Ready() || p.Stats().Published != 1 || p.EventsStream() != "" {
			t.Fatalf("ready %v, stats %+v, events stream %q", p.Ready(), p.Stats(), p.EventsStream())
		}
		if w := logs.String(); !strings.Contains(w, "another stream captures kraftwatch's public subjects") ||
			!strings.Contains(w, "stream=OPS") || !strings.Contains(w, "sources [{name: KRAFTWATCH_"+clusterID+"}]") {
			t.Fatalf("no warning naming OPS and the fix:\n%s", w)
		}
		msgs := readStream(t, nc, "kraftwatch")
		checkTransitions(t, msgs, "kraftwatch", "g", 1)
		core.exactlyStored(t, msgs)
		s, _ := js.Stream(ctx, "OPS")
		if sc, st := s.CachedInfo().Config, s.CachedInfo().State; len(sc.Subjects) != 1 || sc.Subjects[0] != "kraftwatch.>" ||
			sc.SubjectTransform != nil || sc.RePublish != nil || st.Msgs != 0 {
			t.Fatalf("OPS was changed or stored a republished copy: %+v, %+v", sc, st)
		}

		// The fix the warning gives: OPS sources kraftwatch's stream.
		opsCfg.Sources = []*jetstream.StreamSource{{Name: "KRAFTWATCH_" + clusterID}}
		if _, err := js.UpdateStream(ctx, opsCfg); err != nil {
			t.Fatal(err)
		}
		p2 := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
		start(t, p2)
		waitFor(t, 10*time.Second, "OPS used as the events stream", func() bool { return p2.EventsStream() == "OPS" })
		sameEvents(t, nc, "kraftwatch", msgs)
	})

	// Streams that capture the internal subjects but would store or republish wrongly.
	for _, tc := range []struct {
		name string
		cfg  jetstream.StreamConfig
		want string
	}{
		{"no transform", jetstream.StreamConfig{Subjects: []string{internal},
			RePublish: &jetstream.RePublish{Source: public, Destination: public}}, "no subject transform"},
		{"no republish", jetstream.StreamConfig{Subjects: []string{internal},
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: internal, Destination: public}}, "no republish"},
		{"headers only", jetstream.StreamConfig{Subjects: []string{internal},
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: internal, Destination: public},
			RePublish:        &jetstream.RePublish{Source: public, Destination: public, HeadersOnly: true}}, "headers only"},
		{"transform elsewhere", jetstream.StreamConfig{Subjects: []string{internal},
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: internal, Destination: "events." + clusterID + ".>"},
			RePublish:        &jetstream.RePublish{Source: public, Destination: public}}, "stores _kraftwatch.kraftwatch." + clusterID + ".group.classic.% as events."},
		{"republish elsewhere", jetstream.StreamConfig{Subjects: []string{internal},
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: internal, Destination: public},
			RePublish:        &jetstream.RePublish{Source: public, Destination: "events.>"}}, "sends kraftwatch." + clusterID + ".group.classic.% to events."},
		{"republish some", jetstream.StreamConfig{Subjects: []string{internal},
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: internal, Destination: public},
			RePublish:        &jetstream.RePublish{Source: "kraftwatch." + clusterID + ".group.consumer.>", Destination: "kraftwatch." + clusterID + ".group.consumer.>"}},
			"does not republish kraftwatch." + clusterID + ".group.classic.%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := natstest.Start(t)
			nc := connect(t, srv.ClientURL())
			js, _ := jetstream.New(nc)
			tc.cfg.Name, tc.cfg.Storage = "BAD", jetstream.MemoryStorage
			if _, err := js.CreateStream(ctx, tc.cfg); err != nil {
				t.Fatal(err)
			}
			p := newPublisher(t, baseConfig(t, nc))
			_, _, err := p.LastPublished(ctx, events.ConsumerGroup, "g")
			if !errors.Is(err, publish.ErrStreamConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LastPublished = %v, want ErrStreamConfig saying %q", err, tc.want)
			}
		})
	}
}

// TestRepublishStoredOnly shows the stream's settings at work with raw publishes to the
// internal subject, as two racing replicas and a retry after a lost ack make them: the
// expected last sequence is checked against the subject the event is stored under (the
// public one), a publish the stream refuses or de-duplicates reaches no core subscriber,
// each stored event reaches it once, and the stream does not capture what it
// republishes.
func TestRepublishStoredOnly(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	nc := connect(t, srv.ClientURL())
	core := subscribeCore(t, connect(t, srv.ClientURL()), "kraftwatch.>")
	p := newPublisher(t, baseConfig(t, nc))
	if _, err := p.LoadLastPublished(ctx); err != nil { // creates the stream
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	public := p.Subject(events.ConsumerGroup, "g")
	internal := events.InternalPrefix + "." + public
	pub := func(k int, expect uint64) (*jetstream.PubAck, error) {
		return js.PublishMsg(ctx, rawMsg(t, internal, transition("g", k)), jetstream.WithExpectLastSequencePerSubject(expect),
			jetstream.WithExpectStream("KRAFTWATCH_"+clusterID))
	}
	wrongLastSeq := func(what string, err error) {
		t.Helper()
		var apiErr *jetstream.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
			t.Fatalf("%s: %v, want wrong last sequence", what, err)
		}
	}

	// Replica A stores transition 0; replica B, which read the subject before, is refused.
	if ack, err := pub(0, 0); err != nil || ack.Sequence != 1 || ack.Duplicate {
		t.Fatalf("first publish: %+v, %v", ack, err)
	}
	_, err := pub(1, 0)
	wrongLastSeq("second publish expecting an empty subject", err) // checked against the public subject
	// A retry of transition 0 after a lost ack: refused with the stale expectation,
	// de-duplicated with the right one.
	_, err = pub(0, 0)
	wrongLastSeq("retry with the stale expectation", err)
	if ack, err := pub(0, 1); err != nil || !ack.Duplicate || ack.Sequence != 1 {
		t.Fatalf("retry after a lost ack: %+v, %v; want a duplicate of sequence 1", ack, err)
	}
	// B reads again and stores transition 1.
	if ack, err := pub(1, 1); err != nil || ack.Sequence != 2 {
		t.Fatalf("publish after reading again: %+v, %v", ack, err)
	}

	// The stream that captures the public subject is the events stream, which sources
	// kraftwatch's: it refuses the republished copies and holds each stored event once.
	if name, err := js.StreamNameBySubject(ctx, public); err != nil || name != "KRAFTWATCH_"+clusterID+"_EVENTS" {
		t.Fatalf("the stream capturing the public subject %s is %q, %v; want the events stream", public, name, err)
	}
	msgs := readStream(t, nc, "kraftwatch")
	checkTransitions(t, msgs, "kraftwatch", "g", 2)
	core.exactlyStored(t, msgs)
	sameEvents(t, nc, "kraftwatch", msgs)
	// Reads by the public subject see what was published to the internal one (a new
	// publisher: p was primed by LoadLastPublished before these raw publishes).
	p2 := newPublisher(t, baseConfig(t, nc))
	if h, ok, err := p2.LastPublished(ctx, events.ConsumerGroup, "g"); err != nil || !ok || h != int64(transition("g", 1).NewHash) {
		t.Fatalf("LastPublished = %d, %v, %v", h, ok, err)
	}
}

// rawMsg is the message kraftwatch publishes for ev, on subject.
func rawMsg(t testing.TB, subject string, ev events.RebalanceNeeded) *nats.Msg {
	t.Helper()
	ev.ClusterID, ev.HashScheme = clusterID, events.SchemeMurmur3
	env, err := ev.Wrap(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(subject)
	if m.Data, err = json.Marshal(env); err != nil {
		t.Fatal(err)
	}
	m.Header.Set(jetstream.MsgIDHeader, env.ID)
	m.Header.Set("Content-Type", events.ContentType)
	return m
}

// TestStreamDeleted: a stream deleted under a running publisher is created again.
func TestStreamDeleted(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv.ClientURL())
	p := newPublisher(t, baseConfig(t, nc))
	start(t, p)
	enqueue(t, p, transition("g", 0))
	waitFor(t, 10*time.Second, "published", finished(p, 1))
	js, _ := jetstream.New(nc)
	if err := js.DeleteStream(context.Background(), "KRAFTWATCH_"+clusterID); err != nil {
		t.Fatal(err)
	}
	enqueue(t, p, transition("g", 1))
	waitFor(t, 20*time.Second, "published again", finished(p, 2))
	msgs := readStream(t, nc, "kraftwatch")
	if got := msgs[p.Subject(events.ConsumerGroup, "g")]; len(got) != 1 || got[0].env.ID != mustID(transition("g", 1)) {
		t.Fatalf("after the stream was deleted: %+v", got)
	}
}

func mustID(ev events.RebalanceNeeded) string {
	ev.ClusterID, ev.HashScheme = clusterID, events.SchemeMurmur3
	return ev.MsgID()
}

func TestConfigValidate(t *testing.T) {
	nc := &nats.Conn{}
	ok := publish.Config{Conn: nc, ClusterID: "c"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("minimal config: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*publish.Config)
		want string
	}{
		{"no conn", func(c *publish.Config) { c.Conn = nil }, "Conn"},
		{"no cluster", func(c *publish.Config) { c.ClusterID = "" }, "ClusterID"},
		{"prefix wildcard", func(c *publish.Config) { c.Prefix = "kw.>" }, "Prefix"},
		{"prefix empty token", func(c *publish.Config) { c.Prefix = "a..b" }, "Prefix"},
		{"prefix space", func(c *publish.Config) { c.Prefix = "a b" }, "Prefix"},
		{"prefix internal", func(c *publish.Config) { c.Prefix = "_kraftwatch.events" }, "Prefix"},
		{"scheme", func(c *publish.Config) { c.HashScheme = "sha1" }, "HashScheme"},
		{"mode", func(c *publish.Config) { c.Mode = 9 }, "Mode"},
		{"stream", func(c *publish.Config) { c.Stream = "a.b" }, "Stream"},
		{"events stream", func(c *publish.Config) { c.EventsStream = "a.b" }, "EventsStream"},
		{"events stream and none", func(c *publish.Config) { c.EventsStream, c.NoEventsStream = "E", true }, "NoEventsStream"},
		{"replicas", func(c *publish.Config) { c.Replicas = 7 }, "Replicas"},
		{"max age", func(c *publish.Config) { c.MaxAge = -time.Second }, "MaxAge"},
		{"dup window", func(c *publish.Config) { c.MaxAge = time.Second }, "DuplicateWindow"},
		{"per subject", func(c *publish.Config) { c.MaxMsgsPerSubject = -5 }, "MaxMsgsPerSubject"},
		{"buffer", func(c *publish.Config) { c.BufferSize = -1 }, "BufferSize"},
		{"workers", func(c *publish.Config) { c.Workers = -1 }, "Workers"},
		{"retry", func(c *publish.Config) { c.RetryMin, c.RetryMax = time.Second, time.Millisecond }, "RetryMin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if !errors.Is(err, publish.ErrInvalidConfig) || !containsWord(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error about %s", err, tc.want)
			}
		})
	}
	none := ok
	none.NoEventsStream = true
	if err := none.Validate(); err != nil {
		t.Fatalf("without the events stream: %v", err)
	}
	// The internal prefix is kept only in JetStream mode.
	core := ok
	core.Mode, core.Prefix = publish.ModeCore, events.InternalPrefix
	if err := core.Validate(); err != nil {
		t.Fatalf("core mode with prefix %s: %v", events.InternalPrefix, err)
	}
	// Every problem is reported, one line each.
	err := publish.Config{Prefix: "a b", Replicas: 9}.Validate()
	if got := len(splitLines(err.Error())); got != 4 {
		t.Fatalf("Validate of a config with 4 problems:\n%v", err)
	}
}

// TestCopyEvents: how a user copies the events (README, "Consuming events"): a stream
// of their own that sources the events stream holds every event, with no Nats-Expected-*
// header; a stream capturing "kraftwatch.>" cannot be created beside the events stream.
func TestCopyEvents(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	nc := connect(t, srv.ClientURL())
	p := newPublisher(t, baseConfig(t, nc))
	start(t, p)
	for k := range 3 {
		enqueue(t, p, transition("g", k))
		enqueue(t, p, transition("h", k))
	}
	waitFor(t, 10*time.Second, "published", finished(p, 6))
	js, _ := jetstream.New(nc)
	events := "KRAFTWATCH_" + clusterID + "_EVENTS"
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MINE", Subjects: []string{"kraftwatch.>"}}); err == nil {
		t.Fatal("a stream capturing kraftwatch.> was created beside the events stream")
	} else {
		t.Logf("a stream capturing kraftwatch.>: %v", err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MINE", Sources: []*jetstream.StreamSource{{Name: events}}}); err != nil {
		t.Fatal(err)
	}
	msgs := readStream(t, nc, "kraftwatch")
	checkCopy(ctx, t, js, "MINE", 6, msgs)
}

// TestHealthNamesTheStreamError: a stream that cannot be created (3 replicas on a
// single nats-server) makes Health name the stream and the server's reason, not a
// generic "not reachable"; before Run, Health says it is not running.
func TestHealthNamesTheStreamError(t *testing.T) {
	srv := natstest.Start(t)
	cfg := baseConfig(t, connect(t, srv.ClientURL()))
	cfg.Replicas = 3
	p := newPublisher(t, cfg)
	if err := p.Health(); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("Health before Run: %v, want not running", err)
	}
	start(t, p)
	waitFor(t, 10*time.Second, "Health naming the replicas", func() bool {
		err := p.Health()
		return err != nil && strings.Contains(err.Error(), "stream KRAFTWATCH_"+clusterID) && strings.Contains(err.Error(), "replicas")
	})
	t.Logf("health: %v", p.Health())
}
