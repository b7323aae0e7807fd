package engine

import (
	"iter"
	"sort"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// applyMetadata moves to the update's image, drops the cache entries it invalidates
// and returns the groups whose topics it touched, with the reasons.
func (e *Engine) applyMetadata(u observer.Update) []decision {
	old := e.img
	e.img = u.Image
	ch := u.Changes
	if ch == nil || ch.Empty() {
		return nil
	}
	reasons := map[string][]publish.Reason{} // topic name -> why it changed
	inv := hashcache.Invalidation{}
	for _, t := range ch.Deleted {
		inv.Deleted = append(inv.Deleted, t.Name)
		if _, recreated := e.img.TopicByName(t.Name); recreated {
			continue // reported with the Created entry
		}
		r := publish.Reason{Kind: publish.TopicDeleted, Topic: t.Name, TopicID: t.ID.String()}
		if ot, ok := old.Topic(t.ID); ok {
			r.OldPartitions = int32(ot.NumPartitions())
		}
		reasons[t.Name] = append(reasons[t.Name], r)
	}
	for _, t := range ch.Created {
		r := publish.Reason{Kind: publish.TopicCreated, Topic: t.Name, TopicID: t.ID.String()}
		if nt, ok := e.img.Topic(t.ID); ok {
			r.NewPartitions = int32(nt.NumPartitions())
		}
		if t.PreviousID != (image.UUID{}) {
			r.Kind, r.OldTopicID = publish.TopicRecreated, t.PreviousID.String()
			if ot, ok := old.Topic(t.PreviousID); ok {
				r.OldPartitions = int32(ot.NumPartitions())
			}
			inv.Changed = append(inv.Changed, t.Name)
		}
		reasons[t.Name] = append(reasons[t.Name], r)
	}
	for _, t := range ch.Changed {
		if !t.ReplicasChanged {
			continue // leader, ISR and epochs are not hashed
		}
		inv.Changed = append(inv.Changed, t.Name)
		if t.PartitionsAdded() > 0 {
			reasons[t.Name] = append(reasons[t.Name], publish.Reason{Kind: publish.PartitionsAdded, Topic: t.Name,
				TopicID: t.ID.String(), OldPartitions: int32(t.OldPartitions), NewPartitions: int32(t.Partitions)})
		} else {
			reasons[t.Name] = append(reasons[t.Name], publish.Reason{Kind: publish.RacksChanged, Topic: t.Name, TopicID: t.ID.String()})
		}
	}
	for _, b := range ch.Brokers {
		if b.RackChanged || b.Unregistered || b.Registered {
			inv.Brokers = append(inv.Brokers, b.ID)
		}
	}
	for _, name := range e.cache.Invalidate(inv, nil) {
		if len(reasons[name]) == 0 {
			t, _ := e.img.TopicByName(name)
			r := publish.Reason{Kind: publish.RacksChanged, Topic: name}
			if t != nil {
				r.TopicID = t.ID().String()
			}
			reasons[name] = append(reasons[name], r)
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	// The groups reading a touched topic, by name or by regex.
	byGroup := map[groups.GroupKey][]publish.Reason{}
	for name, rs := range reasons {
		for _, s := range e.state.Subscribers(name) {
			for _, r := range rs {
				if s.Via&groups.ViaRegex != 0 && s.Via&groups.ViaName == 0 && r.Kind == publish.TopicCreated {
					r.Kind = publish.RegexMatched
				}
				byGroup[s.Group] = append(byGroup[s.Group], r)
			}
		}
	}
	return e.decisions(byGroup)
}

// applyRecord applies one __consumer_offsets record; a group whose subscription
// changed is returned as a decision.
func (e *Engine) applyRecord(m groups.Message) (decision, bool) {
	change, err := e.state.Replay(m.Key, m.Value)
	if err != nil {
		e.decodeEr++
		e.log.Warn("skipping a __consumer_offsets record", "partition", m.Partition, "offset", m.Offset, "err", err)
		return decision{}, false
	}
	if !change.Changed() {
		return decision{}, false
	}
	k := change.Group
	e.position[k] = groupsPosition{partition: int32(m.Partition), offset: m.Offset}
	if change.Removed {
		delete(e.position, k)
		delete(e.coordEp, k)
		delete(e.last, k)
		return decision{}, false
	}
	if g, ok := e.state.Group(k); ok && g.HasMetadata {
		e.coordEp[k] = g.Epoch
	}
	if !change.Subscription && !change.Created {
		return decision{}, false
	}
	if !e.synced.Load() || !e.wanted(k) {
		return decision{}, false
	}
	return e.decision(k, e.subscriptionReasons(k)), true
}

// subscriptionReasons lists the topics group k reads, as subscription changes.
func (e *Engine) subscriptionReasons(k groups.GroupKey) []publish.Reason {
	var rs []publish.Reason
	for _, name := range e.state.SubscribedTopics(k, imageNames{e.img}) {
		r := publish.Reason{Kind: publish.SubscriptionChanged, Topic: name}
		if t, ok := e.img.TopicByName(name); ok {
			r.TopicID, r.NewPartitions = t.ID().String(), int32(t.NumPartitions())
		}
		rs = append(rs, r)
	}
	return rs
}

// decisions computes the new hash of each group, in a stable order.
func (e *Engine) decisions(byGroup map[groups.GroupKey][]publish.Reason) []decision {
	keys := make([]groups.GroupKey, 0, len(byGroup))
	for k := range byGroup {
		if e.wanted(k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Compare(keys[j]) < 0 })
	out := make([]decision, 0, len(keys))
	for _, k := range keys {
		rs := byGroup[k]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Topic < rs[j].Topic })
		out = append(out, e.decision(k, rs))
	}
	return out
}

// TopicNames returns the topic names of an image as groups.TopicNames.
func TopicNames(im *image.Image) groups.TopicNames { return imageNames{im} }

type imageNames struct{ im *image.Image }

func (n imageNames) Contains(name string) bool {
	_, ok := n.im.TopicByName(name)
	return ok
}

func (n imageNames) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		for t := range n.im.Topics() {
			if !yield(t.Name()) {
				return
			}
		}
	}
}
