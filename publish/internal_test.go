package publish

import (
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
)

func TestBackoff(t *testing.T) {
	const lo, hi = 100 * time.Millisecond, 5 * time.Second
	want := []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000}
	for i, w := range want {
		if got := backoff(lo, hi, i+1); got != w*time.Millisecond {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	if got := backoff(lo, hi, 1000); got != hi {
		t.Errorf("backoff(1000) = %v, want the cap", got)
	}
	for range 1000 {
		if d := jitter(time.Second); d <= 500*time.Millisecond || d > time.Second {
			t.Fatalf("jitter(1s) = %v, want (0.5s, 1s]", d)
		}
	}
}

func TestJudge(t *testing.T) {
	pm := &pending{id: "kw1-a", hash: 7, scheme: events.SchemeMurmur3, cause: events.Cause{MetadataOffset: 100}}
	for _, tc := range []struct {
		name string
		last *lastEvent
		want outcome
		skip bool
	}{
		{"nothing stored", nil, 0, false},
		{"same event", &lastEvent{id: "kw1-a", hash: 7, scheme: events.SchemeMurmur3, cause: events.Cause{MetadataOffset: 100}}, outAlready, true},
		{"same hash, earlier", &lastEvent{id: "kw1-b", hash: 7, scheme: events.SchemeMurmur3, cause: events.Cause{MetadataOffset: 50}}, outAlready, true},
		{"same hash, other scheme", &lastEvent{id: "kw1-b", hash: 7, scheme: events.SchemeKafka, cause: events.Cause{MetadataOffset: 50}}, 0, false},
		{"later event", &lastEvent{id: "kw1-c", hash: 8, scheme: events.SchemeMurmur3, cause: events.Cause{MetadataOffset: 200}}, outSuperseded, true},
		{"later event, same hash", &lastEvent{id: "kw1-c", hash: 7, scheme: events.SchemeMurmur3, cause: events.Cause{MetadataOffset: 200}}, outSuperseded, true},
		{"earlier event", &lastEvent{id: "kw1-d", hash: 8, scheme: events.SchemeMurmur3, cause: events.Cause{MetadataOffset: 50}}, 0, false},
		{"same cause, other hash", &lastEvent{id: "kw1-e", hash: 9, scheme: events.SchemeMurmur3, cause: events.Cause{MetadataOffset: 100}}, 0, false},
	} {
		out, skip := judge(tc.last, pm)
		if skip != tc.skip || skip && out != tc.want {
			t.Errorf("%s: judge = %v, %v; want %v, %v", tc.name, out, skip, tc.want, tc.skip)
		}
	}
}
