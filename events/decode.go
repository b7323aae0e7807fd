package events

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strings"
)

// Data is the data of an event Decode knows: *RebalanceNeeded for TypeRebalanceNeeded,
// *GroupRebalanced for TypeGroupRebalanced. Further types will be further
// implementations; switch on the concrete type, and skip events whose Decode error wraps
// ErrUnknownType.
type Data interface {
	// EventType is the CloudEvents type of events carrying this data.
	EventType() string
	// Key is the group the event is about.
	Key() GroupKey
}

// EventType returns TypeRebalanceNeeded.
func (*RebalanceNeeded) EventType() string { return TypeRebalanceNeeded }

// Event is a decoded event of any known type.
type Event = Envelope[Data]

// Decode reads one kraftwatch event (the body of a NATS message) and checks it as its
// type's JSON Schema does (publish/schema/rebalance_needed.v1.json for
// TypeRebalanceNeeded, publish/schema/rebalanced.v1.json for TypeGroupRebalanced:
// required members, JSON types, value forms and ranges), then Validate. Data is a
// pointer to the type's struct, with Time set from the envelope.
//
// Members Decode does not know (CloudEvents extension attributes, and what a later v1
// kraftwatch adds to the data) are ignored, except in a consumer_offsets position (see
// Compatibility in the package doc). Errors wrap ErrNotEvent, or ErrUnknownType for a
// well-formed CloudEvent of a type this package does not know, which is returned with
// its attributes and nil Data.
func Decode(b []byte) (Event, error) {
	attrs, err := decodeAttributes(b)
	if err != nil {
		return Event{}, err
	}
	ev := Event{SpecVersion: attrs.SpecVersion, ID: attrs.ID, Source: attrs.Source, Type: attrs.Type,
		Subject: attrs.Subject, Time: attrs.Time, DataContentType: attrs.DataContentType}
	switch attrs.Type {
	case TypeRebalanceNeeded:
		d, err := decodeRebalanceNeeded(&attrs)
		if err != nil {
			return Event{}, err
		}
		ev.Data = d
		return ev, nil
	case TypeGroupRebalanced:
		d, err := decodeGroupRebalanced(&attrs)
		if err != nil {
			return Event{}, err
		}
		ev.Data = d
		return ev, nil
	}
	return ev, fmt.Errorf("%w: %q (id %s)", ErrUnknownType, attrs.Type, attrs.ID)
}

// DecodeRebalanceNeeded is Decode for a rebalance-needed event only: another type is an
// error wrapping ErrNotEvent.
func DecodeRebalanceNeeded(b []byte) (Envelope[RebalanceNeeded], error) {
	return decodeAs(b, TypeRebalanceNeeded, decodeRebalanceNeeded)
}

// decodeAs decodes an event of type typ only, its data with data.
func decodeAs[T any](b []byte, typ string, data func(*Envelope[json.RawMessage]) (*T, error)) (Envelope[T], error) {
	attrs, err := decodeAttributes(b)
	if err != nil {
		return Envelope[T]{}, err
	}
	if attrs.Type != typ {
		return Envelope[T]{}, fmt.Errorf("%w: type %q, want %s", ErrNotEvent, attrs.Type, typ)
	}
	d, err := data(&attrs)
	if err != nil {
		return Envelope[T]{}, err
	}
	return Envelope[T]{SpecVersion: attrs.SpecVersion, ID: attrs.ID, Source: attrs.Source, Type: attrs.Type,
		Subject: attrs.Subject, Time: attrs.Time, DataContentType: attrs.DataContentType, Data: *d}, nil
}

var (
	idPattern      = regexp.MustCompile(`^kw1-[0-9a-f]{32}$`)
	subjectPattern = regexp.MustCompile(`^group/(classic|consumer|share|streams)/`)
	hashPattern    = regexp.MustCompile(`^(0|-?[1-9][0-9]{0,18})$`)
)

// envelope is the shape of every kraftwatch event's CloudEvents attributes; extension
// attributes are ignored.
var envelope = &shape{
	required: []string{"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"},
	optional: []string{"dataschema"},
}

// decodeAttributes checks the CloudEvents attributes every kraftwatch event has and
// returns them, Data holding the raw data.
func decodeAttributes(b []byte) (Envelope[json.RawMessage], error) {
	var attrs Envelope[json.RawMessage]
	m, err := members(b, "event")
	if err != nil {
		return attrs, fmt.Errorf("%w: %v", ErrNotEvent, err)
	}
	// The spec version says how to read the rest: look at it first.
	var sv string
	if v, ok := m["specversion"]; ok && json.Unmarshal(v, &sv) == nil && sv != SpecVersion {
		return attrs, fmt.Errorf("%w: specversion %q, want %q", ErrNotEvent, sv, SpecVersion)
	}
	var a struct {
		Envelope[json.RawMessage]
		DataSchema string `json:"dataschema"`
	}
	if err := envelope.readMembers(m, "event", reflect.ValueOf(&a).Elem()); err != nil {
		return attrs, fmt.Errorf("%w: %v", ErrNotEvent, err)
	}
	attrs = a.Envelope
	if attrs.Type == "" || attrs.ID == "" || attrs.Source == "" {
		return attrs, fmt.Errorf("%w: empty type, id or source", ErrNotEvent)
	}
	if _, ok := m["dataschema"]; ok {
		if u, err := url.Parse(a.DataSchema); err != nil || !u.IsAbs() {
			return attrs, fmt.Errorf("%w: dataschema %q is not an absolute URI", ErrNotEvent, a.DataSchema)
		}
	}
	return attrs, nil
}

