package main

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/groups"
)

// newReaderMetrics registers the __consumer_offsets reader's metrics
// (kraftwatch_group_records_*, _reader_*, _partitions_*).
func newReaderMetrics(reg prometheus.Registerer, reader *groups.Reader) {
	f := funcMetrics{reg}
	f.counter("group_records_total", "__consumer_offsets records read.", func() float64 { return float64(reader.Records()) })
	f.counter("group_reader_retries_total", "Failed reads of a __consumer_offsets partition, retried after a backoff.",
		func() float64 { return float64(reader.Retries()) })
	f.gauge("group_records_lag", "__consumer_offsets records not yet read, over the partitions whose leader answers (kraftwatch_group_reader_lag_records is -1 for the others).",
		func() float64 { return float64(reader.Lag()) })
	f.gauge("group_partitions_stalled", "__consumer_offsets partitions stalled for over KRAFTWATCH_STALL_AFTER: reads failing, leader not answering, or behind without progress (/readyz fails).",
		func() float64 { return float64(reader.Stalled()) })
	for _, m := range partitionLagMetrics {
		reg.MustRegister(labeled{
			desc: prometheus.NewDesc("kraftwatch_"+m.name, m.help, []string{"partition"}, nil),
			kind: prometheus.GaugeValue,
			values: func(yield func(float64, ...string)) {
				for _, l := range reader.Partitions() {
					yield(m.value(l), strconv.Itoa(l.Partition))
				}
			},
		})
	}
}

// partitionLagMetrics are the reader's per-partition gauges; they have series only
// once the reader has listed the partitions (README's table lists them from here).
var partitionLagMetrics = []struct {
	name, help string
	value      func(groups.PartitionLag) float64
}{
	{"group_reader_lag_records",
		"__consumer_offsets records not yet read, per partition; -1 when unknown (its leader does not answer).",
		func(l groups.PartitionLag) float64 { return float64(l.Records) }},
	{"group_reader_lag_seconds",
		"Seconds behind on a __consumer_offsets partition, a bound on the age of the oldest record not yet read: now minus the later of the last record read's timestamp and the last time the partition was caught up; 0 when caught up, -1 when unknown (its leader does not answer).",
		func(l groups.PartitionLag) float64 { return l.Seconds }},
}
