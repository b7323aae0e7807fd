package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// TestReadyzBody: /readyz answers 200 with {"status":"ready"} and every stage's state
// when all are ready, else 503 with the same list and those not ready as problems.
func TestReadyzBody(t *testing.T) {
	ok := stageState{"metadata", true, "image at offset 7 (epoch 2)"}
	stalled := stageState{"groups", false, "__consumer_offsets: partition 1 stalled"}
	down := stageState{"nats", false, "nats: no servers available for connection"}
	for _, tc := range []struct {
		name   string
		states []stageState
		status int
		want   readyzBody
	}{
		{"ready", []stageState{ok}, http.StatusOK, readyzBody{Status: "ready", Stages: []stageState{ok}}},
		{"problems", []stageState{ok, stalled, down}, http.StatusServiceUnavailable, readyzBody{Status: "not ready",
			Stages:   []stageState{ok, stalled, down},
			Problems: []problem{{"groups", stalled.State}, {"nats", down.State}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(httpHandler(func() []stageState { return tc.states }, func() error { return nil }, prometheus.NewRegistry(), nil, nil))
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got readyzBody
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %d %+v, want %d %+v", resp.StatusCode, got, tc.status, tc.want)
			}
		})
	}
}

// TestMetricsBeforeStages: /metrics answers from the start with kraftwatch_ready 0, and
// the Go and process metrics, while kraftwatch has not built its stages: here, in
// network mode, it waits for brokers that refuse every connection to tell the
// cluster id, and /readyz says so. The stages' metrics (kraftwatch_info among them)
// are not there yet.
func TestMetricsBeforeStages(t *testing.T) {
	closed := freeAddr(t) // nothing listens there: every dial is refused
	httpAddr, pprofAddr := freeAddr(t), freeAddr(t)
	raw, err := loadConfig([]string{"KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS=" + closed,
		"KRAFTWATCH_BOOTSTRAP_SERVERS=" + closed, "KRAFTWATCH_HTTP_ADDR=" + httpAddr, "KRAFTWATCH_PPROF_ADDR=" + pprofAddr})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := raw.validate()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()

	getFrom := func(addr, path string) (int, string, error) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	get := func(path string) (int, string, error) { return getFrom(httpAddr, path) }
	// The first answer already has the series: wait only for the server to listen.
	var metrics string
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, body, err := get("/metrics")
		if err == nil && code == http.StatusOK {
			metrics = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics: %d %v", code, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if f := families["kraftwatch_ready"]; f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Fatalf("kraftwatch_ready before the stages: %v; /metrics:\n%s", f, metrics)
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if families[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}
	for _, name := range []string{"kraftwatch_info", "kraftwatch_metadata_offset"} {
		if families[name] != nil {
			t.Errorf("/metrics has %s before the stages exist", name)
		}
	}
	// /readyz agrees, and says why once the first ask for the cluster id has failed.
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, body, err := get("/readyz")
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz: %d %s, want 503", code, body)
		}
		if strings.Contains(body, "asking the brokers in KRAFTWATCH_BOOTSTRAP_SERVERS for the cluster id") {
			t.Logf("/readyz: %s", body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %s, want the controllers' failure", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The profiles are served on KRAFTWATCH_PPROF_ADDR alone.
	if code, body, err := getFrom(pprofAddr, "/debug/pprof/goroutine?debug=1"); err != nil || code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("pprof: %d %v %.200s", code, err, body)
	}
	if code, _, err := get("/debug/pprof/"); err != nil || code != http.StatusNotFound {
		t.Errorf("/debug/pprof/ on KRAFTWATCH_HTTP_ADDR: %d %v, want 404", code, err)
	}
	code, body, err := get("/metrics")
	if err != nil || code != http.StatusOK || !strings.Contains(body, "\nkraftwatch_ready 0\n") {
		t.Fatalf("/metrics: %d %v, want kraftwatch_ready 0 in\n%s", code, err, body)
	}
}

// freeAddr returns a 127.0.0.1 address no one listens on (it was free a moment ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRunInOrder: the stages of a phase stop only once every stage of the phase
// before has returned, whether ctx ends or a stage fails, and every failure is
// returned with its stage's name.
func TestRunInOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    bool // the first stage fails instead of ctx ending
		wantErr string
	}{
		{"context ends", false, ""},
		{"a stage fails", true, "input: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var events []string
			var mu sync.Mutex
			note := func(s string) { mu.Lock(); events = append(events, s); mu.Unlock() }
			boom := make(chan struct{})
			input := func(ctx context.Context) error {
				select {
				case <-ctx.Done():
				case <-boom:
					note("input failed")
					return errors.New("boom")
				}
				time.Sleep(10 * time.Millisecond) // a slow stop: the next phase must wait
				note("input stopped")
				return ctx.Err()
			}
			output := func(ctx context.Context) error {
				<-ctx.Done()
				note("output stopped")
				return nil
			}
			if tc.fail {
				close(boom)
			} else {
				cancel()
			}
			err := runInOrder(ctx, func() { note("stopping") },
				[]stage{{"input", input}}, []stage{{"output", output}})
			if got := fmt.Sprint(err); (err == nil) != (tc.wantErr == "") || err != nil && got != tc.wantErr {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			want := []string{"stopping", "input stopped", "output stopped"}
			if tc.fail {
				want = []string{"input failed", "stopping", "output stopped"}
			}
			if !slices.Equal(events, want) {
				t.Errorf("events %v, want %v", events, want)
			}
		})
	}
}

// TestNATSDrainWaitsForClose: the function connectNATS returns drains the
// connection and returns once nats.go has closed it.
func TestNATSDrainWaitsForClose(t *testing.T) {
	srv := natstest.Start(t)
	nc, drain, err := connectNATS(natsSettings{url: srv.ClientURL()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { drain(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("drain did not return")
	}
	if !nc.IsClosed() {
		t.Errorf("connection not closed after drain: %v", nc.Status())
	}
	drain() // again: already closed, returns at once
}

func TestBuildVersion(t *testing.T) {
	info := func(main string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: main}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "57eb9bc3f1aa0c4d8e2b7f60"}
	for _, tc := range []struct {
		name, set string
		info      func() (*debug.BuildInfo, bool)
		want      string
	}{
		{"ldflags", "v1.2.3", info("(devel)", rev), "v1.2.3"},
		{"module version", "", info("v0.4.0", rev), "v0.4.0"},
		{"vcs revision", "", info("(devel)", rev), "57eb9bc3f1aa"},
		{"dirty tree", "", info("(devel)", rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "57eb9bc3f1aa-dirty"},
		{"nothing stamped", "", info("(devel)"), "dev"},
		{"no build info", "", func() (*debug.BuildInfo, bool) { return nil, false }, "dev"},
	} {
		if got := buildVersion(tc.set, tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
