//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/whatif"
)

const reassignClass = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"

// reassign runs kafka-reassign-partitions --execute with plan and execute's extra
// arguments, then --verify until it reports every partition complete (which also
// removes a --throttle).
func reassign(ctx context.Context, t *testing.T, c *kafkatest.Cluster, plan string, execute ...string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(f, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--bootstrap-server", c.Bootstrap(), "--reassignment-json-file", f, "--execute"}, execute...)
	if out, err := c.Tool(ctx, reassignClass, args...); err != nil {
		t.Fatalf("kafka-reassign-partitions --execute: %v\n%s", err, out)
	}
	err := e2etest.Wait(ctx, time.Minute, func() error {
		out, err := c.Tool(ctx, reassignClass, "--bootstrap-server", c.Bootstrap(), "--reassignment-json-file", f, "--verify")
		if err != nil {
			return err
		}
		if strings.Contains(out, "in progress") || !strings.Contains(out, "is completed") {
			return fmt.Errorf("not complete yet:\n%s", out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWhatIfReassignment: brokers 1 and 2 in rack-a, 3 in rack-b. Two KIP-848
// groups read one single-replica topic each on broker 1 (and a share group the
// second one), a fourth reads a topic the plan leaves alone. POST /v1/whatif (Kafka's hash) for a plan moving one topic
// inside rack-a (1 -> 2: rack-a counts twice while it moves, then the hash comes
// back: 0-2 rebalances) and the other to rack-b (1 -> 3: a, then a,b, then b: 1-2)
// names those two groups and not the third. kafka-reassign-partitions then executes
// the plan: the coordinator's epoch bumps of each group fall within its predicted
// range, none for the third. kraftwatch's own events (murmur3, a set of racks) say
// the cross-rack group needs two rebalances and the others none. Then broker 2 is
// decommissioned with the suggested plan (every replica to broker 1, same rack): no
// group's hash differs in the end, the coordinator's bumps stay within the predicted
// range, and broker 2 holds no replica afterwards. Then partitions added to wi-same
// and broker 3 restarted in rack-c: one rebalance for every group reading a topic
// there, as predicted.
// Last, a throttled reassignment of wi-throttle, read by a fifth group, to rack-c:
// its partitions complete seconds apart, and both the coordinator's epoch bumps and
// kraftwatch's events fall within the what-if's range, none for the other groups.
// The one-shot `kraftwatch whatif` (controllers and __consumer_offsets read anew)
// answers the first plan as POST /v1/whatif does.
func TestWhatIfReassignment(t *testing.T) {
	// A replication quota measured over 1-2 s, not Kafka's 10-11 s, so that a throttle
	// paces the copy steadily rather than in bursts 11 s apart.
	c := e2etest.Shared(t, "whatif", kafkatest.Options{Rack: "rack-a", Brokers: []string{"rack-a", "rack-b"},
		Props: map[string]string{"replication.quota.window.num": "2"}})
	s := e2etest.StartSidecar(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	for _, topic := range []string{"wi-same", "wi-cross", "wi-other"} {
		if err := c.CreateTopic(ctx, topic, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	reassign(ctx, t, c, `{"version":1,"partitions":[{"topic":"wi-same","partition":0,"replicas":[1]},{"topic":"wi-cross","partition":0,"replicas":[1]},{"topic":"wi-other","partition":0,"replicas":[3]}]}`)
	throttleTopic(ctx, t, s.Admin, c)
	kw := s.StartKraftwatch(ctx, t, "wi-.*")
	groups := map[string]string{"wi-same-app": "wi-same", "wi-cross-app": "wi-cross", "wi-cross-share": "wi-cross", "wi-other-app": "wi-other",
		"wi-throttle-app": "wi-throttle"}
	typeOf := func(g string) string {
		if strings.HasSuffix(g, "-share") {
			return "share"
		}
		return "consumer"
	}
	var joins []e2etest.Join
	for g, topic := range groups {
		joins = append(joins, e2etest.Join{Group: g, Kind: typeOf(g), Topics: []string{topic}})
	}
	e2etest.StartMembers(ctx, t, c, joins...)
	s.Watcher.Expect(ctx, t, map[string]int{"wi-same-app": 1, "wi-cross-app": 1, "wi-cross-share": 1, "wi-other-app": 1, "wi-throttle-app": 1}, time.Minute)
	epochs := map[string]int32{}
	for g := range groups {
		err := e2etest.Wait(ctx, time.Minute, func() error {
			d, err := getGroup(kw, typeOf(g), g)
			if err != nil {
				return err
			}
			if d.State != "stable" || d.GroupSummary.Members != 1 || d.Epoch == nil {
				return fmt.Errorf("group %s: %s with %d members, epoch %v; want stable with 1", g, d.State, d.GroupSummary.Members, d.Epoch)
			}
			epochs[g] = *d.Epoch
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	plan := `{"version":1,"partitions":[{"topic":"wi-same","partition":0,"replicas":[2]},{"topic":"wi-cross","partition":0,"replicas":[3]}]}`
	predicted := ranges(postWhatIf(t, kw, api.WhatIfRequest{Reassignment: json.RawMessage(plan)}).Result)
	t.Logf("what-if: %v", predicted)
	if want := map[string][2]int{"wi-same-app": {0, 2}, "wi-cross-app": {1, 2}, "wi-cross-share": {1, 2}}; !maps.Equal(predicted, want) {
		t.Fatalf("the what-if predicts %v, want %v", predicted, want)
	}
	whatifOneShot(ctx, t, c, kw, plan)

	reassign(ctx, t, c, plan)
	done := time.Now()
	got := s.Watcher.Expect(ctx, t, map[string]int{"wi-same-app": 1, "wi-cross-app": 3, "wi-cross-share": 3, "wi-other-app": 1, "wi-throttle-app": 1}, time.Minute)
	// The coordinator acts on a member's heartbeat (5 s for consumer groups): wait two.
	time.Sleep(time.Until(done.Add(10 * time.Second)))
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		r := predicted[g]
		d, err := getGroup(kw, typeOf(g), g)
		if err != nil {
			t.Fatal(err)
		}
		bumps := int(*d.Epoch - epochs[g])
		t.Logf("%s: what-if %d-%d, coordinator epoch %d -> %d (%d bumps), kraftwatch (murmur3) announced %d", g, r[0], r[1], epochs[g], *d.Epoch, bumps, len(got[g])-1)
		if bumps < r[0] || bumps > r[1] {
			t.Errorf("%s: the coordinator bumped the epoch %d times, the what-if predicted %d-%d", g, bumps, r[0], r[1])
		}
		epochs[g] = *d.Epoch
	}

	// Decommission broker 2 (rack-a, beside broker 1) with the suggested plan: every
	// replica it holds (wi-same's, and whichever __consumer_offsets partitions) goes
	// to broker 1, no partition changes racks, no group's hash differs in the end.
	sug := postWhatIf(t, kw, api.WhatIfRequest{Decommission: []int32{2}, Suggest: true}).Suggestion
	t.Logf("suggested for broker 2: %s", sug.Reassignment)
	if len(sug.Changing) != 0 || len(sug.Stuck) != 0 || !strings.Contains(string(sug.Reassignment), `{"topic":"wi-same","partition":0,"replicas":[1]}`) {
		t.Fatalf("suggestion %s, changing %v, stuck %v: want every replica of broker 2 moved to broker 1", sug.Reassignment, sug.Changing, sug.Stuck)
	}
	predicted = ranges(sug.Result)
	t.Logf("what-if of the suggestion: %v", predicted)
	for g, r := range predicted {
		if r[0] != 0 {
			t.Errorf("%s: the suggestion predicts %d-%d rebalances, want a net change of none", g, r[0], r[1])
		}
	}
	reassign(ctx, t, c, string(sug.Reassignment))
	time.Sleep(10 * time.Second) // two heartbeats
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		r := predicted[g]
		d, err := getGroup(kw, typeOf(g), g)
		if err != nil {
			t.Fatal(err)
		}
		bumps := int(*d.Epoch - epochs[g])
		t.Logf("%s: what-if %d-%d, coordinator epoch %d -> %d (%d bumps)", g, r[0], r[1], epochs[g], *d.Epoch, bumps)
		if bumps < r[0] || bumps > r[1] {
			t.Errorf("%s: the coordinator bumped the epoch %d times, the what-if predicted %d-%d", g, bumps, r[0], r[1])
		}
	}
	// Broker 2 holds nothing now: unregistering it would change no hash.
	if after := postWhatIf(t, kw, api.WhatIfRequest{Decommission: []int32{2}, Suggest: true}).Suggestion; len(after.Result.Groups) != 0 || strings.Contains(string(after.Reassignment), "topic") {
		t.Errorf("after the suggested plan, broker 2 still holds replicas: %s, %v", after.Reassignment, after.Result.Groups)
	}
	for g := range groups {
		d, err := getGroup(kw, typeOf(g), g)
		if err != nil {
			t.Fatal(err)
		}
		epochs[g] = *d.Epoch
	}

	// Partitions added to wi-same, and broker 3 (wi-cross, wi-other) restarted in
	// rack-c: one rebalance for every group, exactly.
	predicted = ranges(postWhatIf(t, kw, api.WhatIfRequest{AddPartitions: []whatif.AddPartitions{{Topic: "wi-same", Count: 2}},
		SetRacks: []whatif.SetRack{{Broker: 3, Rack: "rack-c"}}}).Result)
	t.Logf("what-if of partitions added and a rack changed: %v", predicted)
	if want := map[string][2]int{"wi-same-app": {1, 1}, "wi-cross-app": {1, 1}, "wi-cross-share": {1, 1}, "wi-other-app": {1, 1}}; !maps.Equal(predicted, want) {
		t.Fatalf("the what-if predicts %v, want %v", predicted, want)
	}
	// The new partition goes to broker 2 (rack-a), away from broker 3, as the
	// what-if places it: with Kafka's placer it could land on broker 3 and change
	// racks with it.
	if out, err := c.Tool(ctx, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", c.Bootstrap(),
		"--alter", "--topic", "wi-same", "--partitions", "2", "--replica-assignment", "1,2"); err != nil {
		t.Fatalf("kafka-topics --alter: %v\n%s", err, out)
	}
	rackC := "rack-c"
	for _, n := range c.Nodes {
		if n.ID == 3 {
			if err := n.Restart(ctx, &rackC); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(10 * time.Second) // two heartbeats
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		r := predicted[g]
		var d api.GroupDetail
		err := e2etest.Wait(ctx, 30*time.Second, func() error {
			var err error
			d, err = getGroup(kw, typeOf(g), g)
			if err == nil && int(*d.Epoch-epochs[g]) < r[0] {
				err = fmt.Errorf("group %s: epoch %d, want %d bump(s) from %d", g, *d.Epoch, r[0], epochs[g])
			}
			return err
		})
		if err != nil {
			t.Error(err)
			continue
		}
		bumps := int(*d.Epoch - epochs[g])
		t.Logf("%s: what-if %d-%d, coordinator epoch %d -> %d (%d bumps)", g, r[0], r[1], epochs[g], *d.Epoch, bumps)
		if bumps < r[0] || bumps > r[1] {
			t.Errorf("%s: the coordinator bumped the epoch %d times, the what-if predicted %d-%d", g, bumps, r[0], r[1])
		}
	}

	// Throttled: wi-throttle's three partitions, on broker 1 (rack-a) with 0, 2 and
	// 4 MB, move to broker 3 (rack-c) with --throttle: Kafka completes each one when
	// its new replica has caught up, seconds apart, and each completion drops rack-a
	// from its partition. The group reading it rebalances at the start and up to once
	// per completion, within the what-if's range; no other group rebalances.
	plan = `{"version":1,"partitions":[{"topic":"wi-throttle","partition":0,"replicas":[3]},` +
		`{"topic":"wi-throttle","partition":1,"replicas":[3]},{"topic":"wi-throttle","partition":2,"replicas":[3]}]}`
	predicted = ranges(postWhatIf(t, kw, api.WhatIfRequest{Reassignment: json.RawMessage(plan)}).Result)
	t.Logf("what-if of the throttled plan: %v", predicted)
	if r := predicted["wi-throttle-app"]; len(predicted) != 1 || r[0] < 1 || r[1] <= r[0] {
		t.Fatalf("the what-if predicts %v, want wi-throttle-app alone, with a range", predicted)
	}
	before := s.Watcher.All(t).Counts()
	for g := range groups {
		d, err := getGroup(kw, typeOf(g), g)
		if err != nil {
			t.Fatal(err)
		}
		epochs[g] = *d.Epoch
	}
	start := time.Now()
	reassign(ctx, t, c, plan, "--throttle", strconv.Itoa(throttleRate))
	t.Logf("throttled reassignment done in %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(5 * time.Second) // five heartbeats of the consumer group
	evs := s.Watcher.All(t)
	var at []string
	for _, e := range evs.Group("wi-throttle-app")[before["wi-throttle-app"]:] {
		at = append(at, e.At.Sub(start).Round(100*time.Millisecond).String())
	}
	t.Logf("wi-throttle-app: kraftwatch's events at %v after --execute", at)
	after := evs.Counts()
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		r := predicted[g]
		d, err := getGroup(kw, typeOf(g), g)
		if err != nil {
			t.Fatal(err)
		}
		bumps, announced := int(*d.Epoch-epochs[g]), after[g]-before[g]
		t.Logf("%s: what-if %d-%d, coordinator epoch %d -> %d (%d bumps), kraftwatch (murmur3) announced %d", g, r[0], r[1], epochs[g], *d.Epoch, bumps, announced)
		if bumps < r[0] || bumps > r[1] || announced < r[0] || announced > r[1] {
			t.Errorf("%s: the coordinator bumped the epoch %d times, kraftwatch announced %d rebalances; the what-if predicted %d-%d", g, bumps, announced, r[0], r[1])
		}
	}
	// The start, then at least the 2 and 4 MB partitions' completions apart.
	if n := after["wi-throttle-app"] - before["wi-throttle-app"]; n < 3 {
		t.Errorf("wi-throttle-app: %d rebalance-needed events: the throttled completions did not land apart", n)
	}
}

// throttleRate is the --throttle of the throttled reassignment, bytes a second.
const throttleRate = 1 << 20

// throttleTopic creates wi-throttle, three partitions on broker 1, and writes 0, 2
// and 4 MB to them: at throttleRate, the copies to another broker complete seconds
// apart.
func throttleTopic(ctx context.Context, t *testing.T, a *e2etest.Admin, c *kafkatest.Cluster) {
	t.Helper()
	var assign []kafka.ReplicaAssignment
	for p := range 3 {
		assign = append(assign, kafka.ReplicaAssignment{Partition: p, Replicas: []int{1}})
	}
	if err := a.CreateTopics(ctx, kafka.TopicConfig{Topic: "wi-throttle", NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignments: assign}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	value := make([]byte, 64<<10)
	rand.Read(value) // incompressible
	var recs []*kgo.Record
	for p, mb := range []int{0, 2, 4} {
		for range mb * 16 {
			recs = append(recs, &kgo.Record{Topic: "wi-throttle", Partition: int32(p), Value: value})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// whatifOneShot runs `kraftwatch whatif` in one shot against c (the controllers'
// metadata log, __consumer_offsets read anew) for plan, and fails t unless it prints
// what kw's POST /v1/whatif answers and exits 3 above --max-rebalances.
func whatifOneShot(ctx context.Context, t *testing.T, c *kafkatest.Cluster, kw *e2etest.Kraftwatch, plan string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(f, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, e2etest.Binary(t), "whatif", "--json", "--max-rebalances", "1", "--reassignment", f,
		"--bootstrap", c.Bootstrap(), "--bootstrap-controller", c.ControllerBootstrap())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("kraftwatch whatif (one shot): %v, want exit 3 (a group rebalances twice)\n%s", err, stderr.Bytes())
	}
	body, _ := json.Marshal(api.WhatIfRequest{Reassignment: json.RawMessage(plan)})
	if want := rawWhatIf(t, kw, body); !bytes.Equal(out, want) {
		t.Fatalf("kraftwatch whatif (one shot) answers\n%s\nPOST /v1/whatif answers\n%s", out, want)
	}
	t.Logf("kraftwatch whatif (one shot) answers as POST /v1/whatif does, in %v", time.Since(start).Round(time.Millisecond))
}

// rawWhatIf posts body to kw's POST /v1/whatif and returns the answer.
func rawWhatIf(t *testing.T, kw *e2etest.Kraftwatch, body []byte) []byte {
	t.Helper()
	resp, err := http.Post(kw.URL("/v1/whatif"), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/whatif: %s, %v: %s", resp.Status, err, out)
	}
	return out
}

// postWhatIf asks kw's POST /v1/whatif.
func postWhatIf(t *testing.T, kw *e2etest.Kraftwatch, req api.WhatIfRequest) api.WhatIfResponse {
	t.Helper()
	body, _ := json.Marshal(req)
	var res api.WhatIfResponse
	if err := json.Unmarshal(rawWhatIf(t, kw, body), &res); err != nil || res.Result == nil || (req.Suggest && res.Suggestion == nil) {
		t.Fatalf("POST /v1/whatif: %v", err)
	}
	return res
}

// ranges gives each group's min-max rebalances.
func ranges(r *whatif.Result) map[string][2]int {
	out := map[string][2]int{}
	for _, g := range r.Groups {
		out[g.ID] = [2]int{g.Min, g.Max}
	}
	return out
}
