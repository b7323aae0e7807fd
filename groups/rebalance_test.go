package groups_test

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/internal/fixture"
)

// TestRebalancesFixtures replays every record captured from a real Kafka through a
// Rebalances and compares each epoch bump, with its causes, with the golden file
// beside the fixture (go test ./groups -run TestRebalancesFixtures -update rewrites
// it). The fixtures' scenario (internal/kafkatest/fixtures_test.go) has members of
// consumer, classic and share groups joining and leaving, a regex matching a new topic
// and subscribed topics deleted and recreated.
func TestRebalancesFixtures(t *testing.T) {
	for _, path := range fixtureFiles(t) {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			var b bytes.Buffer
			fmt.Fprintf(&b, "# %s: every group epoch bump, with its causes (partition/offset of the bump record).\n", filepath.ToSlash(path))
			s, r := groups.NewState(), groups.NewRebalances()
			kinds := map[events.CauseKind]int{}
			told := toldAt{}
			for _, rec := range readFixture(t, path) {
				ch, rb, err := r.Replay(s, rec.Key, rec.Value)
				if err != nil {
					t.Errorf("%s/%s: %v", rec.Partition, rec.Offset, err)
					continue
				}
				at := told.note(ch, rb, rec)
				if rb == nil {
					continue
				}
				if len(rb.Causes) == 0 {
					t.Errorf("%s/%s: bump without causes", rec.Partition, rec.Offset)
				}
				for _, c := range rb.Causes {
					kinds[c.Kind]++
				}
				fmt.Fprintf(&b, "%s %s\n", at, rb)
			}
			b.WriteString("\n# causes\n")
			for k := events.CauseKind(0); int(k) < events.NumCauseKinds; k++ {
				if kinds[k] > 0 {
					fmt.Fprintf(&b, "%s %d\n", k, kinds[k])
				}
			}
			for _, want := range []events.CauseKind{events.CauseMemberJoined, events.CauseMemberLeft, events.CauseMetadata, events.CauseRegexResolutionChanged} {
				if kinds[want] == 0 {
					t.Errorf("no %s cause in %s", want, path)
				}
			}
			golden(t, filepath.Join("testdata", filepath.Base(filepath.Dir(path)), "rebalances.golden"), b.Bytes())
		})
	}
}

// TestRebalancesLiveSequences replays the __consumer_offsets records of the sequences
// internal/kafkatest's TestGenerateFixturesRebalances drove a real Kafka through (a
// member joins, a second joins and is killed, the first changes its subscription,
// partitions are added, the first leaves) and compares the bumps with the golden file
// beside them (-update rewrites it).
func TestRebalancesLiveSequences(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(fixture.Dir(t), "kafka-*", "rebalances-offsets.txt"))
	if len(paths) == 0 {
		t.Fatal("no testdata/kafka-*/rebalances-offsets.txt (make fixtures writes them)")
	}
	for _, path := range paths {
		version := filepath.Base(filepath.Dir(path))
		t.Run(version, func(t *testing.T) {
			var b bytes.Buffer
			fmt.Fprintf(&b, "# %s: every epoch bump of g-rb, with its causes.\n", filepath.ToSlash(path))
			s, r := groups.NewState(), groups.NewRebalances()
			kinds := map[events.CauseKind]int{}
			told := toldAt{}
			for _, rec := range readFixture(t, path) {
				ch, rb, err := r.Replay(s, rec.Key, rec.Value)
				if err != nil {
					t.Fatalf("%s/%s: %v", rec.Partition, rec.Offset, err)
				}
				at := told.note(ch, rb, rec)
				if rb == nil || rb.Group.ID != "g-rb" {
					continue
				}
				for _, c := range rb.Causes {
					kinds[c.Kind]++
				}
				fmt.Fprintf(&b, "%s %s\n", at, rb)
			}
			want := map[events.CauseKind]int{events.CauseMemberJoined: 2, events.CauseMemberLeft: 2, events.CauseSubscriptionChanged: 1}
			for k, n := range want {
				if kinds[k] != n {
					t.Errorf("%d %s causes, want %d", kinds[k], k, n)
				}
			}
			if kinds[events.UnknownCause] != 0 || kinds[events.CauseMetadata] < 3 {
				t.Errorf("causes %v: want no unknown and a metadata cause for the join, the new topic and the new partition", kinds)
			}
			golden(t, filepath.Join("testdata", version, "rebalances-sequences.golden"), b.Bytes())
		})
	}
}

