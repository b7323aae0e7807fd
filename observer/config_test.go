package observer

import (
	"testing"
	"time"
)

// TestBackoffDefaults: a bound left zero takes its default without pulling the other
// below it (a zero MaxBackoff once made MinBackoff 1ns: a flood of retries and log
// lines).
func TestBackoffDefaults(t *testing.T) {
	for _, tc := range []struct {
		name             string
		min, max         time.Duration
		wantMin, wantMax time.Duration
	}{
		{"both zero", 0, 0, DefaultMinBackoff, DefaultMaxBackoff},
		{"max only", 0, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond},
		{"max above default min", 0, time.Minute, DefaultMinBackoff, time.Minute},
		{"min only", time.Second, 0, time.Second, DefaultMaxBackoff},
		{"min above default max", time.Minute, 0, time.Minute, time.Minute},
		{"both set", time.Second, 2 * time.Second, time.Second, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Dir: "x", MinBackoff: tc.min, MaxBackoff: tc.max}
			c.withDefaults()
			if c.MinBackoff != tc.wantMin || c.MaxBackoff != tc.wantMax {
				t.Errorf("backoff = [%v, %v], want [%v, %v]", c.MinBackoff, c.MaxBackoff, tc.wantMin, tc.wantMax)
			}
		})
	}
}
