package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/publish"
)

// Rebalanced events: every group epoch the coordinator writes becomes one, or on Kafka
// 4.3+ every new target assignment with the bumps folded into it (groups.Rebalances
// attributes the causes and folds), published when Config.Rebalanced is set. A bump read live is announced at once; the
// bumps read while replaying __consumer_offsets at start-up (at most maxReplayedBumps
// per group, the latest) are announced after the start-up comparison, and the publisher
// skips those its stream already holds (same id, or an earlier bump record than the
// group's last stored one), so a restart announces the bumps made while kraftwatch was
// down, once. A metadata cause links the rebalance-needed event that predicted it (the
// group's last one since the previous bump whose hash is the coordinator's new stored
// hash); bumps replayed at start-up link none.

// maxReplayedBumps bounds the bumps kept per group during the start-up replay: the
// stream keeps DefaultMaxMsgsPerSubject events per subject anyway.
const maxReplayedBumps = publish.DefaultMaxMsgsPerSubject

// maxPredictions bounds the rebalance-needed events kept per group for linking.
const maxPredictions = 4

// prediction is a rebalance-needed event a later bump may link.
type prediction struct {
	id   string
	hash int64 // the event's new hash, in the published scheme
	time time.Time
}

// bump is one epoch bump read, with its record's position and time.
type bump struct {
	rb        *groups.Rebalance
	partition int32
	offset    int64
	time      time.Time
}

// rebalances is the engine's part that follows the coordinator's bumps; owned by Run's
// goroutine.
type rebalances struct {
	rb          *groups.Rebalances
	predictions map[events.GroupKey][]prediction
	live        []bump                     // read since the last flush, in sync
	replayed    map[events.GroupKey][]bump // read before in sync
	dropped     int                        // replayed bumps beyond maxReplayedBumps
	// epochAt is, per group, its last epoch record (one that changed its epoch or
	// stored hash): where a Rebalance without Assignment is told, which
	// groups.Rebalances may return at the assignment record after it.
	epochAt map[events.GroupKey]bump
}

func newRebalances() rebalances {
	return rebalances{rb: groups.NewRebalances(), predictions: map[events.GroupKey][]prediction{},
		replayed: map[events.GroupKey][]bump{}, epochAt: map[events.GroupKey]bump{}}
}

// noteBump keeps a bump read from m for announcing.
func (e *Engine) noteBump(rb *groups.Rebalance, m groups.Message) {
	r := &e.rebal
	b := bump{rb: rb, partition: int32(m.Partition), offset: m.Offset, time: m.Time}
	if at, ok := r.epochAt[rb.Group]; ok && rb.Assignment == nil {
		b.partition, b.offset, b.time = at.partition, at.offset, at.time
	}
	if e.synced.Load() {
		r.live = append(r.live, b)
		return
	}
	bs := r.replayed[rb.Group]
	if len(bs) == maxReplayedBumps {
		copy(bs, bs[1:])
		bs = bs[:len(bs)-1]
		r.dropped++
	}
	r.replayed[rb.Group] = append(bs, b)
}

// flushReplayed announces the bumps read during the start-up replay.
func (e *Engine) flushReplayed(ctx context.Context) error {
	r := &e.rebal
	n := 0
	// In group order, so that every start-up (and every replica) hands them on alike.
	for _, k := range slices.SortedFunc(maps.Keys(r.replayed), events.GroupKey.Compare) {
		bs := r.replayed[k]
		for _, b := range bs {
			if err := e.announceBump(ctx, b, false); err != nil {
				return err
			}
			n++
		}
		delete(r.replayed, k)
	}
	if n > 0 || r.dropped > 0 {
		e.log.Info("epoch bumps read at start-up handed to the publisher (it skips those already stored)",
			"bumps", n, "older_bumps_not_announced", r.dropped)
	}
	r.dropped = 0
	return nil
}

