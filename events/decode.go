package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
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
// TypeRebalanceNeeded, publish/schema/rebalanced.v1.json for TypeGroupRebalanced: required and unknown fields, value forms and ranges), then
// Validate. Data is a pointer to the type's struct, with Time set from the envelope.
//
// Errors wrap ErrNotEvent, or ErrUnknownType for a well-formed CloudEvent of a type this
// package does not know, which is returned with its attributes and nil Data.
// CloudEvents extension attributes are allowed and ignored.
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

// decodeAttributes checks the CloudEvents attributes every kraftwatch event has and
// returns them, Data holding the raw data.
func decodeAttributes(b []byte) (Envelope[json.RawMessage], error) {
	var attrs Envelope[json.RawMessage]
	fields, err := object(b, "event", []string{"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"}, nil, false)
	if err != nil {
		return attrs, err
	}
	for _, k := range []string{"specversion", "id", "source", "type", "subject", "datacontenttype", "dataschema"} {
		if v, ok := fields[k]; ok && !isString(v) {
			return attrs, fmt.Errorf("%w: %s is not a string", ErrNotEvent, k)
		}
	}
	if err := json.Unmarshal(b, &attrs); err != nil {
		return attrs, fmt.Errorf("%w: %w", ErrNotEvent, err)
	}
	if attrs.SpecVersion != SpecVersion {
		return attrs, fmt.Errorf("%w: specversion %q, want %s", ErrNotEvent, attrs.SpecVersion, SpecVersion)
	}
	if attrs.Type == "" || attrs.ID == "" || attrs.Source == "" {
		return attrs, fmt.Errorf("%w: empty type, id or source", ErrNotEvent)
	}
	if v, ok := fields["dataschema"]; ok {
		var s string
		_ = json.Unmarshal(v, &s)
		if u, err := url.Parse(s); err != nil || !u.IsAbs() {
			return attrs, fmt.Errorf("%w: dataschema %q is not an absolute URI", ErrNotEvent, s)
		}
	}
	return attrs, nil
}

