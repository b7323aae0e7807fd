package main

import (
	"context"
	"regexp"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/groups"
)

// groupsCollector exports the group state at scrape time, from one Query of the
// engine: kraftwatch_groups by type and state (every pair, zeros included, so the
// series never disappear), and per-group series only for groups whose id matches
// perGroup (KRAFTWATCH_GROUP_METRICS; nil: none), which keeps the cardinality in the
// operator's hands.
type groupsCollector struct {
	query    api.Source
	perGroup *regexp.Regexp
	byState  *prometheus.Desc
	members  *prometheus.Desc
	recon    *prometheus.Desc
	epoch    *prometheus.Desc
	state    *prometheus.Desc
}

// newGroupsMetrics registers the group state metrics (kraftwatch_groups and the
// per-group kraftwatch_group_* series), read from query at scrape time.
func newGroupsMetrics(reg prometheus.Registerer, query api.Source, perGroup *regexp.Regexp) {
	reg.MustRegister(newGroupsCollector(query, perGroup))
}

func newGroupsCollector(query api.Source, perGroup *regexp.Regexp) *groupsCollector {
	per := []string{"group_type", "group"}
	return &groupsCollector{query: query, perGroup: perGroup,
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

type groupTypeState struct {
	t groups.GroupType
	s groups.GroupState
}

// groupTypes are the four types, in order.
var groupTypes = []groups.GroupType{groups.ClassicGroup, groups.ConsumerGroup, groups.ShareGroup, groups.StreamsGroup}

func (c *groupsCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[groupTypeState]int{}
	var per []prometheus.Metric
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.query(ctx, func(v *engine.View) {
		for g := range v.State.All() {
			st := g.State()
			counts[groupTypeState{g.Key.Type, st}]++
			if c.perGroup == nil || !c.perGroup.MatchString(g.Key.ID) {
				continue
			}
			lv := []string{g.Key.Type.String(), g.Key.ID}
			per = append(per,
				prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(g.NumMembers()), lv...),
				prometheus.MustNewConstMetric(c.recon, prometheus.GaugeValue, float64(g.Reconciling()), lv...),
				prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, 1, append(lv, st.String())...))
			if g.HasMetadata {
				per = append(per, prometheus.MustNewConstMetric(c.epoch, prometheus.GaugeValue, float64(g.Epoch), lv...))
			}
		}
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.byState, err)
		return
	}
	for _, t := range groupTypes {
		for _, s := range groups.GroupStates() {
			ch <- prometheus.MustNewConstMetric(c.byState, prometheus.GaugeValue, float64(counts[groupTypeState{t, s}]), t.String(), s.String())
		}
	}
	for _, m := range per {
		ch <- m
	}
}
