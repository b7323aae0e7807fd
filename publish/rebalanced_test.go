package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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

// goldenRebalanced is the example event of testdata/rebalanced.golden.json.
func goldenRebalanced() events.GroupRebalanced {
	prev := int32(4)
	h := func(v int64) *events.Hash { x := events.Hash(v); return &x }
	return events.GroupRebalanced{
		ClusterID:       clusterID,
		GroupID:         "orders.app",
		GroupType:       events.ConsumerGroup,
		PreviousEpoch:   &prev,
		NewEpoch:        5,
		MetadataHash:    -6148914691236517206,
		ConsumerOffsets: events.OffsetsPosition{Partition: 17, Offset: 9001},
		Causes: []events.RebalanceCause{
			{Kind: events.CauseMemberJoined, MemberID: "MyD1biQITqGvSLd025P4zg", ClientID: "orders-1", ClientHost: "/10.0.0.7",
				RackID: "rack-a", SubscribedTopicNames: []string{"orders", "payments"}},
			{Kind: events.CauseMetadata, PreviousHash: h(6148914691236517205), NewHash: h(-6148914691236517206),
				PredictedBy: &events.Prediction{EventID: "kw1-0123456789abcdef0123456789abcdef", NewHash: -6148914691236517206,
					Time: time.Date(2025, 11, 3, 14, 15, 16, 123000000, time.UTC), LeadTimeMs: 666}},
		},
		Time: time.Date(2025, 11, 3, 14, 15, 16, 789000000, time.UTC),
	}
}

func rebalancedBody(t testing.TB, ev events.GroupRebalanced) []byte {
	t.Helper()
	env, err := ev.Wrap(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestRebalancedGolden pins the wire form of the rebalanced event, checks it against its
// schema and decodes it back. Regenerate with: go test ./publish -run TestRebalancedGolden -rewrite
func TestRebalancedGolden(t *testing.T) {
	got := rebalancedBody(t, goldenRebalanced())
	path := filepath.Join("testdata", "rebalanced.golden.json")
	if *rewrite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("wire form changed (run with -rewrite if intended):\n%s", got)
	}
	if err := checkRebalancedSchema(got); err != nil {
		t.Fatalf("golden event does not satisfy the schema: %v", err)
	}
	env, err := events.DecodeGroupRebalanced(got)
	if err != nil {
		t.Fatal(err)
	}
	if wantEv := goldenRebalanced(); !reflect.DeepEqual(env.Data, wantEv) {
		t.Errorf("decoded\n%+v\nwant\n%+v", env.Data, wantEv)
	}
	any, err := events.Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := any.Data.(*events.GroupRebalanced); !ok {
		t.Fatalf("events.Decode gave %T", any.Data)
	}
	if _, err := events.DecodeRebalanceNeeded(got); err == nil {
		t.Fatal("a rebalanced event decoded as a rebalance-needed event")
	}
}

// TestRebalancedSchemaRejects: each case breaks one rule of the golden event; the schema
// and the decoder both refuse it. Members neither knows are accepted by both (a later v1
// kraftwatch's), except in consumer_offsets; the strict schema refuses them all.
func TestRebalancedSchemaRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, rebalancedBody(t, goldenRebalanced())); err != nil {
		t.Fatal(err)
	}
	valid := buf.String()
	for _, tc := range []struct {
		name, old, new string
		open           bool // accepted as published, refused when strict
	}{
		{name: "no causes", old: valid[strings.Index(valid, `"causes":[`) : len(valid)-2], new: `"causes":[]`},
		{name: "unknown cause", old: `"kind":"member_joined"`, new: `"kind":"moved"`},
		{name: "joined without member", old: `"member_id":"MyD1biQITqGvSLd025P4zg",`},
		{name: "metadata without new hash", old: `,"new_hash":"-6148914691236517206","predicted_by"`, new: `,"predicted_by"`},
		{name: "negative epoch", old: `"new_epoch":5`, new: `"new_epoch":-1`},
		{name: "null epoch", old: `"new_epoch":5`, new: `"new_epoch":null`},
		{name: "hash as number", old: `"metadata_hash":"-6148914691236517206"`, new: `"metadata_hash":-6148914691236517206`},
		{name: "hash with plus", old: `"metadata_hash":"-6148914691236517206"`, new: `"metadata_hash":"+6148914691236517206"`},
		{name: "bad id", old: `"id":"kwr1-`, new: `"id":"kw1-`},
		{name: "wrong type", old: `rebalanced.v1"`, new: `rebalanced.v2"`},
		{name: "bad prediction id", old: `"event_id":"kw1-`, new: `"event_id":"kwr1-`},
		{name: "no position", old: `"consumer_offsets":{"partition":17,"offset":9001},`},
		{name: "null topic name", old: `"orders","payments"`, new: `"orders",null`},
		{name: "topic names a string", old: `["orders","payments"]`, new: `"orders"`},
		{name: "extra data member", old: `"cluster_id"`, new: `"colour":"red","cluster_id"`, open: true},
		{name: "extra cause member", old: `"kind":"member_joined"`, new: `"colour":"red","kind":"member_joined"`, open: true},
		{name: "extra prediction member", old: `"lead_time_ms":666`, new: `"lead_time_ms":666,"colour":"red"`, open: true},
		{name: "extra consumer_offsets member", old: `"partition":17`, new: `"leader_epoch":3,"partition":17`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("golden event lacks %s", tc.old)
			}
			bad := []byte(strings.Replace(valid, tc.old, tc.new, 1))
			if err := validate(rebalancedSchema, bad); (err == nil) != tc.open {
				t.Errorf("schema: %v, want accepted=%v\n%s", err, tc.open, bad)
			}
			if err := checkRebalancedSchema(bad); err == nil {
				t.Errorf("strict schema accepted\n%s", bad)
			}
			if _, err := events.DecodeGroupRebalanced(bad); (err == nil) != tc.open {
				t.Errorf("decoder: %v, want accepted=%v\n%s", err, tc.open, bad)
			}
		})
	}
}

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
			if err := checkRebalancedSchema(m.Data()); err != nil {
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