// TestRebalancesSequences shows the attribution of sequences the fixtures lack, written
// in Kafka's record order (member records, then the epoch record, in one batch).
func TestRebalancesSequences(t *testing.T) {
	g := events.GroupKey{Type: events.ConsumerGroup, ID: "g"}
	member := func(id string, topics []string, regex, assignor string) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: id,
			Value: &groups.ConsumerGroupMemberMetadataValue{ClientID: "c-" + id, ClientHost: "/10.0.0.1", RackID: "r1",
				SubscribedTopicNames: topics, SubscribedTopicRegex: regex, ServerAssignor: assignor}}
	}
	epoch := func(e int32, hash int64) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "g", Value: &groups.ConsumerGroupMetadataValue{Epoch: e, MetadataHash: hash}}
	}
	regex := func(re string, topics ...string) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupRegularExpression, GroupID: "g", Regex: re,
			Value: &groups.ConsumerGroupRegularExpressionValue{Topics: topics}}
	}
	tomb := func(id string) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: id, Tombstone: true}
	}
	sharePartitions := func(initializing, initialized []string) groups.Record {
		v := &groups.ShareGroupStatePartitionMetadataValue{}
		for _, t := range initializing {
			v.InitializingTopics = append(v.InitializingTopics, groups.TopicPartitionsInfo{TopicName: t, Partitions: []int32{0}})
		}
		for _, t := range initialized {
			v.InitializedTopics = append(v.InitializedTopics, groups.TopicPartitionsInfo{TopicName: t, Partitions: []int32{0}})
		}
		return groups.Record{Type: groups.ShareGroupStatePartitionMetadata, GroupID: "s", Value: v}
	}
	share := sharePartitions([]string{"a"}, nil)
	shareEpoch := groups.Record{Type: groups.ShareGroupMetadata, GroupID: "s", Value: &groups.ShareGroupMetadataValue{Epoch: 3, MetadataHash: 7}}
	shareSeed := groups.Record{Type: groups.ShareGroupMetadata, GroupID: "s", Value: &groups.ShareGroupMetadataValue{Epoch: 2, MetadataHash: 7}}
	_ = g
	// assignment is a 4.3+ target assignment record (AssignmentTimestamp set);
	// target a member's target assignment record.
	assignment := func(e int32, ts int64) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: "g",
			Value: &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: e, AssignmentTimestamp: ts}}
	}
	topic := groups.UUID{1}
	target := func(id string, ps ...int32) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupTargetAssignmentMember, GroupID: "g", MemberID: id,
			Value: &groups.ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []groups.TopicIDPartitions{{TopicID: topic, Partitions: ps}}}}
	}
	batched := []groups.Record{member("m1", []string{"a"}, "", ""), epoch(2, 5), target("m1", 0, 1, 2), assignment(2, 1000)}
	for _, tc := range []struct {
		name string
		recs []groups.Record
		want string
	}{
		{"join", untimed(member("m1", []string{"b", "a"}, "", ""), epoch(1, 5)),
			`consumer:"g" epoch ?->1 | member_joined member="m1" client="c-m1" host="/10.0.0.1" rack="r1" topics=[a b] | metadata hash=0x0000000000000000->0x0000000000000005`},
		{"subscription change", untimed(member("m1", []string{"a"}, "", ""), epoch(1, 5), member("m1", []string{"a"}, "t.*", ""), epoch(2, 5)),
			`consumer:"g" epoch 1->2 | subscription_changed member="m1" topics=[a] regex="" -> topics=[a] regex="t.*"`},
		{"regex resolved", untimed(member("m1", nil, "t.*", ""), regex("t.*", "t1"), epoch(1, 5), regex("t.*", "t1", "t2"), epoch(2, 6)),
			`consumer:"g" epoch 1->2 | regex_resolution_changed regex="t.*" added=[t2] removed=[] | metadata hash=0x0000000000000005->0x0000000000000006`},
		{"leave", untimed(member("m1", []string{"a"}, "", ""), member("m2", []string{"a"}, "", ""), epoch(1, 5), tomb("m2"), epoch(2, 5)),
			`consumer:"g" epoch 1->2 | member_left member="m2" topics=[a]`},
		{"assignor", untimed(member("m1", []string{"a"}, "", "range"), epoch(1, 5), member("m1", []string{"a"}, "", "uniform"), epoch(2, 5)),
			`consumer:"g" epoch 1->2 | assignor_changed member="m1" "range"->"uniform"`},
		// Kafka 4.1 to 4.3 write a member's new assignor without a bump; the next
		// bump (another member leaves) must not list it.
		{"assignor without a bump", untimed(member("m1", []string{"a"}, "", "range"), member("m2", []string{"a"}, "", "range"),
			epoch(1, 5), member("m1", []string{"a"}, "", "uniform"),
			groups.Record{Type: groups.ConsumerGroupCurrentMemberAssignment, GroupID: "g", MemberID: "m1",
				Value: &groups.ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: 1, PreviousMemberEpoch: 1}},
			tomb("m2"), epoch(2, 5)),
			`consumer:"g" epoch 1->2 | member_left member="m2" topics=[a]`},
		{"unknown", untimed(epoch(1, 5), epoch(2, 5)), `consumer:"g" epoch 1->2 | unknown`},
		{"share partitions", untimed(shareSeed, share, shareEpoch), `share:"s" epoch 2->3 | share_partitions_initialized added=[a] removed=[]`},
		// Initializing b starts and ends before the bump: one cause; a was initialized before.
		{"share partitions of a second topic", untimed(shareSeed, sharePartitions(nil, []string{"a"}), shareEpoch,
			sharePartitions([]string{"b"}, []string{"a"}), sharePartitions(nil, []string{"a", "b"}),
			groups.Record{Type: groups.ShareGroupMetadata, GroupID: "s", Value: &groups.ShareGroupMetadataValue{Epoch: 4, MetadataHash: 7}}),
			`share:"s" epoch 3->4 | share_partitions_initialized added=[b] removed=[]`},
		// Topic a deleted: Kafka rewrites the record without it.
		{"share partitions of a deleted topic", untimed(shareSeed, sharePartitions(nil, []string{"a", "b"}), shareEpoch,
			sharePartitions(nil, []string{"b"}),
			groups.Record{Type: groups.ShareGroupMetadata, GroupID: "s", Value: &groups.ShareGroupMetadataValue{Epoch: 4, MetadataHash: 7}}),
			`share:"s" epoch 3->4 | share_partitions_initialized added=[] removed=[a]`},
		// A record that changes nothing is no cause.
		{"share partitions unchanged", untimed(shareSeed, sharePartitions(nil, []string{"a"}), shareEpoch,
			sharePartitions(nil, []string{"a"}),
			groups.Record{Type: groups.ShareGroupMetadata, GroupID: "s", Value: &groups.ShareGroupMetadataValue{Epoch: 4, MetadataHash: 7}}),
			`share:"s" epoch 3->4 | unknown`},
		// Kafka 4.3+: a group's first bump is held until its assignment record, which
		// says the coordinator batches: told with the assignment's members.
		{"first bump of a batching group", batched,
			`consumer:"g" epoch ?->2 assignment 2 bumps=[2] at=1000 moved=[AQAAAAAAAAAAAAAAAAAAAA:0,1,2] | @2 member_joined member="m1" client="c-m1" host="/10.0.0.1" rack="r1" topics=[a] | @2 metadata hash=0x0000000000000000->0x0000000000000005`},
		// Before 4.3 the assignment record has no timestamp: told without them.
		{"first bump of a group that does not batch", untimed(member("m1", []string{"a"}, "", ""), epoch(2, 5), target("m1", 0, 1, 2)),
			`consumer:"g" epoch ?->2 | member_joined member="m1" client="c-m1" host="/10.0.0.1" rack="r1" topics=[a] | metadata hash=0x0000000000000000->0x0000000000000005`},
		// KAFKA-20268 in the first group kraftwatch reads: its epoch 1 is no
		// rebalance either, whatever other groups were read before.
		{"epoch 1 of the first group", []groups.Record{member("m1", []string{"a"}, "", ""), epoch(1, 0), assignment(1, 3000),
			epoch(2, 5), target("m1", 0), assignment(2, 4000)},
			`consumer:"g" epoch 1->2 assignment 2 bumps=[2] at=4000 moved=[AQAAAAAAAAAAAAAAAAAAAA:0] | @2 member_joined member="m1" client="c-m1" host="/10.0.0.1" rack="r1" topics=[a] | @2 metadata hash=0x0000000000000000->0x0000000000000005`},
		// Kafka 4.3+ (KIP-1263): two joins within one assignment interval, one
		// assignment; partitions 1 and 2 move from m1 to m2.
		{"batched joins", append(slices.Clone(batched), member("m2", []string{"a"}, "", ""), epoch(3, 5),
			member("m3", []string{"a"}, "", ""), epoch(4, 5), target("m1", 0), target("m2", 1, 2), target("m3"), assignment(4, 2000)),
			`consumer:"g" epoch 2->4 assignment 4 bumps=[3 4] at=2000 moved=[AQAAAAAAAAAAAAAAAAAAAA:1,2] | @3 member_joined member="m2" client="c-m2" host="/10.0.0.1" rack="r1" topics=[a] | @4 member_joined member="m3" client="c-m3" host="/10.0.0.1" rack="r1" topics=[a]`},
		// KAFKA-20268: a new group's epoch 1 has an empty assignment; its join is
		// told with epoch 2, the first assignment (its previous epoch is 1).
		{"epoch 1 is no rebalance", append(slices.Clone(batched), tomb("m1"), groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "g", Tombstone: true},
			member("m1", []string{"a"}, "", ""), epoch(1, 0), assignment(1, 3000), epoch(2, 5), target("m1", 0), assignment(2, 4000)),
			`consumer:"g" epoch 1->2 assignment 2 bumps=[2] at=4000 moved=[AQAAAAAAAAAAAAAAAAAAAA:0] | @2 member_joined member="m1" client="c-m1" host="/10.0.0.1" rack="r1" topics=[a] | @2 metadata hash=0x0000000000000000->0x0000000000000005`},
		// The last member leaves: 4.3.1 writes no assignment, the bump is told at once.
		{"batched last leave", append(slices.Clone(batched), tomb("m1"), epoch(3, 0)),
			`consumer:"g" epoch 2->3 assignment 3 bumps=[3] at=0 | @3 member_left member="m1" topics=[a] | @3 metadata hash=0x0000000000000005->0x0000000000000000`},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLastRebalance(t, tc.recs, tc.want) })
	}
}

