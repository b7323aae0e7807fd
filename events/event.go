package events

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// CloudEvents attributes of every event.
const (
	SpecVersion     = "1.0"
	DataContentType = "application/json"
	// ContentType is the NATS Content-Type header of a structured-mode CloudEvent.
	ContentType = "application/cloudevents+json"
	// SourcePrefix starts every event's source: "kraftwatch/<cluster id>".
	SourcePrefix = "kraftwatch/"
)

// Event types (the CloudEvents type attribute). A type's name ends in its version: a
// change that old subscribers could misread gets a new type.
const (
	// TypeRebalanceNeeded: a group's hash changed, so its members must rebalance; data
	// is RebalanceNeeded.
	TypeRebalanceNeeded = "kraftwatch.group.rebalance_needed.v1"
)

// Hash scheme names, as KRAFTWATCH_HASH_SCHEME spells them.
const (
	SchemeMurmur3 = "murmur3"
	SchemeKafka   = "kafka"
)

// GroupType is the kind of Kafka group.
type GroupType uint8

// Group types. String gives Kafka's lower-case names, which the subject and the JSON use.
const (
	UnknownGroup GroupType = iota
	ClassicGroup
	ConsumerGroup
	ShareGroup
	StreamsGroup
)

var groupTypeNames = [...]string{"unknown", "classic", "consumer", "share", "streams"}

// NumGroupTypes is the number of group types, UnknownGroup included.
const NumGroupTypes = len(groupTypeNames)

// String returns "classic", "consumer", "share", "streams" or "unknown".
func (t GroupType) String() string { return enumName(groupTypeNames[:], t) }

// ParseGroupType is the inverse of String for the four known types.
func ParseGroupType(s string) (GroupType, error) {
	if t, ok := parseEnum[GroupType](groupTypeNames[1:], s); ok {
		return t + 1, nil
	}
	return UnknownGroup, fmt.Errorf("unknown group type %q (want classic, consumer, share or streams)", s)
}

// MarshalText refuses UnknownGroup.
func (t GroupType) MarshalText() ([]byte, error) {
	if t == UnknownGroup || int(t) >= len(groupTypeNames) {
		return nil, fmt.Errorf("cannot encode group type %d", t)
	}
	return []byte(t.String()), nil
}

// UnmarshalText accepts the names ParseGroupType accepts.
func (t *GroupType) UnmarshalText(b []byte) error {
	v, err := ParseGroupType(string(b))
	*t = v
	return err
}

// ReasonKind says why a topic changed a group's hash.
type ReasonKind uint8

// Reason kinds; String gives the JSON names.
const (
	// UnknownReason: the hash of a subscribed topic changed in a way none of the other
	// kinds describes. It is never published (MarshalText refuses it).
	UnknownReason ReasonKind = iota
	// TopicCreated: a topic the group names now exists.
	TopicCreated
	// TopicDeleted: a topic the group read was deleted.
	TopicDeleted
	// TopicRecreated: a topic the group reads was deleted and created again with a new
	// id within one metadata update (OldTopicID is the old id).
	TopicRecreated
	// PartitionsAdded: a topic the group reads grew (OldPartitions -> NewPartitions).
	PartitionsAdded
	// RacksChanged: the racks of a topic's replicas changed: a broker came back with
	// another broker.rack, was unregistered or registered, or a reassignment moved
	// replicas to other racks.
	RacksChanged
	// SubscriptionChanged: the group's members (or topology) started or stopped reading
	// an existing topic. NewPartitions is set for a topic the group now reads,
	// OldPartitions for one it no longer reads.
	SubscriptionChanged
	// RegexMatched: a topic was created whose name a regex of the group (and no
	// subscribed name) matches in full (Regex is that regex).
	RegexMatched
)

var reasonNames = [...]string{"unknown", "created", "deleted", "recreated", "partitions_added",
	"racks_changed", "subscription_changed", "regex_matched"}

// NumReasonKinds is the number of reason kinds, UnknownReason included: the kinds are
// 0 to NumReasonKinds-1, so an array indexed by kind covers a kind added later.
const NumReasonKinds = len(reasonNames)

// String returns the reason's JSON name, or "unknown".
func (k ReasonKind) String() string { return enumName(reasonNames[:], k) }

// ParseReasonKind is the inverse of String for the known kinds.
func ParseReasonKind(s string) (ReasonKind, error) {
	if k, ok := parseEnum[ReasonKind](reasonNames[1:], s); ok {
		return k + 1, nil
	}
	return UnknownReason, fmt.Errorf("unknown reason kind %q", s)
}