// flushLive announces the bumps read live since the last call.
func (e *Engine) flushLive(ctx context.Context) error {
	r := &e.rebal
	for i, b := range r.live {
		if err := e.announceBump(ctx, b, true); err != nil {
			r.live = r.live[i:]
			return err
		}
	}
	r.live = r.live[:0]
	return nil
}

// predicted remembers a rebalance-needed event for the group's next bump.
func (e *Engine) predicted(k events.GroupKey, id string, hash int64, at time.Time) {
	ps := e.rebal.predictions[k]
	if len(ps) == maxPredictions {
		ps = append(ps[:0], ps[1:]...)
	}
	e.rebal.predictions[k] = append(ps, prediction{id: id, hash: hash, time: at})
}

// link returns the prediction of a bump whose stored hash is stored, written at at,
// and forgets it and the predictions before it. With the kafka scheme the published
// hash is the coordinator's, so the last prediction of that hash is it; with another
// scheme, the group's last prediction is it when the kafka-scheme hash of the group's
// topics in the current image is the stored hash.
func (e *Engine) link(k events.GroupKey, stored int64, at time.Time) *events.Prediction {
	ps := e.rebal.predictions[k]
	i := len(ps) - 1
	if e.coord.kafka == nil {
		for ; i >= 0 && ps[i].hash != stored; i-- {
		}
	} else if i >= 0 {
		e.coord.kafka.Clear() // its topic hashes are not kept up to date between uses
		if e.coord.kafka.GroupHash(hashcache.ImageCluster{Image: e.img}, e.tracker.Topics(k)) != stored {
			i = -1
		}
	}
	if i < 0 {
		return nil
	}
	p := ps[i]
	if rest := ps[i+1:]; len(rest) > 0 {
		e.rebal.predictions[k] = rest
	} else {
		delete(e.rebal.predictions, k)
	}
	var lead int64
	if !p.time.IsZero() && !at.IsZero() {
		lead = at.Sub(p.time).Milliseconds()
	}
	return &events.Prediction{EventID: p.id, NewHash: events.Hash(p.hash), Time: p.time, LeadTimeMs: lead}
}

// announceBump hands one bump to the publisher as a rebalanced event; live bumps may
// link the rebalance-needed event that predicted them.
func (e *Engine) announceBump(ctx context.Context, b bump, live bool) error {
	rb := b.rb
	if !e.wanted(rb.Group) {
		return nil
	}
	ev := events.GroupRebalanced{
		ClusterID:       e.cfg.ClusterID,
		GroupID:         rb.Group.ID,
		GroupType:       rb.Group.Type,
		NewEpoch:        rb.NewEpoch,
		MetadataHash:    events.Hash(rb.MetadataHash),
		ConsumerOffsets: events.OffsetsPosition{Partition: b.partition, Offset: b.offset},
		Causes:          make([]events.RebalanceCause, 0, len(rb.Causes)),
		Time:            b.time,
	}
	if rb.HasOldEpoch {
		old := rb.OldEpoch
		ev.PreviousEpoch = &old
	}
	for i := range rb.Causes {
		c := &rb.Causes[i]
		pc := events.RebalanceCause{Kind: c.Kind, MemberID: c.MemberID, InstanceID: c.InstanceID,
			ClientID: c.ClientID, ClientHost: c.ClientHost, RackID: c.RackID,
			SubscribedTopicNames: c.Topics, PreviousSubscribedTopicNames: c.OldTopics, PreviousSubscribedTopicRegex: c.OldRegex,
			TopicsAdded: c.TopicsAdded, TopicsRemoved: c.TopicsRemoved, PreviousValue: c.OldValue, NewValue: c.NewValue,
			Epoch: c.Epoch}
		switch c.Kind {
		case events.CauseRegexResolutionChanged:
			pc.Regex = c.Regex
		case events.CauseMetadata:
			old, cur := events.Hash(c.OldHash), events.Hash(c.NewHash)
			pc.PreviousHash, pc.NewHash = &old, &cur
			if live {
				pc.PredictedBy = e.link(rb.Group, c.NewHash, b.time)
			}
		default:
			pc.SubscribedTopicRegex = c.Regex
		}
		ev.Causes = append(ev.Causes, pc)
	}
	if rb.Assignment != nil {
		e.assignmentFields(&ev, rb)
	}
	if e.cfg.OnRebalanced != nil {
		e.cfg.OnRebalanced(ev)
	}
	// The group's timeline has its bumps whether or not they are published; the id is
	// the one the event has, or would have.
	h := HistoryEvent{Type: events.TypeGroupRebalanced, ID: ev.MsgID(), Time: ev.Time,
		CoordinatorEpoch: ev.NewEpoch, Summary: causesSummary(ev.Causes)}
	for _, c := range rb.Causes {
		if c.Kind == events.CauseMetadata {
			// The hashes the event's metadata cause carries.
			h.HasPreviousHash, h.PreviousHash, h.HasNewHash, h.NewHash = true, c.OldHash, true, c.NewHash
		}
	}
	e.history.Record(rb.Group, h)
	if !e.cfg.Rebalanced {
		return nil
	}
	if err := e.cfg.Publisher.EnqueueRebalanced(ctx, ev); errors.Is(err, events.ErrInvalidEvent) {
		e.invalid++
		e.log.Error("rebalanced event refused as invalid; not published", "group", rb.Group.ID,
			"group_type", rb.Group.Type.String(), "epoch", rb.NewEpoch, "error", err)
		return nil
	} else if err != nil {
		return fmt.Errorf("engine: enqueue rebalanced event of %s: %w", rb.Group, err)
	}
	e.log.Info("group rebalanced", "group", rb.Group.ID, "group_type", rb.Group.Type.String(), "epoch", rb.NewEpoch,
		"epoch_bumps", len(ev.EpochBumps), "causes", causesSummary(ev.Causes), "partition", b.partition, "offset", b.offset)
	return nil
}

