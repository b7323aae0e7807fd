//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestRebalanced runs kraftwatch with KRAFTWATCH_REBALANCED_EVENTS=true beside the shared
// Kafka while Kafka's own Java clients make the coordinator bump group epochs for every
// cause kraftwatch attributes, and checks each bump's event: a member joining
// (member_joined with its client id and subscription), a second member killed (fenced
// after the group's 3 s session: member_left), a subscription change (before -> after),
// partitions added to the subscribed topic (metadata, linked to the rebalance-needed
// event that predicted it, lead time > 0), a regex group matching a new topic
// (regex_resolution_changed), a share group's partitions initialized, a classic group's
// first generation, 100 members started together in one JVM (100 member_joined) and a
// member leaving. At the end every rebalanced event of the stream is checked against its
// schema and id, each group's epochs chain without a gap, and a core subscriber
// received each stored event exactly once.
func TestRebalanced(t *testing.T) {
	s, ctx := sidecar(t)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	c := s.Cluster
	for _, tp := range []struct {
		name string
		n    int
	}{{"rb-orders", 2}, {"rb-events", 1}, {"rb-re-1", 1}, {"rb-share", 1}, {"rb-many", 4}} {
		s.Admin.CreateTopic(ctx, t, tp.name, tp.n)
	}
	setGroupConfig(ctx, t, c, "rb-a", "consumer.session.timeout.ms", "3000")
	core := watchRebalanced(t, s.NATS.URL())
	kw := s.StartKraftwatch(ctx, t, "rb-.*", "KRAFTWATCH_REBALANCED_EVENTS=true")
	url, cluster := s.NATS.URL(), c.ClusterID
	// wait returns the first stored event of group after the ones in seen that has a
	// cause of kind (and for which match, when set, holds).
	wait := func(group string, kind events.CauseKind, match func(events.RebalanceCause) bool) (events.Envelope[events.GroupRebalanced], events.RebalanceCause) {
		t.Helper()
		var ev events.Envelope[events.GroupRebalanced]
		var cause events.RebalanceCause
		err := e2etest.Wait(ctx, time.Minute, func() error {
			evs, err := readRebalanced(url, cluster)
			if err != nil {
				return err
			}
			for _, e := range evs {
				if e.Data.GroupID != group {
					continue
				}
				for _, c := range e.Data.Causes {
					if c.Kind == kind && (match == nil || match(c)) {
						ev, cause = e, c
						return nil
					}
				}
			}
			return fmt.Errorf("no rebalanced event of %s with a %s cause yet", group, kind)
		})
		if err != nil {
			t.Fatal(err)
		}
		return ev, cause
	}
	member := func(id string) func(events.RebalanceCause) bool {
		return func(c events.RebalanceCause) bool { return c.MemberID == id }
	}

	// A member joins.
	a := e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: "rb-a", Topics: []string{"rb-orders"}})[0]
	_, joinedA := wait("rb-a", events.CauseMemberJoined, nil)
	if joinedA.ClientID != "rb-a-member" || !slices.Equal(joinedA.SubscribedTopicNames, []string{"rb-orders"}) || joinedA.ClientHost == "" {
		t.Fatalf("member_joined: %+v", joinedA)
	}
	// A second member joins and is killed: the coordinator fences it after its session.
	b := e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: "rb-a", Topics: []string{"rb-orders"}})[0]
	_, joinedB := wait("rb-a", events.CauseMemberJoined, func(c events.RebalanceCause) bool { return c.MemberID != joinedA.MemberID })
	killed := time.Now()
	b.Kill()
	fenced, _ := wait("rb-a", events.CauseMemberLeft, member(joinedB.MemberID))
	t.Logf("killed member fenced: bump %d->%d written %v after the kill", *fenced.Data.PreviousEpoch, fenced.Data.NewEpoch,
		fenced.Time.Sub(killed).Round(100*time.Millisecond))

	// The member subscribes to one more topic.
	if err := a.Subscribe([]string{"rb-orders", "rb-events"}); err != nil {
		t.Fatal(err)
	}
	_, sub := wait("rb-a", events.CauseSubscriptionChanged, member(joinedA.MemberID))
	if !slices.Equal(sub.PreviousSubscribedTopicNames, []string{"rb-orders"}) || !slices.Equal(sub.SubscribedTopicNames, []string{"rb-events", "rb-orders"}) {
		t.Fatalf("subscription_changed: %+v", sub)
	}
	if _, err := a.WaitFor(ctx, "rb-events-0"); err != nil {
		t.Fatal(err)
	}

	// Partitions added: the bump links the rebalance-needed event that predicted it.
	s.Admin.AlterPartitions(ctx, t, "rb-orders", 3)
	grown, meta := wait("rb-a", events.CauseMetadata, func(c events.RebalanceCause) bool {
		return c.PredictedBy != nil && isPartitionsAdded(url, cluster, c.PredictedBy.EventID)
	})
	if meta.PredictedBy.LeadTimeMs <= 0 || meta.NewHash == nil || *meta.NewHash != grown.Data.MetadataHash {
		t.Fatalf("metadata cause: %+v (prediction %+v)", meta, meta.PredictedBy)
	}
	t.Logf("partitions added: predicted by %s, %d ms before the coordinator's bump", meta.PredictedBy.EventID, meta.PredictedBy.LeadTimeMs)
	if b, err := json.MarshalIndent(grown, "", "  "); err == nil {
		t.Logf("the partitions-added bump as stored:\n%s", b)
	}

	// A regex group, a share group and a classic group, all at once.
	e2etest.StartMembers(ctx, t, c, e2etest.Join{Group: "rb-re", Regex: `rb-re-.*`},
		e2etest.Join{Group: "rb-sh", Kind: kafkatest.KindShare, Topics: []string{"rb-share"}})
	joinClassic(ctx, t, c, "rb-classic", "rb-orders")
	s.Admin.CreateTopic(ctx, t, "rb-re-2", 1)
	_, re := wait("rb-re", events.CauseRegexResolutionChanged, func(c events.RebalanceCause) bool { return slices.Contains(c.TopicsAdded, "rb-re-2") })
	if re.Regex != `rb-re-.*` {
		t.Fatalf("regex_resolution_changed: %+v", re)
	}
	wait("rb-sh", events.CauseSharePartitionsInitialized, func(c events.RebalanceCause) bool { return slices.Equal(c.TopicsAdded, []string{"rb-share"}) })
	classic, cj := wait("rb-classic", events.CauseMemberJoined, nil)
	if classic.Data.NewEpoch != 1 || !slices.Equal(cj.SubscribedTopicNames, []string{"rb-orders"}) {
		t.Fatalf("classic generation: %+v, %+v", classic.Data, cj)
	}

	// 100 members started together, in one JVM.
	many, err := c.StartMembersInOneJVM(ctx, "rb-many", kafkatest.KindConsumer, []string{"rb-many"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(many.Close)
	started := time.Now()
	err = e2etest.Wait(ctx, 2*time.Minute, func() error {
		evs, err := readRebalanced(url, cluster)
		if err != nil {
			return err
		}
		joined := map[string]bool{}
		for _, e := range evs {
			for _, c := range e.Data.Causes {
				if e.Data.GroupID == "rb-many" && c.Kind == events.CauseMemberJoined {
					joined[c.MemberID] = true
				}
			}
		}
		if len(joined) != 100 {
			return fmt.Errorf("rb-many: %d members joined, want 100", len(joined))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("100 members joined rb-many in %v", time.Since(started).Round(100*time.Millisecond))
	checkFolded(ctx, t, c, url, cluster, "rb-many")

	// The first member leaves.
	a.Close()
	wait("rb-a", events.CauseMemberLeft, member(joinedA.MemberID))

	// Bumps may still be stored meanwhile (the share group's, the 100 members'): the
	// stream is read again until the core subscriber has exactly what it holds.
	var stored []events.Envelope[events.GroupRebalanced]
	err = e2etest.Wait(ctx, 30*time.Second, func() error {
		var err error
		if stored, err = readRebalanced(url, cluster); err != nil {
			return err
		}
		return core.exactly(stored)
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEpochChains(t, stored)
	var leads []string
	for _, e := range stored {
		if e.Data.GroupID == "rb-a" {
			t.Logf("rb-a timeline: %s", describeBump(e))
		}
		for _, c := range e.Data.Causes {
			if c.PredictedBy != nil {
				leads = append(leads, fmt.Sprintf("%s epoch %d: %d", e.Data.GroupID, e.Data.NewEpoch, c.PredictedBy.LeadTimeMs))
			}
		}
	}
	t.Logf("%d rebalanced events stored, each once; prediction lead times (ms): %s", len(stored), strings.Join(leads, ", "))
	// 102 joins (rb-a's two, rb-many's 100): as many bumps, as many assignments or fewer.
	bumps, assignments := kw.Metric(`kraftwatch_group_epoch_bumps_total{group_type="consumer"}`), kw.Metric(`kraftwatch_group_assignments_total{group_type="consumer"}`)
	if bumps < 102 || assignments > bumps || kw.Metric(`kraftwatch_group_rebalances_total{cause="member_joined",group_type="consumer"}`) > assignments {
		t.Fatalf("consumer groups: %v epoch bumps, %v assignments; want at least 102 bumps, no more assignments than bumps", bumps, assignments)
	}
	if n := kw.Metric(`kraftwatch_group_rebalance_lead_time_seconds_count`); n < 1 {
		t.Fatalf("lead time histogram count %v", n)
	}
}

// checkFolded checks group's rebalanced events against the coordinator's own records in
// __consumer_offsets and logs how many epoch bumps each assignment folded. On Kafka 4.3+
// (KIP-1263) each event must be at a target assignment record whose epoch is its
// new_epoch (or, for a last leave, at that bump), and its epoch_bumps the group epochs
// the coordinator wrote since the previous event's record, and several bumps share an
// assignment, the group's first too; before 4.3, one event per epoch record, the first
// at epoch 1.
func checkFolded(ctx context.Context, t *testing.T, c *kafkatest.Cluster, url, cluster, group string) {
	t.Helper()
	start := time.Now()
	evs, err := readRebalanced(url, cluster)
	if err != nil {
		t.Fatal(err)
	}
	evs = slices.DeleteFunc(evs, func(e events.Envelope[events.GroupRebalanced]) bool { return e.Data.GroupID != group })
	if len(evs) == 0 {
		t.Fatalf("%s: no rebalanced event", group)
	}
	// The coordinator's records of the group, up to the last event's, by offset.
	part := evs[0].Data.ConsumerOffsets.Partition
	recs := map[int64]groups.Record{}
	var offsets []int64
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: strings.Split(c.Bootstrap(), ","), Topic: "__consumer_offsets", Partition: int(part),
		MaxWait: 200 * time.Millisecond})
	defer r.Close()
	dec := groups.NewDecoder()
	for last := evs[len(evs)-1].Data.ConsumerOffsets.Offset; len(offsets) == 0 || offsets[len(offsets)-1] < last; {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading __consumer_offsets-%d: %v", part, err)
		}
		rec, err := dec.Decode(m.Key, m.Value)
		if err == nil && rec.GroupID == group {
			recs[m.Offset] = rec
		}
		offsets = append(offsets, m.Offset)
	}
	batching := kafkatest.Version() >= "4.3"
	var from int64 = -1
	var prevEpoch int32 = -1
	var bumps, written, folded int // bumps told, epochs the coordinator wrote, events checked
	var sizes []int                // bumps per assignment, in order
	for _, e := range evs {
		d := e.Data
		at := d.ConsumerOffsets.Offset
		var epochs []int32 // the new group epochs the coordinator wrote in (from, at]
		for _, off := range offsets {
			if rec, ok := recs[off]; ok && off > from && off <= at && !rec.Tombstone {
				if v, ok := rec.Value.(*groups.ConsumerGroupMetadataValue); ok && v.Epoch > prevEpoch {
					epochs, prevEpoch = append(epochs, v.Epoch), v.Epoch
				}
			}
		}
		from, prevEpoch, written = at, d.NewEpoch, written+len(epochs)
		n := max(len(d.EpochBumps), 1)
		bumps += n
		sizes = append(sizes, n)
		if !batching {
			if d.AssignmentEpoch != nil || !slices.Equal(epochs, []int32{d.NewEpoch}) {
				t.Fatalf("%s: event %s (epoch %d, assignment %v) before 4.3, coordinator wrote epochs %v", group, e.ID, d.NewEpoch, d.AssignmentEpoch, epochs)
			}
			folded++
			continue
		}
		rec := recs[at]
		a, isAssignment := rec.Value.(*groups.ConsumerGroupTargetAssignmentMetadataValue)
		switch {
		case d.AssignmentEpoch == nil || *d.AssignmentEpoch != d.NewEpoch:
			t.Fatalf("%s: event %s (epoch %d) has assignment epoch %v", group, e.ID, d.NewEpoch, d.AssignmentEpoch)
		case isAssignment && a.AssignmentEpoch != d.NewEpoch, !isAssignment && rec.Type != groups.ConsumerGroupMetadata:
			t.Fatalf("%s: event %s (assignment %d) is at %d/%d, a %s record (%+v)", group, e.ID, d.NewEpoch, part, at, rec.Type, rec.Value)
		case !slices.Equal(d.EpochBumps, epochs):
			t.Fatalf("%s: event %s (assignment %d) folds epochs %v; the coordinator wrote %v since the previous event", group, e.ID, d.NewEpoch, d.EpochBumps, epochs)
		default:
			folded++
		}
		for _, c := range d.Causes {
			if c.Kind == events.CauseMemberJoined && !slices.Contains(d.EpochBumps, c.Epoch) && d.AssignmentEpoch != nil {
				t.Fatalf("%s: event %s: cause epoch %d is none of its bumps %v", group, e.ID, c.Epoch, d.EpochBumps)
			}
		}
	}
	// Every epoch the coordinator wrote is told in exactly one event, and no event
	// tells none, so there are no more assignments than bumps.
	if bumps != written || len(evs) > bumps {
		t.Fatalf("%s: %d events tell %d epoch bumps; the coordinator wrote %d", group, len(evs), bumps, written)
	}
	// docs/events.md, per release: before 4.3 the group's first event is epoch 1 and
	// each bump is an event; from 4.3 epoch 1 is no rebalance and members joining
	// together share assignments.
	if first := evs[0].Data; first.PreviousEpoch != nil || (first.NewEpoch == 1) == batching {
		t.Fatalf("%s on Kafka %s: first event is epoch %v -> %d", group, kafkatest.Version(), first.PreviousEpoch, first.NewEpoch)
	}
	// The first too is an assignment, with its time and the partitions it gave.
	if first := evs[0].Data; batching && (first.AssignmentTime.IsZero() || first.PartitionsMoved == nil || *first.PartitionsMoved == 0) {
		t.Fatalf("%s on Kafka %s: first event has assignment time %v and %v partitions moved", group, kafkatest.Version(),
			first.AssignmentTime, first.PartitionsMoved)
	}
	if batching && len(evs) == bumps {
		t.Fatalf("%s on Kafka %s: %d bumps told in as many events, none folded", group, kafkatest.Version(), bumps)
	}
	t.Logf("%s on Kafka %s: %d epoch bumps folded into %d assignments (%d checked against the coordinator's records, in %v); bumps per assignment, in order: %v",
		group, kafkatest.Version(), bumps, len(evs), folded, time.Since(start).Round(10*time.Millisecond), sizes)
}

// setGroupConfig sets one group config (config resource type GROUP, 32) of group.
func setGroupConfig(ctx context.Context, t *testing.T, c *kafkatest.Cluster, group, key, value string) {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(c.Nodes[0].BrokerAddr), Timeout: 30 * time.Second}
	res, err := cl.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{
		Resources: []kafka.IncrementalAlterConfigsRequestResource{{ResourceType: kafka.ResourceType(32), ResourceName: group,
			Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: key, Value: value, ConfigOperation: kafka.ConfigOperationSet}}}},
	})
	if err == nil {
		for _, r := range res.Resources {
			err = errors.Join(err, r.Error)
		}
	}
	if err != nil {
		t.Fatalf("set %s=%s on group %s: %v", key, value, group, err)
	}
}