// enumName returns the name of k in names, "unknown" beyond them.
func enumName[K ~uint8](names []string, k K) string {
	if int(k) < len(names) {
		return names[k]
	}
	return "unknown"
}

// parseEnum returns the index of s in names.
func parseEnum[K ~uint8](names []string, s string) (K, bool) {
	i := slices.Index(names, s)
	return K(i), i >= 0
}

// MarshalText refuses UnknownReason.
func (k ReasonKind) MarshalText() ([]byte, error) {
	if k == UnknownReason || int(k) >= len(reasonNames) {
		return nil, fmt.Errorf("cannot encode reason kind %d", k)
	}
	return []byte(k.String()), nil
}

// UnmarshalText accepts the names ParseReasonKind accepts.
func (k *ReasonKind) UnmarshalText(b []byte) error {
	v, err := ParseReasonKind(string(b))
	*k = v
	return err
}

// Hash is a group hash. Its JSON form is a decimal string ("-4611686018427387904"), not a
// number: JSON numbers pass through float64 in JavaScript, jq and many other consumers,
// which keeps only 53 bits, and a 64-bit hash that lost bits is a different hash.
type Hash int64

// MarshalText gives the signed decimal form.
func (h Hash) MarshalText() ([]byte, error) { return strconv.AppendInt(nil, int64(h), 10), nil }

// UnmarshalText reads the signed decimal form.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("hash %q: %w", b, err)
	}
	*h = Hash(v)
	return nil
}

// NullHash is a Hash that may be absent, like sql.NullInt64. Its JSON form is null or the
// decimal string.
type NullHash struct {
	Hash  Hash
	Valid bool
}

// SomeHash returns a valid NullHash holding h.
func SomeHash(h int64) NullHash { return NullHash{Hash: Hash(h), Valid: true} }

// MarshalJSON gives null or the decimal string.
func (n NullHash) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return []byte("null"), nil
	}
	b := append([]byte{'"'}, strconv.AppendInt(nil, int64(n.Hash), 10)...)
	return append(b, '"'), nil
}

// UnmarshalJSON reads null or the decimal string.
func (n *NullHash) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NullHash{}
		return nil
	}
	var h Hash
	if err := json.Unmarshal(b, &h); err != nil {
		return err
	}
	*n = NullHash{Hash: h, Valid: true}
	return nil
}

// Reason is one topic's part in a hash change.
type Reason struct {
	Kind  ReasonKind `json:"kind"`
	Topic string     `json:"topic"`
	// TopicID is Kafka's topic id in its usual text form (22 characters of URL-safe
	// base64), empty when the topic does not exist (a subscription to a missing name).
	TopicID string `json:"topic_id,omitempty"`
	// OldTopicID is the id the name had before, for TopicRecreated.
	OldTopicID string `json:"old_topic_id,omitempty"`
	// OldPartitions and NewPartitions are partition counts before and after (0: not
	// given), for PartitionsAdded, TopicCreated (new), TopicDeleted (old), TopicRecreated.
	OldPartitions int32 `json:"old_partitions,omitempty"`
	NewPartitions int32 `json:"new_partitions,omitempty"`
	// Regex is the group's regex that matched the topic, for RegexMatched.
	Regex string `json:"regex,omitempty"`
	// MetadataOffset and Time say where the change was written, for the kinds a
	// __cluster_metadata record causes (all but SubscriptionChanged): the offset of
	// that record (the TopicRecord, RemoveTopicRecord, PartitionRecord,
	// PartitionChangeRecord or broker registration) and its batch's append time. Also
	// after a restart, when the change was made while kraftwatch was down. 0 and zero
	// when not known (a change only a snapshot holds, whose records keep no offset;
	// a deleted topic the image no longer remembers). For SubscriptionChanged, Time is the __consumer_offsets record's timestamp
	// when known.
	MetadataOffset int64     `json:"metadata_offset,omitempty"`
	Time           time.Time `json:"time,omitzero"`
}

// CoveredTopic is one topic a group's new hash covers, as it was when the hash was
// computed. A subscriber (and kraftwatch itself, after a restart) compares it with
// the topic now to say what changed.
type CoveredTopic struct {
	Name    string `json:"name"`
	TopicID string `json:"topic_id"`
	// Partitions is the partition count.
	Partitions int32 `json:"partitions"`
	// Hash is the topic hash in the event's hash scheme.
	Hash Hash `json:"hash"`
}

