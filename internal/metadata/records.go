package metadata

import "github.com/kraftwatch/kraftwatch/internal/kbin"

// Record is one decoded metadata record: a pointer to one of the *XxxRecord types of
// this package. The set is closed.
type Record interface {
	Type() RecordType
	// decode reads the body at version v; appendTo writes it.
	decode(r *reader, v int16)
	appendTo(b []byte, v int16) []byte
}

// Sentinel values of PartitionChangeRecord.
const (
	// LeaderUnchanged is PartitionChangeRecord.Leader when the leader did not change.
	LeaderUnchanged int32 = -2
	// NoLeader is a Leader of -1: the partition has no leader.
	NoLeader int32 = -1
	// LeaderRecoveryUnchanged is PartitionChangeRecord.LeaderRecoveryState when it
	// did not change.
	LeaderRecoveryUnchanged int8 = -1
)

// BrokerRegistrationChangeRecord.Fenced values.
const (
	FenceUnchanged int8 = 0
	FenceFenced    int8 = 1
	FenceUnfenced  int8 = -1
)

// ---- 0 RegisterBrokerRecord -------------------------------------------------------

// RegisterBrokerRecord registers (or re-registers) a broker; it replaces any previous
// registration of BrokerID.
type RegisterBrokerRecord struct {
	BrokerID             int32
	IsMigratingZkBroker  bool // v2+
	IncarnationID        UUID
	BrokerEpoch          int64
	EndPoints            []BrokerEndpoint
	Features             []BrokerFeature
	Rack                 *string // nil: no rack
	Fenced               bool
	InControlledShutdown bool   // v1+
	LogDirs              []UUID // v3+, tag 0
	CordonedLogDirs      []UUID // v4+, tag 1, nullable (nil: not reported yet)
}

// BrokerEndpoint is a listener of a broker.
type BrokerEndpoint struct {
	Name             string
	Host             string
	Port             uint16
	SecurityProtocol int16
}

// BrokerFeature is a feature range a broker or controller supports.
type BrokerFeature struct {
	Name                string
	MinSupportedVersion int16
	MaxSupportedVersion int16
}

// Type implements Record.
func (*RegisterBrokerRecord) Type() RecordType { return TypeRegisterBroker }

func (x *RegisterBrokerRecord) decode(r *reader, v int16) {
	x.BrokerID = r.Int32()
	if v >= 2 {
		x.IsMigratingZkBroker = r.Bool()
	}
	x.IncarnationID = r.UUID()
	x.BrokerEpoch = r.Int64()
	x.EndPoints = readEndpoints(r)
	x.Features = readFeatures(r)
	x.Rack = r.nstr()
	x.Fenced = r.Bool()
	if v >= 1 {
		x.InControlledShutdown = r.Bool()
	}
	t := r.Tags()
	for tag, p, ok := t.Next(); ok; tag, p, ok = t.Next() {
		f := r.field(p)
		switch {
		case tag == 0 && v >= 3:
			x.LogDirs = f.uuidArray(false)
		case tag == 1 && v >= 4:
			x.CordonedLogDirs = f.uuidArray(true)
		case tag <= 1:
			r.badTag(tag, v)
		default:
			r.unknownTags++
			continue
		}
		r.done(&f, tag)
	}
}

func (x *RegisterBrokerRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendInt32(b, x.BrokerID)
	if v >= 2 {
		b = kbin.AppendBool(b, x.IsMigratingZkBroker)
	}
	b = kbin.AppendUUID(b, x.IncarnationID)
	b = kbin.AppendInt64(b, x.BrokerEpoch)
	b = appendEndpoints(b, x.EndPoints)
	b = appendFeatures(b, x.Features)
	b = kbin.AppendCompactNullableString(b, x.Rack)
	b = kbin.AppendBool(b, x.Fenced)
	if v >= 1 {
		b = kbin.AppendBool(b, x.InControlledShutdown)
	}
	var w tagWriter
	if v >= 3 && len(x.LogDirs) > 0 {
		w.add(0, func(b []byte) []byte { return appendUUIDs(b, x.LogDirs, false) })
	}
	if v >= 4 && x.CordonedLogDirs != nil {
		w.add(1, func(b []byte) []byte { return appendUUIDs(b, x.CordonedLogDirs, true) })
	}
	return w.appendTo(b)
}

