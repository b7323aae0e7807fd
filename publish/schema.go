package publish

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of the events this package publishes, the
// file schema/rebalance_needed.v1.json.
//
//go:embed schema/rebalance_needed.v1.json
var Schema []byte
