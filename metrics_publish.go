package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/publish"
)

// newPublishMetrics registers the publisher's metrics (kraftwatch_events_*), read from
// Publisher.Stats at scrape time.
func newPublishMetrics(reg prometheus.Registerer, pub *publish.Publisher) {
	f := funcMetrics{reg}
	stat := func(get func(publish.Stats) uint64) func() float64 {
		return func() float64 { return float64(get(pub.Stats())) }
	}
	f.counter("events_published_total", "Events stored in JetStream (or sent on core NATS).",
		stat(func(s publish.Stats) uint64 { return s.Published }))
	f.counter("events_already_published_total", "Events found already published (another replica, or before a restart).",
		stat(func(s publish.Stats) uint64 { return s.AlreadyPublished }))
	f.counter("events_failed_total", "Failed publish attempts (retried).", stat(func(s publish.Stats) uint64 { return s.Failed }))
	f.counter("events_superseded_total", "Events not published because the group's stored event is later in either log (another replica was ahead).",
		stat(func(s publish.Stats) uint64 { return s.Superseded }))
	f.counter("events_conflicts_total", "Publishes refused because another publisher wrote the group's subject first; the subject is read again.",
		stat(func(s publish.Stats) uint64 { return s.Conflicts }))
	f.counter("events_retried_total", "Publish attempts retried after a failure.", stat(func(s publish.Stats) uint64 { return s.Retried }))
	f.counter("events_dropped_total", "Events given up (permanent error or drain timeout); each is logged.",
		stat(func(s publish.Stats) uint64 { return s.Dropped }))
	f.gauge("events_queued", "Events waiting to be published.", func() float64 { return float64(pub.Stats().Queued) })
}
