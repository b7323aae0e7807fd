package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
)

// readiness is what /readyz and kraftwatch_ready ask (check). Until the stages exist
// it gives the reason they do not (starting, or the controllers not telling the
// cluster id); then each stage's health; once shutting down, not ready whatever the
// stages say. Its methods are safe for concurrent use.
type readiness struct {
	stages   atomic.Pointer[stages]
	reason   atomic.Pointer[error] // before the stages exist
	stopping atomic.Bool
	// nats is nil while NATS's connection can come back by itself (natsConn.live).
	nats atomic.Pointer[func() error]
}

func newReadiness() *readiness {
	r := &readiness{}
	r.waiting(errors.New("starting"))
	return r
}

// waiting records why the stages do not exist yet.
func (r *readiness) waiting(err error) { r.reason.Store(&err) }

// watch makes the stages' health the answer.
func (r *readiness) watch(st *stages) { r.stages.Store(st) }

// natsLive makes live fail whenever f does.
func (r *readiness) natsLive(f func() error) { r.nats.Store(&f) }

// live is what /livez asks: nil unless kraftwatch is in a state only a restart ends
// (the NATS connection closed for good).
func (r *readiness) live() error {
	if f := r.nats.Load(); f != nil {
		return (*f)()
	}
	return nil
}

// shutdown makes kraftwatch not ready from now on.
func (r *readiness) shutdown() { r.stopping.Store(true) }

// check is nil when kraftwatch is ready, else a notReady naming every problem.
func (r *readiness) check() error {
	st := r.stages.Load()
	if st == nil {
		return notReady{{Component: "metadata", Reason: (*r.reason.Load()).Error()}}
	}
	var ps notReady
	add := func(component string, err error) {
		if err != nil {
			ps = append(ps, problem{Component: component, Reason: err.Error()})
		}
	}
	if r.stopping.Load() {
		add("kraftwatch", errors.New("shutting down"))
	}
	add("metadata", st.obs.Health(st.stallAfter))
	add("groups", groupsReadiness(st.reader, st.stallAfter))
	if err := st.pub.Health(); err != nil {
		add("nats", err)
	} else {
		add("engine", st.eng.Ready()) // with NATS up: the start-up comparison is not done
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// problem is one reason /readyz gives for not being ready.
type problem struct {
	Component string `json:"component"` // kraftwatch, metadata, groups, nats or engine
	Reason    string `json:"reason"`
}

// notReady is the error of a readiness check: every problem found.
type notReady []problem

func (n notReady) Error() string {
	var b strings.Builder
	for i, p := range n {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Component + ": " + p.Reason)
	}
	return b.String()
}

// readyzBody is /readyz's JSON answer.
type readyzBody struct {
	Status   string    `json:"status"` // ready or not ready
	Problems []problem `json:"problems,omitempty"`
}

// serveReadyz answers 200 when ready() is nil, else 503 listing its problems (a
// notReady, or any other error as one problem of kraftwatch); a JSON body either way.
func serveReadyz(ready func() error) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		body := readyzBody{Status: "ready"}
		w.Header().Set("Content-Type", "application/json")
		if err := ready(); err != nil {
			var nr notReady
			if !errors.As(err, &nr) {
				nr = notReady{{Component: "kraftwatch", Reason: err.Error()}}
			}
			body.Status, body.Problems = "not ready", nr
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(body)
	}
}
