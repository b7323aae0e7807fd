package groups

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// Interning bounds: strings longer than maxInternLen are not interned, and the table
// is emptied when it reaches maxInterned entries, so memory stays bounded whatever
// the input.
const (
	maxInternLen = 255
	maxInterned  = 1 << 16
)

// Decoder decodes records like Decode and interns the strings it reads (group ids,
// topic names, client ids and hosts repeat across records), which saves most of
// the allocations of a replay and lets a State share one copy of each name. A
// Decoder is not safe for concurrent use; the zero value and nil are ready to use
// (nil interns nothing).
type Decoder struct {
	strs map[string]string
	// cur is the type and version of the value being decoded, for unknown tags.
	cur UnknownTag
	// unknownTags counts the tagged fields skipped as unknown; seenTags holds each
	// kind seen, and freshTags those first seen since the last UnknownTags call.
	unknownTags uint64
	seenTags    map[UnknownTag]bool
	freshTags   []UnknownTag
}

// UnknownTag is a kind of tagged field the decoder skipped because the record's schema,
// as this package knows it from Kafka 4.1.1 to 4.4.0, has no such tag: a newer Kafka
// wrote it. Its bytes are skipped whole; the rest of the record decodes as before.
type UnknownTag struct {
	Type    RecordType
	Version int16
	Tag     uint64
}

// UnknownTags returns how many tagged fields d skipped as unknown in all, and the
// kinds first seen since the previous call (for one log line each).
func (d *Decoder) UnknownTags() (total uint64, fresh []UnknownTag) {
	if d == nil {
		return 0, nil
	}
	fresh, d.freshTags = d.freshTags, nil
	return d.unknownTags, fresh
}

func (d *Decoder) unknownTag(tag uint64) {
	if d == nil {
		return
	}
	d.unknownTags++
	k := d.cur
	k.Tag = tag
	if !d.seenTags[k] {
		if d.seenTags == nil {
			d.seenTags = map[UnknownTag]bool{}
		}
		d.seenTags[k] = true
		d.freshTags = append(d.freshTags, k)
	}
}

// NewDecoder returns a Decoder that interns strings.
func NewDecoder() *Decoder { return &Decoder{strs: make(map[string]string, 1024)} }

// Decode decodes one __consumer_offsets record without interning; see
// (*Decoder).Decode.
func Decode(key, value []byte) (Record, error) { return (*Decoder)(nil).Decode(key, value) }

func (d *Decoder) intern(b []byte) string {
	if d == nil || len(b) > maxInternLen {
		return string(b)
	}
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	if d.strs == nil || len(d.strs) >= maxInterned {
		d.strs = make(map[string]string)
	}
	s := string(b)
	d.strs[s] = s
	return s
}

// reader is a kbin.Reader whose strings go through a Decoder's intern table.
type reader struct {
	kbin.Reader
	d *Decoder
}

func (r *reader) reset(b []byte, d *Decoder) { r.Reset(b); r.d = d }

func (r *reader) str() string {
	b, _ := r.StringBytes()
	return r.d.intern(b)
}

// uniqueStr reads a classic string that is unlikely to repeat (member ids): it is
// copied, not interned, so the intern table holds only names that repeat.
func (r *reader) uniqueStr() string {
	b, _ := r.StringBytes()
	return string(b)
}

// uniqueCstr is uniqueStr for compact strings.
func (r *reader) uniqueCstr() string {
	b, _ := r.CompactStringBytes()
	return string(b)
}

func (r *reader) nullableStr() (string, bool) {
	b, ok := r.StringBytes()
	return r.d.intern(b), ok
}

func (r *reader) cstr() string {
	b, _ := r.CompactStringBytes()
	return r.d.intern(b)
}

func (r *reader) nullableCstr() (string, bool) {
	b, ok := r.CompactStringBytes()
	return r.d.intern(b), ok
}

