package engine

import (
	"slices"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/kbin"
	"github.com/kraftwatch/kraftwatch/publish"
)

// stamper says where in the metadata log the change a reason describes was written,
// from the image's stamps (image.Delta.At). It is pure. For one image it memoizes
// the two look-ups that cost more than a map access, so that thousands of groups
// reading one topic pay them once: the racks stamp of a topic (a walk over its
// partitions) and a deleted topic (a search of the image's last deletions).
type stamper struct {
	img     *image.Image
	racks   map[image.UUID]image.Stamp
	deleted map[image.UUID]image.Stamp
}

func newStamper(img *image.Image) *stamper {
	return &stamper{img: img, racks: map[image.UUID]image.Stamp{}, deleted: map[image.UUID]image.Stamp{}}
}

// stamp returns the stamp of the record behind a reason of kind about topic id
// (for TopicDeleted, the id the topic had), unknown when the image does not know it.
func (s *stamper) stamp(kind events.ReasonKind, id image.UUID) image.Stamp {
	unknown := image.Stamp{Offset: -1, Timestamp: -1}
	if kind == events.TopicDeleted {
		st, ok := s.deleted[id]
		if !ok {
			st = unknown
			if dt, found := s.img.DeletedTopic(id); found {
				st = dt.Deleted
			}
			s.deleted[id] = st
		}
		return st
	}
	t, ok := s.img.Topic(id)
	if !ok {
		return unknown
	}
	switch kind {
	case events.TopicCreated, events.TopicRecreated, events.RegexMatched:
		return t.Created()
	case events.PartitionsAdded:
		return t.PartitionsAdded()
	case events.RacksChanged:
		return s.racksStamp(t)
	}
	return unknown
}

// racksStamp is the latest of the topic's last replica change and the last rack
// change of each broker its replicas are on.
func (s *stamper) racksStamp(t *image.Topic) image.Stamp {
	if st, ok := s.racks[t.ID()]; ok {
		return st
	}
	st := t.ReplicasChanged()
	seen := map[int32]bool{}
	for p := range t.Partitions() {
		for _, b := range p.Replicas() {
			if seen[b] {
				continue
			}
			seen[b] = true
			if bs, ok := s.img.BrokerRackChanged(b); ok && bs.Offset > st.Offset {
				st = bs
			}
		}
	}
	s.racks[t.ID()] = st
	return st
}

// stampReason sets r's metadata offset and time from the image's stamps.
func (s *stamper) stampReason(r *events.Reason) {
	if r.Kind == events.SubscriptionChanged || r.TopicID == "" {
		return
	}
	id, err := kbin.ParseUUID(r.TopicID)
	if err != nil {
		return
	}
	if st := s.stamp(r.Kind, id); st.Known() && st.Offset > 0 {
		r.MetadataOffset = st.Offset
		if st.Timestamp >= 0 {
			r.Time = time.UnixMilli(st.Timestamp).UTC()
		}
	}
}

// downtimeReasons says why a group's hash moved while kraftwatch was down: it compares
// what the group's last event covered (last.Topics, as they were at
// last.MetadataOffset) with what its hash covers now (now, sorted by name), topic by
// topic, and stamps each reason with the change's record. subscribed is when the
// group's subscription was last written (its __consumer_offsets record), zero when
// not known; regexOf returns the group's regex that matches a topic the group does
// not name, "" for one it names.
//
//   - a name in both with the same id: partitions_added when it grew, racks_changed
//     when only its hash moved; with another id: recreated.
//   - a name only now: created (regex_matched when only a regex of the group matches
//     it) when the topic was created after the last event, else subscription_changed
//     (the group started reading it).
//   - a name only in the last event: deleted when no topic has it now, else
//     subscription_changed (the group stopped reading it).
//
// When the last event's list is truncated or absent (an older kraftwatch), the names
// it does not list are judged by their stamps alone: changed after the last event
// (created, partitions added, racks changed) or not a reason; deletions of unlisted
// topics are not known. It returns nil when nothing explains the move.
func downtimeReasons(s *stamper, last publish.Last, now []events.CoveredTopic, subscribed time.Time, regexOf func(topic string) string) []events.Reason {
	before := make(map[string]events.CoveredTopic, len(last.Topics))
	for _, t := range last.Topics {
		before[t.Name] = t
	}
	complete := last.Topics != nil && !last.TopicsTruncated
	since := last.Cause.MetadataOffset
	var out []events.Reason
	add := func(r events.Reason) {
		if r.Kind == events.SubscriptionChanged {
			r.Time = subscribed
		} else {
			s.stampReason(&r)
		}
		out = append(out, r)
	}
	inNow := make(map[string]bool, len(now))
	for _, n := range now {
		inNow[n.Name] = true
		b, listed := before[n.Name]
		t, _ := s.img.TopicByName(n.Name)
		switch {
		case listed && b.TopicID != n.TopicID:
			add(events.Reason{Kind: events.TopicRecreated, Topic: n.Name, TopicID: n.TopicID, OldTopicID: b.TopicID,
				OldPartitions: b.Partitions, NewPartitions: n.Partitions})
		case listed && n.Partitions > b.Partitions:
			add(events.Reason{Kind: events.PartitionsAdded, Topic: n.Name, TopicID: n.TopicID,
				OldPartitions: b.Partitions, NewPartitions: n.Partitions})
		case listed && n.Hash != b.Hash:
			add(events.Reason{Kind: events.RacksChanged, Topic: n.Name, TopicID: n.TopicID,
				OldPartitions: b.Partitions, NewPartitions: n.Partitions})
		case listed:
		case t != nil && t.Created().After(since):
			r := events.Reason{Kind: events.TopicCreated, Topic: n.Name, TopicID: n.TopicID, NewPartitions: n.Partitions}
			if r.Regex = regexOf(n.Name); r.Regex != "" {
				r.Kind = events.RegexMatched
			}
			add(r)
		case complete:
			add(events.Reason{Kind: events.SubscriptionChanged, Topic: n.Name, TopicID: n.TopicID, NewPartitions: n.Partitions})
		case t != nil && t.PartitionsAdded().After(since):
			add(events.Reason{Kind: events.PartitionsAdded, Topic: n.Name, TopicID: n.TopicID, NewPartitions: n.Partitions})
		case t != nil && s.racksStamp(t).After(since):
			add(events.Reason{Kind: events.RacksChanged, Topic: n.Name, TopicID: n.TopicID, NewPartitions: n.Partitions})
		}
	}
	for _, b := range last.Topics {
		if inNow[b.Name] {
			continue
		}
		if t, ok := s.img.TopicByName(b.Name); ok {
			r := events.Reason{Kind: events.SubscriptionChanged, Topic: b.Name, TopicID: t.ID().String(), OldPartitions: int32(t.NumPartitions())}
			add(r)
			continue
		}
		add(events.Reason{Kind: events.TopicDeleted, Topic: b.Name, TopicID: b.TopicID, OldPartitions: b.Partitions})
	}
	slices.SortFunc(out, func(a, b events.Reason) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Kind) - int(b.Kind)
	})
	return out
}

// latest returns the latest time among the reasons, zero when none has one.
func latest(rs []events.Reason) time.Time {
	var t time.Time
	for _, r := range rs {
		if r.Time.After(t) {
			t = r.Time
		}
	}
	return t
}
