//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// metaRecord is one record of `kraftwatch dump --records --json`.
type metaRecord struct {
	Type      string `json:"type"`
	Offset    int64  `json:"offset"`
	Timestamp int64  `json:"timestamp"`
	File      string `json:"file"`
	Data      struct {
		Name        string  `json:"name"`
		TopicID     string  `json:"topicId"`
		PartitionID int32   `json:"partitionId"`
		BrokerID    int32   `json:"brokerId"`
		Rack        *string `json:"rack"`
	} `json:"data"`
}

// dumpRecords reads node 1's metadata log with `kraftwatch dump --records --json`.
func dumpRecords(t *testing.T, c *kafkatest.Cluster) []metaRecord {
	t.Helper()
	out, err := exec.Command(e2etest.Binary(t), "dump", "--records", "--json", c.Nodes[0].MetadataLogDir()).Output()
	if err != nil {
		t.Fatalf("kraftwatch dump: %v", err)
	}
	var recs []metaRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r metaRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type != "" {
			recs = append(recs, r)
		}
	}
	return recs
}

// groupEvents reads the rebalance-needed events of consumer group g stored in stream
// StreamName, oldest first, each checked by e2etest.Check.
func groupEvents(ctx context.Context, js jetstream.JetStream, clusterID, g string) (e2etest.Events, error) {
	s, err := js.Stream(ctx, e2etest.StreamName)
	if err != nil {
		return nil, err
	}
	subject := events.DefaultPrefix + "." + events.EscapeToken(clusterID) + ".group.consumer." + events.EscapeToken(g)
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return nil, err
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return nil, err
	}
	var out e2etest.Events
	for n := info.State.Subjects[subject]; uint64(len(out)) < n; {
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			return nil, err
		}
		env, err := e2etest.Check(clusterID, m.Subject(), m.Headers(), m.Data())
		if err != nil {
			return nil, err
		}
		out = append(out, e2etest.Event{Subject: m.Subject(), MsgID: m.Headers().Get(jetstream.MsgIDHeader), Env: env})
	}
	return out, nil
}

