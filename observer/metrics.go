package observer

import "sync/atomic"

// Metrics are the observer's counters. Every field is safe to read at any time from
// any goroutine; main exports them to Prometheus. The observer only ever adds to the
// counters and sets the gauges.
type Metrics struct {
	// Batches, Records and Units count what was read from the log (snapshot records
	// are counted in SnapshotRecords), however the units were published.
	Batches atomic.Int64
	Records atomic.Int64
	Units   atomic.Int64
	// CatchUpUpdates counts the updates of a live catch-up that each applied a run of
	// units at once (Update.Units; see the package documentation).
	CatchUpUpdates atomic.Int64
	// SnapshotsLoaded counts snapshots loaded (the initial one and every rebuild);
	// SnapshotRecords the records replayed from them.
	SnapshotsLoaded atomic.Int64
	SnapshotRecords atomic.Int64
	// BadSnapshots counts snapshot files that could not be used (no footer, bad CRC...).
	BadSnapshots atomic.Int64
	// Resets counts rebuilds from a snapshot after the initial load: truncation of the
	// log tail, a diverged epoch, or the log moving on past a deleted segment.
	Resets atomic.Int64
	// CorruptBatches counts corrupt data found in the middle of the log (each time it is
	// met; the observer retries with backoff).
	CorruptBatches atomic.Int64
	// TornTails counts times the newest segment ended in bytes that are not a valid
	// batch although no more bytes were being added; the observer waits for them.
	TornTails atomic.Int64
	// UnknownRecords counts records of an unknown type or version, skipped.
	UnknownRecords atomic.Int64
	// UnknownTaggedFields counts tagged fields of records that the decoders do not
	// know (a newer Kafka's), skipped; the records are used.
	UnknownTaggedFields atomic.Int64
	// CorruptRecords counts records whose value could not be decoded, skipped.
	CorruptRecords atomic.Int64
	// ReplayErrors counts records the image refused (Kafka's loader reports and skips
	// them the same way): an unknown partition, a stale broker epoch.
	ReplayErrors atomic.Int64
	// TransactionErrors counts Begin/End/Abort records out of place (ignored).
	TransactionErrors atomic.Int64
	// AbortedTransactions counts metadata transactions dropped by an Abort.
	AbortedTransactions atomic.Int64
	// Errors counts failed polls (each is logged and retried with backoff).
	Errors atomic.Int64

	// The network source (Config.Controllers) only; the disk source leaves them at
	// their initial values.
	//
	// FetchRequests counts Fetch and FetchSnapshot requests sent to the controllers.
	FetchRequests atomic.Int64
	// LeaderChanges counts the quorum leaders or leader epochs the observer moved to.
	LeaderChanges atomic.Int64
	// AuthorizationFailures counts requests the controllers refused for lack of an ACL
	// (CLUSTER_AUTHORIZATION_FAILED).
	AuthorizationFailures atomic.Int64
	// Truncations counts fetched records past the high watermark dropped because the
	// leader's log diverged from them (DivergingEpoch).
	Truncations atomic.Int64
	// SnapshotBytes counts snapshot bytes fetched (FetchSnapshot).
	SnapshotBytes atomic.Int64
	// LeaderID is the quorum leader followed, -1 when not known; HighWatermark the
	// highest high watermark the leader reported, -1 before the first; Uncommitted the
	// bytes of fetched batches past it, waiting for it to move.
	LeaderID      atomic.Int64
	HighWatermark atomic.Int64
	Uncommitted   atomic.Int64
	// UncommittedFull counts the times the fetched records past the high watermark
	// reached Config.MaxUncommitted, so that fetching stopped until it moved.
	UncommittedFull atomic.Int64
	// Offset is the offset of the last record published; Epoch its batch's epoch;
	// Timestamp its append time (ms). -1 before the first load.
	Offset    atomic.Int64
	Epoch     atomic.Int64
	Timestamp atomic.Int64
}

func newMetrics() *Metrics {
	m := &Metrics{}
	m.Offset.Store(-1)
	m.Epoch.Store(-1)
	m.Timestamp.Store(-1)
	m.LeaderID.Store(-1)
	m.HighWatermark.Store(-1)
	return m
}
