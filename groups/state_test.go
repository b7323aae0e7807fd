package groups_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
)

// replay encodes each record with groupstest and replays the bytes into s.
func replay(t *testing.T, s *groups.State, recs ...groups.Record) []groups.Change {
	t.Helper()
	var out []groups.Change
	for i := range recs {
		k, v, err := groupstest.Encode(&recs[i])
		if err != nil {
			t.Fatalf("encode %d: %v", i, err)
		}
		ch, err := s.Replay(k, v)
		if err != nil {
			t.Fatalf("replay %d (%s): %v", i, recs[i].String(), err)
		}
		out = append(out, ch)
	}
	return out
}

func consumerMeta(g string, epoch int32, hash int64) groups.Record {
	return groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: g,
		Value: &groups.ConsumerGroupMetadataValue{Epoch: epoch, MetadataHash: hash, CreationTimeMs: -1}}
}

func consumerMember(g, m string, regex string, topics ...string) groups.Record {
	return groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: g, MemberID: m,
		Value: &groups.ConsumerGroupMemberMetadataValue{ClientID: "c", ClientHost: "h", SubscribedTopicNames: topics,
			SubscribedTopicRegex: regex, RebalanceTimeoutMs: -1}}
}

func tombstone(t groups.RecordType, g, m string) groups.Record {
	return groups.Record{Type: t, GroupID: g, MemberID: m, Tombstone: true}
}

func classic(g string, gen int32, members map[string][]string) groups.Record {
	v := &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: gen, Protocol: "range", CurrentStateTimestamp: -1}
	for _, id := range sortedMapKeys(members) {
		v.Members = append(v.Members, groups.GroupMember{MemberID: id, ClientID: "c", ClientHost: "h", RebalanceTimeout: 1, SessionTimeout: 1,
			Subscription: &groups.ConsumerProtocolSubscription{Version: 3, Topics: members[id], GenerationID: gen}})
	}
	return groups.Record{Type: groups.GroupMetadata, GroupID: g, Version: 3, Value: v}
}

func sortedMapKeys(m map[string][]string) []string { return slices.Sorted(maps.Keys(m)) }

var (
	cg = events.GroupKey{Type: events.ConsumerGroup, ID: "cg"}
	sg = events.GroupKey{Type: events.ShareGroup, ID: "sg"}
	st = events.GroupKey{Type: events.StreamsGroup, ID: "app"}
	kg = events.GroupKey{Type: events.ClassicGroup, ID: "cg"}
)

