package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kraftwatch/kraftwatch/events"
)

// TestRebalanceMetrics: a bump counts once under each distinct cause kind, its linked
// prediction's lead time lands in the histogram (a negative one as 0), and every
// (group type, cause) series exists from the start.
func TestRebalanceMetrics(t *testing.T) {
	m := newRebalanceMetrics()
	reg := prometheus.NewRegistry()
	m.register(reg)
	if n := testutil.CollectAndCount(m.total); n != len(groupTypes)*events.NumCauseKinds {
		t.Fatalf("%d series, want %d", n, len(groupTypes)*events.NumCauseKinds)
	}
	joined, meta := events.CauseMemberJoined, events.CauseMetadata
	m.observe(events.GroupRebalanced{GroupType: events.ConsumerGroup, Causes: []events.RebalanceCause{
		{Kind: joined, MemberID: "a"}, {Kind: joined, MemberID: "b"},
		{Kind: meta, PredictedBy: &events.Prediction{LeadTimeMs: 1500}},
	}})
	m.observe(events.GroupRebalanced{GroupType: events.ShareGroup, Causes: []events.RebalanceCause{
		{Kind: meta, PredictedBy: &events.Prediction{LeadTimeMs: -3}},
	}})
	// Kafka 4.3+: two joins folded into one assignment.
	m.observe(events.GroupRebalanced{GroupType: events.ConsumerGroup, EpochBumps: []int32{3, 4}, Causes: []events.RebalanceCause{
		{Kind: joined, MemberID: "c", Epoch: 3}, {Kind: joined, MemberID: "d", Epoch: 4},
	}})
	for typ, want := range map[string][2]float64{"consumer": {2, 3}, "share": {1, 1}, "streams": {0, 0}} {
		if a, b := testutil.ToFloat64(m.assignments.WithLabelValues(typ)), testutil.ToFloat64(m.bumps.WithLabelValues(typ)); a != want[0] || b != want[1] {
			t.Errorf("%s: %v assignments, %v bumps; want %v", typ, a, b, want)
		}
	}
	for _, c := range []struct {
		typ, cause string
		want       float64
	}{{"consumer", "member_joined", 2}, {"consumer", "metadata", 1}, {"share", "metadata", 1}, {"share", "member_joined", 0}} {
		if got := testutil.ToFloat64(m.total.WithLabelValues(c.typ, c.cause)); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.typ, c.cause, got, c.want)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kraftwatch_group_rebalance_lead_time_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 2 || h.GetSampleSum() != 1.5 {
			t.Fatalf("lead time histogram: count %d sum %v, want 2 and 1.5", h.GetSampleCount(), h.GetSampleSum())
		}
		return
	}
	t.Fatal("no lead time histogram")
}
