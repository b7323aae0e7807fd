//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/observer"
)

// kwSide is kraftwatch as the test builds it: an observer of node 1's metadata log
// dir, a groups.Reader of __consumer_offsets into a groups.State, and a
// groups.Tracker with the kafka scheme. One mutex stands for the one goroutine that
// owns State and Tracker in the program.
type kwSide struct {
	mu      sync.Mutex
	state   *groups.State
	tracker *groups.Tracker
	last    *image.Image // newest image of the observer
	synced  bool         // Tracker.Sync done: updates go to the Tracker
	ds      []kwDecision
	updates []kwUpdate
	coord   map[events.GroupKey][]coordState // the coordinator's epoch and hash, as written
	errs    []string
}

// kwDecision is a decision with where it came from.
type kwDecision struct {
	groups.Decision
	Offset int64 // metadata offset of the update, -1 for a group record
	At     time.Time
}

// kwUpdate is one metadata update the Tracker was given.
type kwUpdate struct {
	Offset  int64
	Changes *image.Changes
	At      time.Time
}

// coordState is a group's epoch (classic: generation) and stored MetadataHash.
type coordState struct {
	Epoch int32
	Hash  int64
	At    time.Time
}

func startKraftwatch(ctx context.Context, t *testing.T, c *kafkatest.Cluster) *kwSide {
	t.Helper()
	cache, err := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	if err != nil {
		t.Fatal(err)
	}
	k := &kwSide{state: groups.NewState(), coord: map[events.GroupKey][]coordState{}}
	k.tracker = groups.NewTracker(k.state, cache)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o, err := observer.New(observer.Config{Dir: c.Nodes[0].MetadataLogDir(), Logger: logger, Handler: k.onMetadata})
	if err != nil {
		t.Fatal(err)
	}
	r, err := groups.NewReader(groups.ReaderConfig{Brokers: strings.Split(c.Bootstrap(), ",")})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { o.Run(runCtx) })
	wg.Go(func() {
		if err := r.Run(runCtx, groups.EachRecord(k.onRecord)); err != nil && !errors.Is(err, context.Canceled) {
			k.mu.Lock()
			k.errs = append(k.errs, fmt.Sprintf("reader: %v", err))
			k.mu.Unlock()
		}
	})
	t.Cleanup(func() { stop(); wg.Wait() })
	for what, ch := range map[string]<-chan struct{}{"observer ready": o.Ready(), "__consumer_offsets caught up": r.CaughtUp()} {
		select {
		case <-ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("kraftwatch: %s timed out (observer error: %v)", what, o.LastError())
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	ds := k.tracker.Sync(k.last)
	k.synced = true
	t.Logf("kraftwatch synced at metadata offset %d: %d groups, %d with a hash", k.last.Provenance().Offset, k.state.Len(), len(ds))
	return k
}

func (k *kwSide) onMetadata(u observer.Update) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.synced && u.Changes != nil {
		now := time.Now()
		for _, d := range k.tracker.Metadata(u.Image, u.Changes) {
			k.ds = append(k.ds, kwDecision{Decision: d, Offset: u.Provenance.Offset, At: now})
		}
		k.updates = append(k.updates, kwUpdate{Offset: u.Provenance.Offset, Changes: u.Changes, At: now})
	}
	k.last = u.Image
}

func (k *kwSide) onRecord(m groups.Message) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	ch, err := k.state.Replay(m.Key, m.Value)
	if err != nil {
		k.errs = append(k.errs, fmt.Sprintf("__consumer_offsets %d/%d: %v", m.Partition, m.Offset, err))
		return nil
	}
	if ch.Metadata {
		if g, ok := k.state.Group(ch.Group); ok {
			k.coord[ch.Group] = append(k.coord[ch.Group], coordState{Epoch: g.Epoch, Hash: g.MetadataHash, At: time.Now()})
		}
	}
	if k.synced {
		if d, ok := k.tracker.Group(ch); ok {
			k.ds = append(k.ds, kwDecision{Decision: d, Offset: -1, At: time.Now()})
		}
	}
	return nil
}

