package events

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// TypeGroupRebalanced: the group coordinator wrote a new group epoch (classic groups: a
// new generation); data is GroupRebalanced.
const TypeGroupRebalanced = "kraftwatch.group.rebalanced.v1"

// CauseKind says what the coordinator wrote, with or before an epoch bump, that explains
// it.
type CauseKind uint8

// Cause kinds; String gives the JSON names.
const (
	// UnknownCause: nothing the coordinator wrote since the previous epoch explains the
	// bump. It is a valid kind on the wire ("unknown"), said plainly, never guessed.
	UnknownCause CauseKind = iota
	// CauseMetadata: the group's stored MetadataHash changed (OldHash -> NewHash);
	// PredictedBy links the rebalance-needed event that announced the new hash, when
	// kraftwatch published one.
	CauseMetadata
	// CauseMemberJoined: a member record for a member the group did not have.
	CauseMemberJoined
	// CauseMemberLeft: the tombstone of a member's record (or, for classic groups, a
	// member missing from the new generation): it left or was fenced, the records are
	// the same.
	CauseMemberLeft
	// CauseSubscriptionChanged: a member's topic names or regex changed.
	CauseSubscriptionChanged
	// CauseRegexResolutionChanged: the coordinator resolved a regex of the group to
	// other topics.
	CauseRegexResolutionChanged
	// CauseSharePartitionsInitialized: a share group's share partitions state record
	// (ShareGroupStatePartitionMetadata) was written; TopicsAdded are the topics newly
	// being or having been initialized (absent in events of older kraftwatch).
	CauseSharePartitionsInitialized
	// CauseAssignorChanged: a consumer member's ServerAssignor, or a classic group's
	// selected protocol, changed (OldValue -> NewValue).
	CauseAssignorChanged
	// CauseConfigChanged: a streams group's assignment configs changed.
	CauseConfigChanged
	// CauseTopologyChanged: a streams group's topology changed the topics it requires.
	CauseTopologyChanged
)

var causeNames = [...]string{"unknown", "metadata", "member_joined", "member_left", "subscription_changed",
	"regex_resolution_changed", "share_partitions_initialized", "assignor_changed", "config_changed",
	"topology_changed"}

// NumCauseKinds is the number of cause kinds, UnknownCause included.
const NumCauseKinds = len(causeNames)

// String returns the kind's JSON name.
func (k CauseKind) String() string { return enumName(causeNames[:], k) }

// ParseCauseKind is the inverse of String.
func ParseCauseKind(s string) (CauseKind, error) {
	if k, ok := parseEnum[CauseKind](causeNames[:], s); ok {
		return k, nil
	}
	return UnknownCause, fmt.Errorf("unknown cause kind %q", s)
}

// MarshalText refuses kinds out of range.
func (k CauseKind) MarshalText() ([]byte, error) {
	if int(k) >= len(causeNames) {
		return nil, fmt.Errorf("cannot encode cause kind %d", k)
	}
	return []byte(k.String()), nil
}

// UnmarshalText accepts the names ParseCauseKind accepts.
func (k *CauseKind) UnmarshalText(b []byte) error {
	v, err := ParseCauseKind(string(b))
	*k = v
	return err
}

// Prediction links a metadata cause to the rebalance-needed event that announced it:
// the group's last such event since the previous bump, linked only when the
// coordinator's new stored hash is the hash that event announced (with hash scheme
// "murmur3": when the kafka-scheme hash of the same topics, computed at the bump, is the
// stored hash).
type Prediction struct {
	// EventID is the rebalance-needed event's id.
	EventID string `json:"event_id"`
	// NewHash is that event's new_hash.
	NewHash Hash `json:"new_hash"`
	// Time is that event's time: the append time of the metadata batch (or the
	// __consumer_offsets record) that caused it.
	Time time.Time `json:"time"`
	// LeadTimeMs is the bump record's time minus Time, in milliseconds: how long
	// before the coordinator kraftwatch said the group must rebalance.
	// It is negative when the two brokers' clocks disagree by more than the lead.
	LeadTimeMs int64 `json:"lead_time_ms"`
}

