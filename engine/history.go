package engine

import (
	"time"

	"github.com/kraftwatch/kraftwatch/events"
)

// DefaultHistorySize is the number of events kept per group when Config.HistorySize
// is 0.
const DefaultHistorySize = 8

// HistoryEvent is one event published for a group, as the group state API shows it.
type HistoryEvent struct {
	// Type is the CloudEvents type: events.TypeRebalanceNeeded, or the rebalanced
	// event's type.
	Type string
	ID   string // the event id (Nats-Msg-Id)
	Time time.Time
	// CoordinatorEpoch is the coordinator's group epoch when the event was decided;
	// -1 when the group had no metadata record.
	CoordinatorEpoch int32
	// PreviousHash and NewHash are the hashes of a rebalance-needed event
	// (HasPreviousHash false for a group's first), or the previous and new stored
	// MetadataHash of a rebalanced event's metadata cause (both false when the bump
	// has none: the hash did not change).
	HasPreviousHash, HasNewHash bool
	PreviousHash, NewHash       int64
	// Summary says what happened in a few words ("partitions_added orders 3->5").
	Summary string
}

// History keeps the last events of every group, at most size per group, oldest
// first. It is owned by the engine's goroutine; Query hands it to readers.
type History struct {
	size    int
	byGroup map[events.GroupKey][]HistoryEvent
}

// NewHistory returns an empty History of size events per group (0: DefaultHistorySize).
func NewHistory(size int) *History {
	if size <= 0 {
		size = DefaultHistorySize
	}
	return &History{size: size, byGroup: map[events.GroupKey][]HistoryEvent{}}
}

// Record adds ev to k's history, dropping the oldest beyond the size. Events of both
// types go through it: rebalance-needed from announce, rebalanced from whoever
// publishes them.
func (h *History) Record(k events.GroupKey, ev HistoryEvent) {
	evs := h.byGroup[k]
	if len(evs) == h.size {
		copy(evs, evs[1:])
		evs = evs[:len(evs)-1]
	} else if evs == nil {
		evs = make([]HistoryEvent, 0, 2)
	}
	h.byGroup[k] = append(evs, ev)
}

// Events returns k's events, oldest first. The slice belongs to the History.
func (h *History) Events(k events.GroupKey) []HistoryEvent { return h.byGroup[k] }

// forget drops k's events (the group was removed), so the history stays bounded
// by the groups that exist.
func (h *History) forget(k events.GroupKey) { delete(h.byGroup, k) }