func TestStateConsumerGroup(t *testing.T) {
	s := groups.NewState()
	ch := replay(t, s,
		consumerMember("cg", "m1", "", "b", "a"),
		consumerMeta("cg", 1, 0x1234),
		consumerMember("cg", "m2", `orders\..*`),
		consumerMember("cg", "m3", `(`),
		consumerMember("cg", "m4", "", "a"),
		groups.Record{Type: groups.ConsumerGroupRegularExpression, GroupID: "cg", Regex: `orders\..*`,
			Value: &groups.ConsumerGroupRegularExpressionValue{Topics: []string{"orders.eu"}, Version: 7, Timestamp: 1}},
	)
	want := []groups.Change{
		{Group: cg, Created: true, Subscription: true},
		{Group: cg, Metadata: true},
		{Group: cg, Subscription: true},
		{Group: cg, Subscription: true},
		{Group: cg}, // "a" is already named by m1
		{Group: cg},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes:\n got %+v\nwant %+v", ch, want)
	}
	wantDump := `consumer:"cg" epoch=1 metadata_hash=0x0000000000001234 state=assigning
  topics=[a b] regexes=["(" "orders\\..*"]
  member "m1" topics=[a b]
  member "m2" topics=[] regex="orders\\..*"
  member "m3" topics=[] regex="(" regex_invalid
  member "m4" topics=[a]
  resolved "orders\\..*" topics=[orders.eu] version=7
`
	if got := s.String(); got != wantDump {
		t.Fatalf("state:\n%s\nwant:\n%s", got, wantDump)
	}
	if s.RegexError("(") == nil || s.RegexError(`orders\..*`) != nil {
		t.Fatal("RegexError wrong")
	}

	existing := groups.NameSet{"a": {}, "c": {}, "orders.eu": {}, "orders.us": {}, "xorders.eu": {}, "orders": {}}
	if got, want := s.SubscribedTopics(cg, existing), []string{"a", "orders.eu", "orders.us"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SubscribedTopics = %q, want %q", got, want)
	}
	if got := s.GroupsByName("b"); !reflect.DeepEqual(got, []events.GroupKey{cg}) {
		t.Errorf("GroupsByName(b) = %v", got)
	}
	if got := s.GroupsByName("orders.eu"); got != nil {
		t.Errorf("GroupsByName(orders.eu) = %v", got)
	}
	for topic, want := range map[string][]groups.Subscriber{
		"a":          {{Group: cg, Via: groups.ViaName}},
		"orders.b":   nil, // set below
		"orders.new": {{Group: cg, Via: groups.ViaRegex}},
		"xorders.eu": nil, // full match only
		"c":          nil,
	} {
		if topic == "orders.b" {
			continue
		}
		if got := s.Subscribers(topic); !reflect.DeepEqual(got, want) {
			t.Errorf("Subscribers(%q) = %v, want %v", topic, got, want)
		}
	}
	// A topic named by one member and matched by another's regex.
	replay(t, s, consumerMember("cg", "m5", "", "orders.b"))
	if got, want := s.Subscribers("orders.b"), []groups.Subscriber{{Group: cg, Via: groups.ViaName | groups.ViaRegex}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Subscribers(orders.b) = %v, want %v", got, want)
	}
	replay(t, s, tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m5"))

	// m1 rewritten with the same subscription: nothing changes. Then m1 and m4 leave:
	// "a" goes when the last member naming it goes.
	ch = replay(t, s,
		consumerMember("cg", "m1", "", "a", "b"),
		tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m1"),
		tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m4"),
		tombstone(groups.ConsumerGroupMemberMetadata, "cg", "nobody"),
	)
	want = []groups.Change{{Group: cg}, {Group: cg, Subscription: true}, {Group: cg, Subscription: true}, {Group: cg}}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes:\n got %+v\nwant %+v", ch, want)
	}
	if got := s.GroupsByName("a"); got != nil {
		t.Errorf("GroupsByName(a) after leave = %v", got)
	}

	// The group's tombstones, in the order Kafka writes them on deletion.
	ch = replay(t, s,
		tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m2"),
		tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m3"),
		groups.Record{Type: groups.ConsumerGroupRegularExpression, GroupID: "cg", Regex: `orders\..*`, Tombstone: true},
		tombstone(groups.ConsumerGroupMetadata, "cg", ""),
		tombstone(groups.ConsumerGroupMetadata, "cg", ""),
	)
	want = []groups.Change{{Group: cg, Subscription: true}, {Group: cg, Subscription: true}, {Group: cg}, {Group: cg, Removed: true}, {}}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes:\n got %+v\nwant %+v", ch, want)
	}
	if s.Len() != 0 || s.NumRegexes() != 0 || s.String() != "" {
		t.Fatalf("state not empty: %d groups, %d regexes\n%s", s.Len(), s.NumRegexes(), s)
	}
}

func TestStateMetadataTombstoneRemovesEverything(t *testing.T) {
	s := groups.NewState()
	replay(t, s,
		consumerMeta("cg", 3, 0),
		consumerMember("cg", "m1", "t.*", "a"),
		consumerMember("other", "m1", "t.*", "a"),
		tombstone(groups.ConsumerGroupMetadata, "cg", ""),
	)
	other := events.GroupKey{Type: events.ConsumerGroup, ID: "other"}
	if _, ok := s.Group(cg); ok {
		t.Fatal("group survived its metadata tombstone")
	}
	if got := s.GroupsByName("a"); !reflect.DeepEqual(got, []events.GroupKey{other}) {
		t.Errorf("GroupsByName(a) = %v", got)
	}
	if got := s.GroupsByRegex("t1"); !reflect.DeepEqual(got, []events.GroupKey{other}) {
		t.Errorf("GroupsByRegex(t1) = %v", got)
	}
	if s.NumRegexes() != 1 {
		t.Errorf("NumRegexes = %d", s.NumRegexes())
	}
}

func TestStateGroupWithoutMetadataGoesWithLastMember(t *testing.T) {
	s := groups.NewState()
	ch := replay(t, s,
		consumerMember("cg", "m1", "", "a"),
		tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m1"),
	)
	if !ch[1].Removed || s.Len() != 0 {
		t.Fatalf("changes %+v, %d groups left", ch, s.Len())
	}
}

