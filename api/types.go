package api

import (
	"time"

	"github.com/kraftwatch/kraftwatch/events"
)

// Hash is a 64-bit hash as a JSON string of its signed decimal form (JSON numbers
// lose precision above 2^53), as in the events.
type Hash = events.Hash

// GroupSummary is one group of GET /v1/groups.
type GroupSummary struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	State string `json:"state"`
	// Epoch is the coordinator's group epoch (a classic group's generation); null
	// without a metadata record.
	Epoch *int32 `json:"epoch"`
	// TargetAssignmentEpoch is null without a target assignment record.
	TargetAssignmentEpoch *int32 `json:"target_assignment_epoch"`
	Members               int    `json:"members"`
	// ReconcilingMembers counts members not yet reconciled to the target assignment.
	ReconcilingMembers int `json:"reconciling_members"`
	// Hash is kraftwatch's hash of the group's topics in HashScheme; null before the
	// engine computed it.
	Hash       *Hash  `json:"hash"`
	HashScheme string `json:"hash_scheme"`
}

// GroupList is the answer of GET /v1/groups.
type GroupList struct {
	Groups []GroupSummary `json:"groups"`
	// Matched is the number of groups that pass the filters, on every page.
	Matched int `json:"matched"`
	// Next is the cursor of the next page (the after parameter); absent on the last.
	Next string `json:"next,omitempty"`
	// Synced is false while kraftwatch is still replaying its inputs at start-up.
	Synced bool `json:"synced"`
}

// GroupDetail is the answer of GET /v1/groups/{type}/{id}.
type GroupDetail struct {
	GroupSummary
	ProtocolType string `json:"protocol_type,omitempty"` // classic groups
	Protocol     string `json:"protocol,omitempty"`      // classic groups: the assignor
	// SubscribedTopicNames are the names members (or the topology) give, whether
	// they exist or not; SubscribedTopicRegexes the members' regexes.
	SubscribedTopicNames   []string `json:"subscribed_topic_names"`
	SubscribedTopicRegexes []string `json:"subscribed_topic_regexes"`
	// Topics are the existing topics the group reads, by name or regex: what its
	// hash covers. RegexMatches lists, per valid regex, the existing topics it
	// matches and the coordinator's last resolution of it.
	Topics       []string     `json:"topics"`
	RegexMatches []RegexMatch `json:"regex_matches"`
	Hashes       Hashes       `json:"hashes"`
	Members      []MemberInfo `json:"member_list"`
	Events       []Event      `json:"events"`
	Synced       bool         `json:"synced"`
}

// RegexMatch is one regex of a group.
type RegexMatch struct {
	Regex string `json:"regex"`
	// Error is set when the regex does not compile (Kafka rejects it).
	Error   string   `json:"error,omitempty"`
	Matches []string `json:"matches"`
	// CoordinatorTopics is the coordinator's resolution (its regex record), null
	// when it wrote none; it lags topic changes by up to a refresh interval.
	CoordinatorTopics []string `json:"coordinator_topics"`
}

// Hashes is the group's hash in both schemes beside the coordinator's.
type Hashes struct {
	Murmur3 Hash `json:"murmur3"`
	Kafka   Hash `json:"kafka"`
	// CoordinatorMetadataHash is the MetadataHash the coordinator stored; null when
	// it stores none (classic groups, Kafka 4.0, no metadata record).
	CoordinatorMetadataHash *Hash `json:"coordinator_metadata_hash"`
	// CoordinatorAgrees compares Kafka with CoordinatorMetadataHash; null when there
	// is nothing to compare. The coordinator refreshes its hash lazily (on a
	// heartbeat after a metadata change), so a short disagreement is normal.
	CoordinatorAgrees *bool `json:"coordinator_agrees"`
}

// MemberInfo is one member of a group.
type MemberInfo struct {
	MemberID             string   `json:"member_id"`
	InstanceID           string   `json:"instance_id,omitempty"`
	ClientID             string   `json:"client_id"`
	ClientHost           string   `json:"client_host"`
	RackID               string   `json:"rack_id,omitempty"`
	SubscribedTopicNames []string `json:"subscribed_topic_names"`
	SubscribedTopicRegex string   `json:"subscribed_topic_regex,omitempty"`
	// MemberEpoch and MemberState come from the current assignment record; null
	// without one (classic groups, or a member not yet assigned).
	MemberEpoch *int32  `json:"member_epoch"`
	MemberState *string `json:"member_state"`
	// Assigned is what the member owns, PendingRevocation what it must give up,
	// Target what the target assignment gives it; null without the record.
	Assigned          []TopicPartitions `json:"assigned"`
	PendingRevocation []TopicPartitions `json:"pending_revocation"`
	Target            []TopicPartitions `json:"target"`
	// Reconciled reports the member owns its target at the target assignment epoch
	// (Kafka's isReconciledTo); null for classic groups.
	Reconciled *bool `json:"reconciled"`
	// A streams member owns tasks, not partitions (its partition lists are null):
	// AssignedTasks and TasksPendingRevocation come from its current assignment
	// record, TargetTasks from its target assignment record; absent without the record
	// and for the members of other groups.
	AssignedTasks          *Tasks `json:"assigned_tasks,omitempty"`
	TasksPendingRevocation *Tasks `json:"tasks_pending_revocation,omitempty"`
	TargetTasks            *Tasks `json:"target_tasks,omitempty"`
}

// Tasks is a streams member's tasks by kind.
type Tasks struct {
	Active  []SubtopologyTasks `json:"active"`
	Standby []SubtopologyTasks `json:"standby"`
	Warmup  []SubtopologyTasks `json:"warmup"`
}

// SubtopologyTasks is the tasks of one sub-topology: one per partition of its input
// topics, sorted.
type SubtopologyTasks struct {
	SubtopologyID string  `json:"subtopology_id"`
	Partitions    []int32 `json:"partitions"`
}

// TopicPartitions is some partitions of one topic; Topic is the name the metadata
// image gives the id, "" for a topic it does not know (deleted).
type TopicPartitions struct {
	TopicID    string  `json:"topic_id"`
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// Event is one event published for the group, oldest first in GroupDetail.Events.
type Event struct {
	Type             string    `json:"type"`
	ID               string    `json:"id"`
	Time             time.Time `json:"time"`
	CoordinatorEpoch int32     `json:"coordinator_epoch"`
	// PreviousHash and NewHash are a rebalance-needed event's hashes, or a rebalanced
	// event's stored MetadataHash before and after (its metadata cause); null when
	// the event has none (a group's first rebalance-needed event has no previous
	// hash; a bump that did not change the hash has neither).
	PreviousHash *Hash  `json:"previous_hash"`
	NewHash      *Hash  `json:"new_hash"`
	Summary      string `json:"summary"`
}

// Problem is the JSON body of every error answer.
type Problem struct {
	Status int    `json:"status"`
	Error  string `json:"error"`
}
