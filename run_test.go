package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReadyzBody: /readyz answers 200 with {"status":"ready"}, or 503 naming each
// component that is not ready and why; any other error is one problem of kraftwatch.
func TestReadyzBody(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		want   readyzBody
	}{
		{"ready", nil, http.StatusOK, readyzBody{Status: "ready"}},
		{"problems", notReady{{"groups", "__consumer_offsets: partition 1 stalled"}, {"nats", "NATS is not reachable"}},
			http.StatusServiceUnavailable, readyzBody{Status: "not ready", Problems: []problem{
				{"groups", "__consumer_offsets: partition 1 stalled"}, {"nats", "NATS is not reachable"}}}},
		{"plain error", errors.New("boom"), http.StatusServiceUnavailable,
			readyzBody{Status: "not ready", Problems: []problem{{"kraftwatch", "boom"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(httpHandler(func() error { return tc.err }, prometheus.NewRegistry(), nil))
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