// view is what the test compares for one group at one moment.
type view struct {
	coord   coordState // the coordinator's last written epoch and hash
	bumps   int        // coordinator epoch bumps so far
	kwHash  int64      // kraftwatch's hash
	kwOK    bool
	members int
}

func (k *kwSide) view(key events.GroupKey) view {
	k.mu.Lock()
	defer k.mu.Unlock()
	var v view
	if hs := k.coord[key]; len(hs) > 0 {
		v.coord, v.bumps = hs[len(hs)-1], len(hs)
	}
	v.kwHash, v.kwOK = k.tracker.Hash(key)
	if g, ok := k.state.Group(key); ok {
		v.members = g.NumMembers()
	}
	return v
}

// since returns the decisions recorded from index i on.
func (k *kwSide) since(i int) []kwDecision {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.ds[i:])
}

func (k *kwSide) numDecisions() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.ds)
}

func (k *kwSide) image() *image.Image {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.last
}

// decisionGroup is one group of the test and its member.
type decisionGroup struct {
	key    events.GroupKey
	kind   string
	topics []string
	regex  string
}

// decisionCase is one step of the KIP-1101 test plan.
type decisionCase struct {
	name   string
	act    func(ctx context.Context) error
	ready  func(im *image.Image) bool // the change is in kraftwatch's image (negatives)
	expect []events.GroupKey          // decided by kraftwatch and bumped by the coordinator
	kwOnly []events.GroupKey          // decided by kraftwatch, not bumped (docs/kafka-hash.md)
	early  bool                       // kraftwatch is expected to decide before the coordinator can
}

// caseResult is the outcome of one case for one group, for the closing table.
type caseResult struct {
	kwDecided   bool
	reasons     string
	bumped      bool // the coordinator's epoch moved
	bumps       int  // how many times
	hashChanged bool // the coordinator's stored hash moved
	equal       string
	ok          bool
	note        string
}

