package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
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
// type's JSON Schema does (events/schema/rebalance_needed.v1.json for
// TypeRebalanceNeeded, events/schema/rebalanced.v1.json for TypeGroupRebalanced:
// required members, JSON types, value forms and ranges), then Validate. Data is a
// pointer to the type's struct, with Time set from the envelope.
//
// Members Decode does not know (CloudEvents extension attributes, and what a later v1
// kraftwatch adds to the data) are ignored, except in a consumer_offsets position (see
// Compatibility in the package doc). Errors wrap ErrNotEvent, or ErrUnknownType for a
// well-formed CloudEvent of a type this package does not know, which is returned with
// its attributes and nil Data.
func Decode(b []byte) (Event, error) {
	attrs, d, err := decode(b, "")
	if err != nil {
		return Event{}, err
	}
	ev := Event{SpecVersion: attrs.SpecVersion, ID: attrs.ID, Source: attrs.Source, Type: attrs.Type,
		Subject: attrs.Subject, Time: attrs.Time, DataContentType: attrs.DataContentType}
	if d == nil {
		return ev, fmt.Errorf("%w: %q (id %s)", ErrUnknownType, attrs.Type, attrs.ID)
	}
	ev.Data = d
	return ev, nil
}

// DecodeRebalanceNeeded is Decode for a rebalance-needed event only: another type is an
// error wrapping ErrNotEvent.
func DecodeRebalanceNeeded(b []byte) (Envelope[RebalanceNeeded], error) {
	return decodeAs[RebalanceNeeded](b, TypeRebalanceNeeded)
}

// decodeAs decodes an event of type typ only, whose data is a *T.
func decodeAs[T any](b []byte, typ string) (Envelope[T], error) {
	attrs, d, err := decode(b, typ)
	if err != nil {
		return Envelope[T]{}, err
	}
	return Envelope[T]{SpecVersion: attrs.SpecVersion, ID: attrs.ID, Source: attrs.Source, Type: attrs.Type,
		Subject: attrs.Subject, Time: attrs.Time, DataContentType: attrs.DataContentType, Data: *any(d).(*T)}, nil
}

// eventData is the data of an event type Decode knows.
type eventData interface {
	Data
	Validate() error
	clusterID() string
	setTime(time.Time)
}

// eventType is what Decode knows of one event type.
type eventType struct {
	name     string
	idPrefix string
	// read reads the data at the reader.
	read func(*reader) (eventData, error)
}

var eventTypes = [...]eventType{
	{TypeRebalanceNeeded, "kw1-", func(r *reader) (eventData, error) {
		d := new(RebalanceNeeded)
		return d, r.rebalanceNeeded(d)
	}},
	{TypeGroupRebalanced, "kwr1-", func(r *reader) (eventData, error) {
		d := new(GroupRebalanced)
		return d, r.groupRebalanced(d)
	}},
}

// envelope is the shape of every kraftwatch event's CloudEvents attributes; extension
// attributes are ignored. decode checks the required and null members itself, after the
// spec version, which says how to read the rest.
var envelope = &shape{
	names:    []string{"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data", "dataschema"},
	nullable: 1<<9 - 1,
}

// The indexes of the envelope's members.
const (
	attrSpecVersion = iota
	attrID
	attrSource
	attrType
	attrSubject
	attrTime
	attrDataContentType
	attrData
	attrDataSchema
	envelopeRequired = attrDataSchema // all before it
)

// dataError is an error in an event's data read in the same pass as the envelope.
type dataError struct{ error }

