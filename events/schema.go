package events

import _ "embed"

// The JSON Schemas (draft 2020-12) of the events' envelopes, one per event type. A
// subscriber may validate with them; Decode checks what they check.
var (
	// RebalanceNeededSchema is schema/rebalance_needed.v1.json.
	//
	//go:embed schema/rebalance_needed.v1.json
	RebalanceNeededSchema []byte
	// GroupRebalancedSchema is schema/rebalanced.v1.json.
	//
	//go:embed schema/rebalanced.v1.json
	GroupRebalancedSchema []byte
)
