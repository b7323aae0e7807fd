//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
)

// TestGroupAPI: a KIP-848 group of Kafka's Java consumers on a 4-partition topic, one
// member, then a second. Through the sidecar's API the group ends stable with both
// members reconciled, their assignments equal to the target and covering every
// partition, its kafka-scheme hash agreeing with the coordinator's stored one and its
// first rebalance-needed event and the rebalanced events of both joins in its history. `kraftwatch groups` shows the same from the sidecar,
// and from Kafka directly shows, from the records, the members reconciling before
// the group is stable again. The per-group metrics are exported for it (opt-in).
func TestGroupAPI(t *testing.T) {
	s, ctx := sidecar(t)
	s.Admin.CreateTopic(ctx, t, "ga-orders", 4)
	kw := s.StartKraftwatch(ctx, t, "ga-.*", "KRAFTWATCH_GROUP_METRICS=ga-.*")
	const group = "ga-app"

	e2etest.StartMembers(ctx, t, s.Cluster, e2etest.Join{Group: group, Topics: []string{"ga-orders"}})
	waitGroup(ctx, t, kw, group, 1)

	// The second member joins: the coordinator moves two partitions from the first,
	// which must revoke them on a heartbeat before the second may own them. The
	// states seen while polling are logged; the records' own sequence is checked below.
	seen := make(chan []string, 1)
	pollCtx, stopPoll := context.WithCancel(ctx)
	go func() {
		var states []string
		for pollCtx.Err() == nil {
			if d, err := getGroup(kw, "consumer", group); err == nil && (len(states) == 0 || states[len(states)-1] != d.State) {
				states = append(states, d.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
		seen <- states
	}()
	e2etest.StartMembers(ctx, t, s.Cluster, e2etest.Join{Group: group, Topics: []string{"ga-orders"}})
	d := waitGroup(ctx, t, kw, group, 2)
	stopPoll()
	t.Logf("states seen through the API while the second member joined: %v", <-seen)

	var owned []string
	for _, m := range d.Members {
		if m.ClientID == "" || m.ClientHost == "" || !slices.Equal(m.SubscribedTopicNames, []string{"ga-orders"}) {
			t.Errorf("member %s: client %q host %q subscription %v", m.MemberID, m.ClientID, m.ClientHost, m.SubscribedTopicNames)
		}
		if *m.MemberEpoch != *d.TargetAssignmentEpoch || fmt.Sprint(m.Assigned) != fmt.Sprint(m.Target) || len(m.PendingRevocation) != 0 {
			t.Errorf("member %s reconciled but epoch %d (target %d), assigned %v, target %v, pending %v",
				m.MemberID, *m.MemberEpoch, *d.TargetAssignmentEpoch, m.Assigned, m.Target, m.PendingRevocation)
		}
		for _, tp := range m.Assigned {
			if tp.Topic != "ga-orders" {
				t.Errorf("member %s owns %v", m.MemberID, tp)
			}
			for _, p := range tp.Partitions {
				owned = append(owned, fmt.Sprint(p))
			}
		}
	}
	if slices.Sort(owned); strings.Join(owned, ",") != "0,1,2,3" {
		t.Errorf("the members own partitions %v, want 0-3 once each", owned)
	}
	// The history holds events of both types: the group's first rebalance-needed
	// event, then a rebalanced event for each member's join.
	var needed, joined int
	for _, e := range d.Events {
		switch {
		case e.Type == events.TypeRebalanceNeeded && e.Summary == "subscription_changed ga-orders":
			needed++
		case e.Type == events.TypeGroupRebalanced && strings.Contains(e.Summary, "member_joined"):
			joined++
		}
	}
	if needed != 1 || joined != 2 {
		t.Errorf("events %+v: want 1 rebalance-needed (subscription_changed ga-orders) and 2 rebalanced (member_joined)", d.Events)
	}
	// The coordinator stores its MetadataHash with the group epoch: kraftwatch's kafka
	// scheme reproduces it.
	if d.Hashes.CoordinatorAgrees == nil || !*d.Hashes.CoordinatorAgrees {
		t.Errorf("hashes %+v: kafka-scheme hash and coordinator's MetadataHash should agree", d.Hashes)
	}
	// The group series come from a snapshot the engine takes every 5 s.
	if err := e2etest.Wait(ctx, 15*time.Second, func() error {
		if n := kw.Metric(`kraftwatch_group_members{group="ga-app",group_type="consumer"}`); n != 2 {
			return fmt.Errorf("kraftwatch_group_members = %v, want 2", n)
		}
		if n := kw.Metric(`kraftwatch_groups{group_type="consumer",state="stable"}`); n < 1 {
			return fmt.Errorf("kraftwatch_groups{consumer,stable} = %v", n)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}

	fromSidecar := runGroups(ctx, t, "--url", kw.URL(""), group)
	t.Logf("kraftwatch groups --url %s %s:\n%s", kw.URL(""), group, fromSidecar)
	for _, want := range []string{`group       consumer "ga-app"`, "state       stable (2 members, 0 reconciling)", "(agrees with kafka)",
		"rebalance_needed.v1", "subscription_changed ga-orders"} {
		if !strings.Contains(fromSidecar, want) {
			t.Errorf("kraftwatch groups --url: no %q", want)
		}
	}
	if list := runGroups(ctx, t, "--url", kw.URL(""), "--type", "consumer", "--prefix", "ga-"); !strings.Contains(list, "consumer  ga-app  stable") {
		t.Errorf("kraftwatch groups --url --type consumer:\n%s", list)
	}

	fromKafka := runGroups(ctx, t, "--bootstrap", s.Cluster.Bootstrap(), s.Cluster.Nodes[0].LogDir, group)
	t.Logf("kraftwatch groups --bootstrap ... %s:\n%s", group, fromKafka)
	timeline := fromKafka[strings.Index(fromKafka, "STATE CHANGES"):]
	// After the first member was stable: reconciling (the second joined), then stable
	// with two members, none reconciling.
	rec := strings.LastIndex(timeline, " reconciling ")
	stable := strings.LastIndex(timeline, " stable ")
	if rec < 0 || stable < rec || !strings.Contains(timeline[stable:], " 2 ") {
		t.Errorf("kraftwatch groups from Kafka: the timeline does not show reconciling then stable with 2 members:\n%s", timeline)
	}
}

// waitGroup waits until the API shows the group stable with n members, all
// reconciled, and the coordinator's hash compared, and returns it.
func waitGroup(ctx context.Context, t *testing.T, kw *e2etest.Kraftwatch, group string, n int) api.GroupDetail {
	t.Helper()
	var d api.GroupDetail
	err := e2etest.Wait(ctx, time.Minute, func() error {
		var err error
		if d, err = getGroup(kw, "consumer", group); err != nil {
			return err
		}
		if d.State != "stable" || d.GroupSummary.Members != n || d.ReconcilingMembers != 0 || d.Hashes.CoordinatorAgrees == nil || !*d.Hashes.CoordinatorAgrees {
			return fmt.Errorf("group %s: %s with %d members, %d reconciling, hashes %+v; want stable with %d, coordinator agreeing",
				group, d.State, d.GroupSummary.Members, d.ReconcilingMembers, d.Hashes, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func getGroup(kw *e2etest.Kraftwatch, typ, group string) (api.GroupDetail, error) {
	var d api.GroupDetail
	resp, err := http.Get(kw.URL("/v1/groups/" + typ + "/" + group))
	if err != nil {
		return d, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("GET group %s: %s", group, resp.Status)
	}
	return d, json.NewDecoder(resp.Body).Decode(&d)
}

// runGroups runs `kraftwatch groups args...` and returns its output.
func runGroups(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, e2etest.Binary(t), append([]string{"groups"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kraftwatch groups %v: %v\n%s", args, err, stderr.Bytes())
	}
	return string(out)
}
