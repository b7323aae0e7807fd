package engine

import (
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
)

// The engine converts groups' reasons and group types to publish's by number.
func TestEnumsAgree(t *testing.T) {
	for k := events.UnknownReason; k <= events.RegexMatched; k++ {
		if got, want := k.String(), k.String(); got != want {
			t.Errorf("reason %d: publish says %q, groups says %q", k, got, want)
		}
	}
	for g := events.UnknownGroup; g <= events.StreamsGroup; g++ {
		if got, want := g.String(), g.String(); got != want {
			t.Errorf("group type %d: publish says %q, groups says %q", g, got, want)
		}
	}
}
