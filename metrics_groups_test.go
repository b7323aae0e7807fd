package main

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// TestGroupsCollector counts synthetic groups by type and state and exports
// per-group series only for the groups the opt-in regex matches.
func TestGroupsCollector(t *testing.T) {
	s := groups.NewState()
	for _, kv := range groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 5, Members: 2, Topics: 10, TopicsPerMember: 2, Assignments: true}) {
		if _, err := s.Replay(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	cache, _ := hashcache.New(hashcache.Config{})
	v := &engine.View{State: s, Image: image.Empty, Tracker: groups.NewTracker(s, cache)}
	src := func(_ context.Context, fn func(*engine.View)) error { fn(v); return nil }
	for _, tc := range []struct {
		name     string
		perGroup *regexp.Regexp
		series   int
	}{
		{"off by default", nil, 4 * 5},
		// group-00001 and share-group-00001 ...: 4 groups, 3 or 4 series each.
		{"opt-in regex", regexp.MustCompile(`^(share-)?group-0000[12]$`), 4*5 + 4*4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newGroupsCollector(src, tc.perGroup)
			if n := testutil.CollectAndCount(c); n != 0 {
				t.Errorf("%d series before the first snapshot, want none", n)
			}
			if err := c.refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			if n := testutil.CollectAndCount(c); n != tc.series {
				t.Errorf("%d series, want %d", n, tc.series)
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(c)
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, mf := range mfs {
				if mf.GetName() != "kraftwatch_groups" {
					continue
				}
				for _, m := range mf.GetMetric() {
					var l []string
					for _, lp := range m.GetLabel() {
						l = append(l, lp.GetValue())
					}
					if v := m.GetGauge().GetValue(); v != 0 {
						got[strings.Join(l, "/")] = v
					}
				}
			}
			// Synthetic consumer and share members are reconciled to their target; the
			// streams groups have a validated topology but no target assignment record,
			// so their epoch 3 is above the target's (0, Kafka's initial value).
			want := map[string]float64{"consumer/stable": 5, "share/stable": 5, "classic/stable": 5, "streams/assigning": 5}
			if !maps.Equal(got, want) {
				t.Errorf("kraftwatch_groups = %v, want %v", got, want)
			}
		})
	}
}

// TestMetricsWhileEngineBlocked: with the engine blocked (at start-up, reading the
// last published events from a NATS that does not answer) every scrape of /metrics
// answers 200 within a second, with kraftwatch_ready, while /readyz says why.
func TestMetricsWhileEngineBlocked(t *testing.T) {
	obs, reader, pub := testStages(t)
	blocked := &blockedPublisher{loading: make(chan struct{})}
	caughtUp := make(chan struct{})
	close(caughtUp)
	eng, err := engine.New(engine.Config{ClusterID: "c", Scheme: "murmur3", GroupsCaughtUp: caughtUp, Publisher: blocked})
	if err != nil {
		t.Fatal(err)
	}
	st := &stages{obs: obs, reader: reader, eng: eng, pub: pub, rebalanced: newRebalanceMetrics(),
		groupMetrics: newGroupsCollector(eng.Query, nil), stallAfter: time.Minute}
	ready := newReadiness()
	reg := newHealthRegistry(ready.check)
	registerMetrics(reg, st, buildInfo{"dev", "c", "disk", "murmur3"})
	ready.watch(st)
	srv := httptest.NewServer(httpHandler(ready.states, ready.live, reg, eng.Query, func() api.Status { return api.StatusOf(reader) }))
	defer srv.Close()

	ctx, cancel := context.WithCancel(t.Context())
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	running.Go(func() { eng.Run(ctx) })
	eng.OnMetadata(observer.Update{Image: image.Empty})
	select {
	case <-blocked.loading: // the engine waits for NATS: no query is served now
	case <-time.After(10 * time.Second):
		t.Fatal("the engine never asked for the last published events")
	}
	groupMetrics := st.groupMetrics
	running.Go(func() { groupMetrics.Run(ctx) })

	client := &http.Client{Timeout: time.Second}
	for range 3 {
		start := time.Now()
		resp, err := client.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatalf("/metrics: %v", err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: %d %v\n%s", resp.StatusCode, err, body)
		}
		if !strings.Contains(string(body), "\nkraftwatch_ready 0\n") || !strings.Contains(string(body), "\nkraftwatch_info{") {
			t.Fatalf("/metrics lacks kraftwatch_ready 0 or kraftwatch_info:\n%s", body)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("/metrics took %v", d)
		}
	}
	resp, err := client.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz: %d %s, want 503", resp.StatusCode, body)
	}
	// The reader's status does not go through the engine either.
	if resp, err = client.Get(srv.URL + "/v1/status"); err != nil {
		t.Fatalf("/v1/status: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"topic":"__consumer_offsets"`) {
		t.Errorf("/v1/status: %d %s", resp.StatusCode, body)
	}
}

// blockedPublisher is an engine.Publisher whose NATS never answers: LoadLastPublished
// blocks until its context ends (closing loading when first called).
type blockedPublisher struct {
	loading chan struct{}
	once    sync.Once
}

func (p *blockedPublisher) Enqueue(context.Context, events.RebalanceNeeded) error { return nil }

func (p *blockedPublisher) EnqueueRebalanced(context.Context, events.GroupRebalanced) error {
	return nil
}

func (p *blockedPublisher) Ready() bool { return false }

func (p *blockedPublisher) LoadLastPublished(ctx context.Context) (map[events.GroupKey]publish.Last, error) {
	p.once.Do(func() { close(p.loading) })
	<-ctx.Done()
	return nil, ctx.Err()
}

func (p *blockedPublisher) Superseded() <-chan struct{}                      { return nil }
func (p *blockedPublisher) TakeSuperseded() map[events.GroupKey]publish.Last { return nil }