// FuzzRebalances replays arbitrary records through a Rebalances: it must not panic,
// and every bump it reports has causes.
func FuzzRebalances(f *testing.F) {
	for _, kv := range groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 2, Members: 2, Topics: 5, TopicsPerMember: 2, RegexEvery: 2}) {
		f.Add(kv.Key, kv.Value, kv.Value == nil)
	}
	for _, kv := range fixtureRecords(f) {
		f.Add(kv.Key, kv.Value, kv.Value == nil)
	}
	paths, _ := filepath.Glob(filepath.Join(fixture.Dir(f), "kafka-*", "rebalances-offsets.txt"))
	for _, path := range paths {
		for _, rec := range readFixture(f, path) {
			f.Add(rec.Key, rec.Value, rec.Value == nil)
		}
	}
	s, r := groups.NewState(), groups.NewRebalances()
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		}
		if s.Len() > 1000 {
			s, r = groups.NewState(), groups.NewRebalances()
		}
		_, rb, err := r.Replay(s, key, value)
		if err != nil {
			return
		}
		if rb != nil {
			if len(rb.Causes) == 0 {
				t.Fatal("bump without causes")
			}
			_ = rb.String()
		}
	})
}

// TestRebalancesStaticReplacement replays a static member's restart as Kafka writes it
// (GroupMetadataManager.replaceMember: the old member's tombstones, then the new
// member's records with the same partitions and no epoch record; a classic group
// rewrites its GroupMetadata at the same generation) and then a real rebalance: the
// restart must not be told with it as a leave and a join.
func TestRebalancesStaticReplacement(t *testing.T) {
	member := func(id, instance string, topics ...string) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: id,
			Value: &groups.ConsumerGroupMemberMetadataValue{InstanceID: instance, ClientID: "c", SubscribedTopicNames: topics}}
	}
	current := func(id string, epoch int32) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupCurrentMemberAssignment, GroupID: "g", MemberID: id,
			Value: &groups.ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: epoch, PreviousMemberEpoch: epoch}}
	}
	tomb := func(typ groups.RecordType, id string) groups.Record {
		return groups.Record{Type: typ, GroupID: "g", MemberID: id, Tombstone: true}
	}
	epoch := func(e int32) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "g", Value: &groups.ConsumerGroupMetadataValue{Epoch: e, MetadataHash: 5}}
	}
	replace := func(old, new, instance string, topics ...string) []groups.Record {
		return []groups.Record{tomb(groups.ConsumerGroupCurrentMemberAssignment, old), tomb(groups.ConsumerGroupTargetAssignmentMember, old),
			tomb(groups.ConsumerGroupMemberMetadata, old), member(new, instance, "a"), current(new, 0), member(new, instance, topics...)}
	}
	start := []groups.Record{member("m1", "i1", "a"), member("m2", "i2", "a"), epoch(1), current("m1", 1), current("m2", 1)}
	classic := func(gen int32, members ...[2]string) groups.Record {
		v := &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: gen, Protocol: "range"}
		for _, m := range members {
			v.Members = append(v.Members, groups.GroupMember{MemberID: m[0], GroupInstanceID: m[1], ClientID: "c",
				Subscription: &groups.ConsumerProtocolSubscription{Topics: []string{"a"}}})
		}
		return groups.Record{Type: groups.GroupMetadata, GroupID: "g", Value: v}
	}
	streamsIn := func(id, instance, process string) groups.Record {
		return groups.Record{Type: groups.StreamsGroupMemberMetadata, GroupID: "g", MemberID: id,
			Value: &groups.StreamsGroupMemberMetadataValue{InstanceID: instance, ClientID: "c", ProcessID: process}}
	}
	streams := func(id, instance string) groups.Record { return streamsIn(id, instance, "p-"+instance) }
	streamsEpoch := func(e int32) groups.Record {
		return groups.Record{Type: groups.StreamsGroupMetadata, GroupID: "g", Value: &groups.StreamsGroupMetadataValue{Epoch: e, MetadataHash: 5}}
	}
	cat := func(rs ...[]groups.Record) []groups.Record { return slices.Concat(rs...) }
	for _, tc := range []struct {
		name string
		recs []groups.Record
		want string
	}{
		{"restart, then another member fenced",
			cat(start, []groups.Record{current("m1", -2)}, replace("m1", "m1b", "i1", "a"),
				[]groups.Record{tomb(groups.ConsumerGroupMemberMetadata, "m2"), epoch(2)}),
			`consumer:"g" epoch 1->2 | member_left member="m2" topics=[a]`},
		{"restart with another subscription",
			cat(start, replace("m1", "m1b", "i1", "a", "b"), []groups.Record{epoch(2)}),
			`consumer:"g" epoch 1->2 | subscription_changed member="m1b" topics=[a] regex="" -> topics=[a b]`},
		{"classic restart, then another member left",
			[]groups.Record{classic(1, [2]string{"m1", "i1"}, [2]string{"m2", "i2"}), classic(1, [2]string{"m1b", "i1"}, [2]string{"m2", "i2"}),
				classic(2, [2]string{"m1b", "i1"})},
			`classic:"g" epoch 1->2 | member_left member="m2" topics=[a]`},
		{"streams restart, then another member fenced",
			[]groups.Record{streams("m1", "i1"), streams("m2", "i2"), streamsEpoch(1), tomb(groups.StreamsGroupMemberMetadata, "m1"),
				streams("m1b", "i1"), tomb(groups.StreamsGroupMemberMetadata, "m2"), streamsEpoch(2)},
			`streams:"g" epoch 1->2 | member_left member="m2"`},
		// Kafka 4.4: the restarted instance runs in a new process; the replacement is
		// written with the old ProcessId, then the new one, then the epoch record.
		{"streams restart in a new process",
			[]groups.Record{streams("m1", "i1"), streams("m2", "i2"), streamsEpoch(1), tomb(groups.StreamsGroupMemberMetadata, "m1"),
				streamsIn("m1b", "i1", "p-i1"), streamsIn("m1b", "i1", "p-new"), streamsEpoch(2)},
			`streams:"g" epoch 1->2 | unknown member="m1b" instance="i1" client="c"`},
		// A new ProcessId written without a bump is not told with a later one.
		{"streams new process without a bump",
			[]groups.Record{streams("m1", "i1"), streams("m2", "i2"), streamsEpoch(1), streamsIn("m1", "i1", "p-new"),
				streams("m2", "i2"), tomb(groups.StreamsGroupMemberMetadata, "m2"), streamsEpoch(2)},
			`streams:"g" epoch 1->2 | member_left member="m2"`},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLastRebalance(t, untimed(tc.recs...), tc.want) })
	}
}

