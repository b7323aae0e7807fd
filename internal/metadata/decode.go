package metadata

import (
	"fmt"
	"slices"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// FrameVersion is the only frame version of metadata record values.
const FrameVersion = 1

// Decode decodes one framed metadata record value and returns the record and its
// version. Every record it returns is newly allocated, except byte-slice fields,
// which share memory with value. Errors are *DecodeError.
func Decode(value []byte) (Record, int16, error) {
	rec, v, _, err := DecodeCounting(value)
	return rec, v, err
}

// DecodeCounting is Decode that also returns how many tagged fields it skipped as
// unknown (see BatchDecoder.UnknownTags).
func DecodeCounting(value []byte) (Record, int16, int, error) {
	if len(value) >= 2 && value[1] == byte(TypePartitionChange) {
		var c PartitionChangeRecord
		if v, ok := decodePartitionChangeFast(value, &c, nil); ok {
			return &c, v, 0, nil
		}
	} else {
		var p PartitionRecord
		if v, ok := decodePartitionFast(value, &p, nil); ok {
			return &p, v, 0, nil
		}
	}
	r := &reader{}
	r.Reset(value)
	rec, v, err := decode(r, nil)
	return rec, v, r.unknownTags, err
}

// Decoder decodes framed metadata records reusing its memory: the record it returns,
// and the slices inside it, are only valid until the next call to Decode. Strings are
// always newly allocated. Copy what you keep. A Decoder is not safe for concurrent use;
// its zero value is ready to use.
type Decoder struct {
	r         reader
	arena     arena
	partition PartitionRecord
	change    PartitionChangeRecord
	topic     TopicRecord
	noop      NoOpRecord
	feature   FeatureLevelRecord
	config    ConfigRecord
}

// Decode decodes one framed metadata record value; see the type's documentation for
// the lifetime of its result.
func (d *Decoder) Decode(value []byte) (Record, int16, error) {
	d.arena.reset()
	d.r.unknownTags = 0
	if len(value) >= 2 && value[1] == byte(TypePartitionChange) {
		if v, ok := decodePartitionChangeFast(value, &d.change, &d.arena); ok {
			return &d.change, v, nil
		}
	} else if v, ok := decodePartitionFast(value, &d.partition, &d.arena); ok {
		return &d.partition, v, nil
	}
	d.r = reader{arena: &d.arena}
	d.r.Reset(value)
	return decode(&d.r, d)
}

// scratch returns the Decoder's reusable record of type t, zeroed, or nil when it
// keeps none of that type.
// UnknownTags returns how many tagged fields the last Decode skipped as unknown (see
// BatchDecoder.UnknownTags).
func (d *Decoder) UnknownTags() int { return d.r.unknownTags }

func (d *Decoder) scratch(t RecordType) Record {
	switch t {
	case TypePartition:
		d.partition = PartitionRecord{}
		return &d.partition
	case TypePartitionChange:
		d.change = PartitionChangeRecord{}
		return &d.change
	case TypeTopic:
		d.topic = TopicRecord{}
		return &d.topic
	case TypeNoOp:
		return &d.noop
	case TypeFeatureLevel:
		d.feature = FeatureLevelRecord{}
		return &d.feature
	case TypeConfig:
		d.config = ConfigRecord{}
		return &d.config
	}
	return nil
}

// scratcher hands out the records a decode fills in, or nil to allocate one.
type scratcher interface {
	scratch(t RecordType) Record
}

// BatchDecoder decodes many records that stay valid together: what Decode returns,
// and the slices inside it, are valid until Reset, so a whole batch of decoded records
// can be handed to another goroutine. Strings are always newly allocated. Partition,
// partition change and topic records and their arrays live in buffers that Reset
// reuses, so once they have grown to a batch's size decoding a snapshot, or a log of
// partition changes, allocates only the strings and the few records of other types.
// Expect lets them grow to a batch's size at once. A BatchDecoder is not safe for
// concurrent use; its zero value is ready to use.
type BatchDecoder struct {
	r          reader
	arena      arena
	partitions []PartitionRecord
	changes    []PartitionChangeRecord
	topics     []TopicRecord
	expect     int // records still to come (Expect): what a full buffer grows by
}

// Expect says that n more records are about to be decoded (a batch's record count,
// from its header): a buffer of records found full grows to hold n more at once
// instead of by append's steps (1.25 times for large slices, so a buffer grown
// record by record to 10,000 records allocated about five times its final size). It
// is only a hint: decoding more or fewer records is still right, and once Reset
// keeps buffers of a batch's size it costs nothing.
func (d *BatchDecoder) Expect(n int) { d.expect = n }

// grow returns s with room for one more record: at least d.expect more when it is full.
func grow[T any](s []T, expect int) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(expect, 1))
	}
	return s[:len(s)+1]
}