// tags reads a tagged-field section, calling fn with a reader over each field's
// payload; fn returns false for a tag it does not know, which is skipped. A known
// field must be consumed exactly.
func (r *reader) tags(fn func(tag uint64, f *reader) bool) {
	t := r.Tags()
	for {
		tag, payload, ok := t.Next()
		if !ok {
			return
		}
		if fn == nil {
			r.d.unknownTag(tag)
			continue
		}
		var f reader
		f.reset(payload, r.d)
		if !fn(tag, &f) {
			r.d.unknownTag(tag)
			continue
		}
		if f.Err() == nil && f.Len() != 0 {
			f.Fail(fmt.Errorf("%d bytes left: %w", f.Len(), ErrCorrupt))
		}
		if err := f.Err(); err != nil {
			r.Fail(fmt.Errorf("tagged field %d: %w", tag, err))
			return
		}
	}
}

// skipTags reads a tagged-field section in which no field is known.
func (r *reader) skipTags() { r.tags(nil) }

// finish fails r if bytes are left after the struct, and returns r's error.
func (r *reader) finish() error {
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(fmt.Errorf("%d bytes after the value struct: %w", r.Len(), ErrCorrupt))
	}
	return r.Err()
}

// readArray returns the n elements of an array whose length n was just read from
// r (ArrayLen or CompactArrayLen), each read by elem. Null, empty and a failed
// read give nil: a failed read fails the whole record, so no partial array is
// seen.
func readArray[T any](r *reader, n int, elem func(*T)) []T {
	if n <= 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		elem(&out[i])
	}
	if r.Err() != nil {
		return nil
	}
	return out
}

// compactStrings reads a compact array of compact strings; null and empty read as nil.
func (r *reader) compactStrings() []string {
	return readArray(r, r.CompactArrayLen(1), func(s *string) { *s = r.cstr() })
}

// compactKeyValues reads a compact array of {string, string, tags}.
func (r *reader) compactKeyValues() []KeyValue {
	return readArray(r, r.CompactArrayLen(3), func(kv *KeyValue) {
		kv.Key = r.cstr()
		kv.Value = r.cstr()
		r.skipTags()
	})
}

func (r *reader) compactInt16s() []int16 {
	return readArray(r, r.CompactArrayLen(2), func(v *int16) { *v = r.Int16() })
}

// Decode decodes one __consumer_offsets record. A nil or empty value is a tombstone
// (Kafka writes null values to delete; no valid value is empty). Offset commits
// (types 0 and 1) return at once with only Type and Tombstone set; their key and
// value are not read. Every failure is a *DecodeError; the Record returned with it
// carries what was decoded of the key. The Record never shares memory with key or
// value.
func (d *Decoder) Decode(key, value []byte) (Record, error) {
	t, ok := PeekType(key)
	if !ok {
		return Record{Type: t, Version: -1}, &DecodeError{RecordType: t, Version: -1, Part: PartKey, Err: fmt.Errorf("key of %d bytes: %w", len(key), ErrTruncated)}
	}
	rec := Record{Type: t, Version: -1, Tombstone: len(value) == 0}
	shape := t.keyShape()
	switch shape {
	case keyUnknown:
		return rec, &DecodeError{RecordType: t, Version: -1, Part: PartKey, Err: ErrUnknownRecordType}
	case keyOffsetCommit:
		return rec, nil
	}
	var r reader
	r.reset(key[2:], d)
	rec.GroupID = r.str()
	switch shape {
	case keyGroupMember:
		rec.MemberID = r.uniqueStr()
	case keyGroupRegex:
		rec.Regex = r.str()
	}
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(fmt.Errorf("%d bytes after the key struct: %w", r.Len(), ErrCorrupt))
	}
	if err := r.Err(); err != nil {
		return Record{Type: t, Version: -1}, &DecodeError{RecordType: t, Version: -1, Part: PartKey, Err: err}
	}
	if rec.Tombstone {
		return rec, nil
	}
	if len(value) < 2 {
		return rec, &DecodeError{RecordType: t, Version: -1, Part: PartValue, Err: fmt.Errorf("value of %d bytes: %w", len(value), ErrTruncated)}
	}
	rec.Version = int16(binary.BigEndian.Uint16(value))
	if d != nil {
		d.cur = UnknownTag{Type: t, Version: rec.Version}
	}
	v, err := d.decodeValue(t, rec.Version, value[2:])
	if err != nil {
		return rec, &DecodeError{RecordType: t, Version: rec.Version, Part: PartValue, Err: err}
	}
	rec.Value = v
	return rec, nil
}

