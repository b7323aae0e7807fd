package groupstest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// ParseText parses the text form of one __consumer_offsets group record, as script
// tests write it:
//
//	member consumer|share GROUP MEMBER [topics=A,B] [regex=R] [instance=I]
//	                                                           member metadata (instance:
//	                                                           group.instance.id, consumer)
//	leave consumer|share GROUP MEMBER                          its tombstone
//	meta consumer|share GROUP epoch=N [hash=HEX]               group metadata
//	delete consumer|share|classic GROUP                        group metadata tombstone
//	classic GROUP gen=N [MEMBER=A,B ...]                       GroupMetadata (consumer protocol)
//	topology GROUP topics=A,B                                  streams topology, one subtopology
//	resolved GROUP regex=R [topics=A,B] [version=N]            a consumer group's regex resolution
//	assignment consumer|share GROUP epoch=N [at=MS]            target assignment metadata (at:
//	                                                           AssignmentTimestamp, Kafka 4.3+)
//	target consumer|share GROUP MEMBER [TOPIC=P,P ...]         a member's target assignment
//	                                                           (TOPIC: a topic id, short name)
//
// HASH is hexadecimal; a regex may be Go-quoted. Member records carry client id "c" and
// host "h"; a classic group without members has no protocol.
func ParseText(line string) (groups.Record, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return groups.Record{}, fmt.Errorf("short line %q", line)
	}
	kv := map[string]string{}
	var plain []string
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			if strings.HasPrefix(v, `"`) {
				u, err := strconv.Unquote(v)
				if err != nil {
					return groups.Record{}, fmt.Errorf("%s: %v", a, err)
				}
				v = u
			}
			kv[k] = v
		} else {
			plain = append(plain, a)
		}
	}
	list := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(kv[k], 10, 64)
		return n
	}
	switch f[0] {
	case "member", "leave":
		if len(plain) != 3 {
			return groups.Record{}, fmt.Errorf("want %s TYPE GROUP MEMBER", f[0])
		}
		rec := groups.Record{GroupID: plain[1], MemberID: plain[2], Version: 0}
		switch plain[0] {
		case "consumer":
			rec.Type = groups.ConsumerGroupMemberMetadata
			rec.Value = &groups.ConsumerGroupMemberMetadataValue{ClientID: "c", ClientHost: "h",
				SubscribedTopicNames: list(kv["topics"]), SubscribedTopicRegex: kv["regex"], RebalanceTimeoutMs: -1,
				InstanceID: kv["instance"]}
		case "share":
			rec.Type = groups.ShareGroupMemberMetadata
			rec.Value = &groups.ShareGroupMemberMetadataValue{ClientID: "c", ClientHost: "h", SubscribedTopicNames: list(kv["topics"])}
		default:
			return groups.Record{}, fmt.Errorf("member of a %q group", plain[0])
		}
		if f[0] == "leave" {
			rec.Value, rec.Tombstone, rec.Version = nil, true, -1
		}
		return rec, nil
	case "meta", "delete":
		if len(plain) != 2 {
			return groups.Record{}, fmt.Errorf("want %s TYPE GROUP", f[0])
		}
		h, _ := strconv.ParseUint(kv["hash"], 16, 64)
		rec := groups.Record{GroupID: plain[1]}
		switch plain[0] {
		case "consumer":
			rec.Type = groups.ConsumerGroupMetadata
			rec.Value = &groups.ConsumerGroupMetadataValue{Epoch: int32(num("epoch")), MetadataHash: int64(h), CreationTimeMs: -1}
		case "share":
			rec.Type = groups.ShareGroupMetadata
			rec.Value = &groups.ShareGroupMetadataValue{Epoch: int32(num("epoch")), MetadataHash: int64(h)}
		case "classic":
			rec.Type, rec.Version = groups.GroupMetadata, 3
		default:
			return groups.Record{}, fmt.Errorf("metadata of a %q group", plain[0])
		}
		if f[0] == "delete" {
			rec.Value, rec.Tombstone, rec.Version = nil, true, -1
		}
		return rec, nil
	case "classic":
		if len(plain) != 1 {
			return groups.Record{}, errors.New("want classic GROUP gen=N MEMBER=A,B")
		}
		gen := int32(num("gen"))
		v := &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: gen, Protocol: "range", CurrentStateTimestamp: -1}
		var ids []string
		for k := range kv {
			if k != "gen" {
				ids = append(ids, k)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			v.Members = append(v.Members, groups.GroupMember{MemberID: id, ClientID: "c", ClientHost: "h",
				RebalanceTimeout: 1, SessionTimeout: 1,
				Subscription: &groups.ConsumerProtocolSubscription{Version: 3, Topics: list(kv[id]), GenerationID: gen}})
		}
		if len(ids) == 0 {
			v.ProtocolType, v.Protocol = "", ""
		}
		return groups.Record{Type: groups.GroupMetadata, GroupID: plain[0], Version: 3, Value: v}, nil
	case "resolved":
		if len(plain) != 1 || kv["regex"] == "" {
			return groups.Record{}, errors.New("want resolved GROUP regex=R topics=A,B")
		}
		return groups.Record{Type: groups.ConsumerGroupRegularExpression, GroupID: plain[0], Regex: kv["regex"],
			Value: &groups.ConsumerGroupRegularExpressionValue{Topics: list(kv["topics"]), Version: num("version")}}, nil
	case "assignment":
		if len(plain) != 2 {
			return groups.Record{}, errors.New("want assignment TYPE GROUP epoch=N [at=MS]")
		}
		v := &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: int32(num("epoch")), AssignmentTimestamp: num("at")}
		switch plain[0] {
		case "consumer":
			return groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: plain[1], Value: v}, nil
		case "share":
			return groups.Record{Type: groups.ShareGroupTargetAssignmentMetadata, GroupID: plain[1],
				Value: (*groups.ShareGroupTargetAssignmentMetadataValue)(v)}, nil
		}
		return groups.Record{}, fmt.Errorf("assignment of a %q group", plain[0])
	case "target":
		if len(plain) != 3 {
			return groups.Record{}, errors.New("want target TYPE GROUP MEMBER [TOPIC=P,P ...]")
		}
		var tps []groups.TopicIDPartitions
		for _, name := range slices.Sorted(maps.Keys(kv)) {
			id, err := metadata.ShortUUIDs.Parse(name)
			if err != nil {
				return groups.Record{}, err
			}
			t := groups.TopicIDPartitions{TopicID: id}
			for _, p := range list(kv[name]) {
				n, err := strconv.ParseInt(p, 10, 32)
				if err != nil {
					return groups.Record{}, fmt.Errorf("partition %q of %s: %v", p, name, err)
				}
				t.Partitions = append(t.Partitions, int32(n))
			}
			tps = append(tps, t)
		}
		switch plain[0] {
		case "consumer":
			return groups.Record{Type: groups.ConsumerGroupTargetAssignmentMember, GroupID: plain[1], MemberID: plain[2],
				Value: &groups.ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: tps}}, nil
		case "share":
			return groups.Record{Type: groups.ShareGroupTargetAssignmentMember, GroupID: plain[1], MemberID: plain[2],
				Value: &groups.ShareGroupTargetAssignmentMemberValue{TopicPartitions: tps}}, nil
		}
		return groups.Record{}, fmt.Errorf("target of a %q group", plain[0])
	case "topology":
		if len(plain) != 1 {
			return groups.Record{}, errors.New("want topology GROUP topics=A,B")
		}
		v := &groups.StreamsGroupTopologyValue{Epoch: 1, Subtopologies: []groups.Subtopology{
			{SubtopologyID: "0", SourceTopics: list(kv["topics"])}}}
		return groups.Record{Type: groups.StreamsGroupTopology, GroupID: plain[0], Value: v}, nil
	}
	return groups.Record{}, fmt.Errorf("unknown group record %q", f[0])
}
