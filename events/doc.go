// Package events is for programs that receive kraftwatch's events: the typed events
// (RebalanceNeeded today; further types will be further Data implementations), Decode,
// which checks a message as the event type's JSON Schema does, and Follow, which reads a
// Kafka cluster's events from NATS JetStream through a durable consumer and resumes
// after a restart where it stopped. kraftwatch's publisher uses the same types, so there
// is one definition of the wire form. Its only dependency outside the standard library
// is github.com/nats-io/nats.go.
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
// stream up by subject find it. Follow and FindStream read kraftwatch's stream itself:
// after a leader change of that stream, nats-server resumes the copy only after a retry
// backoff. Core NATS subscribers of "<prefix>.>" also receive each stored event once, but
// miss those published while they are disconnected.
//
// # Concurrency
//
// Decode and the types' methods are pure and safe for concurrent use. Follow calls its
// handler from one goroutine, one event at a time.
package events