// TestRebalancesGroupConfig: a group config change is told only where the coordinator's
// records tie it to a bump: a streams group's assignment configs, written in its epoch
// record (config_changed, before -> after). Consumer and share group configs change no
// assignment and write nothing to __consumer_offsets: a later bump is not theirs.
func TestRebalancesGroupConfig(t *testing.T) {
	epoch := func(e int32, configs ...groups.KeyValue) groups.Record {
		return groups.Record{Type: groups.StreamsGroupMetadata, GroupID: "g",
			Value: &groups.StreamsGroupMetadataValue{Epoch: e, MetadataHash: 5, AssignmentConfigs: configs}}
	}
	standby := func(n string) groups.KeyValue { return groups.KeyValue{Key: "num.standby.replicas", Value: n} }
	s, r := groups.NewState(), groups.NewRebalances()
	for _, tc := range []struct {
		rec  groups.Record
		want string
	}{
		{epoch(2, standby("0")), `streams:"g" epoch ?->2 | metadata hash=0x0000000000000000->0x0000000000000005`},
		{epoch(3, standby("1")), `streams:"g" epoch 2->3 | config_changed "num.standby.replicas=0"->"num.standby.replicas=1"`},
		{epoch(4, standby("1")), `streams:"g" epoch 3->4 | unknown`},
	} {
		var rb *groups.Rebalance
		for _, rec := range untimed(tc.rec) {
			if _, b := r.Apply(s, &rec); b != nil {
				rb = b
			}
		}
		if rb == nil || rb.String() != tc.want {
			t.Errorf("got %v, want %s", rb, tc.want)
		}
	}
}

