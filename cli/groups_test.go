package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/observer"
)

// groupsServer serves the API over the 4.3.1 fixture replayed up to partition 0
// offset 161, where g-list's member still owns payments, pending revocation, and
// one event in g-list's history.
func groupsServer(t *testing.T) *httptest.Server {
	t.Helper()
	im, s := fixtureInputs(t)
	cache, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	tr := groups.NewTracker(s, cache)
	tr.Sync(im)
	h := engine.NewHistory(0)
	h.Record(events.GroupKey{Type: events.ConsumerGroup, ID: "g-list"}, engine.HistoryEvent{Type: events.TypeRebalanceNeeded, ID: "kw1-0123",
		Time:             time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		CoordinatorEpoch: 3, HasPreviousHash: true, PreviousHash: 1, HasNewHash: true, NewHash: 2, Summary: "subscription_changed payments"})
	v := &engine.View{State: s, Image: im, Tracker: tr, Scheme: hashcache.SchemeKafka, History: h, Synced: true}
	mux := http.NewServeMux()
	api.Register(mux, func(_ context.Context, fn func(*engine.View)) error { fn(v); return nil })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fixtureInputs are the image of the 4.3.1 fixture's metadata log and its groups
// replayed up to __consumer_offsets partition 0 offset 161, while g-list's and
// g-share's members are still in.
func fixtureInputs(t *testing.T) (*image.Image, *groups.State) {
	t.Helper()
	loaded, err := observer.Load(fixture.MetadataDir(t, "4.3.1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := groups.NewState()
	for _, r := range fixture.ReadConsumerOffsets(t, "4.3.1") {
		if r.Partition == 0 && r.Offset > 161 {
			continue
		}
		if _, err := s.Replay(r.Key, r.Value); err != nil {
			t.Fatal(err)
		}
	}
	return loaded.Image, s
}

// TestGroupsCommand runs `kraftwatch groups` against a real API server and compares
// its output with golden files (go test ./cli -run TestGroupsCommand -update).
func TestGroupsCommand(t *testing.T) {
	srv := groupsServer(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"list", []string{"--url", srv.URL}, 0},
		{"list-consumer-reconciling", []string{"--url", srv.URL, "--type", "consumer", "--state", "reconciling"}, 0},
		{"detail", []string{"--url", srv.URL, "g-list"}, 0},
		{"detail-classic", []string{"--url", srv.URL, "--type", "classic", "g-classic"}, 0},
		{"unknown-group", []string{"--url", srv.URL, "nope"}, 1},
		{"bad-state", []string{"--url", srv.URL, "--state", "dead"}, 1},
		{"no-source", []string{"g-list"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Groups(tc.args, nil, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errb.String())
			}
			got := out.String()
			if tc.code != 0 {
				got = strings.ReplaceAll(errb.String(), srv.URL, "URL")
			}
			golden(t, filepath.Join("testdata", "groups-"+tc.name+".txt"), got)
		})
	}
}

func TestTasksText(t *testing.T) {
	for _, tc := range []struct {
		tasks *api.Tasks
		want  string
	}{
		{nil, "-"},
		{&api.Tasks{}, "-"},
		{&api.Tasks{Active: []api.SubtopologyTasks{{SubtopologyID: "0", Partitions: []int32{0, 1}}, {SubtopologyID: "1", Partitions: []int32{0}}},
			Warmup: []api.SubtopologyTasks{{SubtopologyID: "1", Partitions: []int32{1}}}}, "active 0:0,1 1:0 warmup 1:1"},
	} {
		if got := tasksText(tc.tasks); got != tc.want {
			t.Errorf("tasksText(%+v) = %q, want %q", tc.tasks, got, tc.want)
		}
	}
}