func readEndpoints(r *reader) []BrokerEndpoint {
	n := r.count(false, 1+1+2+2+1)
	if n <= 0 {
		return nil
	}
	es := make([]BrokerEndpoint, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		var e BrokerEndpoint
		e.Name = r.str()
		e.Host = r.str()
		e.Port = r.Uint16()
		e.SecurityProtocol = r.Int16()
		r.skipTags()
		es = append(es, e)
	}
	return es
}

func appendEndpoints(b []byte, es []BrokerEndpoint) []byte {
	b = kbin.AppendCompactArrayLen(b, len(es))
	for _, e := range es {
		b = kbin.AppendCompactString(b, e.Name)
		b = kbin.AppendCompactString(b, e.Host)
		b = kbin.AppendUint16(b, e.Port)
		b = kbin.AppendInt16(b, e.SecurityProtocol)
		b = append(b, 0)
	}
	return b
}

func readFeatures(r *reader) []BrokerFeature {
	n := r.count(false, 1+2+2+1)
	if n <= 0 {
		return nil
	}
	fs := make([]BrokerFeature, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		var f BrokerFeature
		f.Name = r.str()
		f.MinSupportedVersion = r.Int16()
		f.MaxSupportedVersion = r.Int16()
		r.skipTags()
		fs = append(fs, f)
	}
	return fs
}

func appendFeatures(b []byte, fs []BrokerFeature) []byte {
	b = kbin.AppendCompactArrayLen(b, len(fs))
	for _, f := range fs {
		b = kbin.AppendCompactString(b, f.Name)
		b = kbin.AppendInt16(b, f.MinSupportedVersion)
		b = kbin.AppendInt16(b, f.MaxSupportedVersion)
		b = append(b, 0)
	}
	return b
}

// ---- 1 UnregisterBrokerRecord -----------------------------------------------------

// UnregisterBrokerRecord removes a broker's registration.
type UnregisterBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// Type implements Record.
func (*UnregisterBrokerRecord) Type() RecordType { return TypeUnregisterBroker }

func (x *UnregisterBrokerRecord) decode(r *reader, v int16) {
	x.BrokerID = r.Int32()
	x.BrokerEpoch = r.Int64()
	r.skipTags()
}

func (x *UnregisterBrokerRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt64(kbin.AppendInt32(b, x.BrokerID), x.BrokerEpoch), 0)
}

// ---- 2 TopicRecord ----------------------------------------------------------------

// TopicRecord creates a topic with no partitions.
type TopicRecord struct {
	Name    string
	TopicID UUID
}

// Type implements Record.
func (*TopicRecord) Type() RecordType { return TypeTopic }

func (x *TopicRecord) decode(r *reader, v int16) {
	x.Name = r.str()
	x.TopicID = r.UUID()
	r.skipTags()
}

func (x *TopicRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendUUID(kbin.AppendCompactString(b, x.Name), x.TopicID), 0)
}

// ---- 3 PartitionRecord ------------------------------------------------------------

// PartitionRecord sets the whole state of one partition.
type PartitionRecord struct {
	PartitionID            int32
	TopicID                UUID
	Replicas               []int32
	ISR                    []int32
	RemovingReplicas       []int32
	AddingReplicas         []int32
	Leader                 int32
	LeaderRecoveryState    int8 // tag 0
	LeaderEpoch            int32
	PartitionEpoch         int32
	Directories            []UUID  // v1+
	EligibleLeaderReplicas []int32 // v2+, tag 1, nullable
	LastKnownELR           []int32 // v2+, tag 2, nullable
}

// Type implements Record.
func (*PartitionRecord) Type() RecordType { return TypePartition }

