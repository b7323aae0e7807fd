package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
)

// newEngineMetrics registers the engine's counters: decisions and their reasons,
// the topic hash cache, the coordinator check and the groups tracked, read from
// Engine.Stats at scrape time.
func newEngineMetrics(reg prometheus.Registerer, eng *engine.Engine) {
	f := funcMetrics{reg}
	f.counter("events_invalid_total", "Events refused as invalid and not published; each is logged with its group.",
		func() float64 { return float64(eng.Stats().InvalidEvents) })
	f.counter("group_decode_errors_skipped_total", "__consumer_offsets records skipped: unknown type or version, or corrupt.",
		func() float64 { return float64(eng.Stats().DecodeErrors) })
	f.counter("group_unknown_tagged_fields_skipped_total", "Tagged fields of __consumer_offsets records skipped as unknown (a newer Kafka's); the rest of each record is used. Each kind is logged once.",
		func() float64 { return float64(eng.Stats().UnknownTags) })
	f.gauge("hash_coordinator_checked", "Groups whose kafka-scheme hash the last check compared with the coordinator's stored MetadataHash (groups with members and a stored hash).",
		func() float64 { return float64(eng.Stats().CoordinatorChecked) })
	f.gauge("hash_coordinator_mismatches", "Groups whose kafka-scheme hash has differed from the coordinator's stored MetadataHash for over KRAFTWATCH_COORDINATOR_MISMATCH_AFTER.",
		func() float64 { return float64(eng.Stats().CoordinatorMismatches) })
	f.gauge("groups_tracked", "Groups known from __consumer_offsets.", func() float64 { return float64(eng.Stats().Groups) })
	f.counter("hash_cache_hits_total", "Topic hash cache hits.", func() float64 { return float64(eng.Stats().Cache.Hits) })
	f.counter("hash_cache_misses_total", "Topic hash cache misses (hash computed).", func() float64 { return float64(eng.Stats().Cache.Misses) })
	f.counter("hash_cache_invalidations_total", "Topic hash cache entries dropped by deltas.",
		func() float64 { return float64(eng.Stats().Cache.Invalidations) })
	f.counter("decisions_total", "Groups whose hash changed (rebalance needed).", func() float64 { return float64(eng.Stats().Decisions) })
	reg.MustRegister(labeled{
		desc: prometheus.NewDesc("kraftwatch_decision_reasons_total",
			"Decisions by the kind of their reasons; a decision counts once under each kind it gives.", []string{"reason"}, nil),
		kind: prometheus.CounterValue,
		values: func(yield func(float64, ...string)) {
			for k, n := range eng.Stats().DecisionReasons {
				yield(float64(n), events.ReasonKind(k).String())
			}
		},
	})
}