// isPartitionsAdded reports whether the rebalance-needed event id in the stream has a
// partitions_added reason.
func isPartitionsAdded(url, cluster, id string) bool {
	evs, err := e2etest.ReadStream(url, cluster)
	if err != nil {
		return false
	}
	for _, e := range evs {
		if e.MsgID == id {
			for _, r := range e.Env.Data.Reasons {
				if r.Kind == events.PartitionsAdded {
					return true
				}
			}
		}
	}
	return false
}

// checkRebalanced validates one message: schema, decoder, subject, Nats-Msg-Id.
func checkRebalanced(cluster, subject string, hdr nats.Header, data []byte) (events.Envelope[events.GroupRebalanced], error) {
	sch, err := e2etest.RebalancedSchema()
	if err != nil {
		return events.Envelope[events.GroupRebalanced]{}, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return events.Envelope[events.GroupRebalanced]{}, err
	}
	if err := sch.Validate(doc); err != nil {
		return events.Envelope[events.GroupRebalanced]{}, fmt.Errorf("%s: %w\n%s", subject, err, data)
	}
	env, err := events.DecodeGroupRebalanced(data)
	if err != nil {
		return env, err
	}
	d := env.Data
	if want := events.RebalancedSubject(events.DefaultPrefix, cluster, d.GroupType, d.GroupID); subject != want {
		return env, fmt.Errorf("event of %s on %s, want %s", d.Key(), subject, want)
	}
	if hdr.Get(jetstream.MsgIDHeader) != env.ID || env.ID != d.MsgID() {
		return env, fmt.Errorf("%s: Nats-Msg-Id %q, id %q", subject, hdr.Get(jetstream.MsgIDHeader), env.ID)
	}
	return env, nil
}