// decode reads the event b in one pass: its attributes, and its data when the event says
// its type (one of eventTypes and, when want is set, want) before it, as kraftwatch
// writes them; otherwise the data is read once the attributes are. d is nil for a
// type Decode does not know.
func decode(b []byte, want string) (attrs Envelope[json.RawMessage], d eventData, err error) {
	r := getReader(b, "event")
	defer r.release()
	var raw [9]jsontext.Value // nil for a null member
	var known *eventType      // the type, once known
	seen, err := r.object(envelope, func(i int) error {
		if i == attrData {
			if known = r.knownType(&raw, want, &attrs); known != nil {
				var err error
				if d, err = r.data(known, &attrs); err != nil {
					if _, ok := err.(syntaxError); !ok {
						err = dataError{err}
					}
				}
				return err
			}
		}
		v, err := r.value()
		if err == nil {
			end := int(r.dec.InputOffset())
			raw[i] = b[end-len(v) : end]
		}
		return err
	})
	if err == nil {
		err = r.end()
	}
	bad := func(err error) (Envelope[json.RawMessage], eventData, error) {
		if de, ok := err.(dataError); ok {
			var id []byte
			if v := raw[attrID]; v.Kind() == '"' {
				id = r.unquoted(v)
			}
			return attrs, nil, fmt.Errorf("%w: %s %s: %v", ErrNotEvent, known.name, id, de.error)
		}
		return attrs, nil, fmt.Errorf("%w: %v", ErrNotEvent, err)
	}
	if err != nil {
		return bad(err)
	}
	if v := raw[attrSpecVersion]; v.Kind() == '"' && string(r.unquoted(v)) != SpecVersion {
		return bad(fmt.Errorf("specversion %q, want %q", r.unquoted(v), SpecVersion))
	}
	for i, name := range envelope.names[:envelopeRequired] {
		if seen&(1<<i) == 0 {
			return bad(fmt.Errorf("event has no %q", name))
		}
	}
	for i, name := range envelope.names {
		if seen&(1<<i) != 0 && raw[i] == nil && (i != attrData || known == nil) {
			return bad(fmt.Errorf("event.%s is null", name))
		}
	}
	var dataSchema string
	for i, name := range envelope.names {
		v := raw[i]
		if v == nil {
			continue
		}
		r.push(name)
		switch i {
		case attrSpecVersion:
			err = r.strOf(v, &attrs.SpecVersion, SpecVersion)
		case attrID:
			err = r.strOf(v, &attrs.ID)
		case attrSource:
			err = r.strOf(v, &attrs.Source, attrs.Source)
		case attrType:
			err = r.strOf(v, &attrs.Type, TypeRebalanceNeeded, TypeGroupRebalanced)
		case attrSubject:
			err = r.strOf(v, &attrs.Subject, attrs.Subject)
		case attrTime:
			err = r.timeOf(v, &attrs.Time)
		case attrDataContentType:
			err = r.strOf(v, &attrs.DataContentType, DataContentType)
		case attrData:
			attrs.Data = json.RawMessage(v)
		case attrDataSchema:
			err = r.strOf(v, &dataSchema)
		}
		if err != nil {
			return bad(err)
		}
		r.pop()
	}
	if attrs.Type == "" || attrs.ID == "" || attrs.Source == "" {
		return bad(errors.New("empty type, id or source"))
	}
	if raw[attrDataSchema] != nil {
		if u, err := url.Parse(dataSchema); err != nil || !u.IsAbs() {
			return bad(fmt.Errorf("dataschema %q is not an absolute URI", dataSchema))
		}
	}
	if known == nil {
		for i := range eventTypes {
			if eventTypes[i].name == attrs.Type {
				known = &eventTypes[i]
			}
		}
	}
	if want != "" && attrs.Type != want {
		return bad(fmt.Errorf("type %q, want %s", attrs.Type, want))
	}
	if known == nil {
		return attrs, nil, nil
	}
	dataBad := func(err error) (Envelope[json.RawMessage], eventData, error) {
		return attrs, nil, fmt.Errorf("%w: %s %s: %v", ErrNotEvent, known.name, attrs.ID, err)
	}
	if err := checkAttributes(&attrs, known.idPrefix); err != nil {
		return dataBad(err)
	}
	if d == nil {
		r.reset(attrs.Data, "data")
		if d, err = r.data(known, &attrs); err != nil {
			return dataBad(err)
		}
	}
	if err := d.Validate(); err != nil {
		return dataBad(err)
	}
	k := d.Key()
	if err := checkGroup(&attrs, d.clusterID(), k.Type, k.ID); err != nil {
		return dataBad(err)
	}
	d.setTime(attrs.Time)
	return attrs, d, nil
}

