package groups

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReaderHealth: a partition is stalled once its reads have failed for longer than
// StallAfter; a quiet partition, or one that failed briefly, is healthy; Lag counts
// what is known to be behind, whether or not the partition can be read.
func TestReaderHealth(t *testing.T) {
	r, err := NewReader(ReaderConfig{Brokers: []string{"127.0.0.1:9"}, StallAfter: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	parts := make([]partition, 3)
	for i := range parts {
		parts[i].end.Store(10)
		parts[i].next.Store(10)
		parts[i].endKnown.Store(true)
	}
	r.parts.Store(&parts)
	if err := r.Health(); err != nil || r.Lag() != 0 {
		t.Fatalf("all caught up: Health %v, Lag %d", err, r.Lag())
	}

	// Partition 1 cannot be read from t=1000 on while records arrive (end 15).
	dial := errors.New("failed to dial: connection refused")
	parts[1].lastErr.Store(&dial)
	parts[1].failingSince.Store(now.UnixNano())
	parts[1].end.Store(15)
	now = now.Add(29 * time.Second)
	if err := r.Health(); err != nil {
		t.Fatalf("failing for 29s of 30: %v", err)
	}
	if r.Lag() != 5 {
		t.Fatalf("Lag %d, want 5", r.Lag())
	}
	now = now.Add(2 * time.Second)
	err = r.Health()
	var se *StallError
	if !errors.As(err, &se) || len(se.Partitions) != 1 || se.Partitions[0].Partition != 1 || se.Partitions[0].Lag != 5 {
		t.Fatalf("failing for 31s: Health %v", err)
	}
	for _, want := range []string{"__consumer_offsets", "partition 1 stalled for 31s", "5 records behind", "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Health %q does not say %q", err, want)
		}
	}
	if r.Stalled() != 1 {
		t.Fatalf("Stalled %d, want 1", r.Stalled())
	}

	// A read succeeds: healthy again, and the lag is what is left.
	r.progressed(1, &parts[1], 12, 15, now)
	if err := r.Health(); err != nil || r.Lag() != 3 {
		t.Fatalf("after a read: Health %v, Lag %d", err, r.Lag())
	}
}

// TestReaderHealthNoBroker: when no broker answers, the partitions cannot be listed and
// Health says so once StallAfter has passed, naming the error.
func TestReaderHealthNoBroker(t *testing.T) {
	r := startReader(t, ReaderConfig{Brokers: []string{"127.0.0.1:1"}, StallAfter: 200 * time.Millisecond})
	if msg := waitErr(t, "Health with no broker reachable", r.Health).Error(); !strings.Contains(msg, "cannot list the partitions of __consumer_offsets") || !strings.Contains(msg, "127.0.0.1:1") {
		t.Fatalf("Health = %q", msg)
	}
}