// TestRebalancesHeldBound: a batching group whose coordinator writes bump after bump and
// no assignment has them told as one assignment once 1024 are held, not kept for ever.
func TestRebalancesHeldBound(t *testing.T) {
	s, r := groups.NewState(), groups.NewRebalances()
	apply := func(rec groups.Record) *groups.Rebalance { _, rb := r.Apply(s, &rec); return rb }
	apply(groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "g", MemberID: "m",
		Value: &groups.ConsumerGroupMemberMetadataValue{SubscribedTopicNames: []string{"a"}}})
	apply(groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "g", Value: &groups.ConsumerGroupMetadataValue{Epoch: 2}})
	apply(groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: "g",
		Value: &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: 2, AssignmentTimestamp: 1}})
	var told []*groups.Rebalance
	for e := int32(3); e < 3+2000; e++ {
		if rb := apply(groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: "g", Value: &groups.ConsumerGroupMetadataValue{Epoch: e}}); rb != nil {
			told = append(told, rb)
		}
	}
	if len(told) != 1 || len(told[0].Assignment.Epochs) != 1024 || told[0].NewEpoch != 3+1023 || told[0].Assignment.Timestamp != 0 {
		t.Fatalf("told %d rebalances; want one of 1024 bumps, 3 to 1026", len(told))
	}
}

