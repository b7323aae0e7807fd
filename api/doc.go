// Package api serves the group state over HTTP: GET /v1/groups lists groups (type,
// state, epochs, members, hash), paged with a cursor and filtered by type, state and
// id prefix; GET /v1/groups/{type}/{id} shows one group's members with their current
// and target assignments, its topics, its hash in both schemes beside the one the
// coordinator stored, and its last events; POST /v1/whatif predicts which groups
// a plan (a reassignment, partitions added, topics deleted or created, a rack
// changed, a broker decommissioned) would make rebalance, and suggests the
// rack-neutral plan that empties a broker (package whatif); GET /v1/status is how far
// the __consumer_offsets reader is behind, per partition; GET /v1/openapi.yaml
// is the OpenAPI 3 document that describes them (openapi.yaml, embedded).
//
// The state belongs to the engine's goroutine. Handlers never touch it: they send a
// function to the engine (engine.Engine.Query), which runs it between two inputs and
// copies what the answer needs into the response types of this package. A listing
// costs one pass over the groups (a bounded selection of the next page, no sort of
// every key), a detail the size of one group. List and Detail do the same on any
// engine.View, for kraftwatch groups reading Kafka directly.
//
// Handler is safe for concurrent use; List and Detail run where the View is valid.
package api
