// Package events is kraftwatch's wire contract, its one owner: the typed events
// (RebalanceNeeded and GroupRebalanced; further types will be further Data
// implementations), every enum they carry (GroupType, GroupKey, ReasonKind, CauseKind),
// the encoder kraftwatch publishes with, Decode, which checks a message as the event
// type's JSON Schema does, the JSON Schemas themselves and the subjects. kraftwatch's
// decision logic (groups/), engine and publisher use these types directly, so there is
// one definition of the wire form. It does no I/O and imports no NATS package: reading
// a cluster's events from NATS JetStream is package events/follow. Its one dependency
// outside the standard library is github.com/go-json-experiment/json/jsontext, the
// strict JSON tokenizer Decode reads events with (encoding/json/jsontext once Go ships
// it).
//
// # What kraftwatch publishes
//
// Each event is a CloudEvents 1.0 event in structured JSON mode (the NATS message body;
// header Content-Type: application/cloudevents+json, and Nats-Msg-Id equal to the
// event id), on the subject
//
//	<prefix>.<cluster token>.group.<group type>.<group token>
//
// (Subject; prefix "kraftwatch" by default; the tokens are EscapeToken of the raw ids,
// which are in the data). The id is deterministic: two kraftwatch replicas give one
// transition the same id, which makes handling idempotent where it needs to be.
//
// Per Kafka cluster, kraftwatch's stream ("KRAFTWATCH_<cluster id>" unless configured
// otherwise) stores each announced transition once, in order per group, under its
// public subject, and the events stream ("<stream>_EVENTS") holds a copy (by NATS
// sourcing) that captures "<prefix>.<cluster token>.>", so that clients that look a
// stream up by subject find it. follow.Run and follow.FindStream read kraftwatch's stream itself:
// after a leader change of that stream, nats-server resumes the copy only after a retry
// backoff. Core NATS subscribers of "<prefix>.>" also receive each stored event once, but
// miss those published while they are disconnected.
//
// # Compatibility
//
// Within v1 kraftwatch only adds (docs/events.md): a later v1 event may carry members
// this package does not know, in the event (CloudEvents extension attributes) and in
// every object of its data but the consumer_offsets positions, from which event ids are
// derived. Decode ignores them: it reads each known member by its exact name and
// never looks at the others. It still refuses malformed JSON, another CloudEvents spec
// version, a missing, null or wrong-typed known member, a value out of range, an unknown
// enumerated value (group type, hash scheme, reason or cause kind: a new value is a new
// event type) and a member added to a consumer_offsets position, with an error naming
// the member ("data.reasons[1].kind"). It refuses invalid UTF-8 and a known member given
// twice too. An event type it does not know is ErrUnknownType.
//
// # Concurrency
//
// Decode and the types' methods are safe for concurrent use (Decode keeps its readers in
// a sync.Pool).
package events
