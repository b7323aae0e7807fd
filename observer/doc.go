// Package observer reads a KRaft metadata log directory (…/__cluster_metadata-0) the
// way a new Kafka listener is fed: the newest usable snapshot, then the log segments
// after it, then the log live as Kafka writes it. It hands on one unit at a time: a
// record batch, or a whole metadata transaction, cut where Kafka's MetadataBatchLoader
// publishes when it reads one batch at a time (see Unit), so that two observers of the
// same log make the same decisions at the same offsets (but for a catch-up, below,
// which skips some of those offsets).
//
// The observer owns an image.Image. For each unit it builds an image.Delta, applies
// it, publishes the new image through an atomic pointer, and calls the handler with
// the image, the changes and the provenance (offset, epoch and append time of the
// unit's last record).
//
// Sources produce, the Observer consumes, as prometheus tsdb's wlog Watcher reads the
// records a LiveReader frames (observer/source.go). The disk source (follower.go)
// and the network source (quorum.go) read, check and cut the log, and each read is a
// sequence of items the Observer ranges over: a rebuild's start (the snapshot,
// already replayed into a delta of its own, or none), units (a batch or a whole
// transaction, with its offset, epoch and append time; only committed records from
// the network), the end of what a catch-up read as one commit (a flush), and a
// rebuild's end. The Observer owns everything after that: the delta, the rebuild in
// progress, the units a catch-up holds and publishing. No source knows the Observer
// or calls it, and below the follower the segment reader and the prefetcher return
// what they read rather than calling it.
//
// The initial load, and each rebuild, is one update (Update.Reset): the snapshot and
// every complete unit of the log after it folded into one image; Ready is closed after
// the first. From then on each unit is its own update, except in a catch-up: a segment
// with 1 MiB or more unread (for the network source, 1 MiB or more fetched and
// committed) is published as a broker's loader publishes a commit of its Raft client.
// Its units without a transaction marker are replayed as they are read and published
// together (Unit.Coalesced, Update.Units) every 8 MiB of batches (Kafka's
// MAX_FETCH_SIZE_BYTES), before a transaction's or an Abort's unit, and at the end of
// what is readable; each image published is the one unit-by-unit replay gives at its
// offset (docs/metadata-log.md#catching-up). So the handler, and the engine behind it,
// decides once per published image, as a broker's group coordinator does.
//
// Load reads a directory once and ReadFile the records of one file, for tools
// (kraftwatch dump) and tests.
//
// A second source, chosen by Config.Controllers instead of Config.Dir, fetches the
// same log from the KRaft controller quorum over the network, as a Raft observer
// (replica id -1): the leader's snapshot (FetchSnapshot, streamed through the same
// batch checks), then a long-polled Fetch, following leader changes and epoch bumps,
// and applying only records at or below the high watermark. Its updates are the same
// units with the same offsets and epochs; a rebuild (falling behind the leader's log
// start, a divergence below what was applied) is a Reset as on disk, which folds only
// the snapshot (or the log already handed on, when that ends later): the batches
// after it are handed on one unit at a time, or as a catch-up. quorum.go
// describes it; LoadQuorum, ConfirmClusterID and DescribeCluster are its one-shot
// forms (ConfirmClusterID needs only ClusterAction, DescribeCluster Alter). The
// connections are franz-go's (kgo: TLS, SASL, version negotiation), the codecs kmsg's;
// record batches are still decoded by internal/recordbatch.
//
// What it reads, and how (docs/metadata-log.md#snapshot-loading and
// #following-the-log-and-truncation):
//   - Snapshots are the *.checkpoint files named OFFSET-EPOCH; the newest in Kafka's
//     order (epoch, then offset) that reads cleanly is used. A snapshot without its
//     SnapshotHeader or SnapshotFooter, or with a bad batch, is skipped (logged and
//     counted) for an older one; with none left, the log is replayed from offset 0 if
//     it starts there, and otherwise nothing is published (ErrNoStart): never an image
//     built from part of the log. .part and .deleted snapshots and producer-state
//     .snapshot files are ignored.
//   - Segments are the NNN.log files. Batches below the snapshot's end offset are
//     skipped; after it, every batch must follow the previous one (offset and epoch).
//   - Following: the end of the newest segment, or a batch not yet whole, is waited
//     for. A newer segment means the current one is complete. Deleted old segments
//     are fine. A new snapshot is not reloaded while the observer is past it.
//   - Truncation: before reading on, the observer checks that the last batch it read is
//     still there unchanged (Kafka cuts a diverged tail and appends new batches in its
//     place, possibly of the same sizes). If not, it rebuilds from the newest snapshot
//     and announces the difference from its previous image as one update (Reset).
//   - Corruption: a bad batch with more data after it, or a segment that ends inside a
//     batch while a newer one follows, is an error naming the file and byte position
//     (*PosError wrapping ErrCorrupt), logged, counted and retried with backoff; the
//     last good image stays published. Bytes that are not a batch at the very end of
//     the newest segment are a torn write: waited for (logged once, counted) while
//     following, an error while (re)building, so no image rests on them.
//   - Records of an unknown type or version are skipped, counted, and logged once per
//     (apiKey, version). Transactions: records from BeginTransactionRecord to
//     EndTransactionRecord are applied in one unit; an AbortTransactionRecord drops
//     them, even where Kafka's own loader applies them (docs/metadata-log.md#transactions).
//
// Files are opened read-only, and only inside the directory given; Kafka's .lock (in
// the parent directory) is never touched. Changes are noticed through file
// notifications (fsnotify) with a polling timer as fallback.
//
// Invariants: an image is published only from a whole state (a snapshot and every
// unit of the log after it read cleanly) and then from whole units, each at its
// provenance, never from part of a unit; the images of a catch-up are those a
// unit-by-unit read publishes at the same offsets; a unit's Entries are the source's
// again once the Observer asks for the next item, so the Handler copies what it
// keeps.
//
// Concurrency: Run owns all mutable state on the caller's goroutine (the network
// source's too: one request at a time, franz-go's connection goroutines aside); the
// sources yield and the handler is called on it. Image, Ready, LastError and Metrics
// may be used from any goroutine; an Image is immutable and safe to share.
// Loading a snapshot file (the initial load, a rebuild, Load) reads, decodes and
// replays it on the caller's goroutine; the leader's snapshot is fetched a chunk ahead
// on one more goroutine (fetchChunks) while the caller's replays the chunk before,
// which ends before the load returns. A segment with at least 1 MiB unread (a
// catch-up) is read, CRC checked and cut into records (in a catch-up also decoded) on
// one more goroutine while the caller's decodes and replays it (observer/prefetch.go);
// that goroutine ends before the read does.
// The subpackage observertest writes metadata log directories for tests.
package observer