func (x *PartitionRecord) decode(r *reader, v int16) {
	x.PartitionID = r.Int32()
	x.TopicID = r.UUID()
	x.Replicas = r.int32s(false)
	x.ISR = r.int32s(false)
	x.RemovingReplicas = r.int32s(false)
	x.AddingReplicas = r.int32s(false)
	x.Leader = r.Int32()
	x.LeaderEpoch = r.Int32()
	x.PartitionEpoch = r.Int32()
	if v >= 1 {
		x.Directories = r.uuidArray(false)
	}
	t := r.Tags()
	for tag, p, ok := t.Next(); ok; tag, p, ok = t.Next() {
		f := r.field(p)
		switch {
		case tag == 0:
			x.LeaderRecoveryState = f.Int8()
		case tag == 1 && v >= 2:
			x.EligibleLeaderReplicas = f.int32s(true)
		case tag == 2 && v >= 2:
			x.LastKnownELR = f.int32s(true)
		case tag <= 2:
			r.badTag(tag, v)
		default:
			r.unknownTags++
			continue
		}
		r.done(&f, tag)
	}
}

func (x *PartitionRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendInt32(b, x.PartitionID)
	b = kbin.AppendUUID(b, x.TopicID)
	b = appendInt32s(b, x.Replicas, false)
	b = appendInt32s(b, x.ISR, false)
	b = appendInt32s(b, x.RemovingReplicas, false)
	b = appendInt32s(b, x.AddingReplicas, false)
	b = kbin.AppendInt32(b, x.Leader)
	b = kbin.AppendInt32(b, x.LeaderEpoch)
	b = kbin.AppendInt32(b, x.PartitionEpoch)
	if v >= 1 {
		b = appendUUIDs(b, x.Directories, false)
	}
	var w tagWriter
	if x.LeaderRecoveryState != 0 {
		w.add(0, func(b []byte) []byte { return kbin.AppendInt8(b, x.LeaderRecoveryState) })
	}
	if v >= 2 && x.EligibleLeaderReplicas != nil {
		w.add(1, func(b []byte) []byte { return appendInt32s(b, x.EligibleLeaderReplicas, true) })
	}
	if v >= 2 && x.LastKnownELR != nil {
		w.add(2, func(b []byte) []byte { return appendInt32s(b, x.LastKnownELR, true) })
	}
	return w.appendTo(b)
}

// ---- 4 ConfigRecord ---------------------------------------------------------------

// ConfigRecord sets (or, with a nil Value, deletes) one configuration key.
type ConfigRecord struct {
	ResourceType int8 // 2 topic, 4 broker, 8 broker logger, 16 client metrics, 32 group
	ResourceName string
	Name         string
	Value        *string
}

// Config resource types (Kafka's ConfigResource.Type ids).
const (
	ConfigResourceTopic         int8 = 2
	ConfigResourceBroker        int8 = 4
	ConfigResourceBrokerLogger  int8 = 8
	ConfigResourceClientMetrics int8 = 16
	ConfigResourceGroup         int8 = 32
)

// Type implements Record.
func (*ConfigRecord) Type() RecordType { return TypeConfig }

func (x *ConfigRecord) decode(r *reader, v int16) {
	x.ResourceType = r.Int8()
	x.ResourceName = r.str()
	x.Name = r.str()
	x.Value = r.nstr()
	r.skipTags()
}

func (x *ConfigRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendInt8(b, x.ResourceType)
	b = kbin.AppendCompactString(b, x.ResourceName)
	b = kbin.AppendCompactString(b, x.Name)
	return append(kbin.AppendCompactNullableString(b, x.Value), 0)
}

// ---- 5 PartitionChangeRecord ------------------------------------------------------

// PartitionChangeRecord changes some fields of an existing partition. Nil arrays are
// unchanged; Leader is LeaderUnchanged and LeaderRecoveryState is
// LeaderRecoveryUnchanged when they did not change. Build one with
// NewPartitionChangeRecord so those defaults are set.
type PartitionChangeRecord struct {
	PartitionID            int32
	TopicID                UUID
	ISR                    []int32 // tag 0
	Leader                 int32   // tag 1, default -2
	Replicas               []int32 // tag 2
	RemovingReplicas       []int32 // tag 3
	AddingReplicas         []int32 // tag 4
	LeaderRecoveryState    int8    // tag 5, default -1
	EligibleLeaderReplicas []int32 // v2+, tag 6
	LastKnownELR           []int32 // v2+, tag 7
	Directories            []UUID  // v1+, tag 8
}

