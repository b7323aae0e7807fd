package engine

import (
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/publish"
)

// The engine converts groups' reasons and group types to publish's by number.
func TestEnumsAgree(t *testing.T) {
	for k := groups.UnknownReason; k <= groups.RegexMatched; k++ {
		if got, want := publish.ReasonKind(k).String(), k.String(); got != want {
			t.Errorf("reason %d: publish says %q, groups says %q", k, got, want)
		}
	}
	for g := groups.UnknownGroup; g <= groups.StreamsGroup; g++ {
		if got, want := publish.GroupType(g).String(), g.String(); got != want {
			t.Errorf("group type %d: publish says %q, groups says %q", g, got, want)
		}
	}
}
