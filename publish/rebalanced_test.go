package publish_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// bump is the k-th epoch bump of a group, its record at offset 10*k+5 of partition 3.
func bump(group string, k int) events.GroupRebalanced {
	prev := int32(k)
	return events.GroupRebalanced{GroupID: group, GroupType: events.ConsumerGroup, PreviousEpoch: &prev, NewEpoch: int32(k + 1),
		ConsumerOffsets: events.OffsetsPosition{Partition: 3, Offset: int64(10*k + 5)},
		Causes:          []events.RebalanceCause{{Kind: events.CauseMemberJoined, MemberID: fmt.Sprint("m", k)}},
		Time:            time.Date(2025, 1, 1, 0, 0, k, 0, time.UTC)}
}

// TestRebalancedOnce: two replicas enqueue the same bumps of the same groups at once,
// then a restarted replica enqueues them all again (a replay of __consumer_offsets):
// each bump is stored once, in order, on the group's rebalanced subject, beside the
// group's rebalance-needed events, which LoadLastPublished still returns alone.
func TestRebalancedOnce(t *testing.T) {
	srv := natstest.Start(t)
	const groups, steps = 40, 4
	name := func(g int) string { return fmt.Sprintf("group-%02d", g) }
	var ps []*publish.Publisher
	for range 2 {
		p := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
		start(t, p)
		ps = append(ps, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			for k := range steps {
				for g := range groups {
					if i == 1 {
						g = groups - 1 - g
					}
					if err := p.EnqueueRebalanced(ctx, bump(name(g), k)); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	enqueue(t, ps[0], transition(name(0), 0))
	wg.Wait()
	waitFor(t, time.Minute, "replica A done", finished(ps[0], groups*steps+1))
	waitFor(t, time.Minute, "replica B done", finished(ps[1], groups*steps))
	t.Logf("replicas done: A %+v, B %+v", ps[0].Stats(), ps[1].Stats())

	restarted := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
	start(t, restarted)
	last, err := restarted.LoadLastPublished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 1 {
		t.Fatalf("LoadLastPublished: %d groups, want the one rebalance-needed event", len(last))
	}
	for k := range steps {
		for g := range groups {
			if err := restarted.EnqueueRebalanced(ctx, bump(name(g), k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, time.Minute, "restarted replica done", finished(restarted, groups*steps))
	t.Logf("restarted replica done: %+v", restarted.Stats())
	if s := restarted.Stats(); s.Published != 0 || s.Conflicts != 0 {
		t.Fatalf("restarted replica: %+v, want nothing published and no conflict", s)
	}
	a, b := ps[0].Stats(), ps[1].Stats()
	if a.Published+b.Published != groups*steps+1 {
		t.Fatalf("published %d + %d, want %d", a.Published, b.Published, groups*steps+1)
	}

	nc := connect(t, srv.ClientURL())
	for g := range groups {
		got := readSubject(t, nc, ps[0].RebalancedSubject(events.ConsumerGroup, name(g)))
		if len(got) != steps {
			t.Fatalf("group %s: %d events stored, want %d", name(g), len(got), steps)
		}
		for k, env := range got {
			if want := bump(name(g), k); env.Data.NewEpoch != want.NewEpoch || env.ID != env.Data.MsgID() {
				t.Fatalf("group %s event %d: epoch %d id %s, want epoch %d", name(g), k, env.Data.NewEpoch, env.ID, want.NewEpoch)
			}
		}
	}
}

// readSubject reads every rebalanced event stored on subject (as many as the stream
// counts for it), in order, checking each against the schema and its Nats-Msg-Id.
func readSubject(t testing.TB, nc *nats.Conn, subject string) []events.Envelope[events.GroupRebalanced] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	name, err := js.StreamNameBySubject(ctx, events.InternalPrefix+"."+subject)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	total := int(info.State.Subjects[subject])
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Envelope[events.GroupRebalanced]
	for len(out) < total {
		batch, err := c.Fetch(total-len(out), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			if err := checkRebalancedSchema(t, m.Data()); err != nil {
				t.Fatalf("%s: %v", subject, err)
			}
			env, err := events.DecodeGroupRebalanced(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			if h := m.Headers().Get(jetstream.MsgIDHeader); h != env.ID {
				t.Fatalf("Nats-Msg-Id %q, id %q", h, env.ID)
			}
			out = append(out, env)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("%s: read %d of %d events, then nothing", subject, len(out), total)
		}
	}
	return out
}