// maxVersion is the highest value version decoded per record type; types absent
// here are recognized but their values are not decoded: offset commits (0, 1), which
// kraftwatch has no use for (the group reader skips them by their key, PeekType), and
// StreamsGroupPartitionMetadata (18) and StreamsGroupTargetAssignmentResolvedTopicIds
// (24), which no release from 4.1.1 to 4.4.0 has a schema for or writes.
func maxVersion(t RecordType) (int16, bool) {
	switch t {
	case GroupMetadata:
		return 4, true
	case ConsumerGroupMetadata, ConsumerGroupPartitionMetadata, ConsumerGroupMemberMetadata,
		ConsumerGroupRegularExpression, ShareGroupPartitionMetadata, ShareGroupMetadata,
		ShareGroupMemberMetadata, ShareGroupStatePartitionMetadata, StreamsGroupMetadata, StreamsGroupMemberMetadata, StreamsGroupTopology,
		ConsumerGroupTargetAssignmentMetadata, ConsumerGroupTargetAssignmentMember, ConsumerGroupCurrentMemberAssignment,
		ShareGroupTargetAssignmentMetadata, ShareGroupTargetAssignmentMember, ShareGroupCurrentMemberAssignment,
		StreamsGroupTargetAssignmentMetadata, StreamsGroupTargetAssignmentMember, StreamsGroupCurrentMemberAssignment:
		return 0, true
	}
	return 0, false
}