// NewPartitionChangeRecord returns a change of (topic, partition) that changes nothing.
func NewPartitionChangeRecord(topic UUID, partition int32) *PartitionChangeRecord {
	return &PartitionChangeRecord{PartitionID: partition, TopicID: topic, Leader: LeaderUnchanged, LeaderRecoveryState: LeaderRecoveryUnchanged}
}

// Type implements Record.
func (*PartitionChangeRecord) Type() RecordType { return TypePartitionChange }

func (x *PartitionChangeRecord) decode(r *reader, v int16) {
	x.PartitionID = r.Int32()
	x.TopicID = r.UUID()
	x.Leader = LeaderUnchanged
	x.LeaderRecoveryState = LeaderRecoveryUnchanged
	t := r.Tags()
	for tag, p, ok := t.Next(); ok; tag, p, ok = t.Next() {
		f := r.field(p)
		switch {
		case tag == 0:
			x.ISR = f.int32s(true)
		case tag == 1:
			x.Leader = f.Int32()
		case tag == 2:
			x.Replicas = f.int32s(true)
		case tag == 3:
			x.RemovingReplicas = f.int32s(true)
		case tag == 4:
			x.AddingReplicas = f.int32s(true)
		case tag == 5:
			x.LeaderRecoveryState = f.Int8()
		case tag == 6 && v >= 2:
			x.EligibleLeaderReplicas = f.int32s(true)
		case tag == 7 && v >= 2:
			x.LastKnownELR = f.int32s(true)
		case tag == 8 && v >= 1:
			x.Directories = f.uuidArray(true)
		case tag <= 8:
			r.badTag(tag, v)
		default:
			r.unknownTags++
			continue
		}
		r.done(&f, tag)
	}
}

func (x *PartitionChangeRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendInt32(b, x.PartitionID)
	b = kbin.AppendUUID(b, x.TopicID)
	var w tagWriter
	ints := func(tag uint64, s []int32) {
		if s != nil {
			w.add(tag, func(b []byte) []byte { return appendInt32s(b, s, true) })
		}
	}
	ints(0, x.ISR)
	if x.Leader != LeaderUnchanged {
		w.add(1, func(b []byte) []byte { return kbin.AppendInt32(b, x.Leader) })
	}
	ints(2, x.Replicas)
	ints(3, x.RemovingReplicas)
	ints(4, x.AddingReplicas)
	if x.LeaderRecoveryState != LeaderRecoveryUnchanged {
		w.add(5, func(b []byte) []byte { return kbin.AppendInt8(b, x.LeaderRecoveryState) })
	}
	if v >= 2 {
		ints(6, x.EligibleLeaderReplicas)
		ints(7, x.LastKnownELR)
	}
	if v >= 1 && x.Directories != nil {
		w.add(8, func(b []byte) []byte { return appendUUIDs(b, x.Directories, true) })
	}
	return w.appendTo(b)
}

// ---- 7 FenceBrokerRecord, 8 UnfenceBrokerRecord -----------------------------------

// FenceBrokerRecord fences a broker (legacy: written only before MV 3.3-IV2).
type FenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// UnfenceBrokerRecord unfences a broker (legacy, as FenceBrokerRecord).
type UnfenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// Type implements Record.
func (*FenceBrokerRecord) Type() RecordType { return TypeFenceBroker }

// Type implements Record.
func (*UnfenceBrokerRecord) Type() RecordType { return TypeUnfenceBroker }

func (x *FenceBrokerRecord) decode(r *reader, v int16) {
	x.ID = r.Int32()
	x.Epoch = r.Int64()
	r.skipTags()
}

func (x *FenceBrokerRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt64(kbin.AppendInt32(b, x.ID), x.Epoch), 0)
}

func (x *UnfenceBrokerRecord) decode(r *reader, v int16) {
	x.ID = r.Int32()
	x.Epoch = r.Int64()
	r.skipTags()
}

func (x *UnfenceBrokerRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt64(kbin.AppendInt32(b, x.ID), x.Epoch), 0)
}

// ---- 9 RemoveTopicRecord ----------------------------------------------------------

// RemoveTopicRecord deletes a topic and its partitions.
type RemoveTopicRecord struct {
	TopicID UUID
}

