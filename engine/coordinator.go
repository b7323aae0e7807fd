package engine

import (
	"strconv"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
)

// DefaultMismatchAfter is Config.MismatchAfter's default. The coordinator recomputes a
// group's MetadataHash on the first heartbeat after a metadata change (every few
// seconds for an active group), so two minutes leave room for slow heartbeats and a
// lagging __consumer_offsets reader.
const DefaultMismatchAfter = 2 * time.Minute

// coordinatorCheck compares, now and then, the kafka-scheme hash of each group with the
// MetadataHash its coordinator stored, and counts the groups that have disagreed for
// longer than the grace period: kraftwatch's hash or Kafka's hashing is wrong, or the
// coordinator has stopped refreshing. Which groups are compared, and which
// disagreements are explained, is groups.CheckCoordinatorHash's rule set, the one
// `kraftwatch verify` applies too.
type coordinatorCheck struct {
	grace time.Duration
	// kafka hashes with the kafka scheme when the published scheme is another one; it
	// is emptied before each check, so it never holds a stale topic hash.
	kafka *hashcache.Cache
	since map[events.GroupKey]mismatch

	checked, mismatches int // of the last check
}

type mismatch struct {
	since  time.Time
	warned bool
}

// checkInterval is how often Run checks: often enough to notice within a fraction of
// the grace period, rarely enough to cost nothing (a check hashes the subscribed topics
// once).
func (c *coordinatorCheck) checkInterval() time.Duration {
	return min(max(c.grace/4, time.Second), 30*time.Second)
}

// checkCoordinator runs one check at now.
func (e *Engine) checkCoordinator(now time.Time) {
	c := &e.coord
	if c.kafka != nil {
		c.kafka.Clear()
	}
	c.checked, c.mismatches = 0, 0
	for _, k := range e.state.Keys() {
		g, _ := e.state.Group(k)
		if !e.wanted(k) {
			delete(c.since, k)
			continue
		}
		topics := e.tracker.Topics(k)
		res := groups.CheckCoordinatorHash(g, e.img, topics, func() int64 {
			if c.kafka != nil {
				return c.kafka.GroupHash(hashcache.ImageCluster{Image: e.img}, topics)
			}
			h, _ := e.tracker.Hash(k)
			return h
		})
		if res.Skip == groups.SkipUnregisteredBroker {
			// Counted as checked (kraftwatch_hash_coordinator_checked: groups with
			// members and a stored hash), its disagreement explained.
			c.checked++
		}
		if res.Skip != groups.CheckCompared {
			delete(c.since, k) // not compared: see groups.CheckSkip
			continue
		}
		c.checked++
		h := res.Hash
		if h == g.MetadataHash {
			if m, ok := c.since[k]; ok && m.warned {
				e.log.Info("the kafka-scheme hash agrees with the coordinator's again", "group", k.ID, "group_type", k.Type.String(),
					"hash", strconv.FormatInt(h, 10), "coordinator_epoch", g.Epoch)
			}
			delete(c.since, k)
			continue
		}
		m, ok := c.since[k]
		if !ok {
			m.since = now
		}
		if now.Sub(m.since) >= c.grace {
			c.mismatches++
			if !m.warned {
				m.warned = true
				e.log.Warn("the kafka-scheme hash disagrees with the coordinator's stored MetadataHash", "group", k.ID,
					"group_type", k.Type.String(), "kraftwatch_hash", strconv.FormatInt(h, 10), "coordinator_hash", strconv.FormatInt(g.MetadataHash, 10),
					"coordinator_epoch", g.Epoch, "since", m.since, "topics", topics)
			}
		}
		c.since[k] = m
	}
}
