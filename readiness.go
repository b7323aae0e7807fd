package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kraftwatch/kraftwatch/observer"
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

// states is every stage's state, in the order the data flows: what it is doing when
// ready, why not (with the setting to check) when not. Before the stages exist it is
// one line: why they do not.
func (r *readiness) states() []stageState { return r.collect(true) }

// collect is states; without detail, a ready stage's State is left empty (check and
// kraftwatch_ready need only the reasons).
func (r *readiness) collect(detail bool) []stageState {
	st := r.stages.Load()
	if st == nil {
		return []stageState{{Component: "metadata", State: (*r.reason.Load()).Error()}}
	}
	var out []stageState
	add := func(component string, err error, ok func() string) {
		if err != nil {
			out = append(out, stageState{Component: component, State: err.Error()})
		} else {
			s := stageState{Component: component, Ready: true}
			if detail {
				s.State = ok()
			}
			out = append(out, s)
		}
	}
	if r.stopping.Load() {
		add("kraftwatch", errors.New("shutting down"), nil)
	}
	add("metadata", st.obs.Health(st.stallAfter), func() string { return metadataState(st.obs.Metrics()) })
	add("groups", groupsReadiness(st.reader, st.stallAfter), func() string {
		return fmt.Sprintf("following %d partitions of __consumer_offsets, %d records behind", len(st.reader.Partitions()), st.reader.Lag())
	})
	add("nats", st.pub.Health(), st.pub.State)
	add("engine", st.eng.Ready(), func() string { return fmt.Sprintf("%d groups tracked", st.eng.Stats().Groups) })
	return out
}

// metadataState is the metadata stage's state while it is ready.
func metadataState(m *observer.Metrics) string {
	s := fmt.Sprintf("image at offset %d (epoch %d)", m.Offset.Load(), m.Epoch.Load())
	if ts := m.Timestamp.Load(); ts >= 0 {
		s += fmt.Sprintf(", its last batch appended %v ago", time.Since(time.UnixMilli(ts)).Round(time.Second))
	}
	return s
}

// check is nil when kraftwatch is ready, else a notReady naming every stage that is not.
func (r *readiness) check() error {
	var ps notReady
	for _, s := range r.collect(false) {
		if !s.Ready {
			ps = append(ps, problem{Component: s.Component, Reason: s.State})
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// stageState is one stage's line in /readyz.
type stageState struct {
	Component string `json:"component"` // kraftwatch, metadata, groups, nats or engine
	Ready     bool   `json:"ready"`
	State     string `json:"state"`
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

// readyzBody is /readyz's JSON answer: every stage's state, and those not ready again
// as problems (the shape before stages were listed).
type readyzBody struct {
	Status   string       `json:"status"` // ready or not ready
	Stages   []stageState `json:"stages"`
	Problems []problem    `json:"problems,omitempty"`
}

// serveReadyz answers 200 when every stage is ready, else 503; a JSON body either way.
func serveReadyz(states func() []stageState) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		body := readyzBody{Status: "ready", Stages: states()}
		for _, s := range body.Stages {
			if !s.Ready {
				body.Problems = append(body.Problems, problem{Component: s.Component, Reason: s.State})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if len(body.Problems) > 0 {
			body.Status = "not ready"
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(body)
	}
}