// MaxTopicsBytes bounds the JSON size of an event's topics list (about 2,500 topics
// of 30-character names), so that an event stays well under NATS's default max
// payload (1 MiB) however many topics its group reads: FitTopics truncates the list
// beyond it.
const MaxTopicsBytes = 256 << 10

// coveredTopicJSON is the JSON size of a CoveredTopic apart from its name's characters
// and its numbers: {"name":"","topic_id":"<22>","partitions":,"hash":""} and a comma.
const coveredTopicJSON = len(`{"name":"","topic_id":"","partitions":,"hash":""},`) + 22

// digits is the length of v's decimal form, with its sign.
func digits(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n, u = 2, -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// FitTopics returns the longest prefix of ts whose JSON takes at most maxBytes, and
// whether it is shorter than ts. The size is an upper bound (every character that JSON
// may escape counted as six).
func FitTopics(ts []CoveredTopic, maxBytes int) ([]CoveredTopic, bool) {
	n := 0
	for i, t := range ts {
		n += coveredTopicJSON + digits(int64(t.Partitions)) + digits(int64(t.Hash))
		for j := 0; j < len(t.Name); j++ {
			if c := t.Name[j]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
				n += 6
			} else {
				n++
			}
		}
		if n > maxBytes {
			return ts[:i], true
		}
	}
	return ts, false
}

// OffsetsPosition is a position in __consumer_offsets.
type OffsetsPosition struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// Cause is where in the logs a decision was made. Two kraftwatch replicas that read the
// same logs decide the same transition at the same Cause, which is why it is part of the
// event id; Causes are also ordered (Dominates) so a replica that lags in either log never
// publishes a transition older than the one already stored.
type Cause struct {
	// MetadataOffset and MetadataEpoch are the offset and leader epoch of the
	// __cluster_metadata batch (or transaction) the image was at.
	MetadataOffset int64 `json:"metadata_offset"`
	MetadataEpoch  int32 `json:"metadata_epoch"`
	// ConsumerOffsets, when set, is the group's __consumer_offsets partition and the
	// offset of the last record of it applied (the causing record for a subscription
	// change).
	ConsumerOffsets *OffsetsPosition `json:"consumer_offsets,omitempty"`
}

func (c Cause) offsets() (part int32, off int64) {
	if c.ConsumerOffsets == nil {
		return -1, -1
	}
	return c.ConsumerOffsets.Partition, c.ConsumerOffsets.Offset
}

// Dominates reports whether c is at or after d in both logs: at d's metadata offset or
// later, and at d's __consumer_offsets position or later. A Cause without a
// __consumer_offsets position is before every position; positions in different
// partitions (which one group's causes never name) do not order the causes.
//
// An event whose Cause does not dominate the group's stored one is older than it in
// at least one log: publishing it would roll the group back to a state it had left,
// so kraftwatch never does (publish.Stats.Superseded).
func (c Cause) Dominates(d Cause) bool {
	cp, co := c.offsets()
	dp, do := d.offsets()
	if cp >= 0 && dp >= 0 && cp != dp {
		return c.MetadataOffset >= d.MetadataOffset
	}
	return c.MetadataOffset >= d.MetadataOffset && co >= do
}

// RebalanceNeeded is the data of a TypeRebalanceNeeded event: one group's hash changed,
// and why.
type RebalanceNeeded struct {
	ClusterID  string    `json:"cluster_id"`
	GroupID    string    `json:"group_id"`
	GroupType  GroupType `json:"group_type"`
	HashScheme string    `json:"hash_scheme"`
	// PreviousHash is the hash last announced for the group, null when there is none
	// (the first event of a group, or the stored one used another scheme).
	PreviousHash NullHash `json:"previous_hash"`
	NewHash      Hash     `json:"new_hash"`
	Reasons      []Reason `json:"reasons"`
	// Topics lists, sorted by name, the existing topics NewHash covers; empty (not
	// nil) when it covers none, nil when not given (events of older kraftwatch).
	// TopicsTruncated is set when the list was cut at MaxTopicsBytes: it then holds
	// the first topics by name only.
	Topics          []CoveredTopic `json:"topics,omitzero"`
	TopicsTruncated bool           `json:"topics_truncated,omitempty"`
	Cause
	// CoordinatorEpoch is the group epoch (classic: generation) last read from
	// __consumer_offsets, -1 when none was seen.
	CoordinatorEpoch int32 `json:"coordinator_epoch"`

	// Time is the CloudEvent's time attribute (not part of the JSON data): when the
	// causing change happened (the metadata batch's append time, or the
	// __consumer_offsets record's timestamp), so that replicas agree. Decode sets it;
	// when publishing, zero means the time of publishing.
	Time time.Time `json:"-"`
}

