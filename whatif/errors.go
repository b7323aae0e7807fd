package whatif

import "errors"

// ErrInvalidPlan is wrapped by every error about a plan that does not fit the
// cluster (an unknown topic, partition or broker, a stale old replica list) or does
// not parse.
var ErrInvalidPlan = errors.New("invalid plan")
