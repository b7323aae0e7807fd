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

// TestPartitionLagSeconds: the seconds behind bound the age of the oldest record not
// read: from the later of the last record read and the last time caught up.
func TestPartitionLagSeconds(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	for _, tc := range []struct {
		name                          string
		next, end                     int64
		lastRecord, caughtUp, started int64
		wantRecords                   int64
		wantSeconds                   float64
	}{
		{"caught up", 10, 10, at(-time.Hour), at(-time.Second), at(-2 * time.Hour), 0, 0},
		{"nothing read yet: since Run began", 0, 10, 0, 0, at(-30 * time.Second), 10, 30},
		{"replaying old records: their age", 5, 10, at(-time.Hour), 0, at(-time.Minute), 5, 3600},
		{"quiet partition gets a record: since caught up", 10, 11, at(-time.Hour), at(-2 * time.Second), at(-2 * time.Hour), 1, 2},
		{"reading recent records", 10, 20, at(-3 * time.Second), at(-time.Minute), at(-2 * time.Hour), 10, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p partition
			p.next.Store(tc.next)
			p.end.Store(tc.end)
			p.endKnown.Store(true)
			p.lastRecord.Store(tc.lastRecord)
			p.caughtUpAt.Store(tc.caughtUp)
			l := p.lag(3, t0, tc.started)
			if l.Partition != 3 || l.Records != tc.wantRecords || l.Seconds != tc.wantSeconds {
				t.Errorf("lag %+v, want %d records, %v s", l, tc.wantRecords, tc.wantSeconds)
			}
		})
	}
	var p partition // the leader did not answer
	if l := p.lag(0, t0, at(-time.Minute)); l.Records != -1 || l.Seconds != -1 {
		t.Errorf("unknown: %+v, want -1, -1", l)
	}
}
