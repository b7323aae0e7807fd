package main

import (
	"context"
	"errors"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
)

// groupsCollector exports the group state: kraftwatch_groups by type and state (every
// pair, zeros included, so the series never disappear), and per-group series only for
// groups whose id matches perGroup (KRAFTWATCH_GROUP_METRICS; nil: none), which keeps
// the cardinality in the operator's hands.
//
// A scrape never waits for the engine: Collect exports the last snapshot, which Run
// takes on the engine's goroutine (a Query) every groupsRefresh and publishes through
// an atomic pointer. While the engine is busy or blocked (at start-up, NATS
// unreachable) the last snapshot stays, and before the first there is none: the
// group series are absent, every other metric (kraftwatch_ready among them) is there.
type groupsCollector struct {
	query    api.Source
	perGroup *regexp.Regexp
	every    time.Duration
	snap     atomic.Pointer[[]prometheus.Metric]
	byState  *prometheus.Desc
	members  *prometheus.Desc
	recon    *prometheus.Desc
	epoch    *prometheus.Desc
	state    *prometheus.Desc
}

// groupsRefresh is how often the group metrics' snapshot is taken.
const groupsRefresh = 5 * time.Second

func newGroupsCollector(query api.Source, perGroup *regexp.Regexp) *groupsCollector {
	per := []string{"group_type", "group"}
	return &groupsCollector{query: query, perGroup: perGroup, every: groupsRefresh,
		byState: prometheus.NewDesc("kraftwatch_groups", "Groups by type and state, as the coordinator derives the state from __consumer_offsets.", []string{"group_type", "state"}, nil),
		members: prometheus.NewDesc("kraftwatch_group_members", "Members of a group matching KRAFTWATCH_GROUP_METRICS.", per, nil),
		recon:   prometheus.NewDesc("kraftwatch_group_reconciling_members", "Members of a group matching KRAFTWATCH_GROUP_METRICS not yet reconciled to its target assignment.", per, nil),
		epoch:   prometheus.NewDesc("kraftwatch_group_epoch", "Coordinator epoch (classic: generation) of a group matching KRAFTWATCH_GROUP_METRICS.", per, nil),
		state:   prometheus.NewDesc("kraftwatch_group_state", "1 for the state of a group matching KRAFTWATCH_GROUP_METRICS.", append(per, "state"), nil),
	}
}

func (c *groupsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.byState, c.members, c.recon, c.epoch, c.state} {
		ch <- d
	}
}

// Collect exports the last snapshot, if any.
func (c *groupsCollector) Collect(ch chan<- prometheus.Metric) {
	if ms := c.snap.Load(); ms != nil {
		for _, m := range *ms {
			ch <- m
		}
	}
}

// Run takes a snapshot at once and then every c.every, until ctx ends or the engine
// stops.
func (c *groupsCollector) Run(ctx context.Context) error {
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		if err := c.refresh(ctx); errors.Is(err, engine.ErrStopped) || ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

type groupTypeState struct {
	t events.GroupType
	s groups.GroupState
}

// groupTypes are the four types, in order.
var groupTypes = []events.GroupType{events.ClassicGroup, events.ConsumerGroup, events.ShareGroup, events.StreamsGroup}

// groupSeries is what the per-group series of one group say.
type groupSeries struct {
	t                    events.GroupType
	id                   string
	s                    groups.GroupState
	members, reconciling int
	epoch                int32
	hasEpoch             bool
}

// refresh takes a snapshot: it waits for the engine to serve a Query, copies the
// numbers there, and builds and publishes the metrics after.
func (c *groupsCollector) refresh(ctx context.Context) error {
	counts := map[groupTypeState]int{}
	var per []groupSeries
	err := c.query(ctx, func(v *engine.View) {
		for g := range v.State.All() {
			st := g.State()
			counts[groupTypeState{g.Key.Type, st}]++
			if c.perGroup == nil || !c.perGroup.MatchString(g.Key.ID) {
				continue
			}
			per = append(per, groupSeries{t: g.Key.Type, id: g.Key.ID, s: st, members: g.NumMembers(),
				reconciling: g.Reconciling(), epoch: g.Epoch, hasEpoch: g.HasMetadata})
		}
	})
	if err != nil {
		return err
	}
	var ms []prometheus.Metric
	for _, t := range groupTypes {
		for _, s := range groups.GroupStates() {
			ms = append(ms, prometheus.MustNewConstMetric(c.byState, prometheus.GaugeValue, float64(counts[groupTypeState{t, s}]), t.String(), s.String()))
		}
	}
	for _, g := range per {
		lv := []string{g.t.String(), g.id}
		ms = append(ms,
			prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(g.members), lv...),
			prometheus.MustNewConstMetric(c.recon, prometheus.GaugeValue, float64(g.reconciling), lv...),
			prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, 1, append(lv, g.s.String())...))
		if g.hasEpoch {
			ms = append(ms, prometheus.MustNewConstMetric(c.epoch, prometheus.GaugeValue, float64(g.epoch), lv...))
		}
	}
	c.snap.Store(&ms)
	return nil
}
