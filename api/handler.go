package api

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/groups"
)

// OpenAPI is the OpenAPI 3 document of the API, served at /v1/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Source runs fn on the goroutine that owns the group state (engine.Engine.Query).
type Source func(ctx context.Context, fn func(*engine.View)) error

// queryTimeout bounds how long a request waits for the engine.
const queryTimeout = 10 * time.Second

// Register adds the API's routes to mux.
func Register(mux *http.ServeMux, src Source) {
	mux.HandleFunc("GET /v1/openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(OpenAPI)
	})
	mux.HandleFunc("GET /v1/groups", func(w http.ResponseWriter, r *http.Request) {
		q, err := parseListQuery(r)
		if err != nil {
			problem(w, http.StatusBadRequest, err)
			return
		}
		var out GroupList
		if err := query(r.Context(), src, func(v *engine.View) { out = List(v, q) }); err != nil {
			problem(w, http.StatusServiceUnavailable, err)
			return
		}
		reply(w, out)
	})
	mux.HandleFunc("POST /v1/whatif", whatIf(src))
	mux.HandleFunc("GET /v1/groups/{type}/{id}", func(w http.ResponseWriter, r *http.Request) {
		k, err := ParseGroupKey(r.PathValue("type"), r.PathValue("id"))
		if err != nil {
			problem(w, http.StatusBadRequest, err)
			return
		}
		var out GroupDetail
		var found bool
		if err := query(r.Context(), src, func(v *engine.View) { out, found = Detail(v, k) }); err != nil {
			problem(w, http.StatusServiceUnavailable, err)
			return
		}
		if !found {
			problem(w, http.StatusNotFound, fmt.Errorf("no %s group %q in __consumer_offsets", k.Type, k.ID))
			return
		}
		reply(w, out)
	})
}

func whatIf(src Source) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWhatIfBody))
		if err != nil {
			problem(w, http.StatusRequestEntityTooLarge, fmt.Errorf("%w: body: %v (at most %d bytes)", ErrBadQuery, err, MaxWhatIfBody))
			return
		}
		req, p, err := decodeWhatIf(body)
		if err != nil {
			problem(w, http.StatusBadRequest, err)
			return
		}
		var out *WhatIfResponse
		var werr error
		if err := query(r.Context(), src, func(v *engine.View) { out, werr = WhatIf(v, req, p) }); err != nil {
			problem(w, http.StatusServiceUnavailable, err)
			return
		}
		if werr != nil {
			status := http.StatusInternalServerError
			if badPlan(werr) {
				status = http.StatusBadRequest
			}
			problem(w, status, werr)
			return
		}
		reply(w, out)
	}
}

func query(ctx context.Context, src Source, fn func(*engine.View)) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if err := src(ctx, fn); err != nil {
		return fmt.Errorf("the engine did not answer: %w", err)
	}
	return nil
}

func parseListQuery(r *http.Request) (ListQuery, error) {
	p := r.URL.Query()
	var q ListQuery
	var err error
	if q.Type, err = ParseGroupType(p.Get("type")); err != nil {
		return q, err
	}
	if s := p.Get("state"); s != "" {
		st, ok := groups.ParseGroupState(s)
		if !ok || st == groups.UnknownState {
			return q, fmt.Errorf("%w: state %q (empty, assigning, reconciling, stable or not_ready)", ErrBadQuery, s)
		}
		q.State = st
	}
	q.Prefix = p.Get("prefix")
	if s := p.Get("after"); s != "" {
		k, err := ParseCursor(s)
		if err != nil {
			return q, err
		}
		q.After = &k
	}
	if s := p.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return q, fmt.Errorf("%w: limit %q (1 to %d)", ErrBadQuery, s, MaxLimit)
		}
		q.Limit = n
	}
	return q, nil
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func problem(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (busy for over %v)", err, queryTimeout)
	}
	json.NewEncoder(w).Encode(Problem{Status: status, Error: err.Error()})
}
