//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestDecisions' KIP-1071 streams group: the test bed's Kafka Streams application
// (kafkatest.StartStreamsApp, group.protocol=streams) on the cluster of the other
// groups, so that one cluster and one set of cases serve every group type.
const streamsID = "kw-streams"

var (
	streamsKey         = events.GroupKey{Type: events.StreamsGroup, ID: streamsID}
	streamsChangelog   = streamsID + "-counts-changelog"
	streamsRepartition = streamsID + "-rekey-repartition"
	// streamsSources are read by name: one topic of each positive case (partitions
	// added, deleted and recreated, broker back in another rack) and t-neg, which
	// every negative touches.
	streamsSources = []string{"t-add", "t-rec", "t-rack", "t-neg"}
	// streamsPattern matches kw-re.a and kw-re.b, as kw-regex's regex does; Kafka
	// Streams 4.1 to 4.4 refuse pattern sources with the streams protocol, so the
	// group does not read them.
	streamsPattern = `kw-re\..*`
)

// streamsSide is the streams group of TestDecisions: the application, and the
// kraftwatch binary (this group only, default scheme) whose events are checked at the
// end.
type streamsSide struct {
	app   *kafkatest.Member
	bin   *e2etest.Kraftwatch
	w     *e2etest.Watcher
	group *decisionGroup
}

// streamsInternalTopics are the application's internal topics, created before it
// starts so that their replicas avoid broker 2 (restarted with another rack, then
// unregistered, in their own cases) as the other topics do; the coordinator creates
// only the internal topics that are missing, and checks only their partition counts.
func streamsInternalTopics() []kafka.TopicConfig {
	changelog := assigned(streamsChangelog, []int{1, 3}, []int{3, 1})
	changelog.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}
	return []kafka.TopicConfig{assigned(streamsRepartition, []int{3, 1}, []int{1, 3}), changelog}
}

// startStreams starts the application, a nats-server, a watcher and the kraftwatch
// binary; the topics must exist. waitRunning waits for them.
func startStreams(ctx context.Context, t *testing.T, c *kafkatest.Cluster) *streamsSide {
	t.Helper()
	app, err := c.StartStreamsApp(ctx, kafkatest.StreamsApp{ID: streamsID, Topics: streamsSources, Pattern: streamsPattern})
	if err != nil {
		t.Fatalf("start the Streams application: %v", err)
	}
	t.Cleanup(app.Close)
	ns := e2etest.StartNATS(t)
	return &streamsSide{
		app: app,
		w:   e2etest.Watch(t, ns.URL(), c.ClusterID),
		bin: e2etest.StartKraftwatch(t, "kw-streams", e2etest.Env(c, ns.URL(), streamsID)),
		group: &decisionGroup{key: streamsKey,
			topics: append([]string{streamsChangelog, streamsRepartition}, streamsSources...)},
	}
}

func (s *streamsSide) waitRunning(ctx context.Context, t *testing.T, version string) {
	t.Helper()
	line, err := s.app.WaitFor(ctx, "pattern ")
	if err != nil {
		t.Fatal(err)
	}
	// A release whose Kafka Streams accepts a pattern source with the streams
	// protocol needs the regex case to expect the streams group.
	if !strings.HasPrefix(line, "pattern unsupported: ") {
		t.Fatalf("Kafka Streams %s: %q; TestDecisions expects pattern sources to be refused with group.protocol=streams", version, line)
	}
	t.Logf("Kafka Streams %s: %s", version, line)
	if _, err := s.app.WaitFor(ctx, "state RUNNING"); err != nil {
		t.Fatal(err)
	}
	s.bin.WaitReady(ctx, time.Minute)
	s.checkTasks(ctx, t)
}

// checkTasks waits until the group API shows the application's one member owning, as
// active tasks, the target assignment's tasks (records 22 and 21), and partitions
// nowhere: a streams member owns tasks.
func (s *streamsSide) checkTasks(ctx context.Context, t *testing.T) {
	t.Helper()
	var d api.GroupDetail
	start := time.Now()
	err := e2etest.Wait(ctx, time.Minute, func() error {
		var err error
		if d, err = getGroup(s.bin, "streams", streamsID); err != nil {
			return err
		}
		if len(d.Members) != 1 {
			return fmt.Errorf("%d members, want 1", len(d.Members))
		}
		m := d.Members[0]
		if m.AssignedTasks == nil || m.TargetTasks == nil || len(m.AssignedTasks.Active) == 0 ||
			fmt.Sprint(m.AssignedTasks.Active) != fmt.Sprint(m.TargetTasks.Active) {
			return fmt.Errorf("member %s: assigned %+v, target %+v; want the target's active tasks owned", m.MemberID, m.AssignedTasks, m.TargetTasks)
		}
		if m.Assigned != nil || m.Target != nil {
			return fmt.Errorf("member %s has partitions %v, target %v", m.MemberID, m.Assigned, m.Target)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("group API: %v", err)
	}
	t.Logf("group API: %s member %s owns active tasks %v (shown %v after the application was running)", streamsID,
		d.Members[0].MemberID, d.Members[0].AssignedTasks.Active, time.Since(start).Round(time.Millisecond))
}

// checkEvents checks that the kraftwatch binary announced, with group_type streams,
// each metadata change the test's Tracker decided on for the streams group (an event
// with its metadata offset; the binary hashes with its default scheme, so the hashes
// differ), and no event twice. It also fails on a stream thread that died in the
// application.
func (s *streamsSide) checkEvents(ctx context.Context, t *testing.T, k *kwSide) {
	t.Helper()
	var want []int64
	for _, d := range k.since(0) {
		if d.Group == streamsKey && d.Offset >= 0 {
			want = append(want, d.Offset)
		}
	}
	err := e2etest.Wait(ctx, time.Minute, func() error {
		evs := s.w.All(t).Group(streamsID)
		for _, off := range want {
			if !slices.ContainsFunc(evs, func(e e2etest.Event) bool { return e.Env.Data.MetadataOffset == off }) {
				return fmt.Errorf("no event at metadata offset %d; events:\n%s", off, evs)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("kraftwatch binary: %v", err)
	}
	evs := s.w.All(t).Group(streamsID)
	for _, e := range evs {
		if got := e.Env.Data.GroupType.String(); got != "streams" {
			t.Errorf("event %v: group_type %q, want streams", e, got)
		}
	}
	s.w.NoRepeats(t)
	t.Logf("kraftwatch binary published %d events for %s (the test's Tracker decided at metadata offsets %v):\n%s", len(evs), streamsID, want, evs)
	for _, line := range s.app.Lines() {
		if strings.HasPrefix(line, "error ") {
			t.Errorf("Streams application: %s", line)
		}
	}
}