// toldAt follows where the engine tells each Rebalance: at the record Replay returned it
// for, but a Rebalance without Assignment at its group's last epoch record.
type toldAt map[events.GroupKey]string

func (t toldAt) note(ch groups.Change, rb *groups.Rebalance, rec fixtureRecord) string {
	at := rec.Partition + "/" + rec.Offset
	if ch.Metadata {
		t[ch.Group] = at
	}
	if rb != nil && rb.Assignment == nil {
		return t[rb.Group]
	}
	return at
}

// untimed returns recs as Kafka before 4.3 writes them: each group epoch record followed
// by the group's target assignment record of that epoch, without AssignmentTimestamp.
func untimed(recs ...groups.Record) []groups.Record {
	var out []groups.Record
	for _, rec := range recs {
		out = append(out, rec)
		if rec.Tombstone {
			continue
		}
		var a *groups.ConsumerGroupTargetAssignmentMetadataValue
		switch v := rec.Value.(type) {
		case *groups.ConsumerGroupMetadataValue:
			a = &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: v.Epoch}
			out = append(out, groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: rec.GroupID, Value: a})
		case *groups.ShareGroupMetadataValue:
			a = &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: v.Epoch}
			out = append(out, groups.Record{Type: groups.ShareGroupTargetAssignmentMetadata, GroupID: rec.GroupID,
				Value: (*groups.ShareGroupTargetAssignmentMetadataValue)(a)})
		case *groups.StreamsGroupMetadataValue:
			a = &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: v.Epoch}
			out = append(out, groups.Record{Type: groups.StreamsGroupTargetAssignmentMetadata, GroupID: rec.GroupID,
				Value: (*groups.StreamsGroupTargetAssignmentMetadataValue)(a)})
		}
	}
	return out
}