// TestDowntimeReasons stops kraftwatch, makes each kind of change to the topics a
// group reads (delete and recreate, add partitions, delete, move their broker to
// another rack, create a topic it names) and starts it again: the one event announced
// at start-up gives each change its own reason, with the offset and the batch time of
// the metadata record that made it (read back with kraftwatch dump), no
// subscription_changed, the latest change's time and the last announced hash as
// previous_hash.
func TestDowntimeReasons(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	// Node 1 hosts __consumer_offsets and every topic but dt-rack; node 2 holds dt-rack
	// alone and is restarted with another rack.
	c := kafkatest.New(t, kafkatest.Options{Rack: "r1", Brokers: []string{"r2"}})
	t.Logf("cluster ready after %v", time.Since(start).Round(time.Second))
	admin := e2etest.NewAdmin(c)
	offsets := assigned("__consumer_offsets", []int{1}, []int{1}, []int{1})
	offsets.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}
	if err := admin.CreateTopics(ctx, offsets, assigned("dt-rec", []int{1}), assigned("dt-grow", []int{1}),
		assigned("dt-del", []int{1}), assigned("dt-rack", []int{2})); err != nil {
		t.Fatal(err)
	}
	const group = "dt-app"
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: group, Kind: kafkatest.KindConsumer,
		Topics: []string{"dt-rec", "dt-grow", "dt-del", "dt-rack", "dt-new"}})
	t.Logf("member running after %v", time.Since(start).Round(time.Second))
	nats := e2etest.StartNATS(t)
	js := e2etest.JetStream(t, nats.URL())
	kw := e2etest.StartKraftwatch(t, "downtime", e2etest.Env(c, nats.URL(), "dt-.*"))
	kw.WaitReady(ctx, 2*time.Minute)
	var before e2etest.Events
	if err := e2etest.Wait(ctx, time.Minute, func() error {
		var err error
		if before, err = groupEvents(ctx, js, c.ClusterID, group); err != nil {
			return err
		}
		if len(before) == 0 || len(before[len(before)-1].Env.Data.Topics) != 4 {
			return fmt.Errorf("%s: no event covering its 4 topics yet: %v", group, before)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	last := before[len(before)-1].Env.Data
	t.Logf("cluster, member and kraftwatch ready after %v; last event %v", time.Since(start).Round(time.Second), before[len(before)-1])
	if code, _ := kw.Stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("kraftwatch exited %d", code)
	}

	// While kraftwatch is down.
	down := time.Now()
	admin.DeleteTopic(ctx, t, "dt-rec")
	if err := e2etest.Wait(ctx, 30*time.Second, func() error { return admin.CreateTopics(ctx, assigned("dt-rec", []int{1})) }); err != nil {
		t.Fatalf("recreate dt-rec: %v", err)
	}
	if err := addPartitions(ctx, c, "dt-grow", "1,1"); err != nil {
		t.Fatal(err)
	}
	admin.DeleteTopic(ctx, t, "dt-del")
	rack := "r2b"
	if err := c.Nodes[1].Restart(ctx, &rack); err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateTopics(ctx, assigned("dt-new", []int{1})); err != nil {
		t.Fatal(err)
	}
	t.Logf("changes made in %v", time.Since(down).Round(time.Second))

	// The records that made each change, from the metadata log.
	recs := dumpRecords(t, c)
	want := map[string]metaRecord{} // reason kind and topic -> record
	ids := map[string][]string{}    // topic name -> ids in creation order
	for _, r := range recs {
		switch r.Type {
		case "TOPIC_RECORD":
			ids[r.Data.Name] = append(ids[r.Data.Name], r.Data.TopicID)
			if r.Data.Name == "dt-new" {
				want["created dt-new"] = r
			}
			if r.Data.Name == "dt-rec" {
				want["recreated dt-rec"] = r // the last one
			}
		case "REMOVE_TOPIC_RECORD":
			if len(ids["dt-del"]) > 0 && r.Data.TopicID == ids["dt-del"][0] {
				want["deleted dt-del"] = r
			}
		case "PARTITION_RECORD":
			if len(ids["dt-grow"]) > 0 && r.Data.TopicID == ids["dt-grow"][0] && r.Data.PartitionID == 1 {
				want["partitions_added dt-grow"] = r
			}
		case "REGISTER_BROKER_RECORD":
			if _, ok := want["racks_changed dt-rack"]; !ok && r.Data.BrokerID == 2 && r.Data.Rack != nil && *r.Data.Rack == rack {
				want["racks_changed dt-rack"] = r
			}
		}
	}
	if len(want) != 5 {
		t.Fatalf("found the records of %d changes in the metadata log, want 5: %v", len(want), want)
	}
	for k, r := range want {
		if r.File != "" && !bytes.HasSuffix([]byte(r.File), []byte(".log")) {
			t.Fatalf("%s is in %s, a snapshot: its offset is not kept", k, r.File)
		}
	}

	restart := time.Now()
	kw.Start()
	kw.WaitReady(ctx, 2*time.Minute)
	var after e2etest.Events
	if err := e2etest.Wait(ctx, time.Minute, func() error {
		var err error
		if after, err = groupEvents(ctx, js, c.ClusterID, group); err != nil {
			return err
		}
		if len(after) <= len(before) {
			return fmt.Errorf("%s: no event after the restart", group)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(e2etest.Quiet) // for an unexpected second event
	after, err := groupEvents(ctx, js, c.ClusterID, group)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("event %v after the restart, %v", after[len(after)-1], time.Since(restart).Round(time.Second))
	if len(after) != len(before)+1 {
		t.Fatalf("%d events after the restart, want 1: %v", len(after)-len(before), after[len(before):])
	}
	ev := after[len(after)-1].Env
	d := ev.Data
	if !d.PreviousHash.Valid || d.PreviousHash.Hash != last.NewHash {
		t.Errorf("previous_hash %+v, want the last announced %d", d.PreviousHash, last.NewHash)
	}
	var latest time.Time
	got := map[string]events.Reason{}
	for _, r := range d.Reasons {
		got[r.Kind.String()+" "+r.Topic] = r
	}
	for k, w := range want {
		r, ok := got[k]
		wt := time.UnixMilli(w.Timestamp).UTC()
		if wt.After(latest) {
			latest = wt
		}
		switch {
		case !ok:
			t.Errorf("no reason %s in %+v", k, d.Reasons)
		case r.MetadataOffset != w.Offset || !r.Time.Equal(wt):
			t.Errorf("%s: offset %d time %v, want the %s's %d %v", k, r.MetadataOffset, r.Time, w.Type, w.Offset, wt)
		}
	}
	if len(d.Reasons) != len(want) {
		t.Errorf("reasons %+v, want exactly %d", d.Reasons, len(want))
	}
	if r := got["recreated dt-rec"]; len(ids["dt-rec"]) != 2 || r.OldTopicID != ids["dt-rec"][0] || r.TopicID != ids["dt-rec"][1] {
		t.Errorf("recreated dt-rec: ids %s -> %s, want %v", r.OldTopicID, r.TopicID, ids["dt-rec"])
	}
	if r := got["partitions_added dt-grow"]; r.OldPartitions != 1 || r.NewPartitions != 2 {
		t.Errorf("partitions_added dt-grow: %d -> %d, want 1 -> 2", r.OldPartitions, r.NewPartitions)
	}
	if !ev.Time.Equal(latest) {
		t.Errorf("event time %v, want the latest change's %v", ev.Time, latest)
	}
	if len(d.Topics) != 4 || d.Topics[0].Name != "dt-grow" || d.TopicsTruncated {
		t.Errorf("topics %+v, want dt-grow, dt-new, dt-rack, dt-rec", d.Topics)
	}
	t.Logf("whole test %v", time.Since(start).Round(time.Second))
}
