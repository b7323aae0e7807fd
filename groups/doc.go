// Package groups decodes the group records of Kafka's __consumer_offsets topic and
// keeps the subscriptions of every group they describe.
//
// Decode turns one key/value pair into a Record: the int16 record type and key
// struct of the key, and the int16 version and value struct of the value (a nil or
// empty value is a tombstone). Consumer (KIP-848), share (KIP-932), streams
// (KIP-1071) and classic groups are decoded; offset commits, which are most of the
// topic, are recognized from the first two key bytes and skipped without decoding.
// Records this package cannot decode return a *DecodeError that the caller counts
// and skips; no input makes Decode panic or read outside the slices it is given, and
// a decoded Record never shares memory with them.
//
// A Decoder does the same and interns the strings it reads that repeat (group ids,
// topic names, client ids and hosts); State.Replay uses one.
//
// State applies decoded records, in log order, to a model of the groups: members'
// subscribed topic names and regular expressions, the coordinator's epoch and stored
// MetadataHash, the coordinator's resolved regular expressions, streams topologies,
// an index topic name -> groups, and the distinct regular expressions in use. It
// answers the questions the rebalance decision asks: which groups subscribe to topic
// T (by name or by regex), and which existing topics group G subscribes to.
//
// Field names of the value structs are Kafka's own (MetadataHash,
// SubscribedTopicRegex, ...) so they can be read beside Kafka's JSON schemas.
//
// Concurrency: Decode is a pure function and safe for concurrent use; a Decoder is
// not. A State is not
// safe for concurrent use; one goroutine owns it. Groups and Members returned by a
// State belong to it: read them, do not modify them, and do not keep them across the
// next Apply. The package does no I/O, starts no goroutines, reads no clock and never
// logs.
package groups
