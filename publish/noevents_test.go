package publish_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// streamNames lists the server's streams, sorted.
func streamNames(t testing.TB, js jetstream.JetStream) []string {
	t.Helper()
	var names []string
	l := js.StreamNames(context.Background())
	for name := range l.Name() {
		names = append(names, name)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestNoEventsStream: with Config.NoEventsStream the publisher creates kraftwatch's
// stream alone; each event is stored once in it, under its public subject, delivered
// once to a core subscriber (the stream's republish) and once to a consumer of the
// stream; no stream captures the public subjects. A stream sourcing kraftwatch's (how
// README says to copy the events) holds them without the Nats-Expected-* headers. A restarted publisher reads the last
// events back and goes on expecting each subject's last sequence: the next transition
// is stored after the last, the one already stored is not stored again.
func TestNoEventsStream(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	nc := connect(t, srv.ClientURL())
	js, _ := jetstream.New(nc)
	core := subscribeCore(t, connect(t, srv.ClientURL()), "kraftwatch.>")
	cfg := baseConfig(t, nc)
	cfg.NoEventsStream = true
	p := newPublisher(t, cfg)
	r := start(t, p)
	for k := range 2 {
		enqueue(t, p, transition("g", k))
		enqueue(t, p, transition("h", k))
	}
	waitFor(t, 10*time.Second, "published", finished(p, 4))
	stream := "KRAFTWATCH_" + clusterID
	if got := streamNames(t, js); !slices.Equal(got, []string{stream}) {
		t.Fatalf("streams %v, want only %s", got, stream)
	}
	if p.EventsStream() != "" || p.StreamName() != stream || p.Stats().Published != 4 {
		t.Fatalf("events stream %q, stream %q, stats %+v", p.EventsStream(), p.StreamName(), p.Stats())
	}
	public := p.Subject(events.ConsumerGroup, "g")
	if name, err := js.StreamNameBySubject(ctx, public); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("a lookup by the public subject %s found %q, %v; want no stream", public, name, err)
	}
	msgs := readStream(t, nc, "kraftwatch") // a consumer of kraftwatch's stream; fails on an event stored twice
	checkTransitions(t, msgs, "kraftwatch", "g", 2)
	checkTransitions(t, msgs, "kraftwatch", "h", 2)
	core.exactlyStored(t, msgs)
	// A copy made as README says, by sourcing kraftwatch's stream: every event, without
	// the Nats-Expected-* headers of kraftwatch's publishes.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MINE", Sources: []*jetstream.StreamSource{{Name: stream}},
		Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	kw, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := kw.GetMsg(ctx, 1); err != nil {
		t.Fatal(err)
	} else if m.Header.Get("Nats-Expected-Stream") != stream {
		t.Fatalf("kraftwatch's stream seq 1: headers %v; want Nats-Expected-Stream %s", m.Header, stream)
	}
	checkCopy(ctx, t, js, "MINE", 4, msgs)
	if err := js.DeleteStream(ctx, "MINE"); err != nil {
		t.Fatal(err)
	}

	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	p2 := newPublisher(t, cfg)
	if _, err := p2.LoadLastPublished(ctx); err != nil {
		t.Fatal(err)
	}
	start(t, p2)
	enqueue(t, p2, transition("g", 2))
	enqueue(t, p2, transition("h", 1)) // stored before the restart
	waitFor(t, 10*time.Second, "published after the restart", finished(p2, 2))
	if s := p2.Stats(); s.Published != 1 || s.AlreadyPublished != 1 {
		t.Fatalf("after the restart: %+v, want 1 published and 1 already published", s)
	}
	msgs = readStream(t, nc, "kraftwatch")
	checkTransitions(t, msgs, "kraftwatch", "g", 3)
	checkTransitions(t, msgs, "kraftwatch", "h", 2)
	if g := msgs[public]; g[2].seq <= g[1].seq {
		t.Fatalf("transition 2 of g stored at %d, before transition 1 at %d", g[2].seq, g[1].seq)
	}
	core.exactlyStored(t, msgs)
	if got := streamNames(t, js); !slices.Equal(got, []string{stream}) {
		t.Fatalf("streams after the restart %v, want only %s", got, stream)
	}
}

// TestNoEventsStreamLeavesExisting: an events stream made by an earlier run with the
// default settings is left alone by a publisher configured without one: not deleted or
// changed, it goes on sourcing kraftwatch's stream, and one warning says what it costs
// and how to delete it. Once deleted, it is not created again.
func TestNoEventsStreamLeavesExisting(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	nc := connect(t, srv.ClientURL())
	js, _ := jetstream.New(nc)
	p := newPublisher(t, baseConfig(t, nc))
	r := start(t, p)
	enqueue(t, p, transition("g", 0))
	waitFor(t, 10*time.Second, "published", finished(p, 1))
	events := "KRAFTWATCH_" + clusterID + "_EVENTS"
	waitFor(t, 10*time.Second, "the events stream", func() bool { return p.EventsStream() == events })
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, events)
	if err != nil {
		t.Fatal(err)
	}
	before := s.CachedInfo().Config

	logs := &syncLog{}
	cfg := baseConfig(t, nc)
	cfg.NoEventsStream = true
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p2 := newPublisher(t, cfg)
	r2 := start(t, p2)
	enqueue(t, p2, transition("g", 1))
	waitFor(t, 10*time.Second, "published", finished(p2, 1))
	waitFor(t, 10*time.Second, "the existing events stream found", func() bool { return p2.EventsStream() == events })
	if w := logs.String(); strings.Count(w, "left alone") != 1 || !strings.Contains(w, "nats stream rm "+events) {
		t.Fatalf("want one warning that %s is left alone, with how to delete it:\n%s", events, w)
	}
	msgs := readStream(t, nc, "kraftwatch")
	checkTransitions(t, msgs, "kraftwatch", "g", 2)
	sameEvents(t, nc, "kraftwatch", msgs) // still sourcing
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Config; !slices.Equal(got.Subjects, before.Subjects) || len(got.Sources) != 1 || got.Sources[0].Name != before.Sources[0].Name {
		t.Fatalf("events stream changed: %+v, was %+v", got, before)
	}
	if err := r2.stop(); err != nil {
		t.Fatal(err)
	}

	// Deleted as the warning says, it stays deleted.
	if err := js.DeleteStream(ctx, events); err != nil {
		t.Fatal(err)
	}
	p3 := newPublisher(t, cfg)
	start(t, p3)
	enqueue(t, p3, transition("g", 2))
	waitFor(t, 10*time.Second, "published", finished(p3, 1))
	if got := streamNames(t, js); !slices.Equal(got, []string{"KRAFTWATCH_" + clusterID}) || p3.EventsStream() != "" {
		t.Fatalf("streams %v, events stream %q: want kraftwatch's alone", got, p3.EventsStream())
	}
}