// The shapes of a rebalance-needed event's data (schema/rebalance_needed.v1.json).
var (
	reason = &shape{
		required: []string{"kind", "topic"},
		optional: []string{"topic_id", "old_topic_id", "old_partitions", "new_partitions", "regex", "metadata_offset", "time"},
		topicIDs: []string{"topic_id", "old_topic_id"},
		check: func(where string, m map[string]json.RawMessage) error {
			for _, k := range []string{"old_partitions", "new_partitions"} {
				var n int32
				if v, ok := m[k]; ok && (json.Unmarshal(v, &n) != nil || n < 1) {
					return fmt.Errorf("%s.%s %s is not a partition count of 1 or more", where, k, v)
				}
			}
			var off int64
			if v, ok := m["metadata_offset"]; ok && (json.Unmarshal(v, &off) != nil || off < 1) {
				return fmt.Errorf("%s.metadata_offset %s is not an offset of 1 or more (absent when not known)", where, v)
			}
			return nil
		},
	}
	coveredTopic = &shape{
		required: []string{"name", "topic_id", "partitions", "hash"},
		hashes:   []string{"hash"},
		topicIDs: []string{"topic_id"},
	}
	rebalanceNeeded = &shape{
		required: []string{"cluster_id", "group_id", "group_type", "hash_scheme", "previous_hash", "new_hash",
			"reasons", "metadata_offset", "metadata_epoch", "coordinator_epoch"},
		optional: []string{"consumer_offsets", "topics", "topics_truncated"},
		nullable: []string{"previous_hash"},
		hashes:   []string{"previous_hash", "new_hash"},
		objects:  map[string]*shape{"consumer_offsets": offsetsPosition},
		arrays:   map[string]*shape{"reasons": reason, "topics": coveredTopic},
	}
)

// decodeRebalanceNeeded checks what schema/rebalance_needed.v1.json says beyond the
// common attributes and decodes the data.
func decodeRebalanceNeeded(attrs *Envelope[json.RawMessage]) (*RebalanceNeeded, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s %s: %s", ErrNotEvent, TypeRebalanceNeeded, attrs.ID, fmt.Sprintf(format, args...))
	}
	if err := checkAttributes(attrs, idPattern, "kw1-"); err != nil {
		return nil, bad("%v", err)
	}
	var d RebalanceNeeded
	if err := rebalanceNeeded.read(attrs.Data, "data", &d); err != nil {
		return nil, bad("%v", err)
	}
	if err := d.Validate(); err != nil {
		return nil, bad("%v", err)
	}
	if err := checkGroup(attrs, d.ClusterID, d.GroupType, d.GroupID); err != nil {
		return nil, bad("%v", err)
	}
	if d.Reasons == nil {
		d.Reasons = []Reason{}
	}
	d.Time = attrs.Time
	return &d, nil
}

// checkAttributes checks the attributes an event of one of this package's types has:
// its id (idPrefix and 32 hex digits), source, subject and datacontenttype.
func checkAttributes(attrs *Envelope[json.RawMessage], id *regexp.Regexp, idPrefix string) error {
	switch {
	case !id.MatchString(attrs.ID):
		return fmt.Errorf("id is not %s and 32 hex digits", idPrefix)
	case !strings.HasPrefix(attrs.Source, SourcePrefix) || len(attrs.Source) == len(SourcePrefix):
		return fmt.Errorf("source %q is not kraftwatch/<cluster id>", attrs.Source)
	case !subjectPattern.MatchString(attrs.Subject):
		return fmt.Errorf("subject %q is not group/<group type>/<group id>", attrs.Subject)
	case attrs.DataContentType != DataContentType:
		return fmt.Errorf("datacontenttype %q, want %s", attrs.DataContentType, DataContentType)
	}
	return nil
}

// checkGroup checks that the subject and source attributes name the data's group and
// cluster.
func checkGroup(attrs *Envelope[json.RawMessage], clusterID string, t GroupType, groupID string) error {
	if want := "group/" + t.String() + "/" + groupID; attrs.Subject != want {
		return fmt.Errorf("subject %q, but the data's group gives %q", attrs.Subject, want)
	}
	if want := SourcePrefix + clusterID; attrs.Source != want {
		return fmt.Errorf("source %q, but the data's cluster gives %q", attrs.Source, want)
	}
	return nil
}
