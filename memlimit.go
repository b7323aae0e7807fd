package main

import (
	"log/slog"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// memLimitRatio is the share of the container's memory limit the Go runtime's soft
// limit is set to: the rest is for what the runtime does not count (stacks of
// goroutines being created, the OS's page cache of the files read, fragmentation).
const memLimitRatio = 0.9

// followMemoryLimit sets the Go runtime's soft memory limit to memLimitRatio of the
// memory limit provider reports (the container's cgroup, v1 or v2), so that the
// garbage of a burst (a rolling restart's leader changes build new images while old
// ones are still read) is collected before the kernel's OOM killer ends the process.
// GOMEMLIMIT, when set, wins; AUTOMEMLIMIT=off turns this off, AUTOMEMLIMIT=0.8 sets
// another ratio. Without a limit nothing changes. The library was chosen over reading
// cgroup files by hand: it knows cgroup v1, v2 and their nesting.
func followMemoryLimit(provider memlimit.Provider, log *slog.Logger) {
	limit, err := memlimit.Set(memlimit.WithRatio(memLimitRatio), memlimit.WithProvider(provider),
		memlimit.WithLogger(slog.New(slog.DiscardHandler)))
	switch {
	case err != nil:
		log.Warn("cannot read the container's memory limit; the Go runtime has none", "error", err)
	case limit > 0 && limit < 1<<62:
		log.Info("Go memory limit follows the container's", "gomemlimit_bytes", limit, "ratio", memLimitRatio)
	}
}