// decodeValue decodes the value struct b (after the version) of a record of type t.
// It returns nil, nil for types whose values are not decoded.
func (d *Decoder) decodeValue(t RecordType, version int16, b []byte) (Value, error) {
	maxV, decoded := maxVersion(t)
	if !decoded {
		return nil, nil
	}
	if version < 0 || version > maxV {
		return nil, ErrUnknownVersion
	}
	var r reader
	r.reset(b, d)
	var v Value
	switch t {
	case GroupMetadata:
		v = r.groupMetadata(version)
	case ConsumerGroupMetadata:
		v = r.consumerGroupMetadata()
	case ConsumerGroupPartitionMetadata:
		v = r.partitionMetadata()
	case ShareGroupPartitionMetadata:
		v = (*ShareGroupPartitionMetadataValue)(r.partitionMetadata())
	case ConsumerGroupMemberMetadata:
		v = r.consumerGroupMember()
	case ConsumerGroupRegularExpression:
		v = r.regularExpression()
	case ShareGroupMetadata:
		v = r.shareGroupMetadata()
	case ShareGroupMemberMetadata:
		v = r.shareGroupMember()
	case ShareGroupStatePartitionMetadata:
		v = r.shareGroupStatePartitionMetadata()
	case StreamsGroupMetadata:
		v = r.streamsGroupMetadata()
	case StreamsGroupMemberMetadata:
		v = r.streamsGroupMember()
	case StreamsGroupTopology:
		v = r.streamsGroupTopology()
	case ConsumerGroupTargetAssignmentMetadata:
		v = r.targetAssignmentMetadata()
	case ShareGroupTargetAssignmentMetadata:
		v = (*ShareGroupTargetAssignmentMetadataValue)(r.targetAssignmentMetadata())
	case ConsumerGroupTargetAssignmentMember:
		v = r.targetAssignmentMember()
	case ShareGroupTargetAssignmentMember:
		v = (*ShareGroupTargetAssignmentMemberValue)(r.targetAssignmentMember())
	case ConsumerGroupCurrentMemberAssignment:
		v = r.currentMemberAssignment(true)
	case ShareGroupCurrentMemberAssignment:
		c := r.currentMemberAssignment(false)
		v = &ShareGroupCurrentMemberAssignmentValue{MemberEpoch: c.MemberEpoch, PreviousMemberEpoch: c.PreviousMemberEpoch,
			State: c.State, AssignedPartitions: c.AssignedPartitions}
	case StreamsGroupTargetAssignmentMetadata:
		v = (*StreamsGroupTargetAssignmentMetadataValue)(r.targetAssignmentMetadata())
	case StreamsGroupTargetAssignmentMember:
		v = r.streamsTargetAssignmentMember()
	case StreamsGroupCurrentMemberAssignment:
		v = r.streamsCurrentMemberAssignment()
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	return v, nil
}

func (r *reader) consumerGroupMetadata() *ConsumerGroupMetadataValue {
	v := &ConsumerGroupMetadataValue{Epoch: r.Int32(), CreationTimeMs: -1}
	r.tags(func(tag uint64, f *reader) bool {
		switch tag {
		case 0:
			v.MetadataHash = f.Int64()
		case 1:
			v.CreationTimeMs = f.Int64()
		default:
			return false
		}
		return true
	})
	return v
}

func (r *reader) partitionMetadata() *ConsumerGroupPartitionMetadataValue {
	v := &ConsumerGroupPartitionMetadataValue{}
	v.Topics = readArray(r, r.CompactArrayLen(16+1+4+1+1), func(t *TopicMetadata) {
		t.TopicID = r.UUID()
		t.TopicName = r.cstr()
		t.NumPartitions = r.Int32()
		t.PartitionMetadata = readArray(r, r.CompactArrayLen(4+1+1), func(p *PartitionMetadata) {
			p.Partition = r.Int32()
			p.Racks = r.compactStrings()
			r.skipTags()
		})
		r.skipTags()
	})
	r.skipTags()
	return v
}

func (r *reader) shareGroupStatePartitionMetadata() *ShareGroupStatePartitionMetadataValue {
	v := &ShareGroupStatePartitionMetadataValue{}
	withPartitions := func(t *TopicPartitionsInfo) {
		t.TopicID, t.TopicName, t.Partitions = r.UUID(), r.cstr(), r.compactInt32s()
		r.skipTags()
	}
	v.InitializingTopics = readArray(r, r.CompactArrayLen(16+1+1+1), withPartitions)
	v.InitializedTopics = readArray(r, r.CompactArrayLen(16+1+1+1), withPartitions)
	v.DeletingTopics = readArray(r, r.CompactArrayLen(16+1+1), func(t *TopicPartitionsInfo) {
		t.TopicID, t.TopicName = r.UUID(), r.cstr()
		r.skipTags()
	})
	r.skipTags()
	return v
}

func (r *reader) consumerGroupMember() *ConsumerGroupMemberMetadataValue {
	v := &ConsumerGroupMemberMetadataValue{}
	v.InstanceID = r.uniqueCstr()
	v.RackID = r.cstr()
	v.ClientID = r.cstr()
	v.ClientHost = r.cstr()
	v.SubscribedTopicNames = r.compactStrings()
	v.SubscribedTopicRegex = r.cstr()
	v.RebalanceTimeoutMs = r.Int32()
	v.ServerAssignor = r.cstr()
	r.tags(func(tag uint64, f *reader) bool {
		if tag != 0 {
			return false
		}
		// Kafka's generated code writes this nullable struct even when it is null
		// (its default is taken to be an empty struct): the payload starts with a
		// uvarint 0 for null or 1 for a struct that follows.
		switch present := f.Uvarint(); {
		case f.Err() != nil:
			return true
		case present == 0:
			return true
		case present != 1:
			f.Fail(fmt.Errorf("ClassicMemberMetadata presence %d: %w", present, ErrCorrupt))
			return true
		}
		c := &ClassicMemberMetadata{SessionTimeoutMs: f.Int32()}
		c.SupportedProtocols = readArray(f, f.CompactArrayLen(1+1+1), func(p *ClassicProtocol) {
			p.Name = f.cstr()
			if b := f.CompactBytes(); len(b) > 0 {
				p.Metadata = slices.Clone(b)
			}
			f.skipTags()
		})
		f.skipTags()
		v.ClassicMemberMetadata = c
		return true
	})
	return v
}

func (r *reader) regularExpression() *ConsumerGroupRegularExpressionValue {
	v := &ConsumerGroupRegularExpressionValue{}
	v.Topics = r.compactStrings()
	v.Version = r.Int64()
	v.Timestamp = r.Int64()
	r.skipTags()
	return v
}

func (r *reader) shareGroupMetadata() *ShareGroupMetadataValue {
	v := &ShareGroupMetadataValue{Epoch: r.Int32()}
	// 4.1+ adds a plain int64 before the tagged fields under the same version 0.
	// A 4.0 value has only its tagged-field section left here (one byte when empty),
	// so take the 4.1 layout whenever 9 or more bytes are left. A 4.0 value with 8
	// or more bytes of unknown tagged fields would be misread; Kafka never defined
	// any for it.
	if r.Len() >= 9 {
		v.MetadataHash = r.Int64()
	}
	r.skipTags()
	return v
}

func (r *reader) shareGroupMember() *ShareGroupMemberMetadataValue {
	v := &ShareGroupMemberMetadataValue{}
	v.RackID = r.cstr()
	v.ClientID = r.cstr()
	v.ClientHost = r.cstr()
	v.SubscribedTopicNames = r.compactStrings()
	r.skipTags()
	return v
}

func (r *reader) streamsGroupMetadata() *StreamsGroupMetadataValue {
	v := newStreamsGroupMetadataValue(r.Int32(), r.Int64())
	if r.Err() != nil {
		return v
	}
	// Two layouts share version 0 (docs/consumer-offsets.md#streamsgroupmetadatavalue-17):
	// the tagged fields directly (tag 0
	// ValidatedTopologyEpoch, tag 1 LastAssignmentConfigs), or a plain
	// AssignmentConfigs array before them. Try the first; fall back to the second.
	rest := r.Rest()
	var tr reader
	tr.reset(rest, r.d)
	v.streamsTags(&tr)
	if tr.finish() == nil {
		return v
	}
	v = newStreamsGroupMetadataValue(v.Epoch, v.MetadataHash)
	var ar reader
	ar.reset(rest, r.d)
	v.AssignmentConfigs = ar.compactKeyValues()
	v.streamsTags(&ar)
	if err := ar.finish(); err != nil {
		r.Fail(err)
	}
	return v
}

func newStreamsGroupMetadataValue(epoch int32, hash int64) *StreamsGroupMetadataValue {
	return &StreamsGroupMetadataValue{Epoch: epoch, MetadataHash: hash,
		ValidatedTopologyEpoch: -1, StoredDescriptionTopologyEpoch: -1, FailedDescriptionTopologyEpoch: -1}
}

func (v *StreamsGroupMetadataValue) streamsTags(r *reader) {
	r.tags(func(tag uint64, f *reader) bool {
		switch tag {
		case 0:
			v.ValidatedTopologyEpoch = f.Int32()
		case 1:
			v.AssignmentConfigs = f.compactKeyValues()
		case 2:
			v.StoredDescriptionTopologyEpoch = f.Int32()
		case 3:
			v.FailedDescriptionTopologyEpoch = f.Int32()
		default:
			return false
		}
		return true
	})
}

func (r *reader) streamsGroupMember() *StreamsGroupMemberMetadataValue {
	v := &StreamsGroupMemberMetadataValue{}
	v.InstanceID = r.uniqueCstr()
	v.RackID = r.cstr()
	v.ClientID = r.cstr()
	v.ClientHost = r.cstr()
	v.RebalanceTimeoutMs = r.Int32()
	v.TopologyEpoch = r.Int32()
	v.ProcessID = r.uniqueCstr()
	// A nullable struct outside a tagged field: int8 -1 for null, 1 when present.
	switch present := r.Int8(); present {
	case -1:
	case 1:
		e := &Endpoint{Host: r.cstr(), Port: r.Uint16()}
		r.skipTags()
		v.UserEndpoint = e
	default:
		r.Fail(fmt.Errorf("UserEndpoint presence byte %d: %w", present, ErrCorrupt))
	}
	v.ClientTags = r.compactKeyValues()
	r.skipTags()
	return v
}

func (r *reader) streamsGroupTopology() *StreamsGroupTopologyValue {
	v := &StreamsGroupTopologyValue{Epoch: r.Int32()}
	v.Subtopologies = readArray(r, r.CompactArrayLen(7+1), func(s *Subtopology) {
		s.SubtopologyID = r.cstr()
		s.SourceTopics = r.compactStrings()
		s.SourceTopicRegex = r.compactStrings()
		s.StateChangelogTopics = r.topicInfos()
		s.RepartitionSinkTopics = r.compactStrings()
		s.RepartitionSourceTopics = r.topicInfos()
		s.CopartitionGroups = readArray(r, r.CompactArrayLen(3+1), func(g *CopartitionGroup) {
			g.SourceTopics = r.compactInt16s()
			g.SourceTopicRegex = r.compactInt16s()
			g.RepartitionSourceTopics = r.compactInt16s()
			r.skipTags()
		})
		r.skipTags()
	})
	r.skipTags()
	return v
}

func (r *reader) topicInfos() []TopicInfo {
	return readArray(r, r.CompactArrayLen(1+4+2+1+1), func(t *TopicInfo) {
		t.Name = r.cstr()
		t.Partitions = r.Int32()
		t.ReplicationFactor = r.Int16()
		t.TopicConfigs = r.compactKeyValues()
		r.skipTags()
	})
}

// groupMetadata reads GroupMetadataValue v0-v4 (v4 is flexible).
func (r *reader) groupMetadata(version int16) *GroupMetadataValue {
	flex := version >= 4
	str, uniqueStr := r.str, r.uniqueStr
	nullableStr := r.nullableStr
	bytes := r.Bytes
	arrayLen := r.ArrayLen
	if flex {
		str, uniqueStr, nullableStr, bytes, arrayLen = r.cstr, r.uniqueCstr, r.nullableCstr, r.CompactBytes, r.CompactArrayLen
	}
	v := &GroupMetadataValue{CurrentStateTimestamp: -1}
	v.ProtocolType = str()
	v.Generation = r.Int32()
	protocol, hasProtocol := nullableStr()
	v.Protocol = protocol
	v.Leader, _ = nullableStr()
	if version >= 2 {
		v.CurrentStateTimestamp = r.Int64()
	}
	decodeSubs := v.ProtocolType == "consumer" && hasProtocol
	// The smallest member: 3 strings, 1 int32 and 2 byte arrays; compact lengths
	// take a byte instead of 2 or 4, plus a tagged section.
	minMember := 2*3 + 4 + 4 + 4
	if flex {
		minMember = 3 + 4 + 2 + 1
	}
	v.Members = readArray(r, arrayLen(minMember), func(m *GroupMember) {
		m.MemberID = uniqueStr()
		if version >= 3 {
			m.GroupInstanceID, _ = nullableStr()
		}
		m.ClientID = str()
		m.ClientHost = str()
		m.RebalanceTimeout = -1
		if version >= 1 {
			m.RebalanceTimeout = r.Int32()
		}
		m.SessionTimeout = r.Int32()
		sub := bytes()
		bytes() // assignment: not needed
		if flex {
			r.skipTags()
		}
		if decodeSubs && r.Err() == nil {
			m.Subscription, m.SubscriptionErr = r.d.consumerProtocolSubscription(sub)
		}
	})
	if flex {
		r.skipTags()
	}
	return v
}

// DecodeConsumerProtocolSubscription decodes the subscription bytes of a classic
// consumer (an int16 version, then the non-flexible struct). Versions above 3 are
// read with the version 3 layout; bytes after the last known field are ignored, as
// Kafka clients do. The result does not share memory with b.
func DecodeConsumerProtocolSubscription(b []byte) (*ConsumerProtocolSubscription, error) {
	return (*Decoder)(nil).consumerProtocolSubscription(b)
}

func (d *Decoder) consumerProtocolSubscription(b []byte) (*ConsumerProtocolSubscription, error) {
	var r reader
	r.reset(b, d)
	s := &ConsumerProtocolSubscription{Version: r.Int16(), GenerationID: -1}
	if r.Err() == nil && s.Version < 0 {
		r.Fail(fmt.Errorf("subscription version %d: %w", s.Version, ErrCorrupt))
	}
	s.Topics = readArray(&r, r.ArrayLen(2), func(t *string) { *t = r.str() })
	r.Bytes() // UserData
	if s.Version >= 1 {
		s.OwnedPartitions = readArray(&r, r.ArrayLen(2+4), func(p *TopicPartitions) {
			p.Topic = r.str()
			p.Partitions = readArray(&r, r.ArrayLen(4), func(id *int32) { *id = r.Int32() })
		})
	}
	if s.Version >= 2 {
		s.GenerationID = r.Int32()
	}
	if s.Version >= 3 {
		s.RackID, _ = r.nullableStr()
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("ConsumerProtocolSubscription v%d: %w", s.Version, err)
	}
	return s, nil
}