// Decode decodes one framed metadata record value; see the type's documentation for
// the lifetime of its result.
func (d *BatchDecoder) Decode(value []byte) (Record, int16, error) {
	d.r.unknownTags = 0
	if len(value) >= 2 && value[1] == byte(TypePartition) {
		// A slot that the fast path overwrites whole, so it need not be zeroed.
		n := len(d.partitions)
		d.partitions = grow(d.partitions, d.expect)
		if v, ok := decodePartitionFast(value, &d.partitions[n], &d.arena); ok {
			return &d.partitions[n], v, nil
		}
		d.partitions = d.partitions[:n]
	}
	if len(value) >= 2 && value[1] == byte(TypePartitionChange) {
		n := len(d.changes)
		d.changes = grow(d.changes, d.expect)
		if v, ok := decodePartitionChangeFast(value, &d.changes[n], &d.arena); ok {
			return &d.changes[n], v, nil
		}
		d.changes = d.changes[:n]
	}
	d.r = reader{arena: &d.arena}
	d.r.Reset(value)
	return decode(&d.r, d)
}

// UnknownTags returns how many tagged fields the last Decode skipped because the
// record's schema, as this package knows it, has no such tag (a newer Kafka's); the
// record is decoded without them.
func (d *BatchDecoder) UnknownTags() int { return d.r.unknownTags }

// LeaderChange returns c as a record held like those Decode returns.
func (d *BatchDecoder) LeaderChange(c *LeaderChange) *PartitionChangeRecord {
	d.changes = grow(d.changes, d.expect)
	r := &d.changes[len(d.changes)-1]
	// Cleared, then written field by field (see DecodeLeaderChange).
	*r = PartitionChangeRecord{}
	r.PartitionID, r.TopicID, r.Leader, r.LeaderRecoveryState = c.PartitionID, c.TopicID, c.Leader, c.LeaderRecoveryState
	return r
}

// Reset makes the memory of every record decoded so far available again: they must
// no longer be used.
func (d *BatchDecoder) Reset() {
	d.arena.reset()
	d.partitions = d.partitions[:0]
	d.changes = d.changes[:0]
	d.topics = d.topics[:0]
}

func (d *BatchDecoder) scratch(t RecordType) Record {
	switch t {
	case TypePartition:
		d.partitions = grow(d.partitions, d.expect)
		p := &d.partitions[len(d.partitions)-1]
		*p = PartitionRecord{}
		return p
	case TypePartitionChange:
		d.changes = grow(d.changes, d.expect)
		c := &d.changes[len(d.changes)-1]
		*c = PartitionChangeRecord{}
		return c
	case TypeTopic:
		d.topics = grow(d.topics, d.expect)
		t := &d.topics[len(d.topics)-1]
		*t = TopicRecord{}
		return t
	}
	return nil
}

