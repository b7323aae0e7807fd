package publish

import (
	"github.com/kraftwatch/kraftwatch/events"
)

// The event types are the events package's, so that publishers and subscribers share one
// definition; these names keep kraftwatch's own code short.
type (
	// Event is the data of a rebalance-needed event: one group's hash changed. The
	// caller fills it; Enqueue fills ClusterID and HashScheme from the Config when empty.
	Event = events.RebalanceNeeded
	// Envelope is the rebalance-needed CloudEvent as published;
	// schema/rebalance_needed.v1.json is its JSON Schema.
	Envelope        = events.Envelope[events.RebalanceNeeded]
	GroupType       = events.GroupType
	GroupKey        = events.GroupKey
	ReasonKind      = events.ReasonKind
	Reason          = events.Reason
	CoveredTopic    = events.CoveredTopic
	Hash            = events.Hash
	NullHash        = events.NullHash
	Cause           = events.Cause
	OffsetsPosition = events.OffsetsPosition
)

// CloudEvents attributes of every event.
const (
	SpecVersion     = events.SpecVersion
	EventType       = events.TypeRebalanceNeeded
	DataContentType = events.DataContentType
	// ContentType is the NATS Content-Type header of a structured-mode CloudEvent.
	ContentType = events.ContentType
)

// Hash scheme names, as hashcache and KRAFTWATCH_HASH_SCHEME spell them.
const (
	SchemeMurmur3 = events.SchemeMurmur3
	SchemeKafka   = events.SchemeKafka
)

// Group types; see events.GroupType.
const (
	UnknownGroup  = events.UnknownGroup
	ClassicGroup  = events.ClassicGroup
	ConsumerGroup = events.ConsumerGroup
	ShareGroup    = events.ShareGroup
	StreamsGroup  = events.StreamsGroup
)

// Reason kinds; see events.ReasonKind.
const (
	UnknownReason       = events.UnknownReason
	TopicCreated        = events.TopicCreated
	TopicDeleted        = events.TopicDeleted
	TopicRecreated      = events.TopicRecreated
	PartitionsAdded     = events.PartitionsAdded
	RacksChanged        = events.RacksChanged
	SubscriptionChanged = events.SubscriptionChanged
	RegexMatched        = events.RegexMatched
)

// MaxTopicsBytes is events.MaxTopicsBytes.
const MaxTopicsBytes = events.MaxTopicsBytes

// FitTopics is events.FitTopics.
func FitTopics(ts []CoveredTopic, maxBytes int) ([]CoveredTopic, bool) {
	return events.FitTopics(ts, maxBytes)
}

// ParseGroupType is events.ParseGroupType.
func ParseGroupType(s string) (GroupType, error) { return events.ParseGroupType(s) }

// ParseReasonKind is events.ParseReasonKind.
func ParseReasonKind(s string) (ReasonKind, error) { return events.ParseReasonKind(s) }

// SomeHash returns a valid NullHash holding h.
func SomeHash(h int64) NullHash { return events.SomeHash(h) }

// Decode reads a rebalance-needed event (events.DecodeRebalanceNeeded): it checks it as
// the JSON Schema does and validates the data; errors wrap ErrNotEvent. The returned
// Envelope's Data.Time is set from the envelope's time.
func Decode(b []byte) (Envelope, error) { return events.DecodeRebalanceNeeded(b) }
