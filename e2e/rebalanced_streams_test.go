//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestRebalancedStaticStreams: from Kafka 4.4 a streams group has static members
// (KAFKA-20169). A static instance of the test bed's Kafka Streams application
// (group.instance.id) is closed and started again within its session timeout, then a
// second, dynamic instance joins: kraftwatch tells the static member's first join and
// the dynamic one's, and never a member_left or a second member_joined of the static
// instance (the coordinator replaced it).
func TestRebalancedStaticStreams(t *testing.T) {
	if kafkatest.Version() < "4.4" {
		t.Skipf("Kafka %s: streams groups have static members from 4.4", kafkatest.Version())
	}
	s, ctx := sidecar(t)
	const app, topic, instance = "rs-app", "rs-in", "rs-static"
	s.Admin.CreateTopic(ctx, t, topic, 2)
	s.StartKraftwatch(ctx, t, "rs-.*", "KRAFTWATCH_REBALANCED_EVENTS=true")
	url, cluster := s.NATS.URL(), s.Cluster.ClusterID
	start := func(instance string) *kafkatest.Member {
		t.Helper()
		m, err := s.Cluster.StartStreamsApp(ctx, kafkatest.StreamsApp{ID: app, Topics: []string{topic}, Pattern: "rs-none", InstanceID: instance})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		if _, err := m.WaitFor(ctx, "state RUNNING"); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// joins waits until the group's events tell n joins and returns its events and
	// their causes of kind member_joined and member_left.
	joins := func(n int) (evs []events.Envelope[events.GroupRebalanced], joined, left []events.RebalanceCause) {
		t.Helper()
		err := e2etest.Wait(ctx, time.Minute, func() error {
			all, err := readRebalanced(url, cluster)
			if err != nil {
				return err
			}
			evs, joined, left = nil, nil, nil
			for _, e := range all {
				if e.Data.GroupID != app {
					continue
				}
				evs = append(evs, e)
				for _, c := range e.Data.Causes {
					switch c.Kind {
					case events.CauseMemberJoined:
						joined = append(joined, c)
					case events.CauseMemberLeft:
						left = append(left, c)
					}
				}
			}
			if len(joined) < n {
				return fmt.Errorf("%d joins told, want %d", len(joined), n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return evs, joined, left
	}

	began := time.Now()
	static := start(instance)
	joins(1)
	static.Close()
	start(instance)
	restarted := time.Since(began)
	start("")
	evs, joined, left := joins(2)
	for _, e := range evs {
		t.Logf("%s timeline: %s", app, describeBump(e))
	}
	var staticJoins int
	for _, c := range joined {
		if strings.HasPrefix(c.InstanceID, instance) {
			staticJoins++
		}
	}
	if staticJoins != 1 || len(joined) != 2 || len(left) != 0 {
		t.Fatalf("%s: joins %+v, leaves %+v; want one join of the static instance, one of the dynamic one, no leave", app, joined, left)
	}
	// 4.4 bumps the epoch for the restarted instance's new ProcessId: no v1 cause kind
	// names that, so it is unknown, naming the member and its instance; no bump is
	// left unexplained.
	var replaced []events.RebalanceCause
	for _, e := range evs {
		for _, c := range e.Data.Causes {
			if c.Kind != events.UnknownCause {
				continue
			}
			if c.MemberID == "" || !strings.HasPrefix(c.InstanceID, instance) {
				t.Fatalf("%s: event %s has an unknown cause %+v; want each to name the restarted static member", app, e.ID, c)
			}
			replaced = append(replaced, c)
		}
	}
	if len(replaced) != 1 {
		t.Fatalf("%s: restart told as %+v; want one cause naming the static member", app, replaced)
	}
	t.Logf("static streams member restarted in %v (start to running again), no leave or join told", restarted.Round(100*time.Millisecond))
}
