package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/whatif"
)

// MaxWhatIfBody bounds the body of POST /v1/whatif: a plan moving 100 000 partitions
// is about 6 MiB.
const MaxWhatIfBody = 64 << 20

// WhatIfRequest is the body of POST /v1/whatif: hypothetical changes, any mix.
type WhatIfRequest struct {
	// Reassignment is a kafka-reassign-partitions plan, as its --execute reads it.
	Reassignment json.RawMessage `json:"reassignment,omitempty"`
	// CruiseControl is Cruise Control's /proposals?json=true answer.
	CruiseControl json.RawMessage        `json:"cruise_control,omitempty"`
	AddPartitions []whatif.AddPartitions `json:"add_partitions,omitempty"`
	DeleteTopics  []string               `json:"delete_topics,omitempty"`
	CreateTopics  []whatif.NewTopic      `json:"create_topics,omitempty"`
	SetRacks      []whatif.SetRack       `json:"set_racks,omitempty"`
	Decommission  []int32                `json:"decommission,omitempty"`
	// Suggest asks, with one broker in Decommission, for the reassignment that empties
	// it within its rack, and what that plan then does.
	Suggest bool `json:"suggest,omitempty"`
}

// Plan turns the request into a whatif.Plan.
func (r *WhatIfRequest) Plan() (whatif.Plan, error) {
	p := whatif.Plan{AddPartitions: r.AddPartitions, DeleteTopics: r.DeleteTopics, CreateTopics: r.CreateTopics,
		SetRacks: r.SetRacks, Decommission: r.Decommission}
	if len(r.Reassignment) > 0 {
		ms, err := whatif.ParseReassignment(r.Reassignment)
		if err != nil {
			return p, fmt.Errorf("reassignment: %w", err)
		}
		p.Moves = append(p.Moves, ms...)
	}
	if len(r.CruiseControl) > 0 {
		ms, err := whatif.ParseCruiseControl(r.CruiseControl)
		if err != nil {
			return p, fmt.Errorf("cruise_control: %w", err)
		}
		p.Moves = append(p.Moves, ms...)
	}
	if r.Suggest && len(r.Decommission) != 1 {
		return p, fmt.Errorf("%w: suggest needs exactly one broker in decommission, got %d", whatif.ErrInvalidPlan, len(r.Decommission))
	}
	if r.Suggest && len(p.Moves) > 0 {
		return p, fmt.Errorf("%w: suggest replaces the reassignment; give one or the other", whatif.ErrInvalidPlan)
	}
	if len(p.Moves)+len(p.AddPartitions)+len(p.DeleteTopics)+len(p.CreateTopics)+len(p.SetRacks)+len(p.Decommission) == 0 {
		return p, fmt.Errorf("%w: no change: give a reassignment, cruise_control, add_partitions, delete_topics, create_topics, set_racks or decommission", whatif.ErrInvalidPlan)
	}
	return p, nil
}

// WhatIfResponse is the answer of POST /v1/whatif.
type WhatIfResponse struct {
	*whatif.Result
	// MaxRebalances is the largest max_rebalances of the groups, 0 for none.
	MaxRebalances int `json:"max_rebalances"`
	// Order splits the plan's moves: rack-neutral first, then rack-changing ones
	// sorted by the groups that read them; absent without moves.
	Order *whatif.Ordered `json:"order,omitempty"`
	// Suggestion is present when the request asked for one.
	Suggestion *WhatIfSuggestion `json:"suggestion,omitempty"`
}

// WhatIfSuggestion is the reassignment that empties a broker within its rack.
type WhatIfSuggestion struct {
	// Reassignment is the plan for kafka-reassign-partitions --execute: rack-neutral
	// moves first, then those that must change racks.
	Reassignment json.RawMessage `json:"reassignment"`
	Changing     []whatif.Move   `json:"changing"`
	Stuck        []whatif.Move   `json:"stuck"`
	// Result is what the suggested plan, then the decommission, does to the groups.
	Result *whatif.Result `json:"result"`
}

// whatIfScheme is the scheme of every prediction: Kafka's coordinator rebalances
// groups on its own hash, whatever scheme kraftwatch's events use.
const whatIfScheme = hashcache.SchemeKafka

// WhatIf evaluates a request on v (on the engine's goroutine), with Kafka's hash.
// Errors wrap whatif.ErrInvalidPlan when the plan does not fit the cluster.
func WhatIf(v *engine.View, req *WhatIfRequest, p whatif.Plan) (*WhatIfResponse, error) {
	res, err := whatif.Evaluate(v.Image, v.State, whatIfScheme, p)
	if err != nil {
		return nil, err
	}
	out := &WhatIfResponse{Result: res, MaxRebalances: res.MaxRebalances()}
	readers := func(topic string) string {
		var b strings.Builder
		for _, s := range v.State.Subscribers(topic) {
			b.WriteString(s.Group.String())
			b.WriteByte(' ')
		}
		return b.String()
	}
	if len(p.Moves) > 0 {
		if out.Order, err = whatif.Order(v.Image, whatIfScheme, p.Moves, readers); err != nil {
			return nil, err
		}
	}
	if req.Suggest {
		s, err := whatif.SuggestDecommission(v.Image, p.Decommission[0])
		if err != nil {
			return nil, err
		}
		o, err := whatif.Order(v.Image, whatIfScheme, s.Plan(), readers)
		if err != nil {
			return nil, err
		}
		moves := append(slices.Clone(o.Neutral), o.Changing...)
		sp := p
		sp.Moves = moves
		sres, err := whatif.Evaluate(v.Image, v.State, whatIfScheme, sp)
		if err != nil {
			return nil, err
		}
		out.Suggestion = &WhatIfSuggestion{Reassignment: whatif.FormatReassignment(moves), Changing: s.Changing, Stuck: s.Stuck, Result: sres}
		if out.Suggestion.Stuck == nil {
			out.Suggestion.Stuck = []whatif.Move{}
		}
	}
	return out, nil
}

// decodeWhatIf reads a request body strictly: unknown fields are errors.
func decodeWhatIf(body []byte) (*WhatIfRequest, whatif.Plan, error) {
	var req WhatIfRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, whatif.Plan{}, fmt.Errorf("%w: body: %v", ErrBadQuery, err)
	}
	p, err := req.Plan()
	if err != nil {
		return nil, p, err
	}
	return &req, p, nil
}

// badPlan reports whether err is the client's fault.
func badPlan(err error) bool {
	return errors.Is(err, whatif.ErrInvalidPlan) || errors.Is(err, ErrBadQuery)
}