// TestDecisions runs the KIP-1101 test plan against a live three-broker cluster with
// running members (KIP-848 consumer, share and classic groups, and a Kafka Streams
// application's KIP-1071 streams group: streams_test.go) and compares, case by case,
// kraftwatch's decisions with the group epoch bumps and MetadataHash of Kafka's own
// coordinator, read from __consumer_offsets.
func TestDecisions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	// Node 1 (controller+broker) hosts the coordinator of every group of the test and
	// is never restarted; node 2 is restarted with another rack, node 3 in its rack.
	opts := kafkatest.Options{Rack: "r1", Brokers: []string{"r2", "r3"}}
	if strings.HasPrefix(kafkatest.Version(), "4.1.") {
		// Share groups are a preview in 4.1: storage is formatted without them.
		opts.Features = map[string]int{"share.version": 1}
	}
	c := kafkatest.New(t, kafkatest.StreamsOptions(opts))
	admin := e2etest.NewAdmin(c)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// Topics: replicas placed by hand so that each restart touches only the topics
	// of its case. Node 2 holds only t-rack.
	tcs := []kafka.TopicConfig{
		assigned("t-add", []int{1, 3}, []int{3, 1}),
		assigned("t-rack", []int{1, 2}),
		assigned("t-neg", []int{1, 3}, []int{3, 1}),
		assigned("t-del", []int{1, 3}),
		assigned("t-keep", []int{3, 1}),
		assigned("t-rec", []int{1, 3}),
		assigned("kw-re.a", []int{1, 3}),
		assigned("t-other", []int{1, 3}),
	}
	// __consumer_offsets is created here, before any group, with its three partitions
	// on node 1, which is never restarted: the coordinator of every group stays put,
	// so no shard reload (which makes every group recompute its hash on its next
	// heartbeat) mixes with the cases.
	offsets := assigned("__consumer_offsets", []int{1}, []int{1}, []int{1})
	offsets.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}
	must("create topics", admin.CreateTopics(ctx, append(append(tcs, offsets), streamsInternalTopics()...)...))
	streams := startStreams(ctx, t, c)
	gs := []*decisionGroup{
		{key: events.GroupKey{Type: events.ConsumerGroup, ID: "kw-add"}, kind: kafkatest.KindConsumer, topics: []string{"t-add"}},
		{key: events.GroupKey{Type: events.ShareGroup, ID: "kw-share"}, kind: kafkatest.KindShare, topics: []string{"t-add", "t-neg"}},
		{key: events.GroupKey{Type: events.ConsumerGroup, ID: "kw-rack"}, kind: kafkatest.KindConsumer, topics: []string{"t-rack"}},
		{key: events.GroupKey{Type: events.ConsumerGroup, ID: "kw-neg"}, kind: kafkatest.KindConsumer, topics: []string{"t-neg"}},
		{key: events.GroupKey{Type: events.ConsumerGroup, ID: "kw-del"}, kind: kafkatest.KindConsumer, topics: []string{"t-del", "t-keep"}},
		{key: events.GroupKey{Type: events.ClassicGroup, ID: "kw-classic"}, kind: kafkatest.KindClassic, topics: []string{"t-del", "t-neg"}},
		{key: events.GroupKey{Type: events.ConsumerGroup, ID: "kw-rec"}, kind: kafkatest.KindConsumer, topics: []string{"t-rec"}},
		{key: events.GroupKey{Type: events.ConsumerGroup, ID: "kw-regex"}, kind: kafkatest.KindConsumer, regex: `kw-re\..*`},
	}
	var joins []e2etest.Join
	for _, g := range gs {
		joins = append(joins, e2etest.Join{Group: g.key.ID, Kind: g.kind, Topics: g.topics, Regex: g.regex})
	}
	e2etest.StartMembers(ctx, t, c, joins...)
	streams.waitRunning(ctx, t, c.Version)
	gs = append(gs, streams.group)
	t.Logf("members running after %v", time.Since(start).Round(time.Second))

	k := startKraftwatch(ctx, t, c)
	// Baseline: every group has its coordinator record; for consumer, share and streams
	// groups kraftwatch's hash equals the coordinator's stored MetadataHash.
	err := e2etest.Wait(ctx, 90*time.Second, func() error {
		for _, g := range gs {
			v := k.view(g.key)
			if v.bumps == 0 || v.members == 0 || !v.kwOK {
				return fmt.Errorf("baseline: %s has no coordinator record, member or kraftwatch hash yet", g.key)
			}
			if g.key.Type != events.ClassicGroup && v.kwHash != v.coord.Hash {
				return fmt.Errorf("baseline: %s: kraftwatch's hash %016x, the coordinator's %016x", g.key, uint64(v.kwHash), uint64(v.coord.Hash))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		v := k.view(g.key)
		t.Logf("baseline %-28s epoch %d, coordinator hash %016x, kraftwatch %016x", g.key, v.coord.Epoch, uint64(v.coord.Hash), uint64(v.kwHash))
	}

	key := func(id string) events.GroupKey {
		for _, g := range gs {
			if strings.HasPrefix(g.key.ID, id) {
				return g.key
			}
		}
		t.Fatalf("no group %s", id)
		return events.GroupKey{}
	}
	rackB := "r2b"
	// New partitions and topics avoid node 2, so that its restart with another rack
	// touches t-rack alone.
	cases := []decisionCase{
		{
			name: "negative: topic config change (t-neg retention.ms)",
			act: func(ctx context.Context) error {
				return c.AlterTopicConfig(ctx, "t-neg", "retention.ms=3600000")
			},
		},
		{
			name: "negative: change to topics no group reads (t-other +1 partition, kw-other created)",
			act: func(ctx context.Context) error {
				if err := addPartitions(ctx, c, "t-other", "1:3,3:1"); err != nil {
					return err
				}
				return admin.CreateTopics(ctx, assigned("kw-other", []int{1, 3}))
			},
			ready: func(im *image.Image) bool {
				tp, ok := im.TopicByName("t-other")
				_, ok2 := im.TopicByName("kw-other")
				return ok && ok2 && tp.NumPartitions() == 2
			},
		},
		{
			name: "negative: ISR change (broker 3 restarted in its rack: ISR shrink and expand, leaders move)",
			act: func(ctx context.Context) error {
				return c.Nodes[2].Restart(ctx, nil)
			},
			ready: func(im *image.Image) bool {
				return isrFull(im, "t-neg") && isrFull(im, "t-add") && isrFull(im, streamsChangelog) && isrFull(im, streamsRepartition)
			},
		},
		{
			name: "negative: leader election (preferred leader back on t-neg partition 1)",
			act: func(ctx context.Context) error {
				return electPreferred(ctx, c, "t-neg", 1)
			},
			ready: func(im *image.Image) bool { return leaderOf(im, "t-neg", 1) == 3 },
		},
		{
			name: "partitions added to a subscribed topic (t-add 2 -> 3)",
			act: func(ctx context.Context) error {
				return addPartitions(ctx, c, "t-add", "1:3,3:1,1:3")
			},
			expect: []events.GroupKey{key("kw-add"), key("kw-share"), streamsKey},
		},
		{
			name: "negative: streams internal topic config change (changelog and repartition topic retention.ms)",
			act: func(ctx context.Context) error {
				if err := c.AlterTopicConfig(ctx, streamsChangelog, "retention.ms=3600000"); err != nil {
					return err
				}
				return c.AlterTopicConfig(ctx, streamsRepartition, "retention.ms=3600000")
			},
		},
		{
			name: "new topic matching a group's regex (kw-re.b; also the Streams application's pattern, which Kafka Streams refuses with the streams protocol)",
			act: func(ctx context.Context) error {
				return admin.CreateTopics(ctx, assigned("kw-re.b", []int{3, 1}))
			},
			expect: []events.GroupKey{key("kw-regex")},
			early:  true,
		},
		{
			name: "classic group: a member joins with another topic (subscription changed: t-keep)",
			act: func(ctx context.Context) error {
				m, err := c.StartMember(ctx, "kw-classic", kafkatest.KindClassic, []string{"t-keep"}, "")
				if err != nil {
					return err
				}
				t.Cleanup(m.Close)
				_, err = m.WaitFor(ctx, "assigned ")
				return err
			},
			expect: []events.GroupKey{key("kw-classic")},
		},
		{
			name: "subscribed topic deleted (t-del)",
			act: func(ctx context.Context) error {
				return c.DeleteTopic(ctx, "t-del")
			},
			expect: []events.GroupKey{key("kw-del")},
			kwOnly: []events.GroupKey{key("kw-classic")},
		},
		{
			name: "subscribed topic deleted and recreated (t-rec)",
			act: func(ctx context.Context) error {
				if err := c.DeleteTopic(ctx, "t-rec"); err != nil {
					return err
				}
				err := e2etest.Wait(ctx, 90*time.Second, func() error {
					if _, ok := k.image().TopicByName("t-rec"); ok {
						return errors.New("t-rec not gone")
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return admin.CreateTopics(ctx, assigned("t-rec", []int{1, 3}, []int{3, 1}))
			},
			expect: []events.GroupKey{key("kw-rec"), streamsKey},
		},
		{
			name: "broker 2 restarted with broker.rack r2b (t-rack)",
			act: func(ctx context.Context) error {
				return c.Nodes[1].Restart(ctx, &rackB)
			},
			expect: []events.GroupKey{key("kw-rack"), streamsKey},
			early:  true,
		},
		{
			name: "negative: broker 2 stopped (controlled shutdown: fenced, t-rack ISR shrinks)",
			act: func(ctx context.Context) error {
				c.Nodes[1].Stop()
				return nil
			},
			ready: func(im *image.Image) bool {
				b, ok := im.Broker(2)
				return ok && b.Fenced && !isrFull(im, "t-rack")
			},
		},
		{
			name: "broker 2 unregistered (its rack r2b leaves t-rack)",
			act: func(ctx context.Context) error {
				_, err := c.Tool(ctx, "org.apache.kafka.tools.ClusterTool", "unregister", "--bootstrap-server", c.Nodes[0].BrokerAddr, "--id", "2")
				return err
			},
			kwOnly: []events.GroupKey{key("kw-rack"), streamsKey},
			early:  true,
		},
	}

	results := make([]map[events.GroupKey]caseResult, len(cases))
	for i, cs := range cases {
		results[i] = runDecisionCase(ctx, t, c, k, gs, cs)
	}

	// The closing table: kraftwatch and the coordinator side by side.
	var b strings.Builder
	fmt.Fprintf(&b, "Kafka %s: kraftwatch vs coordinator (%v)\n", c.Version, time.Since(start).Round(time.Second))
	for i, cs := range cases {
		fmt.Fprintf(&b, "%s\n", cs.name)
		for _, g := range gs {
			r := results[i][g.key]
			kw := "no decision"
			if r.kwDecided {
				kw = "decision: " + r.reasons
			}
			co := "epoch unchanged"
			if r.bumped {
				co = "epoch bumped"
				if r.bumps > 1 {
					co += fmt.Sprintf(" (%d records)", r.bumps)
				}
				if g.key.Type != events.ClassicGroup {
					co += fmt.Sprintf(", hash changed=%v", r.hashChanged)
				}
			}
			mark := "ok"
			if !r.ok {
				mark = "MISMATCH"
			}
			fmt.Fprintf(&b, "  %-4s %-26s kraftwatch: %-60s coordinator: %s%s%s\n", mark, g.key, kw, co, r.equal, r.note)
		}
	}
	t.Log("\n" + b.String())
	streams.checkEvents(ctx, t, k)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.errs) > 0 {
		t.Errorf("kraftwatch errors: %q", k.errs)
	}
}

// runDecisionCase performs one case and compares, for every group, kraftwatch's
// decisions with the coordinator's epoch bumps.
func runDecisionCase(ctx context.Context, t *testing.T, c *kafkatest.Cluster, k *kwSide, gs []*decisionGroup, cs decisionCase) map[events.GroupKey]caseResult {
	t.Helper()
	before := map[events.GroupKey]view{}
	for _, g := range gs {
		before[g.key] = k.view(g.key)
	}
	d0 := k.numDecisions()
	t0 := time.Now()
	if err := cs.act(ctx); err != nil {
		t.Fatalf("%s: %v", cs.name, err)
	}
	expected, kwOnly := map[events.GroupKey]bool{}, map[events.GroupKey]bool{}
	for _, key := range cs.expect {
		expected[key] = true
	}
	for _, key := range cs.kwOnly {
		kwOnly[key] = true
	}
	// Positives: wait until each expected group is decided, bumped, and (consumer and
	// share groups) has the coordinator's hash equal to kraftwatch's.
	// Past the minute, the comparison below tells what is missing.
	_ = e2etest.Wait(ctx, 60*time.Second, func() error {
		ds := k.since(d0)
		for _, key := range append(cs.expect, cs.kwOnly...) {
			v := k.view(key)
			decided := slices.ContainsFunc(ds, func(d kwDecision) bool { return d.Group == key })
			if !decided || expected[key] && (v.coord.Epoch == before[key].coord.Epoch ||
				key.Type != events.ClassicGroup && v.coord.Hash != v.kwHash) {
				return fmt.Errorf("%s not decided and bumped yet", key)
			}
		}
		return nil
	})
	if cs.ready != nil {
		err := e2etest.Wait(ctx, 90*time.Second, func() error {
			if !cs.ready(k.image()) {
				return fmt.Errorf("%s: change not visible to kraftwatch", cs.name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Let the coordinator act on it: members heartbeat every second.
	time.Sleep(3 * time.Second)

	ds := k.since(d0)
	out := map[events.GroupKey]caseResult{}
	for _, g := range gs {
		v0, v := before[g.key], k.view(g.key)
		var r caseResult
		var mine []kwDecision
		for _, d := range ds {
			if d.Group == g.key {
				mine = append(mine, d)
			}
		}
		r.kwDecided = len(mine) > 0
		var rs []string
		for _, d := range mine {
			var parts []string
			for _, x := range d.Reasons {
				parts = append(parts, x.Kind.String()+" "+x.Topic)
			}
			where := "group record"
			if d.Offset >= 0 {
				where = "metadata offset " + strconv.FormatInt(d.Offset, 10)
			}
			rs = append(rs, fmt.Sprintf("%s @%s", strings.Join(parts, "+"), where))
		}
		r.reasons = strings.Join(rs, "; ")
		r.bumped = v.coord.Epoch != v0.coord.Epoch
		r.bumps = v.bumps - v0.bumps
		r.hashChanged = v.coord.Hash != v0.coord.Hash
		want := expected[g.key]
		switch {
		case kwOnly[g.key]:
			r.ok = r.kwDecided && !r.bumped
		case g.key.Type == events.ShareGroup:
			// A share group's epoch also moves when new share partitions are
			// initialized, with the same hash; compare the hash-changing bumps.
			r.ok = r.kwDecided == want && r.hashChanged == want && (!want || r.bumped)
		default:
			r.ok = r.kwDecided == want && r.bumped == want
		}
		if kwOnly[g.key] && len(mine) > 0 {
			if g.key.Type == events.ClassicGroup {
				r.note = " (its Java client first retries committing the deleted partition's offsets: see the README)"
			} else if cs.early {
				r.note = " (" + strings.TrimPrefix(earlyEvidence(k, mine[0], g), "; ") + ")"
			}
		}
		switch {
		case g.key.Type == events.ClassicGroup:
		case kwOnly[g.key]:
			// kraftwatch is ahead: the coordinator still holds the hash kraftwatch
			// had before its decision.
			r.equal = fmt.Sprintf(", hash %016x = kraftwatch's previous; kraftwatch's is now %016x", uint64(v.coord.Hash), uint64(v.kwHash))
			if len(mine) == 0 || v.coord.Hash != mine[0].PreviousHash || v.coord.Hash == v.kwHash {
				r.ok = false
			}
		case v.kwHash == v.coord.Hash:
			r.equal = fmt.Sprintf(", hash %016x = kraftwatch's", uint64(v.kwHash))
		default:
			r.equal = fmt.Sprintf(", hash %016x != kraftwatch's %016x", uint64(v.coord.Hash), uint64(v.kwHash))
			if want || r.kwDecided || r.hashChanged {
				r.ok = false
			}
		}
		if want && r.bumped && len(mine) > 0 {
			bump := firstBumpAfter(k, g.key, t0)
			r.note = fmt.Sprintf(" (kraftwatch decided %v after the action, the coordinator's bump was read %v after)",
				mine[0].At.Sub(t0).Round(10*time.Millisecond), bump.Sub(t0).Round(10*time.Millisecond))
			if cs.early {
				r.note += earlyEvidence(k, mine[0], g)
			}
		}
		if !r.ok {
			t.Errorf("%s: %s: kraftwatch decided=%v (%s), coordinator epoch %d -> %d hash %016x -> %016x, kraftwatch hash %016x; want decided=%v bumped=%v",
				cs.name, g.key, r.kwDecided, r.reasons, v0.coord.Epoch, v.coord.Epoch, uint64(v0.coord.Hash), uint64(v.coord.Hash), uint64(v.kwHash),
				want || kwOnly[g.key], want)
		}
		out[g.key] = r
	}
	t.Logf("case %q done in %v", cs.name, time.Since(t0).Round(100*time.Millisecond))
	return out
}

// firstBumpAfter returns when the first epoch bump of group key after t0 was read.
func firstBumpAfter(k *kwSide, key events.GroupKey, t0 time.Time) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.coord[key] {
		if s.At.After(t0) {
			return s.At
		}
	}
	return time.Time{}
}

// earlyEvidence tells, for a decision kraftwatch makes before the coordinator can,
// why: the update it decided on did not touch the group's topics (a broker
// registration), and the first later update that did (which the coordinator needs
// to look again, docs/kafka-hash.md#when-the-coordinator-recomputes) came at a later
// offset; or, for a regex, that the coordinator's resolution came after.
func earlyEvidence(k *kwSide, d kwDecision, g *decisionGroup) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	reads := func(ch *image.Changes) bool {
		for _, tc := range ch.Changed {
			if slices.Contains(g.topics, tc.Name) {
				return true
			}
		}
		return false
	}
	if g.regex != "" {
		return fmt.Sprintf("; kraftwatch matched the new topic at metadata offset %d, the coordinator resolves regexes on a later heartbeat", d.Offset)
	}
	for _, u := range k.updates {
		if u.Offset == d.Offset && reads(u.Changes) {
			return fmt.Sprintf("; the update at offset %d also changed a partition of %v", d.Offset, g.topics)
		}
	}
	for _, u := range k.updates {
		if u.Offset > d.Offset && reads(u.Changes) {
			return fmt.Sprintf("; kraftwatch decided on the broker change at offset %d, the first later partition change of %v (the coordinator's earliest trigger) is at offset %d, %v later",
				d.Offset, g.topics, u.Offset, u.At.Sub(d.At).Round(10*time.Millisecond))
		}
	}
	return fmt.Sprintf("; kraftwatch decided at offset %d; no partition change of %v followed, so the coordinator had no trigger to look again", d.Offset, g.topics)
}

// assigned is a topic with one partition per replica list.
func assigned(name string, replicas ...[]int) kafka.TopicConfig {
	tc := kafka.TopicConfig{Topic: name, NumPartitions: -1, ReplicationFactor: -1}
	for p, reps := range replicas {
		tc.ReplicaAssignments = append(tc.ReplicaAssignments, kafka.ReplicaAssignment{Partition: p, Replicas: reps})
	}
	return tc
}

// addPartitions grows a topic with kafka-topics --alter; assignment lists every
// partition's replicas ("1:3,3:1,1:3"), so the new ones land where the test wants.
func addPartitions(ctx context.Context, c *kafkatest.Cluster, topic, assignment string) error {
	_, err := c.Tool(ctx, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", c.Bootstrap(), "--alter",
		"--topic", topic, "--partitions", strconv.Itoa(strings.Count(assignment, ",")+1), "--replica-assignment", assignment)
	return err
}

func electPreferred(ctx context.Context, c *kafkatest.Cluster, topic string, partition int) error {
	_, err := c.Tool(ctx, "org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server", c.Bootstrap(),
		"--election-type", "PREFERRED", "--topic", topic, "--partition", strconv.Itoa(partition))
	return err
}

func isrFull(im *image.Image, topic string) bool {
	tp, ok := im.TopicByName(topic)
	if !ok {
		return false
	}
	for p := range tp.Partitions() {
		if len(p.ISR()) != len(p.Replicas()) {
			return false
		}
	}
	return true
}

func leaderOf(im *image.Image, topic string, partition int32) int32 {
	tp, ok := im.TopicByName(topic)
	if !ok {
		return -1
	}
	p, ok := tp.Partition(partition)
	if !ok {
		return -1
	}
	return p.Leader()
}