// readRebalanced reads every rebalanced event of kraftwatch's stream, in stream order,
// checking each (checkRebalanced) and that no id is stored twice.
func readRebalanced(url, cluster string) ([]events.Envelope[events.GroupRebalanced], error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	s, err := js.Stream(ctx, e2etest.StreamName)
	if err != nil {
		return nil, err
	}
	filter := events.RebalancedSubject(events.DefaultPrefix, cluster, events.ConsumerGroup, "x")
	filter = strings.TrimSuffix(filter, ".consumer.x") + ".>"
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, err
	}
	var total uint64
	for _, n := range info.State.Subjects {
		total += n
	}
	var out []events.Envelope[events.GroupRebalanced]
	if total == 0 {
		return out, nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for uint64(len(out)) < total {
		m, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			return nil, fmt.Errorf("read %d of %d rebalanced events: %w", len(out), total, err)
		}
		env, err := checkRebalanced(cluster, m.Subject(), m.Headers(), m.Data())
		if err != nil {
			return nil, err
		}
		if seen[env.ID] {
			return nil, fmt.Errorf("rebalanced event %s stored twice", env.ID)
		}
		var kinds []string
		for _, c := range env.Data.Causes {
			kinds = append(kinds, c.Kind.String())
		}
		e2etest.Capture("rebalanced", kinds, m.Data())
		seen[env.ID] = true
		out = append(out, env)
	}
	return out, nil
}