// Type implements Record.
func (*RemoveTopicRecord) Type() RecordType { return TypeRemoveTopic }

func (x *RemoveTopicRecord) decode(r *reader, v int16) {
	x.TopicID = r.UUID()
	r.skipTags()
}

func (x *RemoveTopicRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendUUID(b, x.TopicID), 0)
}

// ---- 10 DelegationTokenRecord -----------------------------------------------------

// DelegationTokenRecord creates or renews a delegation token.
type DelegationTokenRecord struct {
	Owner               string
	Requester           string
	Renewers            []string
	IssueTimestamp      int64
	MaxTimestamp        int64
	ExpirationTimestamp int64
	TokenID             string
}

// Type implements Record.
func (*DelegationTokenRecord) Type() RecordType { return TypeDelegationToken }

func (x *DelegationTokenRecord) decode(r *reader, v int16) {
	x.Owner = r.str()
	x.Requester = r.str()
	x.Renewers = r.strs()
	x.IssueTimestamp = r.Int64()
	x.MaxTimestamp = r.Int64()
	x.ExpirationTimestamp = r.Int64()
	x.TokenID = r.str()
	r.skipTags()
}

func (x *DelegationTokenRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendCompactString(b, x.Owner)
	b = kbin.AppendCompactString(b, x.Requester)
	b = appendStrs(b, x.Renewers)
	b = kbin.AppendInt64(b, x.IssueTimestamp)
	b = kbin.AppendInt64(b, x.MaxTimestamp)
	b = kbin.AppendInt64(b, x.ExpirationTimestamp)
	return append(kbin.AppendCompactString(b, x.TokenID), 0)
}

// ---- 11 UserScramCredentialRecord -------------------------------------------------

// UserScramCredentialRecord sets a SCRAM credential. Its byte fields share memory
// with the decoded input.
type UserScramCredentialRecord struct {
	Name       string
	Mechanism  int8 // 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// Type implements Record.
func (*UserScramCredentialRecord) Type() RecordType { return TypeUserScramCredential }

func (x *UserScramCredentialRecord) decode(r *reader, v int16) {
	x.Name = r.str()
	x.Mechanism = r.Int8()
	x.Salt = r.bytes()
	x.StoredKey = r.bytes()
	x.ServerKey = r.bytes()
	x.Iterations = r.Int32()
	r.skipTags()
}

func (x *UserScramCredentialRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendCompactString(b, x.Name)
	b = kbin.AppendInt8(b, x.Mechanism)
	b = appendNonNullBytes(b, x.Salt)
	b = appendNonNullBytes(b, x.StoredKey)
	b = appendNonNullBytes(b, x.ServerKey)
	return append(kbin.AppendInt32(b, x.Iterations), 0)
}

// ---- 12 FeatureLevelRecord --------------------------------------------------------

// FeatureLevelRecord sets a finalized feature level; level 0 removes the feature.
type FeatureLevelRecord struct {
	Name         string
	FeatureLevel int16
}

// Type implements Record.
func (*FeatureLevelRecord) Type() RecordType { return TypeFeatureLevel }

func (x *FeatureLevelRecord) decode(r *reader, v int16) {
	x.Name = r.str()
	x.FeatureLevel = r.Int16()
	r.skipTags()
}

func (x *FeatureLevelRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt16(kbin.AppendCompactString(b, x.Name), x.FeatureLevel), 0)
}

// ---- 14 ClientQuotaRecord ---------------------------------------------------------

// ClientQuotaRecord sets or removes one quota of a client entity.
type ClientQuotaRecord struct {
	Entity []EntityData
	Key    string
	Value  float64
	Remove bool
}

// EntityData is one (type, name) pair of a quota entity; a nil name is the default.
type EntityData struct {
	EntityType string
	EntityName *string
}

// Type implements Record.
func (*ClientQuotaRecord) Type() RecordType { return TypeClientQuota }

func (x *ClientQuotaRecord) decode(r *reader, v int16) {
	n := r.count(false, 3)
	for i := 0; i < n && r.Err() == nil; i++ {
		var e EntityData
		e.EntityType = r.str()
		e.EntityName = r.nstr()
		r.skipTags()
		x.Entity = append(x.Entity, e)
	}
	x.Key = r.str()
	x.Value = r.Float64()
	x.Remove = r.Bool()
	r.skipTags()
}