// Key returns the event's group.
func (e *RebalanceNeeded) Key() GroupKey { return GroupKey{Type: e.GroupType, ID: e.GroupID} }

// GroupKey identifies a group. Kafka gives one group id one type at a time, but a group
// converted between classic and consumer leaves records of both kinds in
// __consumer_offsets, so the type is part of the key.
type GroupKey struct {
	Type GroupType
	ID   string
}

// String gives "type:id" with the id quoted.
func (k GroupKey) String() string { return fmt.Sprintf("%s:%q", k.Type, k.ID) }

// Compare orders keys by type, then id.
func (k GroupKey) Compare(o GroupKey) int {
	if c := cmp.Compare(k.Type, o.Type); c != 0 {
		return c
	}
	return strings.Compare(k.ID, o.ID)
}

// Envelope is a structured-mode CloudEvents 1.0 JSON event with data of type D, as it
// travels: Envelope[RebalanceNeeded] for a rebalance-needed event, and Event
// (Envelope[Data]) for any type Decode knows.
type Envelope[D any] struct {
	SpecVersion string `json:"specversion"`
	// ID is the event id, equal to the Nats-Msg-Id header: deterministic, so two
	// kraftwatch replicas give one transition the same id (see RebalanceNeeded.MsgID).
	ID string `json:"id"`
	// Source is "kraftwatch/<cluster id>".
	Source string `json:"source"`
	Type   string `json:"type"`
	// Subject is "group/<group type>/<group id>" with the raw group id.
	Subject         string    `json:"subject"`
	Time            time.Time `json:"time"`
	DataContentType string    `json:"datacontenttype"`
	Data            D         `json:"data"`
}

// Validate checks what a rebalance-needed event's data must hold (known enums, a cluster
// id, a hash scheme, valid UTF-8, topic ids, no negative offsets or epochs) and returns
// an error wrapping ErrInvalidEvent naming the first problem.
func (e *RebalanceNeeded) Validate() error {
	if e.ClusterID == "" {
		return fmt.Errorf("%w: empty cluster id", ErrInvalidEvent)
	}
	if !utf8.ValidString(e.GroupID) {
		return fmt.Errorf("%w: group id %q is not valid UTF-8 (JSON cannot carry it)", ErrInvalidEvent, e.GroupID)
	}
	if e.GroupType == UnknownGroup || int(e.GroupType) >= len(groupTypeNames) {
		return fmt.Errorf("%w: group %q: unknown group type %d", ErrInvalidEvent, e.GroupID, e.GroupType)
	}
	if e.HashScheme != SchemeMurmur3 && e.HashScheme != SchemeKafka {
		return fmt.Errorf("%w: group %q: hash scheme %q (want murmur3 or kafka)", ErrInvalidEvent, e.GroupID, e.HashScheme)
	}
	for i, r := range e.Reasons {
		if r.Kind == UnknownReason || int(r.Kind) >= len(reasonNames) {
			return fmt.Errorf("%w: group %q: reason %d: unknown kind %d", ErrInvalidEvent, e.GroupID, i, r.Kind)
		}
		if r.OldPartitions < 0 || r.NewPartitions < 0 {
			return fmt.Errorf("%w: group %q: reason %d: negative partition count", ErrInvalidEvent, e.GroupID, i)
		}
		if !utf8.ValidString(r.Topic) || !utf8.ValidString(r.Regex) {
			return fmt.Errorf("%w: group %q: reason %d: topic or regex is not valid UTF-8", ErrInvalidEvent, e.GroupID, i)
		}
		for _, id := range []string{r.TopicID, r.OldTopicID} {
			if id != "" && !validTopicID(id) {
				return fmt.Errorf("%w: group %q: reason %d: topic id %q is not 22 characters of URL-safe base64", ErrInvalidEvent, e.GroupID, i, id)
			}
		}
		if r.Kind == TopicRecreated && r.OldTopicID == "" {
			return fmt.Errorf("%w: group %q: reason %d: recreated without old_topic_id", ErrInvalidEvent, e.GroupID, i)
		}
		if r.Kind == RegexMatched && r.Regex == "" {
			return fmt.Errorf("%w: group %q: reason %d: regex_matched without regex", ErrInvalidEvent, e.GroupID, i)
		}
		if r.MetadataOffset < 0 {
			return fmt.Errorf("%w: group %q: reason %d: negative metadata offset %d", ErrInvalidEvent, e.GroupID, i, r.MetadataOffset)
		}
	}
	for i, t := range e.Topics {
		if t.Name == "" || !utf8.ValidString(t.Name) {
			return fmt.Errorf("%w: group %q: topics[%d]: empty or not valid UTF-8 name %q", ErrInvalidEvent, e.GroupID, i, t.Name)
		}
		if !validTopicID(t.TopicID) {
			return fmt.Errorf("%w: group %q: topics[%d] %s: topic id %q is not 22 characters of URL-safe base64", ErrInvalidEvent, e.GroupID, i, t.Name, t.TopicID)
		}
		if t.Partitions < 1 {
			return fmt.Errorf("%w: group %q: topics[%d] %s: partition count %d (want 1 or more)", ErrInvalidEvent, e.GroupID, i, t.Name, t.Partitions)
		}
	}
	if e.TopicsTruncated && e.Topics == nil {
		return fmt.Errorf("%w: group %q: topics_truncated without topics", ErrInvalidEvent, e.GroupID)
	}
	if e.MetadataEpoch < -1 {
		return fmt.Errorf("%w: group %q: metadata epoch %d (want -1 or more)", ErrInvalidEvent, e.GroupID, e.MetadataEpoch)
	}
	if e.MetadataOffset < 0 {
		return fmt.Errorf("%w: group %q: negative metadata offset %d", ErrInvalidEvent, e.GroupID, e.MetadataOffset)
	}
	if c := e.ConsumerOffsets; c != nil && (c.Partition < 0 || c.Offset < 0) {
		return fmt.Errorf("%w: group %q: negative __consumer_offsets position %d/%d", ErrInvalidEvent, e.GroupID, c.Partition, c.Offset)
	}
	if e.CoordinatorEpoch < -1 {
		return fmt.Errorf("%w: group %q: coordinator epoch %d (want -1 or more)", ErrInvalidEvent, e.GroupID, e.CoordinatorEpoch)
	}
	return nil
}