func TestStateShareGroup(t *testing.T) {
	s := groups.NewState()
	member := func(m string, topics ...string) groups.Record {
		return groups.Record{Type: groups.ShareGroupMemberMetadata, GroupID: "sg", MemberID: m,
			Value: &groups.ShareGroupMemberMetadataValue{ClientID: "c", ClientHost: "h", SubscribedTopicNames: topics}}
	}
	replay(t, s,
		member("m1", "a"),
		member("m2", "a", "b"),
		groups.Record{Type: groups.ShareGroupMetadata, GroupID: "sg", Value: &groups.ShareGroupMetadataValue{Epoch: 2, MetadataHash: -1}},
		// Same id as a consumer group: a different group.
		consumerMember("sg", "m1", "", "z"),
	)
	g, ok := s.Group(sg)
	if !ok || g.Epoch != 2 || g.MetadataHash != -1 || g.NumMembers() != 2 {
		t.Fatalf("share group = %+v", g)
	}
	if got := s.SubscribedTopics(sg, groups.NameSet{"a": {}, "b": {}, "z": {}}); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("SubscribedTopics = %q", got)
	}
	replay(t, s, tombstone(groups.ShareGroupMemberMetadata, "sg", "m2"))
	if got := g.SubscribedTopicNames(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("after m2 left: %q", got)
	}
	replay(t, s, tombstone(groups.ShareGroupMetadata, "sg", ""))
	if got := s.Keys(); !reflect.DeepEqual(got, []events.GroupKey{{Type: events.ConsumerGroup, ID: "sg"}}) {
		t.Errorf("Keys = %v", got)
	}
}

func TestStateStreamsGroup(t *testing.T) {
	s := groups.NewState()
	topo := &groups.StreamsGroupTopologyValue{Epoch: 1, Subtopologies: []groups.Subtopology{
		{SubtopologyID: "0", SourceTopics: []string{"in"}, SourceTopicRegex: []string{"ignored.*"}, RepartitionSinkTopics: []string{"app-rep"},
			StateChangelogTopics: []groups.TopicInfo{{Name: "app-chg"}}},
		{SubtopologyID: "1", RepartitionSourceTopics: []groups.TopicInfo{{Name: "app-rep"}}},
	}}
	ch := replay(t, s,
		groups.Record{Type: groups.StreamsGroupMetadata, GroupID: "app", Value: &groups.StreamsGroupMetadataValue{Epoch: 4, MetadataHash: 9, ValidatedTopologyEpoch: 1}},
		groups.Record{Type: groups.StreamsGroupMemberMetadata, GroupID: "app", MemberID: "m1", Value: &groups.StreamsGroupMemberMetadataValue{ProcessID: "p"}},
		groups.Record{Type: groups.StreamsGroupTopology, GroupID: "app", Value: topo},
	)
	if !ch[2].Subscription || ch[1].Subscription {
		t.Fatalf("changes %+v", ch)
	}
	if got := s.GroupsByName("app-chg"); !reflect.DeepEqual(got, []events.GroupKey{st}) {
		t.Errorf("GroupsByName(app-chg) = %v", got)
	}
	if got := s.GroupsByRegex("ignored.x"); got != nil {
		t.Errorf("streams SourceTopicRegex indexed: %v", got)
	}
	if got := s.SubscribedTopics(st, groups.NameSet{"in": {}, "app-rep": {}}); !reflect.DeepEqual(got, []string{"app-rep", "in"}) {
		t.Errorf("SubscribedTopics = %q", got)
	}
	ch = replay(t, s, groups.Record{Type: groups.StreamsGroupTopology, GroupID: "app", Tombstone: true})
	if !ch[0].Subscription || s.GroupsByName("in") != nil {
		t.Fatalf("topology tombstone: %+v, %v", ch, s.GroupsByName("in"))
	}
}

