package main

import (
	"context"
	"maps"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
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
