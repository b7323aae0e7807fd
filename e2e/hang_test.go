//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// hangMargin is how late after KRAFTWATCH_STALL_AFTER a hung __consumer_offsets leader
// may turn /readyz not-ready: one refresh of the end offsets (STALL_AFTER/5, 1 s here)
// plus scheduling and this test's polling (docs/operations.md states the bound).
const hangMargin = 2 * time.Second

// TestGroupsLeaderHung: broker 2, the only replica and so the leader of partition 1 of
// __consumer_offsets, hangs (SIGSTOP): its sockets stay open and nothing answers, so
// kafka-go's fetches time out and retry without an error. With
// KRAFTWATCH_STALL_AFTER=5s, /readyz turns not-ready within STALL_AFTER + hangMargin,
// naming the partition and the broker that does not answer, and the partition's lag
// is unknown (-1), not 0; partition 0 (broker 1) is not reported. After SIGCONT /readyz
// is ready again, the lag known, and the group announced before the hang was announced
// exactly once. (No group joins during or after the hang: Kafka's Java client,
// bootstrapped from both brokers, waited minutes on the hung one, and after SIGCONT a
// member of a group that broker 2 coordinates did not get its assignment within 2 min.)
func TestGroupsLeaderHung(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := kafkatest.New(t, kafkatest.Options{Brokers: []string{""}})
	admin := e2etest.NewAdmin(c)
	if err := admin.CreateTopics(ctx, assigned(groups.ConsumerOffsetsTopic, []int{1}, []int{2}), assigned("hg-orders", []int{1})); err != nil {
		t.Fatal(err)
	}
	before1 := groupOf(t, "hg-before", 1, 2)
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: before1, Topics: []string{"hg-orders"}})

	ns := e2etest.StartNATS(t)
	w := e2etest.Watch(t, ns.URL(), c.ClusterID)
	const stallAfter = 5 * time.Second
	kw := e2etest.StartKraftwatch(t, "kw", e2etest.Env(c, ns.URL(), "hg-.*", "KRAFTWATCH_STALL_AFTER="+stallAfter.String()))
	kw.WaitReady(ctx, time.Minute)
	w.Expect(ctx, t, map[string]int{before1: 1}, time.Minute)

	broker2 := c.Nodes[1]
	broker2.Pause()
	paused := time.Now()
	t.Cleanup(broker2.Resume) // whatever happens: the cluster's Close must find it running
	var reason string
	err := e2etest.Wait(ctx, stallAfter+time.Minute, func() error {
		code, body := readyz(kw)
		if code != http.StatusServiceUnavailable {
			return fmt.Errorf("/readyz %d %+v", code, body)
		}
		for _, p := range body.Problems {
			if p.Component == "groups" && strings.Contains(p.Reason, "partition 1 stalled") {
				reason = p.Reason
				return nil
			}
		}
		return fmt.Errorf("/readyz does not name partition 1: %+v", body)
	})
	if err != nil {
		t.Fatal(err)
	}
	notReady := time.Since(paused)
	t.Logf("not ready %v after SIGSTOP (STALL_AFTER %v): %s", notReady.Round(time.Millisecond), stallAfter, reason)
	if notReady > stallAfter+hangMargin {
		t.Errorf("not ready %v after SIGSTOP, want at most STALL_AFTER + %v", notReady, hangMargin)
	}
	for _, want := range []string{"lag unknown", fmt.Sprintf("leader 2 (%s) has not answered", broker2.BrokerAddr), "KRAFTWATCH_STALL_AFTER"} {
		if !strings.Contains(reason, want) {
			t.Errorf("groups reason %q does not say %q", reason, want)
		}
	}
	if v := kw.Metric(`kraftwatch_group_reader_lag_records{partition="1"}`); v != -1 {
		t.Errorf(`kraftwatch_group_reader_lag_records{partition="1"} = %v, want -1 (unknown)`, v)
	}
	if v := kw.Metric("kraftwatch_group_partitions_stalled"); v != 1 {
		t.Errorf("kraftwatch_group_partitions_stalled = %v, want 1", v)
	}
	if strings.Contains(reason, "partition 0 ") {
		t.Errorf("partition 0 (broker 1, which answers) reported stalled: %s", reason)
	}

	broker2.Resume()
	resumed := time.Now()
	err = e2etest.Wait(ctx, time.Minute, func() error {
		if code, body := readyz(kw); code != http.StatusOK {
			return fmt.Errorf("/readyz %d %+v", code, body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ready %v after SIGCONT (paused for %v)", time.Since(resumed).Round(time.Millisecond), resumed.Sub(paused).Round(time.Millisecond))
	if v := kw.Metric(`kraftwatch_group_reader_lag_records{partition="1"}`); v < 0 {
		t.Errorf(`kraftwatch_group_reader_lag_records{partition="1"} = %v after SIGCONT`, v)
	}
	if v := kw.Metric("kraftwatch_group_partitions_stalled"); v != 0 {
		t.Errorf("kraftwatch_group_partitions_stalled = %v after SIGCONT, want 0", v)
	}
	w.Expect(ctx, t, map[string]int{before1: 1}, time.Minute)
	w.NoRepeats(t)
}

// TestGroupsBootstrapCause: with KRAFTWATCH_BOOTSTRAP_SERVERS naming a controller
// listener, or a port where nothing listens, /readyz's groups reason names the cause
// and the setting at once, not "catching up with __consumer_offsets: 0 records behind".
func TestGroupsBootstrapCause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := sidecarCluster(t)
	ns := e2etest.StartNATS(t)
	for _, tc := range []struct {
		name, bootstrap string
		want            []string
	}{
		{"controller", c.ControllerBootstrap(), []string{"is this a controller listener?", "KRAFTWATCH_BOOTSTRAP_SERVERS must name broker listeners"}},
		{"refused", fmt.Sprintf("127.0.0.1:%d", e2etest.FreePort(t)), []string{"connection refused", "check KRAFTWATCH_BOOTSTRAP_SERVERS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kw := e2etest.StartKraftwatch(t, "kw-"+tc.name, e2etest.Env(c, ns.URL(), "bc-.*", "KRAFTWATCH_BOOTSTRAP_SERVERS="+tc.bootstrap))
			start := time.Now()
			var reason string
			err := e2etest.Wait(ctx, 30*time.Second, func() error {
				code, body := readyz(kw)
				for _, p := range body.Problems {
					if p.Component == "groups" && strings.Contains(p.Reason, tc.want[0]) {
						reason = p.Reason
						return nil
					}
				}
				return fmt.Errorf("/readyz %d %+v", code, body)
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("named %v after start: %s", time.Since(start).Round(time.Millisecond), reason)
			for _, want := range tc.want {
				if !strings.Contains(reason, want) {
					t.Errorf("groups reason %q does not say %q", reason, want)
				}
			}
		})
	}
}