// checkEpochChains fails t unless each group's stored events have increasing epochs,
// each previous_epoch the epoch of the group's event before it.
func checkEpochChains(t *testing.T, evs []events.Envelope[events.GroupRebalanced]) {
	t.Helper()
	last := map[string]int32{}
	for _, e := range evs {
		d := e.Data
		k := d.Key().Type.String() + "/" + d.GroupID
		if prev, ok := last[k]; ok && (d.PreviousEpoch == nil || *d.PreviousEpoch != prev || d.NewEpoch <= prev) {
			t.Fatalf("%s: event %s is epoch %v -> %d after epoch %d was announced", k, e.ID, d.PreviousEpoch, d.NewEpoch, prev)
		}
		last[k] = d.NewEpoch
	}
}

func describeBump(e events.Envelope[events.GroupRebalanced]) string {
	d := e.Data
	prev := "?"
	if d.PreviousEpoch != nil {
		prev = fmt.Sprint(*d.PreviousEpoch)
	}
	var causes []string
	for _, c := range d.Causes {
		s := c.Kind.String()
		switch {
		case c.Kind == events.CauseSubscriptionChanged:
			s += fmt.Sprintf(" %s %v -> %v", c.MemberID, c.PreviousSubscribedTopicNames, c.SubscribedTopicNames)
		case c.MemberID != "":
			s += " " + c.MemberID
			if c.ClientID != "" {
				s += " (" + c.ClientID + ")"
			}
		case c.PredictedBy != nil:
			s += fmt.Sprintf(" predicted by %s %d ms before", c.PredictedBy.EventID, c.PredictedBy.LeadTimeMs)
		}
		causes = append(causes, s)
	}
	return fmt.Sprintf("%s epoch %s -> %d at __consumer_offsets %d/%d: %s", e.Time.Format("15:04:05.000"), prev, d.NewEpoch,
		d.ConsumerOffsets.Partition, d.ConsumerOffsets.Offset, strings.Join(causes, "; "))
}

// rebalancedWatcher is a core NATS subscriber to every rebalanced subject, counting
// deliveries per event id.
type rebalancedWatcher struct {
	mu   sync.Mutex
	got  map[string]int
	errs []error
}

func watchRebalanced(t *testing.T, url string) *rebalancedWatcher {
	t.Helper()
	w := &rebalancedWatcher{got: map[string]int{}}
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if _, err := nc.Subscribe(events.DefaultPrefix+".*."+events.RebalancedFamily+".>", func(m *nats.Msg) {
		env, err := events.DecodeGroupRebalanced(m.Data)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", m.Subject, err))
			return
		}
		w.got[env.ID]++
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// exactly reports nil once the subscriber received each stored event once and nothing
// else.
func (w *rebalancedWatcher) exactly(stored []events.Envelope[events.GroupRebalanced]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) > 0 {
		return w.errs[0]
	}
	want := map[string]bool{}
	for _, e := range stored {
		want[e.ID] = true
		if n := w.got[e.ID]; n != 1 {
			return fmt.Errorf("core subscriber received %s %d times, want once", e.ID, n)
		}
	}
	for id := range w.got {
		if !want[id] {
			return fmt.Errorf("core subscriber received %s, which the stream does not hold", id)
		}
	}
	return nil
}
