// Package e2etest is the harness of the end-to-end tests in e2e/: it runs kraftwatch as
// an operator would, beside a real Kafka and a real NATS, and reads back what it
// published. Test files keep only scenarios; what they start and wait for is here.
//
// What it starts:
//   - Shared: one real Kafka per name (internal/kafkatest), started on first use and
//     shared by every test of the test binary; Main stops them when the tests end.
//   - Binary: the kraftwatch binary, built once per test binary (with -race when the
//     test binary has it, so a data race in the process fails the test).
//   - StartKraftwatch: kraftwatch run as its own process with the environment it is
//     given (plus a free KRAFTWATCH_HTTP_ADDR and none of the caller's KRAFTWATCH_*
//     variables): stopped with a signal, killed, started again, each run logging to its
//     own file; /readyz, /metrics and the JSON log lines are read back.
//   - StartNATS: a nats-server process (internal/natstest.Binary) with JetStream on a
//     fixed port and store, so it can be killed and started again with the same state;
//     tests that need no separate process use natstest.Start (in-process).
//   - StartMembers, ClassicGroups: group members of the cluster (Kafka's Java client,
//     or kafka-go's group APIs); Admin: topic changes through kafka-go, in milliseconds.
//   - StartSidecar: what a sidecar test runs kraftwatch beside (a nats-server of its own,
//     a Watcher on it, an Admin), and Sidecar.StartKraftwatch with Env.
//
// What it reads: Watch subscribes to every kraftwatch subject on core NATS and Stream
// reads the JetStream stream; both check each event with Check (events.DecodeRebalanceNeeded, the
// JSON Schema, cluster, subject, Nats-Msg-Id and Content-Type). JetStream connects a
// test to any server's JetStream API.
//
// Waiting: Wait is the one poll loop (with backoff) of the e2e tests; every wait for a
// condition goes through it, and the helpers that wait (Kraftwatch.WaitReady,
// Watcher.Expect, StartNATS) use it too.
//
// Concurrency: Shared, Binary and FreePort are safe for concurrent use. Every other
// function or method that takes a testing.TB may fail it with t.Fatal and so belongs to
// the test's goroutine, as do a Kraftwatch, a NATS and a Sidecar (one test owns each).
// A Watcher records on the NATS client's goroutine behind a mutex: Repeated may be
// called from any goroutine, All, NoRepeats and Expect from the test's. The Admin
// methods that return an error instead (CreateTopics, TryAlterPartitions) are safe from
// other goroutines, such as a burst of changes running beside the test. Wait calls its
// condition on the caller's goroutine. Processes started for a test are killed at its
// end, and none outlives the test binary (each has a parent-death signal).
//
// The package has no build tag, so go vet and staticcheck check it with the rest, but
// only e2e tests import it: nothing of it is compiled into kraftwatch.
package e2etest

import (
	"context"
	"fmt"
	"time"
)

// maxPause is the longest pause of Wait between two calls of its condition.
const maxPause = 100 * time.Millisecond

// Wait calls cond until it returns nil, pausing between calls from 1 ms, doubled each
// time, up to 100 ms. It returns nil once cond does, or cond's last error (wrapped with
// how long it waited) once timeout has passed or ctx ended; timeout 0 means only ctx
// ends the wait, a negative one that cond is called once. cond is called on the caller's goroutine, at least once, and once more
// at the deadline, so a test's cond may call t.Fatal, and a deadline loop
//
//	for !done() { if time.Now().After(deadline) { t.Fatal(...) }; time.Sleep(d) }
//
// becomes
//
//	if err := e2etest.Wait(ctx, timeout, func() error { ... }); err != nil { t.Fatal(err) }
func Wait(ctx context.Context, timeout time.Duration, cond func() error) error {
	start := time.Now()
	pause := time.Millisecond
	for {
		err := cond()
		if err == nil {
			return nil
		}
		wait := pause
		if timeout != 0 {
			left := timeout - time.Since(start)
			if left <= 0 {
				return fmt.Errorf("after %v: %w", time.Since(start).Round(time.Millisecond), err)
			}
			wait = min(wait, left)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("after %v (%v): %w", time.Since(start).Round(time.Millisecond), ctx.Err(), err)
		case <-t.C:
		}
		pause = min(2*pause, maxPause)
	}
}