func (x *ClientQuotaRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendCompactArrayLen(b, len(x.Entity))
	for _, e := range x.Entity {
		b = kbin.AppendCompactString(b, e.EntityType)
		b = append(kbin.AppendCompactNullableString(b, e.EntityName), 0)
	}
	b = kbin.AppendCompactString(b, x.Key)
	b = kbin.AppendFloat64(b, x.Value)
	return append(kbin.AppendBool(b, x.Remove), 0)
}

// ---- 15 ProducerIdsRecord ---------------------------------------------------------

// ProducerIdsRecord records the next producer id block.
type ProducerIdsRecord struct {
	BrokerID       int32
	BrokerEpoch    int64
	NextProducerID int64
}

// Type implements Record.
func (*ProducerIdsRecord) Type() RecordType { return TypeProducerIDs }

func (x *ProducerIdsRecord) decode(r *reader, v int16) {
	x.BrokerID = r.Int32()
	x.BrokerEpoch = r.Int64()
	x.NextProducerID = r.Int64()
	r.skipTags()
}

func (x *ProducerIdsRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt64(kbin.AppendInt64(kbin.AppendInt32(b, x.BrokerID), x.BrokerEpoch), x.NextProducerID), 0)
}

// ---- 17 BrokerRegistrationChangeRecord --------------------------------------------

// BrokerRegistrationChangeRecord changes a registered broker whose epoch is
// BrokerEpoch. Fenced is FenceUnchanged, FenceFenced or FenceUnfenced;
// InControlledShutdown is 0 (unchanged) or 1; empty LogDirs are unchanged; nil
// CordonedLogDirs are unchanged.
type BrokerRegistrationChangeRecord struct {
	BrokerID             int32
	BrokerEpoch          int64
	Fenced               int8   // tag 0
	InControlledShutdown int8   // v1+, tag 1
	LogDirs              []UUID // v2+, tag 2
	CordonedLogDirs      []UUID // v3+, tag 3, nullable
}

// Type implements Record.
func (*BrokerRegistrationChangeRecord) Type() RecordType { return TypeBrokerRegistrationChange }

func (x *BrokerRegistrationChangeRecord) decode(r *reader, v int16) {
	x.BrokerID = r.Int32()
	x.BrokerEpoch = r.Int64()
	t := r.Tags()
	for tag, p, ok := t.Next(); ok; tag, p, ok = t.Next() {
		f := r.field(p)
		switch {
		case tag == 0:
			x.Fenced = f.Int8()
		case tag == 1 && v >= 1:
			x.InControlledShutdown = f.Int8()
		case tag == 2 && v >= 2:
			x.LogDirs = f.uuidArray(false)
		case tag == 3 && v >= 3:
			x.CordonedLogDirs = f.uuidArray(true)
		case tag <= 3:
			r.badTag(tag, v)
		default:
			r.unknownTags++
			continue
		}
		r.done(&f, tag)
	}
}

func (x *BrokerRegistrationChangeRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendInt32(b, x.BrokerID)
	b = kbin.AppendInt64(b, x.BrokerEpoch)
	var w tagWriter
	if x.Fenced != 0 {
		w.add(0, func(b []byte) []byte { return kbin.AppendInt8(b, x.Fenced) })
	}
	if v >= 1 && x.InControlledShutdown != 0 {
		w.add(1, func(b []byte) []byte { return kbin.AppendInt8(b, x.InControlledShutdown) })
	}
	if v >= 2 && len(x.LogDirs) > 0 {
		w.add(2, func(b []byte) []byte { return appendUUIDs(b, x.LogDirs, false) })
	}
	if v >= 3 && x.CordonedLogDirs != nil {
		w.add(3, func(b []byte) []byte { return appendUUIDs(b, x.CordonedLogDirs, true) })
	}
	return w.appendTo(b)
}

// ---- 18 AccessControlEntryRecord, 19 RemoveAccessControlEntryRecord ---------------