// RebalanceCause is one thing the coordinator wrote that explains a bump; the fields
// set depend on Kind.
type RebalanceCause struct {
	Kind       CauseKind `json:"kind"`
	MemberID   string    `json:"member_id,omitempty"`
	InstanceID string    `json:"instance_id,omitempty"`
	ClientID   string    `json:"client_id,omitempty"`
	ClientHost string    `json:"client_host,omitempty"`
	RackID     string    `json:"rack_id,omitempty"`
	// SubscribedTopicNames and SubscribedTopicRegex are a joining or leaving member's
	// subscription, or the one after a change; the Previous fields the one before.
	SubscribedTopicNames         []string `json:"subscribed_topic_names,omitempty"`
	SubscribedTopicRegex         string   `json:"subscribed_topic_regex,omitempty"`
	PreviousSubscribedTopicNames []string `json:"previous_subscribed_topic_names,omitempty"`
	PreviousSubscribedTopicRegex string   `json:"previous_subscribed_topic_regex,omitempty"`
	// Regex, TopicsAdded and TopicsRemoved: a regex's new resolution
	// (regex_resolution_changed) or a topology's topics (topology_changed).
	Regex         string   `json:"regex,omitempty"`
	TopicsAdded   []string `json:"topics_added,omitempty"`
	TopicsRemoved []string `json:"topics_removed,omitempty"`
	// PreviousHash and NewHash are the stored MetadataHash before and after (metadata).
	PreviousHash *Hash `json:"previous_hash,omitempty"`
	NewHash      *Hash `json:"new_hash,omitempty"`
	// PredictedBy is set for metadata when kraftwatch announced the change.
	PredictedBy *Prediction `json:"predicted_by,omitempty"`
	// PreviousValue and NewValue: the assignor, or the configs ("k=v" pairs, sorted,
	// comma-joined), before and after.
	PreviousValue string `json:"previous_value,omitempty"`
	NewValue      string `json:"new_value,omitempty"`
	// Epoch is, in an event with an assignment (Kafka 4.3+), the group epoch of the
	// bump the cause came with; 0 (absent) otherwise.
	Epoch int32 `json:"epoch,omitempty"`
}

// FitMovedPartitions cuts ms so that its JSON form stays within about maxBytes (as
// FitTopics does a rebalance-needed event's topics) and reports whether it did.
func FitMovedPartitions(ms []MovedPartitions, maxBytes int) ([]MovedPartitions, bool) {
	n := 0
	for i, m := range ms {
		// {"topic":"","topic_id":"<22>","partitions":[]}, and each partition with its comma;
		// a name's characters at most 6 bytes each (escaped).
		n += len(`{"topic":"","topic_id":"","partitions":[]},`) + 22 + 6*len(m.Topic)
		for _, p := range m.Partitions {
			n += digits(int64(p)) + 1
		}
		if n > maxBytes {
			return ms[:i], true
		}
	}
	return ms, false
}

// MovedPartitions are partitions of one topic that a new target assignment gives a
// member that did not have them in the previous one.
type MovedPartitions struct {
	Topic      string  `json:"topic"`
	TopicID    string  `json:"topic_id"`
	Partitions []int32 `json:"partitions"`
}

// GroupRebalanced is the data of a TypeGroupRebalanced event: the coordinator wrote a
// new epoch for a group, and why.
type GroupRebalanced struct {
	ClusterID string    `json:"cluster_id"`
	GroupID   string    `json:"group_id"`
	GroupType GroupType `json:"group_type"`
	// PreviousEpoch is null when the group's previous epoch record was not seen (a
	// new group, or one whose earlier records were compacted away).
	PreviousEpoch *int32 `json:"previous_epoch"`
	NewEpoch      int32  `json:"new_epoch"`
	// MetadataHash is the coordinator's stored hash after the bump ("0": none stored,
	// as for classic groups).
	MetadataHash Hash `json:"metadata_hash"`
	// ConsumerOffsets is the position of the bump record.
	ConsumerOffsets OffsetsPosition  `json:"consumer_offsets"`
	Causes          []RebalanceCause `json:"causes"`

	// The assignment members are set when the coordinator batches group epoch bumps
	// into target assignments (Kafka 4.3+, KIP-1263) and absent otherwise: the event is
	// then one new target assignment, new_epoch its epoch, consumer_offsets its
	// record, and the causes those of every bump folded into it (docs/events.md).
	//
	// AssignmentEpoch is the target assignment's epoch.
	AssignmentEpoch *int32 `json:"assignment_epoch,omitempty"`
	// AssignmentTime is the record's AssignmentTimestamp; zero (absent) when it has
	// none (a bump that left the group empty, for which none is written).
	AssignmentTime time.Time `json:"assignment_time,omitzero"`
	// EpochBumps are the group epochs of the bumps folded in, in order.
	EpochBumps []int32 `json:"epoch_bumps,omitempty"`
	// PartitionsMoved counts the partitions the assignment gives a member that did not
	// have them (moved, or first assigned); absent for streams groups (tasks).
	PartitionsMoved *int `json:"partitions_moved,omitempty"`
	// MovedPartitions lists them by topic, sorted by name, cut at MaxTopicsBytes as a
	// rebalance-needed event's topics are (MovedPartitionsTruncated then set).
	MovedPartitions          []MovedPartitions `json:"moved_partitions,omitempty"`
	MovedPartitionsTruncated bool              `json:"moved_partitions_truncated,omitempty"`

	// Time is the CloudEvent's time attribute (not part of the JSON data): the bump
	// record's timestamp.
	Time time.Time `json:"-"`
}