// knownType returns the event type the attributes read so far (raw) give, if the spec
// version is 1.0 and it is a type Decode knows (and want, when set). It sets the
// source and subject of attrs, so that the data's cluster and group id can be the same
// strings.
func (r *reader) knownType(raw *[9]jsontext.Value, want string, attrs *Envelope[json.RawMessage]) *eventType {
	if v := raw[attrSpecVersion]; v.Kind() != '"' || string(r.unquoted(v)) != SpecVersion {
		return nil
	}
	v := raw[attrType]
	if v.Kind() != '"' {
		return nil
	}
	for i := range eventTypes {
		t := &eventTypes[i]
		if string(r.unquoted(v)) == t.name && (want == "" || want == t.name) {
			for _, a := range [...]struct {
				v   jsontext.Value
				dst *string
			}{{raw[attrSource], &attrs.Source}, {raw[attrSubject], &attrs.Subject}} {
				if a.v.Kind() == '"' {
					*a.dst = string(r.unquoted(a.v))
				}
			}
			return t
		}
	}
	return nil
}

// data reads the data of an event of type t, at the reader, with the path "data"; attrs
// are the attributes read so far.
func (r *reader) data(t *eventType, attrs *Envelope[json.RawMessage]) (eventData, error) {
	base := r.base
	r.base = len(r.path) - 1
	r.clusterID = strings.TrimPrefix(attrs.Source, SourcePrefix)
	r.groupID = ""
	if rest, ok := strings.CutPrefix(attrs.Subject, "group/"); ok {
		_, r.groupID, _ = strings.Cut(rest, "/")
	}
	d, err := t.read(r)
	r.base = base
	return d, err
}

// The shape of a rebalance-needed event's data and of the objects in it
// (schema/rebalance_needed.v1.json).
var (
	rebalanceNeeded = &shape{
		names: []string{"cluster_id", "group_id", "group_type", "hash_scheme", "previous_hash", "new_hash",
			"reasons", "metadata_offset", "metadata_epoch", "coordinator_epoch",
			"consumer_offsets", "topics", "topics_truncated"},
		required: 10,
		nullable: 1 << 4, // previous_hash
	}
	reason = &shape{
		names: []string{"kind", "topic",
			"topic_id", "old_topic_id", "old_partitions", "new_partitions", "regex", "metadata_offset", "time"},
		required: 2,
	}
	coveredTopic = &shape{names: []string{"name", "topic_id", "partitions", "hash"}, required: 4}
	// offsetsPosition is closed: a log position is a partition and an offset, and
	// event ids are derived from it, so a position with more members would be another
	// event version.
	offsetsPosition = &shape{names: []string{"partition", "offset"}, required: 2, closed: true}
)

// rebalanceNeeded reads a rebalance-needed event's data into d.
func (r *reader) rebalanceNeeded(d *RebalanceNeeded) error {
	_, err := r.object(rebalanceNeeded, func(i int) error {
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
			return r.str(&d.HashScheme, SchemeMurmur3, SchemeKafka)
		case 4:
			d.PreviousHash.Valid = true
			return r.hash(&d.PreviousHash.Hash)
		case 5:
			return r.hash(&d.NewHash)
		case 6:
			var err error
			d.Reasons, err = items(r, &r.reasons, r.reason)
			return err
		case 7:
			return r.int64(&d.MetadataOffset)
		case 8:
			return r.int32(&d.MetadataEpoch)
		case 9:
			return r.int32(&d.CoordinatorEpoch)
		case 10:
			d.ConsumerOffsets = new(OffsetsPosition)
			return r.offsetsPosition(d.ConsumerOffsets)
		case 11:
			var err error
			d.Topics, err = items(r, &r.topics, r.coveredTopic)
			return err
		default:
			return r.boolean(&d.TopicsTruncated)
		}
	})
	return err
}

