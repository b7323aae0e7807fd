package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/observer"
)

// newObserverMetrics registers the metadata log's metrics (kraftwatch_metadata_*),
// read from the observer's counters m.
func newObserverMetrics(reg prometheus.Registerer, m *observer.Metrics) {
	f := funcMetrics{reg}
	f.counter("metadata_records_replayed_total", "Metadata log records replayed (log and snapshots).",
		func() float64 { return float64(m.Records.Load() + m.SnapshotRecords.Load()) })
	f.counter("metadata_batches_total", "Metadata log batches read.", func() float64 { return float64(m.Batches.Load()) })
	f.counter("metadata_catchup_updates_total", "Images published for a run of metadata log batches at once, while catching up on a backlog of at least 1 MiB.",
		func() float64 { return float64(m.CatchUpUpdates.Load()) })
	f.counter("metadata_snapshots_loaded_total", "Snapshots loaded.", func() float64 { return float64(m.SnapshotsLoaded.Load()) })
	f.counter("metadata_resets_total", "Rebuilds from a snapshot after truncation.", func() float64 { return float64(m.Resets.Load()) })
	f.counter("metadata_decode_errors_skipped_total", "Metadata records skipped: unknown type or version, or corrupt.",
		func() float64 { return float64(m.UnknownRecords.Load() + m.CorruptRecords.Load()) })
	f.counter("metadata_unknown_tagged_fields_skipped_total", "Tagged fields of metadata records skipped as unknown (a newer Kafka's); the records are used. Each record type and version is logged once.",
		func() float64 { return float64(m.UnknownTaggedFields.Load()) })
	f.counter("metadata_corrupt_batches_total", "Corrupt batches met in the middle of the log (retried).",
		func() float64 { return float64(m.CorruptBatches.Load()) })
	f.counter("metadata_errors_total", "Failed reads of the metadata log, or failed requests to the controllers (retried with backoff).",
		func() float64 { return float64(m.Errors.Load()) })
	f.counter("metadata_fetch_requests_total", "Fetch and FetchSnapshot requests sent to the controllers (network mode).",
		func() float64 { return float64(m.FetchRequests.Load()) })
	f.counter("metadata_leader_changes_total", "Quorum leaders or leader epochs followed (network mode).",
		func() float64 { return float64(m.LeaderChanges.Load()) })
	f.counter("metadata_authorization_failures_total", "Requests the controllers refused with CLUSTER_AUTHORIZATION_FAILED (network mode; needs ClusterAction on the cluster).",
		func() float64 { return float64(m.AuthorizationFailures.Load()) })
	f.counter("metadata_truncations_total", "Fetched records past the high watermark dropped after the leader's log diverged (network mode).",
		func() float64 { return float64(m.Truncations.Load()) })
	f.counter("metadata_snapshot_bytes_fetched_total", "Snapshot bytes fetched from the quorum leader (network mode).",
		func() float64 { return float64(m.SnapshotBytes.Load()) })
	f.gauge("metadata_leader_id", "Node id of the quorum leader followed; -1 when not known or in disk mode.",
		func() float64 { return float64(m.LeaderID.Load()) })
	f.gauge("metadata_high_watermark", "High watermark of the metadata log last reported by the leader; -1 in disk mode.",
		func() float64 { return float64(m.HighWatermark.Load()) })
	f.gauge("metadata_uncommitted_bytes", "Bytes fetched past the high watermark, not applied until it moves (network mode).",
		func() float64 { return float64(m.Uncommitted.Load()) })
	f.counter("metadata_uncommitted_full_total", "Times the bytes fetched past the high watermark reached KRAFTWATCH_CONTROLLER_MAX_UNCOMMITTED_BYTES, so that no more were taken until the quorum committed (network mode).",
		func() float64 { return float64(m.UncommittedFull.Load()) })
	f.gauge("metadata_offset", "Offset of the last metadata record applied.", func() float64 { return float64(m.Offset.Load()) })
	f.gauge("metadata_epoch", "Leader epoch of the last metadata batch applied.", func() float64 { return float64(m.Epoch.Load()) })
	f.gauge("metadata_lag_seconds", "Age of the last metadata batch applied (now minus its append time).", func() float64 {
		ts := m.Timestamp.Load()
		if ts < 0 {
			return 0
		}
		return time.Since(time.UnixMilli(ts)).Seconds()
	})
}
