package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/groups"
)

// newReaderMetrics registers the __consumer_offsets reader's metrics
// (kraftwatch_group_records_*, _reader_*, _partitions_*).
func newReaderMetrics(reg prometheus.Registerer, reader *groups.Reader) {
	f := funcMetrics{reg}
	f.counter("group_records_total", "__consumer_offsets records read.", func() float64 { return float64(reader.Records()) })
	f.counter("group_reader_retries_total", "__consumer_offsets partition readers rebuilt after an error.",
		func() float64 { return float64(reader.Retries()) })
	f.gauge("group_records_lag", "__consumer_offsets records not yet read (end offsets are read again every 10 s while a partition cannot be fetched).",
		func() float64 { return float64(reader.Lag()) })
	f.gauge("group_partitions_stalled", "__consumer_offsets partitions whose reads have failed for over KRAFTWATCH_STALL_AFTER (/readyz fails).",
		func() float64 { return float64(reader.Stalled()) })
}
