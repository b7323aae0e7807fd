// Package publish is kraftwatch's transport: it sends the events of package events to
// NATS (JetStream, or core NATS) and reads back, per group, the last event published,
// which is the durable record of the group's last announced hash. What an event holds,
// its JSON and its subjects are package events' (and docs/events.md); this package only
// moves them: Enqueue (rebalance-needed) and EnqueueRebalanced (rebalanced, on the
// subject family <prefix>.<cluster token>.rebalanced.<group type>.<group token>) go
// through the same workers and rules.
//
// # Exactly-once announcements (JetStream)
//
// Each event carries a deterministic id (events.RebalanceNeeded.MsgID: cluster, group,
// scheme, new hash, Cause) as CloudEvent id and Nats-Msg-Id, and is published with the
// expected last sequence of its subject. Before publishing, and again whenever the server refuses that
// sequence because another publisher (a second kraftwatch replica) wrote the subject, the
// publisher looks at the subject's last event and skips its own when that event
//
//   - is the same event (same id): counted in Stats.AlreadyPublished;
//   - is later than it in either log (its Cause does not dominate the stored one:
//     events.Cause.Dominates): counted in Stats.Superseded, so a replica that lags in
//     the metadata log or in __consumer_offsets never rolls a group's last announced
//     state back, and the stored event is handed to the caller (Superseded,
//     TakeSuperseded), which takes it as the group's last announced state;
//   - announces the same new hash (same scheme): nothing changed since the last
//     announcement; counted in Stats.AlreadyPublished;
//
// otherwise it publishes again expecting the new last sequence, with the stored event's
// hash as previous_hash: each stored event chains to the one stored before it. Two
// replicas deciding the same transitions therefore store each transition once, in order. After a restart,
// LoadLastPublished (all groups, one pass) and LastPublished (one group, read lazily)
// give the last announced hash, so the caller announces what changed while kraftwatch was
// down once, and the rules above keep it from announcing anything twice.
//
// # Subjects and the streams
//
// A publish the stream refuses (wrong last sequence: the replica that lost a race) or
// de-duplicates (a retry after a lost ack) is still a NATS message, and a plain core
// subscriber of its subject would receive it. So in JetStream mode kraftwatch never
// publishes on the public subject. It publishes on the internal subject
//
//	_kraftwatch.<prefix>.<cluster token>.group.<group type>.<group token>
//
// (InternalPrefix; Config.Validate refuses a Prefix starting with it, so subscribers of
// "<prefix>.>" never see these) into kraftwatch's stream (Config.Stream), which
//
//   - captures "_kraftwatch.<prefix>.<cluster token>.>" (StreamSubjects);
//   - stores each event under its public subject, with the subject transform
//     "_kraftwatch.<prefix>.<cluster token>.>" -> "<prefix>.<cluster token>.>", applied
//     before any check: the expected last sequence is the public subject's, and reads
//     by public subject (LastPublished, LoadLastPublished's last-per-subject consumer,
//     any consumer filtering on "<prefix>.>") see the stored events;
//   - republishes each message it stores, once, to the public subject (RePublish
//     "<prefix>.<cluster token>.>" -> the same), with the stream's Nats-Stream,
//     Nats-Subject, Nats-Sequence, Nats-Last-Sequence and Nats-Time-Stamp headers added.
//     It does not capture the public subjects (nats-server refuses a republish that
//     would loop back into its stream).
//
// Core subscribers of "<prefix>.>" (nats sub, kraftwatch watch --core) thus receive each
// stored event exactly once, in stream order per group, and nothing the stream did not
// store. Only the stream's leader republishes, after storing; an event stored just before
// the server stops or the leader changes may never be republished (a core subscriber
// misses it, as core NATS may; the streams have it). NATS permissions must let kraftwatch
// publish on "_kraftwatch.<prefix>.>".
//
// Clients that find a stream by the subject they subscribe to (nats.go's
// StreamNameBySubject and its legacy js.Subscribe, the NATS CLI's "nats sub --all",
// nats-py's js.subscribe, the CloudEvents SDK's JetStream binding) need a stream whose
// own subjects are the public ones, and streams that copy the events (sources, or a
// forwarder that keeps headers) must not see the Nats-Expected-* headers of kraftwatch's
// publishes, which the republished copies carry. So there is a second stream, the events
// stream (Config.EventsStream, default "<Stream>_EVENTS"), for subscribers. It
//
//   - captures "<prefix>.<cluster token>.>": lookups by any public subject find it;
//   - sources kraftwatch's stream, which gives it every stored event once, in order,
//     under its public subject, with Nats-Msg-Id and without the Nats-Expected-*
//     headers (nats-server drops them when sourcing), and resumes after restarts and
//     leader changes where it stopped: it misses none, unlike a core subscriber. After
//     a leader change of kraftwatch's stream, nats-server resumes sourcing only after its
//     health check and retry backoff (10 s and more each): in TestClusterLeaderKill the
//     copy caught up about 40 s later. Readers that cannot wait so long read
//     kraftwatch's stream itself (follow.Run does), which stores the same events
//     under the same public subjects;
//   - refuses the republished copies, which reach it on the subjects it captures: every
//     publish of kraftwatch carries Nats-Expected-Stream naming kraftwatch's stream, and
//     nats-server refuses a message whose expected stream is another (checked before
//     the Nats-Msg-Id is recorded, so the sourced message is not taken for a duplicate);
//   - has kraftwatch's stream's limits, and its own sequence numbers.
//
// The publisher creates it when no stream captures the public subjects. A stream that
// captures them and sources kraftwatch's stream is used as it is. Any other stream that
// captures them (a user's stream for "kraftwatch.>") is left alone, with a warning at
// start-up naming it and what to change (add the source, or drop the subjects): lookups
// by subject would find that stream, which stores none of the events, and nats-server
// refuses to create a second stream whose subjects overlap it. Publishing does not depend
// on the events stream: the publisher is ready without it, and can run without it
// altogether ("Without the events stream" below).
//
// # Without the events stream
//
// The events stream costs nats-server about half of its work per event: each event is
// stored a second time (sourcing), and each republished copy reaches the events stream
// and is refused. Config.NoEventsStream (KRAFTWATCH_EVENTS_STREAM=none) runs without
// it, for throughput: the publisher neither creates it nor needs it, and nats-server
// stores each event once (in kraftwatch's stream, under its public subject) and
// republishes it once. Delivery is unchanged (the same ids, expected last sequences and
// rules above). Subscribers read kraftwatch's stream, with a consumer filtering on
// "<prefix>.>" (follow.Run, `kraftwatch watch`), or the republished core subjects.
// What they lose: no stream captures the public subjects, so a lookup by subject
// (nats.go's StreamNameBySubject and legacy js.Subscribe, "nats sub --all", nats-py's
// js.subscribe, the CloudEvents SDK's JetStream binding) finds none and such clients
// must name kraftwatch's stream. A copy of the events is made by sourcing kraftwatch's
// stream (sourcing drops the Nats-Expected-* headers), not by capturing the public
// subjects: the republished copies carry those headers, and a stream capturing them
// refuses each (Nats-Expected-Stream).
//
// An events stream that exists (made by an earlier run with the default) is left alone:
// it goes on sourcing kraftwatch's stream and refusing the republished copies, which
// costs what it costs, and the publisher logs once per start, as a warning, that it
// does and how to delete it (nats stream rm <name>); EventsStream names it meanwhile.
// Once deleted it is not created again. A stream of any other shape that captures the
// public subjects gets a warning naming it, with the fix.
//
// Kraftwatch's stream is created with these settings (and Config's) when no stream
// captures the cluster's internal subjects. An existing one is used when it captures the
// internal subjects and its subject transform and republish do the above (an operator's
// stream may use wider filters, e.g. for every cluster; they are evaluated as
// nats-server evaluates them); otherwise the publisher is not ready and logs an error
// wrapping ErrStreamConfig that says what to change.
//
// A stream created by an older kraftwatch captured the public subjects directly. It is
// updated in place (subjects, subject transform, republish; its events and sequences are
// kept, so the expected last sequences go on) when it has that shape: one subject,
// "<prefix>.<cluster token>.>", no subject transform, no republish, no mirror or
// sources, not sealed; nothing but kraftwatch publishes into such a stream. The events
// stream is then created and sources its events from the first. Replicas of an older
// kraftwatch cannot use the updated stream (they fail and are not ready): stop them
// before starting this version, or upgrade them all.
//
// The streams keep MaxMsgsPerSubject events per group with limits retention; if MaxAge or
// MaxBytes remove a group's last event, its last hash is forgotten and the group is
// announced again after a restart.
//
// # Core NATS
//
// ModeCore publishes without JetStream (publish, then flush so the server has it) on the
// public subject. There is no stream and no cross-replica check; the last published
// hashes live in memory only, so LastPublished knows nothing after a restart. A publish
// retried after a failed flush (a lost connection) may reach subscribers twice, and two
// replicas each publish every event.
//
// # Delivery and concurrency
//
// Enqueue encodes an event in the caller's goroutine and hands it to one of up to 16
// workers, chosen by subject, through a buffer (Config.BufferSize in all); a full buffer
// blocks Enqueue and nothing is dropped. Config.Workers events are in flight at once,
// each on its own subject: in ModeJetStream a worker publishes its events without
// waiting (a core publish with a reply subject; the answers come to one subscription of
// the publisher, see ack.go) and handles each ack or error as it comes, while
// a later event of a subject with an event in flight waits behind it, so a group's
// events are published in Enqueue order, each expecting the sequence its predecessor
// was stored at. In ModeCore a worker publishes and flushes one event at a time. A
// failed attempt (NATS unreachable, timeout, stream missing) is retried with capped
// exponential backoff and jitter, forever, while the worker goes on with other
// subjects; meanwhile Ready is false, Stats.Failed and Stats.Retried count, and a log
// line says so (the first failure, then every tenth). Only a permanent error (payload
// over max_payload) or the drain timeout drops an event, each with an error log line
// and Stats.Dropped.
//
// Run owns the workers: when its context ends it refuses further Enqueue calls
// (ErrClosed), publishes what is queued within Config.DrainTimeout and returns. The NATS
// connection belongs to the caller, who drains it after Run returns.
//
// Publisher's methods are safe for concurrent use. Log lines use the keys group,
// group_type, subject, msg_id, new_hash (a decimal string, as in the JSON) and
// metadata_offset for rebalance-needed events, partition and offset for rebalanced
// events, seq, stream, stream_subjects, attempt, delay and error.
package publish