func decode(r *reader, d scratcher) (Record, int16, error) {
	fail := func(key, ver int, err error) (Record, int16, error) {
		return nil, 0, &DecodeError{APIKey: key, Version: ver, Offset: -1, Err: err}
	}
	frame := r.Uvarint()
	if err := r.Err(); err != nil {
		return fail(-1, -1, fmt.Errorf("frame version: %v: %w", err, ErrCorrupt))
	}
	if frame != FrameVersion {
		return fail(-1, -1, fmt.Errorf("frame version %d, want %d: %w", frame, FrameVersion, ErrCorrupt))
	}
	key := r.Uvarint()
	ver := r.Uvarint()
	if err := r.Err(); err != nil {
		return fail(-1, -1, fmt.Errorf("frame header: %v: %w", err, ErrCorrupt))
	}
	if key > 1<<15-1 || ver > 1<<15-1 {
		return fail(-1, -1, fmt.Errorf("apiKey %d version %d out of range: %w", key, ver, ErrCorrupt))
	}
	t, v := RecordType(key), int16(ver)
	if !t.Known() {
		return fail(int(key), int(ver), fmt.Errorf("apiKey %d: %w", key, ErrUnknownType))
	}
	if v > t.MaxVersion() {
		return fail(int(key), int(ver), fmt.Errorf("version %d, newest known %d: %w", v, t.MaxVersion(), ErrUnknownVersion))
	}
	var rec Record
	if d != nil {
		rec = d.scratch(t)
	}
	if rec == nil {
		rec = New(t)
	}
	rec.decode(r, v)
	if err := r.Err(); err != nil {
		return fail(int(key), int(ver), fmt.Errorf("%v: %w", err, ErrCorrupt))
	}
	if r.Len() != 0 {
		return fail(int(key), int(ver), fmt.Errorf("%d bytes of garbage after the record: %w", r.Len(), ErrCorrupt))
	}
	return rec, v, nil
}

// New returns a new zero record of type t (with PartitionChangeRecord's "unchanged"
// defaults), or nil for an unknown type.
func New(t RecordType) Record {
	switch t {
	case TypeRegisterBroker:
		return &RegisterBrokerRecord{}
	case TypeUnregisterBroker:
		return &UnregisterBrokerRecord{}
	case TypeTopic:
		return &TopicRecord{}
	case TypePartition:
		return &PartitionRecord{}
	case TypeConfig:
		return &ConfigRecord{}
	case TypePartitionChange:
		return NewPartitionChangeRecord(UUID{}, 0)
	case TypeFenceBroker:
		return &FenceBrokerRecord{}
	case TypeUnfenceBroker:
		return &UnfenceBrokerRecord{}
	case TypeRemoveTopic:
		return &RemoveTopicRecord{}
	case TypeDelegationToken:
		return &DelegationTokenRecord{}
	case TypeUserScramCredential:
		return &UserScramCredentialRecord{}
	case TypeFeatureLevel:
		return &FeatureLevelRecord{}
	case TypeClientQuota:
		return &ClientQuotaRecord{}
	case TypeProducerIDs:
		return &ProducerIdsRecord{}
	case TypeBrokerRegistrationChange:
		return &BrokerRegistrationChangeRecord{}
	case TypeAccessControlEntry:
		return &AccessControlEntryRecord{}
	case TypeRemoveAccessControlEntry:
		return &RemoveAccessControlEntryRecord{}
	case TypeNoOp:
		return &NoOpRecord{}
	case TypeZkMigrationState:
		return &ZkMigrationStateRecord{}
	case TypeRemoveUserScramCredential:
		return &RemoveUserScramCredentialRecord{}
	case TypeBeginTransaction:
		return &BeginTransactionRecord{}
	case TypeEndTransaction:
		return &EndTransactionRecord{}
	case TypeAbortTransaction:
		return &AbortTransactionRecord{}
	case TypeRemoveDelegationToken:
		return &RemoveDelegationTokenRecord{}
	case TypeRegisterController:
		return &RegisterControllerRecord{}
	case TypeClearElr:
		return &ClearElrRecord{}
	case TypeUnregisterController:
		return &UnregisterControllerRecord{}
	}
	return nil
}

// Append appends rec framed at version v (frame version, apiKey, version, body) to b.
// It fails for a version the record type does not have. Fields that do not exist at
// v are not written.
func Append(b []byte, rec Record, v int16) ([]byte, error) {
	t := rec.Type()
	if v < 0 || v > t.MaxVersion() {
		return b, fmt.Errorf("metadata: %s has no version %d", t, v)
	}
	b = kbin.AppendUvarint(b, FrameVersion)
	b = kbin.AppendUvarint(b, uint64(t))
	b = kbin.AppendUvarint(b, uint64(v))
	return rec.appendTo(b, v), nil
}
