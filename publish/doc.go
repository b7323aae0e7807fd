// Package publish sends kraftwatch's rebalance-needed events to NATS and reads back, per
// group, the last event published, which is the durable record of the group's last
// announced hash.
//
// # Events
//
// An Event (one group's hash changed, and why) travels as a CloudEvents 1.0 JSON event in
// structured mode (Envelope; Content-Type application/cloudevents+json), type
// kraftwatch.group.rebalance_needed.v1, on the subject
//
//	<prefix>.<cluster token>.group.<group type>.<group token>
//
// where the tokens come from EscapeToken (a reversible escape; long ids get a hash suffix,
// and the raw id is always in the data). Hashes are decimal strings in JSON, because JSON
// numbers lose bits above 2^53 in many consumers. Schema holds the JSON Schema
// (schema/rebalance_needed.v1.json) every published event satisfies.
//
// # Exactly-once announcements (JetStream)
//
// The stream captures <prefix>.<cluster token>.> and is created when missing. Each event
// carries a deterministic id (Event.MsgID: cluster, group, scheme, new hash, Cause) as
// CloudEvent id and Nats-Msg-Id, and is published with the expected last sequence of its
// subject. Before publishing, and again whenever the server refuses that sequence because
// another publisher (a second kraftwatch replica) wrote the subject, the publisher looks
// at the subject's last event and skips its own when that event
//
//   - is the same event (same id): counted in Stats.AlreadyPublished;
//   - has a later Cause (Cause.Supersedes): counted in Stats.Superseded, so a lagging
//     replica never rolls a group's last announced hash back;
//   - announces the same new hash (same scheme): nothing changed since the last
//     announcement; counted in Stats.AlreadyPublished;
//
// otherwise it publishes again expecting the new last sequence. Two replicas deciding the
// same transitions therefore store each transition once, in order. After a restart,
// LoadLastPublished (all groups, one pass) and LastPublished (one group, read lazily)
// give the last announced hash, so the caller announces what changed while kraftwatch was
// down once, and the rules above keep it from announcing anything twice.
//
// The stream keeps MaxMsgsPerSubject events per group with limits retention; if MaxAge or
// MaxBytes remove a group's last event, its last hash is forgotten and the group is
// announced again after a restart.
//
// # Core NATS
//
// ModeCore publishes without JetStream (publish, then flush so the server has it). There
// is no stream and no cross-replica check; the last published hashes live in memory only,
// so LastPublished knows nothing after a restart, and a publish retried after a lost
// connection may reach subscribers twice.
//
// # Delivery and concurrency
//
// Enqueue encodes an event in the caller's goroutine and hands it to one of
// Config.Workers workers, chosen by subject, through a buffer (Config.BufferSize in all);
// a full buffer blocks Enqueue and nothing is dropped. Each worker publishes its events
// one at a time, so a group's events are published in Enqueue order, while Workers
// groups are in flight at once. A failed attempt (NATS unreachable, timeout, stream
// missing) is retried with capped exponential backoff and jitter, forever; meanwhile
// Ready is false, Stats.Failed and Stats.Retried count, and a log line says so (the
// first failure, then every tenth). Only a permanent error (payload over max_payload)
// or the drain timeout drops an event, each with an error log line and Stats.Dropped.
//
// Run owns the workers: when its context ends it refuses further Enqueue calls
// (ErrClosed), publishes what is queued within Config.DrainTimeout and returns. The NATS
// connection belongs to the caller, who drains it after Run returns.
//
// Publisher's methods are safe for concurrent use. Log lines use the keys group,
// group_type, subject, msg_id, new_hash, offset, seq, stream, attempt, delay and error.
package publish