// Key returns the event's group.
func (e *GroupRebalanced) Key() GroupKey { return GroupKey{Type: e.GroupType, ID: e.GroupID} }

// EventType returns TypeGroupRebalanced.
func (*GroupRebalanced) EventType() string { return TypeGroupRebalanced }

// Validate checks what a rebalanced event's data must hold and returns an error wrapping
// ErrInvalidEvent naming the first problem.
func (e *GroupRebalanced) Validate() error {
	if e.ClusterID == "" {
		return fmt.Errorf("%w: empty cluster id", ErrInvalidEvent)
	}
	if !utf8.ValidString(e.GroupID) {
		return fmt.Errorf("%w: group id %q is not valid UTF-8 (JSON cannot carry it)", ErrInvalidEvent, e.GroupID)
	}
	if e.GroupType == UnknownGroup || int(e.GroupType) >= len(groupTypeNames) {
		return fmt.Errorf("%w: group %q: unknown group type %d", ErrInvalidEvent, e.GroupID, e.GroupType)
	}
	if e.NewEpoch < 0 || e.PreviousEpoch != nil && *e.PreviousEpoch < 0 {
		return fmt.Errorf("%w: group %q: negative epoch", ErrInvalidEvent, e.GroupID)
	}
	if c := e.ConsumerOffsets; c.Partition < 0 || c.Offset < 0 {
		return fmt.Errorf("%w: group %q: negative __consumer_offsets position %d/%d", ErrInvalidEvent, e.GroupID, c.Partition, c.Offset)
	}
	if len(e.Causes) == 0 {
		return fmt.Errorf("%w: group %q: no causes (an unexplained bump has cause unknown)", ErrInvalidEvent, e.GroupID)
	}
	for i, c := range e.Causes {
		if int(c.Kind) >= len(causeNames) {
			return fmt.Errorf("%w: group %q: cause %d: unknown kind %d", ErrInvalidEvent, e.GroupID, i, c.Kind)
		}
		strs := append([]string{c.MemberID, c.InstanceID, c.ClientID, c.ClientHost, c.RackID, c.SubscribedTopicRegex,
			c.PreviousSubscribedTopicRegex, c.Regex, c.PreviousValue, c.NewValue}, c.SubscribedTopicNames...)
		strs = append(append(append(strs, c.PreviousSubscribedTopicNames...), c.TopicsAdded...), c.TopicsRemoved...)
		for _, s := range strs {
			if !utf8.ValidString(s) {
				return fmt.Errorf("%w: group %q: cause %d: %q is not valid UTF-8", ErrInvalidEvent, e.GroupID, i, s)
			}
		}
		if c.Epoch < 0 {
			return fmt.Errorf("%w: group %q: cause %d: negative epoch", ErrInvalidEvent, e.GroupID, i)
		}
		if p := c.PredictedBy; p != nil {
			if !validID(p.EventID, "kw1-") {
				return fmt.Errorf("%w: group %q: cause %d: predicted_by.event_id %q is not a rebalance-needed event id", ErrInvalidEvent, e.GroupID, i, p.EventID)
			}
		}
	}
	if e.AssignmentEpoch != nil && *e.AssignmentEpoch < 0 || slices.ContainsFunc(e.EpochBumps, func(v int32) bool { return v < 0 }) {
		return fmt.Errorf("%w: group %q: negative assignment or bump epoch", ErrInvalidEvent, e.GroupID)
	}
	if e.PartitionsMoved != nil && *e.PartitionsMoved < 0 {
		return fmt.Errorf("%w: group %q: negative partitions_moved", ErrInvalidEvent, e.GroupID)
	}
	for _, m := range e.MovedPartitions {
		if !utf8.ValidString(m.Topic) || slices.ContainsFunc(m.Partitions, func(p int32) bool { return p < 0 }) {
			return fmt.Errorf("%w: group %q: moved_partitions of %q: invalid topic name or negative partition", ErrInvalidEvent, e.GroupID, m.Topic)
		}
	}
	return nil
}

