package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/events"
)

// rebalanceMetrics counts the rebalanced events the engine hands to the publisher
// (engine.Config.OnRebalanced): kraftwatch_group_rebalances_total by group type and
// cause kind (4 x 10 series, all created at zero), the assignments and the epoch bumps
// folded into them by group type, and the lead time of each linked prediction. An event
// with several causes counts once under each distinct kind. On Kafka 4.3+ an event is
// one new target assignment, which may fold several bumps; before, one bump.
type rebalanceMetrics struct {
	total       *prometheus.CounterVec
	assignments *prometheus.CounterVec
	bumps       *prometheus.CounterVec
	lead        prometheus.Histogram
}

func newRebalanceMetrics() *rebalanceMetrics {
	m := &rebalanceMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kraftwatch", Name: "group_rebalances_total",
			Help: "Rebalances the coordinator wrote (Kafka 4.3+: new target assignments; before: group epoch bumps; classic: generations), by group type and attributed cause; a rebalance counts once under each distinct cause."},
			[]string{"group_type", "cause"}),
		assignments: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kraftwatch", Name: "group_assignments_total",
			Help: "Rebalances the coordinator wrote, by group type: new target assignments (Kafka 4.3+), each group epoch bump before 4.3 and for classic groups."},
			[]string{"group_type"}),
		bumps: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kraftwatch", Name: "group_epoch_bumps_total",
			Help: "Group epoch bumps (classic: generations) the coordinator wrote, by group type; on Kafka 4.3+ several may fold into one assignment."},
			[]string{"group_type"}),
		lead: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "kraftwatch", Name: "group_rebalance_lead_time_seconds",
			Help:    "Time from the rebalance-needed event kraftwatch published to the coordinator's epoch bump that it predicted (bump record time minus event time; clock skew below zero counts as 0).",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}}),
	}
	for _, t := range groupTypes {
		m.assignments.WithLabelValues(t.String())
		m.bumps.WithLabelValues(t.String())
		for k := range events.NumCauseKinds {
			m.total.WithLabelValues(t.String(), events.CauseKind(k).String())
		}
	}
	return m
}

// observe is the engine's OnRebalanced.
func (m *rebalanceMetrics) observe(ev events.GroupRebalanced) {
	m.assignments.WithLabelValues(ev.GroupType.String()).Inc()
	m.bumps.WithLabelValues(ev.GroupType.String()).Add(float64(max(len(ev.EpochBumps), 1)))
	var seen [events.NumCauseKinds]bool
	for _, c := range ev.Causes {
		if int(c.Kind) < len(seen) && !seen[c.Kind] {
			seen[c.Kind] = true
			m.total.WithLabelValues(ev.GroupType.String(), c.Kind.String()).Inc()
		}
		if p := c.PredictedBy; p != nil {
			m.lead.Observe(float64(max(p.LeadTimeMs, 0)) / 1000)
		}
	}
}

func (m *rebalanceMetrics) register(reg prometheus.Registerer) {
	reg.MustRegister(m.total, m.assignments, m.bumps, m.lead)
}