// AccessControlEntryRecord creates an ACL.
type AccessControlEntryRecord struct {
	ID             UUID
	ResourceType   int8
	ResourceName   string
	PatternType    int8
	Principal      string
	Host           string
	Operation      int8
	PermissionType int8
}

// Type implements Record.
func (*AccessControlEntryRecord) Type() RecordType { return TypeAccessControlEntry }

func (x *AccessControlEntryRecord) decode(r *reader, v int16) {
	x.ID = r.UUID()
	x.ResourceType = r.Int8()
	x.ResourceName = r.str()
	x.PatternType = r.Int8()
	x.Principal = r.str()
	x.Host = r.str()
	x.Operation = r.Int8()
	x.PermissionType = r.Int8()
	r.skipTags()
}

func (x *AccessControlEntryRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendUUID(b, x.ID)
	b = kbin.AppendInt8(b, x.ResourceType)
	b = kbin.AppendCompactString(b, x.ResourceName)
	b = kbin.AppendInt8(b, x.PatternType)
	b = kbin.AppendCompactString(b, x.Principal)
	b = kbin.AppendCompactString(b, x.Host)
	b = kbin.AppendInt8(b, x.Operation)
	return append(kbin.AppendInt8(b, x.PermissionType), 0)
}

// RemoveAccessControlEntryRecord deletes an ACL.
type RemoveAccessControlEntryRecord struct {
	ID UUID
}

// Type implements Record.
func (*RemoveAccessControlEntryRecord) Type() RecordType { return TypeRemoveAccessControlEntry }

func (x *RemoveAccessControlEntryRecord) decode(r *reader, v int16) {
	x.ID = r.UUID()
	r.skipTags()
}

func (x *RemoveAccessControlEntryRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendUUID(b, x.ID), 0)
}

// ---- 20 NoOpRecord ----------------------------------------------------------------

// NoOpRecord carries nothing; the controller writes it to keep the log moving.
type NoOpRecord struct{}

// Type implements Record.
func (*NoOpRecord) Type() RecordType { return TypeNoOp }

func (x *NoOpRecord) decode(r *reader, v int16) { r.skipTags() }

func (x *NoOpRecord) appendTo(b []byte, v int16) []byte { return append(b, 0) }

// ---- 21 ZkMigrationStateRecord ----------------------------------------------------

// ZkMigrationStateRecord records the ZooKeeper migration state (no effect in 4.x).
type ZkMigrationStateRecord struct {
	ZkMigrationState int8
}

// Type implements Record.
func (*ZkMigrationStateRecord) Type() RecordType { return TypeZkMigrationState }

func (x *ZkMigrationStateRecord) decode(r *reader, v int16) {
	x.ZkMigrationState = r.Int8()
	r.skipTags()
}

func (x *ZkMigrationStateRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt8(b, x.ZkMigrationState), 0)
}

// ---- 22 RemoveUserScramCredentialRecord -------------------------------------------

// RemoveUserScramCredentialRecord deletes a SCRAM credential.
type RemoveUserScramCredentialRecord struct {
	Name      string
	Mechanism int8
}

// Type implements Record.
func (*RemoveUserScramCredentialRecord) Type() RecordType { return TypeRemoveUserScramCredential }

func (x *RemoveUserScramCredentialRecord) decode(r *reader, v int16) {
	x.Name = r.str()
	x.Mechanism = r.Int8()
	r.skipTags()
}

func (x *RemoveUserScramCredentialRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt8(kbin.AppendCompactString(b, x.Name), x.Mechanism), 0)
}

// ---- 23 Begin, 24 End, 25 AbortTransactionRecord ----------------------------------

// BeginTransactionRecord starts a metadata transaction (KIP-868).
type BeginTransactionRecord struct {
	Name *string // tag 0
}

// EndTransactionRecord commits the open metadata transaction.
type EndTransactionRecord struct{}

// AbortTransactionRecord discards the open metadata transaction.
type AbortTransactionRecord struct {
	Reason *string // tag 0
}

// Type implements Record.
func (*BeginTransactionRecord) Type() RecordType { return TypeBeginTransaction }

// Type implements Record.
func (*EndTransactionRecord) Type() RecordType { return TypeEndTransaction }

// Type implements Record.
func (*AbortTransactionRecord) Type() RecordType { return TypeAbortTransaction }

