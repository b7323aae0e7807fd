package e2etest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestWait(t *testing.T) {
	errNotYet := errors.New("not yet")
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  time.Duration // cancel ctx this long after the start; 0: never
		doneAt  int           // cond returns nil from this call on; 0: never
		calls   int           // calls of cond
		took    time.Duration
		err     string // "" for nil
	}{
		{name: "at once", timeout: time.Second, doneAt: 1, calls: 1},
		// Pauses of 1, 2, 4 ms between the first four calls.
		{name: "after backoff", timeout: time.Second, doneAt: 4, calls: 4, took: 7 * time.Millisecond},
		// 1+2+...+64 = 127 ms, then 100 ms pauses: calls at 127, 227, ..., 927 ms, and a
		// last one at the deadline. A context canceled at 50 ms ends the pause after the call
		// at 31 ms.
		{name: "timeout", timeout: time.Second, calls: 17, took: time.Second, err: "after 1s: not yet"},
		{name: "done at the deadline", timeout: time.Second, doneAt: 17, calls: 17, took: time.Second},
		{name: "context ends", cancel: 50 * time.Millisecond, calls: 6, took: 50 * time.Millisecond,
			err: "after 50ms (context canceled): not yet"},
		{name: "negative timeout: one call", timeout: -1, calls: 1, err: "after 0s: not yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancel > 0 {
					time.AfterFunc(tc.cancel, cancel)
				}
				calls := 0
				start := time.Now()
				err := Wait(ctx, tc.timeout, func() error {
					calls++
					if tc.doneAt > 0 && calls >= tc.doneAt {
						return nil
					}
					return errNotYet
				})
				got := ""
				if err != nil {
					got = err.Error()
					if !errors.Is(err, errNotYet) {
						t.Errorf("error %v does not wrap cond's error", err)
					}
				}
				if got != tc.err || calls != tc.calls || time.Since(start) != tc.took {
					t.Errorf("Wait: error %q after %d calls in %v; want %q after %d calls in %v",
						got, calls, time.Since(start), tc.err, tc.calls, tc.took)
				}
			})
		})
	}
}

// TestExpectFails checks that Watcher.Expect fails its test when an event too many
// arrives within Quiet, or too few before the timeout.
func TestExpectFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string // group ids already received
		want   map[string]int
		fail   string
	}{
		{"exact", []string{"a", "b"}, map[string]int{"a": 1, "b": 1}, ""},
		{"one too many", []string{"a", "a"}, map[string]int{"a": 1}, "want exactly map[a:1]"},
		{"a group not named", []string{"a", "b"}, map[string]int{"a": 1}, "want exactly map[a:1]"},
		{"too few", []string{"a"}, map[string]int{"a": 2}, "after 1s: events per group map[a:1], want map[a:2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &Watcher{seen: map[string]bool{}}
				for i, g := range tc.events {
					e := Event{MsgID: fmt.Sprint(i)}
					e.Env.Data.GroupID = g
					w.events = append(w.events, e)
				}
				rec := &recorder{TB: t}
				done := make(chan struct{})
				go func() {
					defer close(done)
					w.Expect(t.Context(), rec, tc.want, time.Second)
				}()
				<-done
				if tc.fail == "" && rec.failed != "" || !strings.Contains(rec.failed, tc.fail) {
					t.Errorf("Expect failed with %q; want a failure with %q", rec.failed, tc.fail)
				}
			})
		})
	}
}

// recorder is a testing.TB whose Fatal records the message and ends the goroutine.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