func TestStateClassicGroup(t *testing.T) {
	s := groups.NewState()
	ch := replay(t, s,
		classic("cg", 1, map[string][]string{"m1": {"a", "b"}, "m2": {"b"}}),
		classic("cg", 2, map[string][]string{"m1": {"b", "a"}, "m3": {"a"}}),
		classic("cg", 3, map[string][]string{"m3": {"c"}}),
		// Topics swap members: the group's set is unchanged.
		classic("cg", 4, map[string][]string{"m3": {"d"}, "m4": {"c"}}),
		classic("cg", 5, map[string][]string{"m3": {"c"}, "m4": {"d"}}),
		classic("cg", 6, map[string][]string{"m4": {"c"}}),
	)
	want := []groups.Change{
		{Group: kg, Created: true, Metadata: true, Subscription: true},
		{Group: kg, Metadata: true},
		{Group: kg, Metadata: true, Subscription: true},
		{Group: kg, Metadata: true, Subscription: true},
		{Group: kg, Metadata: true},
		{Group: kg, Metadata: true, Subscription: true},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes:\n got %+v\nwant %+v", ch, want)
	}
	wantDump := `classic:"cg" epoch=6 metadata_hash=0x0000000000000000 protocol_type="consumer" protocol="range" state=stable
  topics=[c]
  member "m4" topics=[c]
`
	if got := s.String(); got != wantDump {
		t.Fatalf("state:\n%s\nwant:\n%s", got, wantDump)
	}
	// A subscription that does not parse makes the group's topics unknown.
	key := h("0002", s16("cg"))
	value := h("0003", s16("consumer"), "00000004", s16("range"), s16("m1"), "0000000000000000", "00000001",
		s16("m1"), "ffff", s16("c"), s16("h"), "00000000 00000000", "00000002 0000", "00000000")
	if _, err := s.Replay(key, value); err != nil {
		t.Fatal(err)
	}
	if g, _ := s.Group(kg); !g.TopicsUnknown || len(g.SubscribedTopicNames()) != 0 {
		t.Fatalf("group = %+v", g)
	}
	replay(t, s, tombstone(groups.GroupMetadata, "cg", ""))
	if s.Len() != 0 {
		t.Fatal("classic group survived its tombstone")
	}
}

func TestStatePartitionMetadata(t *testing.T) {
	s := groups.NewState()
	replay(t, s, groups.Record{Type: groups.ConsumerGroupPartitionMetadata, GroupID: "cg",
		Value: &groups.ConsumerGroupPartitionMetadataValue{Topics: []groups.TopicMetadata{{TopicName: "a", NumPartitions: 3}}}})
	g, _ := s.Group(cg)
	if len(g.PartitionMetadata) != 1 {
		t.Fatalf("PartitionMetadata = %+v", g.PartitionMetadata)
	}
	ch := replay(t, s, tombstone(groups.ConsumerGroupPartitionMetadata, "cg", ""))
	if !ch[0].Removed {
		t.Fatalf("group with only a deleted partition metadata record kept: %+v", ch)
	}
}

func TestStateIgnoresOtherRecords(t *testing.T) {
	s := groups.NewState()
	for _, kv := range [][2][]byte{
		{groupstest.OffsetCommitKey("g", "t", 0), groupstest.OffsetCommitValue(1, 0, "", 0)},
		{groupstest.OffsetCommitKey("g", "t", 0), nil},
		{h("0012", s16("g")), h("0000 00")}, // StreamsGroupPartitionMetadata: in no release's schemas
		{h("0006", s16("g")), nil},
	} {
		ch, err := s.Replay(kv[0], kv[1])
		if err != nil || ch.Changed() {
			t.Fatalf("Replay = %+v, %v", ch, err)
		}
	}
	if _, err := s.Replay(h("0063"), h("0000")); err == nil {
		t.Fatal("unknown type replayed without error")
	}
	if s.Len() != 0 {
		t.Fatal("state not empty")
	}
}

func TestCompileRegex(t *testing.T) {
	tests := []struct {
		regex   string
		match   []string
		noMatch []string
		invalid bool
	}{
		{regex: "orders", match: []string{"orders"}, noMatch: []string{"orders2", "xorders"}},
		{regex: `orders\..*|audit`, match: []string{"orders.eu", "audit"}, noMatch: []string{"audit2", "xaudit"}},
		{regex: "(?i)Foo", match: []string{"foo", "FOO"}},
		{regex: "a)|(b", invalid: true},
		{regex: "(", invalid: true},
		{regex: `\`, invalid: true},
	}
	for _, tt := range tests {
		re, err := groups.CompileRegex(tt.regex)
		if tt.invalid {
			if err == nil {
				t.Errorf("%q compiled", tt.regex)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.regex, err)
			continue
		}
		for _, m := range tt.match {
			if !re.MatchString(m) {
				t.Errorf("%q does not match %q", tt.regex, m)
			}
		}
		for _, m := range tt.noMatch {
			if re.MatchString(m) {
				t.Errorf("%q matches %q", tt.regex, m)
			}
		}
	}
}
