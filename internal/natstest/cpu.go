package natstest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchServer is the NATS server of benchmarks that publish in bulk: the URL in
// KRAFTWATCH_BENCH_NATS_URL (a nats-server process, as bench/fanout.sh starts; the
// benchmark process's allocations are then its own) with its pid in
// KRAFTWATCH_BENCH_NATS_PID (0 when unset), else nats-server in process (Start), whose
// work and allocations count in the benchmark's process.
func BenchServer(t testing.TB) (url string, pid int) {
	if url := os.Getenv("KRAFTWATCH_BENCH_NATS_URL"); url != "" {
		pid, _ := strconv.Atoi(os.Getenv("KRAFTWATCH_BENCH_NATS_PID"))
		return url, pid
	}
	return Start(t).ClientURL(), 0
}

// CPUTime returns the CPU time (user and system, all threads) of process pid so far,
// from /proc (Linux); pid 0 is this process (getrusage).
func CPUTime(pid int) (time.Duration, error) {
	if pid == 0 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0, err
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command (in parentheses, which may hold spaces): utime and
	// stime are the 14th and 15th of the line, in clock ticks (100 per second on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("natstest: /proc/%d/stat: %d fields after the command", pid, len(f))
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("natstest: /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
