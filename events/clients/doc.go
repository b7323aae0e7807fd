// Package clients tests kraftwatch's events with the standard NATS and CloudEvents
// clients, used as their documentation says, with their defaults: the CloudEvents Go SDK
// (github.com/cloudevents/sdk-go/v2 with its NATS JetStream binding,
// protocol/nats_jetstream/v2), the NATS CLI (natscli v0.5.0, built from the Go module
// proxy into the repository's .cache/bin) and nats-py (PyPI, pip install --target
// under .cache). It is a module of its own so that these test-only dependencies stay out
// of kraftwatch's go.mod; `make test` runs it.
//
// Each test runs a real nats-server (in-process) and kraftwatch's publisher for two
// Kafka clusters, and checks that the client, subscribed to one cluster's subjects
// (kraftwatch.<cluster_id>.>), finds its stream by subject and reads every event of
// that cluster and none of the other, in order per group where the client keeps order,
// as a structured CloudEvent with kraftwatch's attributes.
package clients
