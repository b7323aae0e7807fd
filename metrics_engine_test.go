package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
)

// TestReasonMetricEveryKind: kraftwatch_decision_reasons_total has a series for every
// reason kind events declares, so a kind added there has its metric label.
func TestReasonMetricEveryKind(t *testing.T) {
	caughtUp := make(chan struct{})
	close(caughtUp)
	eng, err := engine.New(engine.Config{ClusterID: "c", Scheme: "murmur3", GroupsCaughtUp: caughtUp,
		Publisher: &blockedPublisher{loading: make(chan struct{})}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	newEngineMetrics(reg, eng)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "kraftwatch_decision_reasons_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = true
		}
	}
	for k := range events.NumReasonKinds {
		if name := events.ReasonKind(k).String(); !got[name] {
			t.Errorf("no kraftwatch_decision_reasons_total{reason=%q}", name)
		}
	}
}