// checkLastRebalance applies recs to a new State through a new Rebalances: the last
// Rebalance reported must read want, and no cause may be left pending.
func checkLastRebalance(t *testing.T, recs []groups.Record, want string) {
	t.Helper()
	s, r := groups.NewState(), groups.NewRebalances()
	var last *groups.Rebalance
	for i := range recs {
		if _, rb := r.Apply(s, &recs[i]); rb != nil {
			last = rb
		}
	}
	if last == nil {
		t.Fatal("no rebalance")
	}
	if got := last.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if r.Pending() != 0 {
		t.Errorf("%d groups left pending", r.Pending())
	}
}

// TestRebalancesInterleaving: kraftwatch reads the 50 __consumer_offsets partitions in no
// fixed interleaving (a restart or another replica reads them otherwise), so a group's
// Rebalances must depend on its own records only. Two Kafka 4.3 groups, one whose
// first record is the epoch 1 of KAFKA-20268, read in three interleavings, give the
// same Rebalances; the first of each carries its assignment.
func TestRebalancesInterleaving(t *testing.T) {
	recs := func(g string, first int32) []groups.Record {
		meta := func(e int32, h int64) groups.Record {
			return groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: g, Value: &groups.ConsumerGroupMetadataValue{Epoch: e, MetadataHash: h}}
		}
		assigned := func(e int32, ts int64) groups.Record {
			return groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: g,
				Value: &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: e, AssignmentTimestamp: ts}}
		}
		joined := func(id string) groups.Record {
			return groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: g, MemberID: id,
				Value: &groups.ConsumerGroupMemberMetadataValue{SubscribedTopicNames: []string{"a"}}}
		}
		out := []groups.Record{joined("m1"), meta(first, 5), assigned(first, 1000)}
		if first == 1 {
			out = append(out, meta(2, 5), assigned(2, 1500))
		}
		return append(out, joined("m2"), meta(3, 5), joined("m3"), meta(4, 5), assigned(4, 2000))
	}
	a, b := recs("a", 2), recs("b", 1)
	var zipped []groups.Record
	for i := range max(len(a), len(b)) {
		if i < len(a) {
			zipped = append(zipped, a[i])
		}
		if i < len(b) {
			zipped = append(zipped, b[i])
		}
	}
	var want map[string][]string
	for _, order := range [][]groups.Record{slices.Concat(a, b), slices.Concat(b, a), zipped} {
		s, r := groups.NewState(), groups.NewRebalances()
		got := map[string][]string{}
		for i := range order {
			if _, rb := r.Apply(s, &order[i]); rb != nil {
				got[rb.Group.ID] = append(got[rb.Group.ID], rb.String())
			}
		}
		for _, g := range []string{"a", "b"} {
			if len(got[g]) != 2 || !strings.Contains(got[g][0], " assignment 2 bumps=[2] ") {
				t.Fatalf("group %s: %q, want two, the first with assignment 2", g, got[g])
			}
		}
		if want == nil {
			want = got
		} else if !maps.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("another interleaving gave\n%q\nwant\n%q", got, want)
		}
	}
}