func (r *reader) reason(d *Reason) error {
	_, err := r.object(reason, func(i int) error {
		switch i {
		case 0:
			k, err := r.enum(reasonNames[1:], func(s string) error { _, err := ParseReasonKind(s); return err })
			d.Kind = ReasonKind(k + 1)
			return err
		case 1:
			return r.name(&d.Topic)
		case 2:
			return r.topicID(&d.TopicID)
		case 3:
			return r.topicID(&d.OldTopicID)
		case 4, 5:
			n, err := r.atLeast(32, 1, "a partition count of 1 or more")
			if i == 4 {
				d.OldPartitions = int32(n)
			} else {
				d.NewPartitions = int32(n)
			}
			return err
		case 6:
			return r.str(&d.Regex)
		case 7:
			n, err := r.atLeast(64, 1, "an offset of 1 or more (absent when not known)")
			d.MetadataOffset = n
			return err
		default:
			return r.time(&d.Time)
		}
	})
	return err
}

func (r *reader) coveredTopic(d *CoveredTopic) error {
	_, err := r.object(coveredTopic, func(i int) error {
		switch i {
		case 0:
			return r.name(&d.Name)
		case 1:
			return r.topicID(&d.TopicID)
		case 2:
			return r.int32(&d.Partitions)
		default:
			return r.hash(&d.Hash)
		}
	})
	return err
}

func (r *reader) offsetsPosition(d *OffsetsPosition) error {
	_, err := r.object(offsetsPosition, func(i int) error {
		if i == 0 {
			return r.int32(&d.Partition)
		}
		return r.int64(&d.Offset)
	})
	return err
}

func (e *RebalanceNeeded) clusterID() string   { return e.ClusterID }
func (e *RebalanceNeeded) setTime(t time.Time) { e.Time = t }

// checkAttributes checks the attributes an event of one of this package's types has:
// its id (idPrefix and 32 hex digits), source, subject and datacontenttype.
func checkAttributes(attrs *Envelope[json.RawMessage], idPrefix string) error {
	switch {
	case !validID(attrs.ID, idPrefix):
		return fmt.Errorf("id is not %s and 32 hex digits", idPrefix)
	case !strings.HasPrefix(attrs.Source, SourcePrefix) || len(attrs.Source) == len(SourcePrefix):
		return fmt.Errorf("source %q is not kraftwatch/<cluster id>", attrs.Source)
	case !validSubject(attrs.Subject):
		return fmt.Errorf("subject %q is not group/<group type>/<group id>", attrs.Subject)
	case attrs.DataContentType != DataContentType:
		return fmt.Errorf("datacontenttype %q, want %s", attrs.DataContentType, DataContentType)
	}
	return nil
}

// validID reports whether id is prefix and 32 lower-case hex digits.
func validID(id, prefix string) bool {
	hex, ok := strings.CutPrefix(id, prefix)
	if !ok || len(hex) != 32 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validSubject reports whether s starts with group/<known group type>/.
func validSubject(s string) bool {
	rest, ok := strings.CutPrefix(s, "group/")
	if !ok {
		return false
	}
	for _, t := range groupTypeNames[1:] {
		if len(rest) > len(t) && rest[len(t)] == '/' && rest[:len(t)] == t {
			return true
		}
	}
	return false
}

// checkGroup checks that the subject and source attributes name the data's group and
// cluster.
func checkGroup(attrs *Envelope[json.RawMessage], clusterID string, t GroupType, groupID string) error {
	if !hasParts(attrs.Subject, "group/", t.String(), "/", groupID) {
		return fmt.Errorf("subject %q, but the data's group gives %q", attrs.Subject, "group/"+t.String()+"/"+groupID)
	}
	if !hasParts(attrs.Source, SourcePrefix, clusterID) {
		return fmt.Errorf("source %q, but the data's cluster gives %q", attrs.Source, SourcePrefix+clusterID)
	}
	return nil
}

// hasParts reports whether s is the concatenation of parts (without building it).
func hasParts(s string, parts ...string) bool {
	for _, p := range parts {
		var ok bool
		if s, ok = strings.CutPrefix(s, p); !ok {
			return false
		}
	}
	return s == ""
}
