//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestGroupsReaderHealth: kraftwatch reads __consumer_offsets with broker 3 alone as its
// bootstrap server. Partition 1 of __consumer_offsets is led by broker 3 with a replica
// on broker 1; partition 2 lives on brokers 3 and 2. Brokers 3 and 2 are killed:
//   - a KIP-848 group of partition 1 (now led by broker 1) that joins meanwhile is
//     announced while they are still down (the partition readers bootstrap from every
//     broker the metadata listed, not only from the configured, dead one);
//   - partition 2 cannot be read: after KRAFTWATCH_STALL_AFTER /readyz answers 503 naming
//     the groups component and partition 2, kraftwatch_group_partitions_stalled is 1 and
//     the stall is logged;
//   - once they are back, partition 2 is read again: /readyz 200, the gauge 0, and the
//     recovery is logged.
func TestGroupsReaderHealth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := kafkatest.New(t, kafkatest.Options{Rack: "r1", Brokers: []string{"r2", "r3"}})
	admin := e2etest.NewAdmin(c)
	offsets := assigned(groups.ConsumerOffsetsTopic, []int{1, 2}, []int{3, 1}, []int{3, 2})
	offsets.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}
	if err := admin.CreateTopics(ctx, offsets, assigned("h-orders", []int{1})); err != nil {
		t.Fatal(err)
	}
	moved, alone := groupOf(t, "h-moved", 1, 3), groupOf(t, "h-alone", 2, 3)
	// One group on partition 2 before the kill, so that the partition has records.
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: alone, Topics: []string{"h-orders"}})

	ns := e2etest.StartNATS(t)
	w := e2etest.Watch(t, ns.URL(), c.ClusterID)
	broker2, broker3 := c.Nodes[1], c.Nodes[2]
	kw := e2etest.StartKraftwatch(t, "kw", e2etest.Env(c, ns.URL(), "h-.*",
		"KRAFTWATCH_BOOTSTRAP_SERVERS="+broker3.BrokerAddr, "KRAFTWATCH_STALL_AFTER=5s"))
	kw.WaitReady(ctx, time.Minute)
	w.Expect(ctx, t, map[string]int{alone: 1}, time.Minute)
	_, body := readyz(kw)
	var names []string
	for _, s := range body.Stages {
		names = append(names, s.Component)
		if !s.Ready || s.State == "" {
			t.Fatalf("/readyz while ready: stage %+v", s)
		}
	}
	if fmt.Sprint(names) != "[metadata groups nats engine]" {
		t.Fatalf("/readyz stages %v, want metadata, groups, nats and engine", names)
	}
	t.Logf("/readyz while ready: %+v", body.Stages)

	broker3.Kill()
	broker2.Kill()
	killed := time.Now()
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: moved, Topics: []string{"h-orders"}})
	w.Expect(ctx, t, map[string]int{alone: 1, moved: 1}, time.Minute)
	t.Logf("group of partition 1 announced %v after its only bootstrap broker was killed", time.Since(killed).Round(time.Millisecond))

	err := e2etest.Wait(ctx, time.Minute, func() error {
		code, body := readyz(kw)
		if code != http.StatusServiceUnavailable {
			return fmt.Errorf("/readyz %d %+v", code, body)
		}
		for _, s := range body.Stages {
			if s.Component == "groups" && !s.Ready && strings.Contains(s.State, "partition 2 stalled") {
				return nil
			}
		}
		return fmt.Errorf("/readyz does not name partition 2: %+v", body)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := kw.Metric("kraftwatch_group_partitions_stalled"); n != 1 {
		t.Fatalf("kraftwatch_group_partitions_stalled = %v, want 1", n)
	}
	if len(kw.LogLines(1, "group records partition stalled")) == 0 {
		t.Fatal("the stall was not logged")
	}
	if code, body := readyz(kw); strings.Contains(fmt.Sprint(body.Problems), "partition 1 ") {
		t.Fatalf("partition 1 (led by broker 1 now) reported stalled: %d %+v", code, body)
	}

	// Restart waits until every broker is registered again: restart both at once.
	var restarts sync.WaitGroup
	errs := make([]error, 2)
	for i, b := range []*kafkatest.Node{broker3, broker2} {
		restarts.Go(func() { errs[i] = b.Restart(ctx, nil) })
	}
	restarts.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	err = e2etest.Wait(ctx, 2*time.Minute, func() error {
		if code, body := readyz(kw); code != http.StatusOK {
			return fmt.Errorf("/readyz %d %+v", code, body)
		}
		if n := kw.Metric("kraftwatch_group_partitions_stalled"); n != 0 {
			return fmt.Errorf("kraftwatch_group_partitions_stalled = %v", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var recovered bool
	for _, l := range kw.LogLines(1, "group records readable again") {
		recovered = recovered || l.Int("partition") == 2
	}
	if !recovered {
		t.Fatal("the recovery of partition 2 was not logged")
	}
	w.NoRepeats(t)
}

// readyzAnswer is /readyz's JSON body.
type readyzAnswer struct {
	Status string `json:"status"`
	Stages []struct {
		Component string `json:"component"`
		Ready     bool   `json:"ready"`
		State     string `json:"state"`
	} `json:"stages"`
	Problems []struct {
		Component string `json:"component"`
		Reason    string `json:"reason"`
	} `json:"problems"`
}

func readyz(k *e2etest.Kraftwatch) (int, readyzAnswer) {
	var body readyzAnswer
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(k.URL("/readyz"))
	if err != nil {
		return 0, body
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		body.Status = "undecodable: " + err.Error()
	}
	return resp.StatusCode, body
}

// groupOf returns the first group id prefix-N that Kafka places on partition p of a
// __consumer_offsets of n partitions (partitionFor: abs(groupId.hashCode()) % n).
func groupOf(t *testing.T, prefix string, p, n int) string {
	t.Helper()
	for i := range 10000 {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if javaPartition(id, n) == p {
			return id
		}
	}
	t.Fatal(errors.New("no group id found"))
	return ""
}

func javaPartition(id string, n int) int {
	var h int32
	for _, r := range id { // ASCII ids: UTF-16 code units are the bytes
		h = 31*h + int32(r)
	}
	if h == math.MinInt32 {
		h = 0
	}
	return int(max(h, -h)) % n
}
