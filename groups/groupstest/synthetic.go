package groupstest

import (
	"fmt"

	"github.com/kraftwatch/kraftwatch/groups"
)

// KV is one encoded record; Value is nil for a tombstone.
type KV struct{ Key, Value []byte }

// SyntheticConfig shapes a synthetic __consumer_offsets log.
type SyntheticConfig struct {
	Groups          int // groups of each of the four types
	Members         int // members per group
	Topics          int // distinct topic names in the cluster ("topic-0000", ...)
	TopicsPerMember int
	// RegexEvery gives every n-th consumer member a regex instead of names (0: none).
	RegexEvery int
	// OffsetCommits is the number of offset commits written per group.
	OffsetCommits int
	// DistinctMembers gives each member of a group its own topics (the worst case
	// for the index); otherwise members share the group's topics, as in most real
	// groups, and every fourth member adds one topic of its own.
	DistinctMembers bool
	// Assignments adds the assignment records of consumer and share groups: per
	// member a target and a current assignment of two partitions of each of
	// TopicsPerMember topics, and the group's target assignment epoch.
	Assignments bool
}

// Synthetic returns a deterministic log of records as Kafka 4.x writes them for
// live groups: per consumer group its members, metadata and regex resolutions; per
// share group members and metadata; per streams group metadata, members and
// topology; per classic group one GroupMetadata v3; and offset commits. It is meant
// for benchmarks and property tests.
func Synthetic(cfg SyntheticConfig) []KV {
	var out []KV
	add := func(rec groups.Record) {
		k, v, err := Encode(&rec)
		if err != nil {
			panic(err)
		}
		out = append(out, KV{k, v})
	}
	topic := func(i int) string { return fmt.Sprintf("topic-%04d", i%max(cfg.Topics, 1)) }
	topics := func(g, m int) []string {
		ts := make([]string, cfg.TopicsPerMember, cfg.TopicsPerMember+1)
		for i := range ts {
			if cfg.DistinctMembers {
				ts[i] = topic(g*7 + m*3 + i)
			} else {
				ts[i] = topic(g*7 + i)
			}
		}
		if !cfg.DistinctMembers && m%4 == 3 {
			ts = append(ts, topic(g*7+cfg.TopicsPerMember+m))
		}
		return ts
	}
	offsetCommitValue := OffsetCommitValue(12345, 3, "", 1700000000000)
	for g := range cfg.Groups {
		id := fmt.Sprintf("group-%05d", g)
		for m := range cfg.Members {
			mid := fmt.Sprintf("member-%05d-%03d", g, m)
			v := &groups.ConsumerGroupMemberMetadataValue{ClientID: "consumer-" + id, ClientHost: "/10.1.2.3",
				RebalanceTimeoutMs: 300000, ServerAssignor: "uniform"}
			if cfg.RegexEvery > 0 && m%cfg.RegexEvery == 0 {
				v.SubscribedTopicRegex = fmt.Sprintf(`topic-00%d.*`, g%10)
			} else {
				v.SubscribedTopicNames = sortedSet(topics(g, m))
			}
			add(groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: id, MemberID: mid, Value: v})
		}
		add(groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: id,
			Value: &groups.ConsumerGroupMetadataValue{Epoch: int32(g + 1), MetadataHash: int64(g) * 0x7e3779b97f4a7c15, CreationTimeMs: -1}})
		if cfg.Assignments {
			for m := range cfg.Members {
				mid := fmt.Sprintf("member-%05d-%03d", g, m)
				tps := assignment(cfg.TopicsPerMember, g, m)
				add(groups.Record{Type: groups.ConsumerGroupTargetAssignmentMember, GroupID: id, MemberID: mid,
					Value: &groups.ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: tps}})
				add(groups.Record{Type: groups.ConsumerGroupCurrentMemberAssignment, GroupID: id, MemberID: mid,
					Value: &groups.ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: int32(g + 1), PreviousMemberEpoch: int32(g), AssignedPartitions: tps}})
			}
			add(groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: id,
				Value: &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: int32(g + 1)}})
		}
		if cfg.RegexEvery > 0 {
			add(groups.Record{Type: groups.ConsumerGroupRegularExpression, GroupID: id, Regex: fmt.Sprintf(`topic-00%d.*`, g%10),
				Value: &groups.ConsumerGroupRegularExpressionValue{Topics: topics(g, 0), Version: 100, Timestamp: 1700000000000}})
		}

		sid := "share-" + id
		for m := range cfg.Members {
			add(groups.Record{Type: groups.ShareGroupMemberMetadata, GroupID: sid, MemberID: fmt.Sprintf("sm-%05d-%03d", g, m),
				Value: &groups.ShareGroupMemberMetadataValue{ClientID: "c", ClientHost: "/10.1.2.3", SubscribedTopicNames: sortedSet(topics(g, m))}})
		}
		add(groups.Record{Type: groups.ShareGroupMetadata, GroupID: sid, Value: &groups.ShareGroupMetadataValue{Epoch: 2, MetadataHash: 42}})
		if cfg.Assignments {
			for m := range cfg.Members {
				mid := fmt.Sprintf("sm-%05d-%03d", g, m)
				tps := assignment(cfg.TopicsPerMember, g, m)
				add(groups.Record{Type: groups.ShareGroupTargetAssignmentMember, GroupID: sid, MemberID: mid,
					Value: &groups.ShareGroupTargetAssignmentMemberValue{TopicPartitions: tps}})
				add(groups.Record{Type: groups.ShareGroupCurrentMemberAssignment, GroupID: sid, MemberID: mid,
					Value: &groups.ShareGroupCurrentMemberAssignmentValue{MemberEpoch: 2, PreviousMemberEpoch: 1, AssignedPartitions: tps}})
			}
			add(groups.Record{Type: groups.ShareGroupTargetAssignmentMetadata, GroupID: sid,
				Value: &groups.ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: 2}})
		}

		aid := "streams-" + id
		add(groups.Record{Type: groups.StreamsGroupMetadata, GroupID: aid,
			Value: &groups.StreamsGroupMetadataValue{Epoch: 3, MetadataHash: 7, ValidatedTopologyEpoch: 1}})
		for m := range cfg.Members {
			add(groups.Record{Type: groups.StreamsGroupMemberMetadata, GroupID: aid, MemberID: fmt.Sprintf("st-%05d-%03d", g, m),
				Value: &groups.StreamsGroupMemberMetadataValue{ClientID: "c", ClientHost: "h", RebalanceTimeoutMs: 300000, TopologyEpoch: 1, ProcessID: "p"}})
		}
		add(groups.Record{Type: groups.StreamsGroupTopology, GroupID: aid, Value: &groups.StreamsGroupTopologyValue{Epoch: 1,
			Subtopologies: []groups.Subtopology{{SubtopologyID: "0", SourceTopics: topics(g, 0),
				StateChangelogTopics: []groups.TopicInfo{{Name: aid + "-store-changelog"}}}}}})

		cv := &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 5, Protocol: "range", Leader: "c-0", CurrentStateTimestamp: 1700000000000}
		for m := range cfg.Members {
			cv.Members = append(cv.Members, groups.GroupMember{MemberID: fmt.Sprintf("c-%d", m), ClientID: "c", ClientHost: "h",
				RebalanceTimeout: 300000, SessionTimeout: 45000,
				Subscription: &groups.ConsumerProtocolSubscription{Version: 3, Topics: topics(g, m), GenerationID: 5}})
		}
		add(groups.Record{Type: groups.GroupMetadata, GroupID: "classic-" + id, Version: 3, Value: cv})

		for i := range cfg.OffsetCommits {
			out = append(out, KV{OffsetCommitKey(id, topic(i), int32(i)), offsetCommitValue})
		}
	}
	return out
}

// assignment gives member m of group g two partitions of each of n topics, the
// topic ids derived from the group and the member.
func assignment(n, g, m int) []groups.TopicIDPartitions {
	out := make([]groups.TopicIDPartitions, n)
	for i := range out {
		var id groups.UUID
		id[0], id[1], id[2], id[3] = byte(i), byte(g), byte(g>>8), byte(g>>16)
		out[i] = groups.TopicIDPartitions{TopicID: id, Partitions: []int32{int32(2 * m), int32(2*m + 1)}}
	}
	return out
}

func sortedSet(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