// assignmentFields sets the event's members of a batched assignment (Kafka 4.3+):
// its epoch and time, the bumps folded in and, but for streams groups, the partitions
// it moved, named from the current image.
func (e *Engine) assignmentFields(ev *events.GroupRebalanced, rb *groups.Rebalance) {
	a := rb.Assignment
	epoch := a.Epoch
	ev.AssignmentEpoch, ev.EpochBumps = &epoch, a.Epochs
	if a.Timestamp > 0 {
		ev.AssignmentTime = time.UnixMilli(a.Timestamp).UTC()
	}
	if rb.Group.Type == events.StreamsGroup {
		return
	}
	n := 0
	moved := make([]events.MovedPartitions, 0, len(a.Moved))
	for _, t := range a.Moved {
		n += len(t.Partitions)
		m := events.MovedPartitions{TopicID: t.TopicID.String(), Partitions: t.Partitions}
		if topic, ok := e.topic(t.TopicID); ok {
			m.Topic = topic.Name()
		}
		moved = append(moved, m)
	}
	slices.SortFunc(moved, func(x, y events.MovedPartitions) int {
		return cmp.Or(strings.Compare(x.Topic, y.Topic), strings.Compare(x.TopicID, y.TopicID))
	})
	ev.PartitionsMoved = &n
	ev.MovedPartitions, ev.MovedPartitionsTruncated = events.FitMovedPartitions(moved, events.MaxTopicsBytes)
}

// topic returns the current image's topic of id, if the image is loaded and has it.
func (e *Engine) topic(id groups.UUID) (*image.Topic, bool) {
	if e.img == nil {
		return nil, false
	}
	return e.img.Topic(id)
}

// causesSummary says what a bump's causes are in a few words, for the history and logs.
func causesSummary(cs []events.RebalanceCause) string {
	var b strings.Builder
	for i, c := range cs {
		if i == 3 {
			fmt.Fprintf(&b, "; +%d more", len(cs)-3)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.Kind.String())
		if c.MemberID != "" {
			b.WriteString(" " + c.MemberID)
		}
		if c.PredictedBy != nil {
			fmt.Fprintf(&b, " (predicted %d ms before)", c.PredictedBy.LeadTimeMs)
		}
	}
	return b.String()
}
