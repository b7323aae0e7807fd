// Package follow reads one Kafka cluster's kraftwatch events from NATS JetStream
// through a durable consumer (Run) and resumes after a restart where it stopped; the
// events themselves are package events. It is the part of the contract that needs a
// NATS connection, kept apart so that events stays free of I/O and of nats.go.
//
// Run calls its handler from one goroutine, one event at a time.
package follow
