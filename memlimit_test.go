package main

import (
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestFollowMemoryLimit: a container limit of 1 GiB sets the Go runtime's soft limit
// to 90 % of it and says so; GOMEMLIMIT set by the operator wins; no limit changes
// nothing.
func TestFollowMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	for _, tc := range []struct {
		name     string
		env      string // GOMEMLIMIT
		provider memlimit.Provider
		want     int64
		log      string
	}{
		{"cgroup limit", "", memlimit.Limit(1 << 30), 1 << 30 * 9 / 10, "Go memory limit follows the container's"},
		{"GOMEMLIMIT wins", "500MiB", memlimit.Limit(1 << 30), before, ""},
		{"no limit", "", func() (uint64, error) { return 0, memlimit.ErrNoLimit }, before, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tc.env)
			debug.SetMemoryLimit(before)
			var logs strings.Builder
			followMemoryLimit(tc.provider, slog.New(slog.NewTextHandler(&logs, nil)))
			if got := debug.SetMemoryLimit(-1); got != tc.want {
				t.Errorf("runtime memory limit %d, want %d", got, tc.want)
			}
			if !strings.Contains(logs.String(), tc.log) || (tc.log == "" && logs.Len() > 0) {
				t.Errorf("log %q, want %q", logs.String(), tc.log)
			}
		})
	}
}