// MsgID returns the event's deterministic id, the CloudEvent id and Nats-Msg-Id: "kwr1-"
// and 32 hex digits of SHA-256 over the cluster id, group type, group id, new epoch and
// the bump record's __consumer_offsets partition and offset. Replicas reading the same
// log give the same id, whatever causes each could attribute.
func (e *GroupRebalanced) MsgID() string {
	h := sha256.New()
	var b [8]byte
	str := func(s string) {
		binary.BigEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	i64 := func(v int64) {
		binary.BigEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	str(TypeGroupRebalanced)
	str(e.ClusterID)
	str(e.GroupType.String())
	str(e.GroupID)
	i64(int64(e.NewEpoch))
	i64(int64(e.ConsumerOffsets.Partition))
	i64(e.ConsumerOffsets.Offset)
	return "kwr1-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Wrap validates e and wraps it in the CloudEvent that is published; now is the time
// attribute when e.Time is zero.
func (e GroupRebalanced) Wrap(now time.Time) (Envelope[GroupRebalanced], error) {
	if err := e.Validate(); err != nil {
		return Envelope[GroupRebalanced]{}, err
	}
	t := e.Time
	if t.IsZero() {
		t = now
	}
	e.Time = time.Time{}
	return Envelope[GroupRebalanced]{
		SpecVersion:     SpecVersion,
		ID:              e.MsgID(),
		Source:          SourcePrefix + e.ClusterID,
		Type:            TypeGroupRebalanced,
		Subject:         "group/" + e.GroupType.String() + "/" + e.GroupID,
		Time:            t.UTC(),
		DataContentType: DataContentType,
		Data:            e,
	}, nil
}

// RebalancedSubject returns the subject of a group's rebalanced events:
// <prefix>.<cluster token>.rebalanced.<group type>.<group token>, the tokens of Subject.
// The family is beside Subject's ("group"), so "<prefix>.<cluster token>.>" has both and
// "<prefix>.*.group.>" only rebalance-needed events.
func RebalancedSubject(prefix, clusterID string, t GroupType, groupID string) string {
	return prefix + "." + EscapeToken(clusterID) + "." + RebalancedFamily + "." + t.String() + "." + EscapeToken(groupID)
}

// RebalancedFamily is the subject token that follows the cluster token in rebalanced
// events' subjects.
const RebalancedFamily = "rebalanced"

// DecodeGroupRebalanced is Decode for a rebalanced event only: another type is an error
// wrapping ErrNotEvent.
func DecodeGroupRebalanced(b []byte) (Envelope[GroupRebalanced], error) {
	return decodeAs[GroupRebalanced](b, TypeGroupRebalanced)
}

// The shapes of a rebalanced event's data and of the objects in it
// (schema/rebalanced.v1.json).
var (
	groupRebalanced = &shape{
		names: []string{"cluster_id", "group_id", "group_type", "previous_epoch", "new_epoch", "metadata_hash",
			"consumer_offsets", "causes", "assignment_epoch", "assignment_time", "epoch_bumps", "partitions_moved",
			"moved_partitions", "moved_partitions_truncated"},
		required: 8,
		nullable: 1 << 3, // previous_epoch
	}
	rebalanceCause = &shape{
		names: []string{"kind",
			"member_id", "instance_id", "client_id", "client_host", "rack_id", "subscribed_topic_names",
			"subscribed_topic_regex", "previous_subscribed_topic_names", "previous_subscribed_topic_regex", "regex",
			"topics_added", "topics_removed", "previous_hash", "new_hash", "predicted_by", "previous_value", "new_value",
			"epoch"},
		required: 1,
	}
	movedPartitions = &shape{names: []string{"topic", "topic_id", "partitions"}, required: 3}
	prediction      = &shape{names: []string{"event_id", "new_hash", "time", "lead_time_ms"}, required: 4}
)

// causeNeeds gives the members a cause of each kind must have, as rebalanceCause's bits.
var causeNeeds = map[CauseKind]uint64{
	CauseMemberJoined:           1 << 1, // member_id
	CauseMemberLeft:             1 << 1,
	CauseSubscriptionChanged:    1 << 1,
	CauseMetadata:               1<<13 | 1<<14, // previous_hash, new_hash
	CauseRegexResolutionChanged: 1 << 10,       // regex
}

// groupRebalanced reads a rebalanced event's data into d.
func (r *reader) groupRebalanced(d *GroupRebalanced) error {
	_, err := r.object(groupRebalanced, func(i int) error {
		switch i {
		case 0:
			return r.str(&d.ClusterID, r.clusterID)
		case 1:
			return r.str(&d.GroupID, r.groupID)
		case 2:
			t, err := r.enum(groupTypeNames[1:], func(s string) error { _, err := ParseGroupType(s); return err })
			d.GroupType = GroupType(t + 1)
			return err
		case 3:
			d.PreviousEpoch = new(int32)
			return r.int32(d.PreviousEpoch)
		case 4:
			return r.int32(&d.NewEpoch)
		case 5:
			return r.hash(&d.MetadataHash)
		case 6:
			return r.offsetsPosition(&d.ConsumerOffsets)
		case 7:
			var err error
			d.Causes, err = items(r, &r.causes, r.rebalanceCause)
			return err
		case 8:
			d.AssignmentEpoch = new(int32)
			return r.epoch(d.AssignmentEpoch)
		case 9:
			return r.time(&d.AssignmentTime)
		case 10:
			return r.epochs(&d.EpochBumps)
		case 11:
			n, err := r.atLeast(63, 0, "a count (0 or more)")
			d.PartitionsMoved = new(int)
			*d.PartitionsMoved = int(n)
			return err
		case 12:
			return r.array(func(int) error {
				var m MovedPartitions
				_, err := r.object(movedPartitions, func(i int) error {
					switch i {
					case 0:
						return r.str(&m.Topic)
					case 1:
						return r.topicID(&m.TopicID)
					default:
						return r.epochs(&m.Partitions)
					}
				})
				d.MovedPartitions = append(d.MovedPartitions, m)
				return err
			})
		default:
			return r.boolean(&d.MovedPartitionsTruncated)
		}
	})
	return err
}

func (r *reader) rebalanceCause(c *RebalanceCause) error {
	strs := [...]*string{1: &c.MemberID, 2: &c.InstanceID, 3: &c.ClientID, 4: &c.ClientHost, 5: &c.RackID,
		7: &c.SubscribedTopicRegex, 9: &c.PreviousSubscribedTopicRegex, 10: &c.Regex, 16: &c.PreviousValue, 17: &c.NewValue}
	lists := [...]*[]string{6: &c.SubscribedTopicNames, 8: &c.PreviousSubscribedTopicNames, 11: &c.TopicsAdded, 12: &c.TopicsRemoved}
	seen, err := r.object(rebalanceCause, func(i int) error {
		switch {
		case i == 0:
			k, err := r.enum(causeNames[:], func(s string) error { _, err := ParseCauseKind(s); return err })
			c.Kind = CauseKind(k)
			return err
		case i < len(strs) && strs[i] != nil:
			return r.str(strs[i])
		case i < len(lists) && lists[i] != nil:
			return r.strs(lists[i])
		case i == 13:
			c.PreviousHash = new(Hash)
			return r.hash(c.PreviousHash)
		case i == 14:
			c.NewHash = new(Hash)
			return r.hash(c.NewHash)
		case i == 15:
			c.PredictedBy = new(Prediction)
			return r.prediction(c.PredictedBy)
		default: // 18
			return r.epoch(&c.Epoch)
		}
	})
	if err != nil {
		return err
	}
	if missing := causeNeeds[c.Kind] &^ seen; missing != 0 {
		for i, name := range rebalanceCause.names {
			if missing&(1<<i) != 0 {
				return r.errorf(" of kind %s has no %q", c.Kind, name)
			}
		}
	}
	return nil
}

// epoch reads an int32 that is 0 or more.
func (r *reader) epoch(dst *int32) error {
	n, err := r.atLeast(32, 0, "an epoch (0 or more)")
	*dst = int32(n)
	return err
}

// epochs reads an array of int32s that are 0 or more (epochs, partitions).
func (r *reader) epochs(dst *[]int32) error {
	*dst = []int32{}
	return r.array(func(int) error {
		var v int32
		err := r.epoch(&v)
		*dst = append(*dst, v)
		return err
	})
}

func (r *reader) prediction(p *Prediction) error {
	_, err := r.object(prediction, func(i int) error {
		switch i {
		case 0:
			return r.str(&p.EventID)
		case 1:
			return r.hash(&p.NewHash)
		case 2:
			return r.time(&p.Time)
		default:
			return r.int64(&p.LeadTimeMs)
		}
	})
	return err
}

func (e *GroupRebalanced) clusterID() string   { return e.ClusterID }
func (e *GroupRebalanced) setTime(t time.Time) { e.Time = t }
