package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Every metric is defined beside the stage it reads (metrics_observer.go,
// metrics_reader.go, metrics_engine.go, metrics_groups.go, metrics_rebalanced.go,
// metrics_publish.go) and registered here: newHealthRegistry at the start of the
// process, registerMetrics once the stages exist.

// newHealthRegistry is the registry /metrics serves from the start: the Go and process
// collectors and kraftwatch_ready, which asks ready, the function /readyz asks.
func newHealthRegistry(ready func() error) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kraftwatch", Name: "ready",
		Help: "1 when /readyz answers 200 (0 from the start of the process until then)."}, func() float64 {
		if ready() == nil {
			return 1
		}
		return 0
	}))
	return reg
}

// buildInfo is what kraftwatch_info's labels say.
type buildInfo struct {
	version, clusterID, metadataSource, hashScheme string
}

// registerMetrics adds the metrics of the stages to reg: each reads its stage's own
// counters at scrape time, or (the group state) the last snapshot of it, so that no
// scrape waits for a stage.
func registerMetrics(reg prometheus.Registerer, st *stages, info buildInfo) {
	newInfoMetric(reg, info)
	newObserverMetrics(reg, st.obs.Metrics())
	newReaderMetrics(reg, st.reader)
	newEngineMetrics(reg, st.eng)
	reg.MustRegister(st.groupMetrics)
	st.rebalanced.register(reg)
	newPublishMetrics(reg, st.pub)
}

// newInfoMetric registers kraftwatch_info.
func newInfoMetric(reg prometheus.Registerer, info buildInfo) {
	reg.MustRegister(labeled{
		desc: prometheus.NewDesc("kraftwatch_info", "Always 1; its labels say what this kraftwatch runs and follows (metadata_source: disk or controllers).",
			[]string{"version", "cluster_id", "metadata_source", "hash_scheme"}, nil),
		kind: prometheus.GaugeValue,
		values: func(yield func(float64, ...string)) {
			yield(1, info.version, info.clusterID, info.metadataSource, info.hashScheme)
		},
	})
}

// funcMetrics registers metrics under the kraftwatch namespace whose values a
// function reads at scrape time.
type funcMetrics struct{ reg prometheus.Registerer }

func (m funcMetrics) counter(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kraftwatch", Name: name, Help: help}, f))
}

func (m funcMetrics) gauge(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kraftwatch", Name: name, Help: help}, f))
}

// labeled exports the series of one metric with labels, read from values at each scrape
// (prometheus has CounterFunc and GaugeFunc, but none with labels).
type labeled struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	values func(yield func(v float64, labels ...string))
}

func (l labeled) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l labeled) Collect(ch chan<- prometheus.Metric) {
	l.values(func(v float64, labels ...string) { ch <- prometheus.MustNewConstMetric(l.desc, l.kind, v, labels...) })
}