func validTopicID(s string) bool {
	if len(s) != 22 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !safe(s[i]) {
			return false
		}
	}
	return true
}

// MsgID returns the event's deterministic id, used as the CloudEvent id and the
// Nats-Msg-Id header: "kw1-" and 32 hex digits of SHA-256 over the cluster id, group
// type, group id, hash scheme, new hash and Cause (metadata offset and
// __consumer_offsets position; not the epoch, which the offset determines, nor the
// previous hash or reasons, on which two replicas may word the same transition
// differently). Two replicas deciding the same transition give the same id.
func (e *RebalanceNeeded) MsgID() string {
	// The hashed bytes are built on the stack (a group id of up to ~150 bytes fits) and
	// hashed at once: a sha256.New digest and its Sum would cost allocations per event.
	var stack [256]byte
	b := stack[:0]
	str := func(s string) {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	i64 := func(v int64) { b = binary.BigEndian.AppendUint64(b, uint64(v)) }
	str("kraftwatch.rebalance_needed.v1")
	str(e.ClusterID)
	str(e.GroupType.String())
	str(e.GroupID)
	str(e.HashScheme)
	i64(int64(e.NewHash))
	i64(e.MetadataOffset)
	p, o := e.offsets()
	i64(int64(p))
	i64(o)
	sum := sha256.Sum256(b)
	var id [4 + 32]byte
	copy(id[:], "kw1-")
	hex.Encode(id[4:], sum[:16])
	return string(id[:])
}

// Wrap validates e and wraps it in the CloudEvent that is published; now is the time
// attribute when e.Time is zero. ClusterID and HashScheme must be set.
func (e RebalanceNeeded) Wrap(now time.Time) (Envelope[RebalanceNeeded], error) {
	if err := e.Validate(); err != nil {
		return Envelope[RebalanceNeeded]{}, err
	}
	t := e.Time
	if t.IsZero() {
		t = now
	}
	e.Time = time.Time{}
	if e.Reasons == nil {
		e.Reasons = []Reason{}
	}
	return Envelope[RebalanceNeeded]{
		SpecVersion:     SpecVersion,
		ID:              e.MsgID(),
		Source:          SourcePrefix + e.ClusterID,
		Type:            TypeRebalanceNeeded,
		Subject:         "group/" + e.GroupType.String() + "/" + e.GroupID,
		Time:            t.UTC(),
		DataContentType: DataContentType,
		Data:            e,
	}, nil
}