// decodeRebalanceNeeded checks what schema/rebalance_needed.v1.json says beyond the
// common attributes and decodes the data.
func decodeRebalanceNeeded(attrs *Envelope[json.RawMessage]) (*RebalanceNeeded, error) {
	data := attrs.Data
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s %s: %s", ErrNotEvent, TypeRebalanceNeeded, attrs.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case !idPattern.MatchString(attrs.ID):
		return nil, bad("id is not kw1- and 32 hex digits")
	case !strings.HasPrefix(attrs.Source, SourcePrefix) || len(attrs.Source) == len(SourcePrefix):
		return nil, bad("source %q is not kraftwatch/<cluster id>", attrs.Source)
	case !subjectPattern.MatchString(attrs.Subject):
		return nil, bad("subject %q is not group/<group type>/<group id>", attrs.Subject)
	case attrs.DataContentType != DataContentType:
		return nil, bad("datacontenttype %q, want %s", attrs.DataContentType, DataContentType)
	}
	fields, err := object(data, "data", []string{"cluster_id", "group_id", "group_type", "hash_scheme", "previous_hash",
		"new_hash", "reasons", "metadata_offset", "metadata_epoch", "coordinator_epoch"}, []string{"consumer_offsets", "topics", "topics_truncated"}, true)
	if err != nil {
		return nil, bad("%v", err)
	}
	for k, v := range fields {
		if k != "previous_hash" && bytes.Equal(v, []byte("null")) {
			return nil, bad("data.%s is null", k)
		}
	}
	for _, k := range []string{"previous_hash", "new_hash"} {
		if v := fields[k]; !(k == "previous_hash" && bytes.Equal(v, []byte("null"))) {
			var s string
			if json.Unmarshal(v, &s) != nil || !hashPattern.MatchString(s) {
				return nil, bad("data.%s %s is not a decimal string of a signed 64-bit hash", k, v)
			}
		}
	}
	var reasons []json.RawMessage
	if err := json.Unmarshal(fields["reasons"], &reasons); err != nil {
		return nil, bad("data.reasons: %v", err)
	}
	for i, r := range reasons {
		rf, err := object(r, fmt.Sprintf("data.reasons[%d]", i), []string{"kind", "topic"},
			[]string{"topic_id", "old_topic_id", "old_partitions", "new_partitions", "regex", "metadata_offset", "time"}, true)
		if err != nil {
			return nil, bad("%v", err)
		}
		for k, v := range rf {
			if bytes.Equal(v, []byte("null")) {
				return nil, bad("data.reasons[%d].%s is null", i, k)
			}
		}
		for _, k := range []string{"topic_id", "old_topic_id"} {
			var s string
			if v, ok := rf[k]; ok && (json.Unmarshal(v, &s) != nil || !validTopicID(s)) {
				return nil, bad("data.reasons[%d].%s %s is not 22 characters of URL-safe base64", i, k, v)
			}
		}
		for _, k := range []string{"old_partitions", "new_partitions"} {
			var n int32
			if v, ok := rf[k]; ok && (json.Unmarshal(v, &n) != nil || n < 1) {
				return nil, bad("data.reasons[%d].%s %s is not a partition count of 1 or more", i, k, v)
			}
		}
		var off int64
		if v, ok := rf["metadata_offset"]; ok && (json.Unmarshal(v, &off) != nil || off < 1) {
			return nil, bad("data.reasons[%d].metadata_offset %s is not an offset of 1 or more (absent when not known)", i, v)
		}
	}
	if v, ok := fields["topics"]; ok {
		var topics []json.RawMessage
		if err := json.Unmarshal(v, &topics); err != nil || topics == nil {
			return nil, bad("data.topics is not an array")
		}
		for i, t := range topics {
			tf, err := object(t, fmt.Sprintf("data.topics[%d]", i), []string{"name", "topic_id", "partitions", "hash"}, nil, true)
			if err != nil {
				return nil, bad("%v", err)
			}
			var h string
			if json.Unmarshal(tf["hash"], &h) != nil || !hashPattern.MatchString(h) {
				return nil, bad("data.topics[%d].hash %s is not a decimal string of a signed 64-bit hash", i, tf["hash"])
			}
		}
	}
	if v, ok := fields["consumer_offsets"]; ok {
		if _, err := object(v, "data.consumer_offsets", []string{"partition", "offset"}, nil, true); err != nil {
			return nil, bad("%v", err)
		}
	}
	var d RebalanceNeeded
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return nil, bad("data: %v", err)
	}
	if err := d.Validate(); err != nil {
		return nil, bad("%v", err)
	}
	if want := "group/" + d.GroupType.String() + "/" + d.GroupID; attrs.Subject != want {
		return nil, bad("subject %q, but the data's group gives %q", attrs.Subject, want)
	}
	if want := SourcePrefix + d.ClusterID; attrs.Source != want {
		return nil, bad("source %q, but the data's cluster gives %q", attrs.Source, want)
	}
	if d.Reasons == nil {
		d.Reasons = []Reason{}
	}
	d.Time = attrs.Time
	return &d, nil
}

// object reads b as a JSON object and returns its members, failing when one of required
// is missing or, when closed, a member is neither required nor optional.
func object(b []byte, where string, required, optional []string, closed bool) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		if err == nil {
			err = fmt.Errorf("null")
		}
		return nil, fmt.Errorf("%w: %s is not a JSON object: %v", ErrNotEvent, where, err)
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("%w: %s has no %q", ErrNotEvent, where, k)
		}
	}
	if closed {
		for k := range m {
			if !slices.Contains(required, k) && !slices.Contains(optional, k) {
				return nil, fmt.Errorf("%w: %s has an unknown member %q", ErrNotEvent, where, k)
			}
		}
	}
	return m, nil
}

func isString(v json.RawMessage) bool { return len(v) > 0 && v[0] == '"' }