func decodeTaggedString(r *reader) *string {
	var s *string
	t := r.Tags()
	for tag, p, ok := t.Next(); ok; tag, p, ok = t.Next() {
		if tag != 0 {
			continue
		}
		f := r.field(p)
		s = f.nstr()
		r.done(&f, tag)
	}
	return s
}

func appendTaggedString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	var w tagWriter
	w.add(0, func(b []byte) []byte { return kbin.AppendCompactNullableString(b, s) })
	return w.appendTo(b)
}

func (x *BeginTransactionRecord) decode(r *reader, v int16) { x.Name = decodeTaggedString(r) }

func (x *BeginTransactionRecord) appendTo(b []byte, v int16) []byte {
	return appendTaggedString(b, x.Name)
}

func (x *EndTransactionRecord) decode(r *reader, v int16) { r.skipTags() }

func (x *EndTransactionRecord) appendTo(b []byte, v int16) []byte { return append(b, 0) }

func (x *AbortTransactionRecord) decode(r *reader, v int16) { x.Reason = decodeTaggedString(r) }

func (x *AbortTransactionRecord) appendTo(b []byte, v int16) []byte {
	return appendTaggedString(b, x.Reason)
}

// ---- 26 RemoveDelegationTokenRecord -----------------------------------------------

// RemoveDelegationTokenRecord deletes a delegation token.
type RemoveDelegationTokenRecord struct {
	TokenID string
}

// Type implements Record.
func (*RemoveDelegationTokenRecord) Type() RecordType { return TypeRemoveDelegationToken }

func (x *RemoveDelegationTokenRecord) decode(r *reader, v int16) {
	x.TokenID = r.str()
	r.skipTags()
}

func (x *RemoveDelegationTokenRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendCompactString(b, x.TokenID), 0)
}

// ---- 27 RegisterControllerRecord --------------------------------------------------

// RegisterControllerRecord registers a controller; it replaces any previous one.
type RegisterControllerRecord struct {
	ControllerID     int32
	IncarnationID    UUID
	ZkMigrationReady bool
	EndPoints        []BrokerEndpoint
	Features         []BrokerFeature
}

// Type implements Record.
func (*RegisterControllerRecord) Type() RecordType { return TypeRegisterController }

func (x *RegisterControllerRecord) decode(r *reader, v int16) {
	x.ControllerID = r.Int32()
	x.IncarnationID = r.UUID()
	x.ZkMigrationReady = r.Bool()
	x.EndPoints = readEndpoints(r)
	x.Features = readFeatures(r)
	r.skipTags()
}

func (x *RegisterControllerRecord) appendTo(b []byte, v int16) []byte {
	b = kbin.AppendInt32(b, x.ControllerID)
	b = kbin.AppendUUID(b, x.IncarnationID)
	b = kbin.AppendBool(b, x.ZkMigrationReady)
	b = appendEndpoints(b, x.EndPoints)
	return append(appendFeatures(b, x.Features), 0)
}

// ---- 28 ClearElrRecord ------------------------------------------------------------

// ClearElrRecord clears the ELR and LastKnownELR of a topic's partitions, or of
// every topic when TopicName is "".
type ClearElrRecord struct {
	TopicName string
}

// Type implements Record.
func (*ClearElrRecord) Type() RecordType { return TypeClearElr }

func (x *ClearElrRecord) decode(r *reader, v int16) {
	x.TopicName = r.str()
	r.skipTags()
}

func (x *ClearElrRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendCompactString(b, x.TopicName), 0)
}

// ---- 29 UnregisterControllerRecord ------------------------------------------------

// UnregisterControllerRecord removes a controller registration (Kafka 4.4, KIP-1312).
type UnregisterControllerRecord struct {
	ControllerID int32
}

// Type implements Record.
func (*UnregisterControllerRecord) Type() RecordType { return TypeUnregisterController }

func (x *UnregisterControllerRecord) decode(r *reader, v int16) {
	x.ControllerID = r.Int32()
	r.skipTags()
}

func (x *UnregisterControllerRecord) appendTo(b []byte, v int16) []byte {
	return append(kbin.AppendInt32(b, x.ControllerID), 0)
}
