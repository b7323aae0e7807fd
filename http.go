package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kraftwatch/kraftwatch/api"
)

// httpServer serves kraftwatch's HTTP endpoints from the start of run; setHandler
// replaces what it serves once the stages exist.
type httpServer struct {
	srv     *http.Server
	ln      net.Listener
	handler atomic.Pointer[http.Handler]
	serving sync.WaitGroup
}

// startHTTP listens on addr and serves h.
func startHTTP(addr string, h http.Handler, log *slog.Logger) (*httpServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("HTTP: %w", err)
	}
	s := &httpServer{ln: ln}
	s.setHandler(h)
	s.srv = &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*s.handler.Load()).ServeHTTP(w, r) })}
	s.serving.Go(func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server", "error", err)
		}
	})
	return s, nil
}

func (s *httpServer) setHandler(h http.Handler) { s.handler.Store(&h) }

// addr is the address listened on.
func (s *httpServer) addr() string { return s.ln.Addr().String() }

// shutdown stops the server, giving requests in flight 5 s.
func (s *httpServer) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
	s.serving.Wait()
}

// httpHandler serves /livez (200 while live() is nil, else 503 with its error: a state
// no retry undoes, so the orchestrator restarts kraftwatch), /readyz (serveReadyz of
// the stages' states), /metrics and, when groups is not nil, the group state API
// (/v1/) with the __consumer_offsets reader's status (/v1/status).
func httpHandler(ready func() []stageState, live func() error, reg *prometheus.Registry, groups api.Source, status func() api.Status) http.Handler {
	mux := http.NewServeMux()
	if groups != nil {
		api.Register(mux, groups)
		api.RegisterStatus(mux, status)
	}
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		if err := live(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", serveReadyz(ready))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// pprofHandler serves Go's profiling endpoints under /debug/pprof/ (net/http/pprof),
// on a listener of their own (KRAFTWATCH_PPROF_ADDR), never beside /metrics.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // also the named profiles: heap, goroutine, allocs …
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}
