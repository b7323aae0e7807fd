package recordbatch

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// ControlType is the type in a control record's key (Kafka's ControlRecordType).
type ControlType int16

// Control record types. ControlUnknown stands for any type not listed.
const (
	ControlUnknown        ControlType = -1
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// String returns Kafka's enum name (LEADER_CHANGE, SNAPSHOT_HEADER, ...).
func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	}
	return "UNKNOWN"
}

// ControlKeySize is the size of a control record key: int16 version, int16 type.
const ControlKeySize = 4

// ControlRecord is a decoded control record value: one of *EndTxnMarker,
// *LeaderChangeMessage, *SnapshotHeaderRecord, *SnapshotFooterRecord,
// *KRaftVersionRecord or *VotersRecord.
type ControlRecord interface {
	ControlType() ControlType
	appendValue(b []byte) []byte
}

// EndTxnMarker is the value of an ABORT or COMMIT marker (producer transactions; KRaft
// never writes them). Its encoding is not flexible.
type EndTxnMarker struct {
	Commit           bool
	Version          int16
	CoordinatorEpoch int32
}

// LeaderChangeMessage is written by each new Raft leader as the first batch of its epoch.
type LeaderChangeMessage struct {
	Version        int16
	LeaderID       int32
	Voters         []int32
	GrantingVoters []int32
}

// SnapshotHeaderRecord is the first record of every snapshot file.
type SnapshotHeaderRecord struct {
	Version                   int16
	LastContainedLogTimestamp int64
}

// SnapshotFooterRecord is the last record of every snapshot file.
type SnapshotFooterRecord struct {
	Version int16
}

// KRaftVersionRecord carries the kraft.version feature level.
type KRaftVersionRecord struct {
	Version      int16
	KRaftVersion int16
}

// VotersRecord is the set of Raft voters (kraft.version >= 1).
type VotersRecord struct {
	Version int16
	Voters  []Voter
}

// Voter is one voter of a VotersRecord.
type Voter struct {
	VoterID          int32
	VoterDirectoryID kbin.UUID
	Endpoints        []VoterEndpoint
	// KRaftVersionFeature: the range of kraft.version levels the voter supports.
	MinSupportedVersion int16
	MaxSupportedVersion int16
}

// VoterEndpoint is one listener of a voter.
type VoterEndpoint struct {
	Name string
	Host string
	Port uint16
}

// ControlType implements ControlRecord.
func (m *EndTxnMarker) ControlType() ControlType {
	if m.Commit {
		return ControlCommit
	}
	return ControlAbort
}

// ControlType implements ControlRecord.
func (*LeaderChangeMessage) ControlType() ControlType { return ControlLeaderChange }

// ControlType implements ControlRecord.
func (*SnapshotHeaderRecord) ControlType() ControlType { return ControlSnapshotHeader }

// ControlType implements ControlRecord.
func (*SnapshotFooterRecord) ControlType() ControlType { return ControlSnapshotFooter }

// ControlType implements ControlRecord.
func (*KRaftVersionRecord) ControlType() ControlType { return ControlKRaftVersion }

// ControlType implements ControlRecord.
func (*VotersRecord) ControlType() ControlType { return ControlKRaftVoters }

// ParseControlKey reads a control record key. Like Kafka, it accepts keys longer than
// four bytes and maps unknown types to ControlUnknown; a short key or a negative
// version is corrupt.
func ParseControlKey(key []byte) (version int16, typ ControlType, err error) {
	if len(key) < ControlKeySize {
		return 0, ControlUnknown, fmt.Errorf("control key of %d bytes: %w", len(key), ErrCorrupt)
	}
	version = int16(binary.BigEndian.Uint16(key))
	if version < 0 {
		return 0, ControlUnknown, fmt.Errorf("control key version %d: %w", version, ErrCorrupt)
	}
	typ = ControlType(binary.BigEndian.Uint16(key[2:]))
	if typ < ControlAbort || typ > ControlKRaftVoters {
		typ = ControlUnknown
	}
	return version, typ, nil
}

// DecodeControl decodes a control record from its key and value. Values are read at
// schema version 0, as Kafka reads and writes them. Unknown types return
// (nil, error wrapping ErrUnknownControlType); malformed values wrap ErrCorrupt.
func DecodeControl(key, value []byte) (ControlRecord, error) {
	_, typ, err := ParseControlKey(key)
	if err != nil {
		return nil, err
	}
	if typ == ControlUnknown {
		return nil, fmt.Errorf("control type %d: %w", int16(binary.BigEndian.Uint16(key[2:])), ErrUnknownControlType)
	}
	var r kbin.Reader
	r.Reset(value)
	var rec ControlRecord
	switch typ {
	case ControlAbort, ControlCommit:
		m := &EndTxnMarker{Commit: typ == ControlCommit}
		m.Version = r.Int16()
		m.CoordinatorEpoch = r.Int32()
		rec = m
	case ControlLeaderChange:
		m := &LeaderChangeMessage{}
		m.Version = r.Int16()
		m.LeaderID = r.Int32()
		m.Voters = readVoterIDs(&r)
		m.GrantingVoters = readVoterIDs(&r)
		skipTags(&r)
		rec = m
	case ControlSnapshotHeader:
		m := &SnapshotHeaderRecord{}
		m.Version = r.Int16()
		m.LastContainedLogTimestamp = r.Int64()
		skipTags(&r)
		rec = m
	case ControlSnapshotFooter:
		m := &SnapshotFooterRecord{}
		m.Version = r.Int16()
		skipTags(&r)
		rec = m
	case ControlKRaftVersion:
		m := &KRaftVersionRecord{}
		m.Version = r.Int16()
		m.KRaftVersion = r.Int16()
		skipTags(&r)
		rec = m
	case ControlKRaftVoters:
		m := &VotersRecord{}
		m.Version = r.Int16()
		n := r.CompactArrayLen(16 + 4 + 1 + 4 + 1 + 1)
		if n < 0 && r.Err() == nil {
			r.Fail(errors.New("null voters array"))
		}
		for i := 0; i < n && r.Err() == nil; i++ {
			var v Voter
			v.VoterID = r.Int32()
			v.VoterDirectoryID = r.UUID()
			ne := r.CompactArrayLen(1 + 1 + 2 + 1)
			if ne < 0 && r.Err() == nil {
				r.Fail(errors.New("null endpoints array"))
			}
			for j := 0; j < ne && r.Err() == nil; j++ {
				var e VoterEndpoint
				e.Name = nonNullString(&r)
				e.Host = nonNullString(&r)
				e.Port = r.Uint16()
				skipTags(&r)
				v.Endpoints = append(v.Endpoints, e)
			}
			v.MinSupportedVersion = r.Int16()
			v.MaxSupportedVersion = r.Int16()
			skipTags(&r) // KRaftVersionFeature's own tagged fields
			skipTags(&r) // Voter's tagged fields
			m.Voters = append(m.Voters, v)
		}
		skipTags(&r)
		rec = m
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s control record: %v: %w", typ, err, ErrCorrupt)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%s control record: %d bytes after the value: %w", typ, r.Len(), ErrCorrupt)
	}
	return rec, nil
}

func readVoterIDs(r *kbin.Reader) []int32 {
	n := r.CompactArrayLen(5)
	if n < 0 {
		if r.Err() == nil {
			r.Fail(errors.New("null voter array"))
		}
		return nil
	}
	ids := make([]int32, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		ids = append(ids, r.Int32())
		skipTags(r)
	}
	return ids
}

func skipTags(r *kbin.Reader) {
	t := r.Tags()
	for {
		if _, _, ok := t.Next(); !ok {
			return
		}
	}
}

func nonNullString(r *kbin.Reader) string {
	s, ok := r.CompactNullableString()
	if !ok && r.Err() == nil {
		r.Fail(errors.New("null string in a non-nullable field"))
	}
	return s
}

// AppendControlKey appends the 4-byte key of a control record of type t.
func AppendControlKey(b []byte, t ControlType) []byte {
	return kbin.AppendInt16(kbin.AppendInt16(b, 0), int16(t))
}

// AppendControlValue appends the value of rec at schema version 0.
func AppendControlValue(b []byte, rec ControlRecord) []byte { return rec.appendValue(b) }

func (m *EndTxnMarker) appendValue(b []byte) []byte {
	return kbin.AppendInt32(kbin.AppendInt16(b, m.Version), m.CoordinatorEpoch)
}

func (m *LeaderChangeMessage) appendValue(b []byte) []byte {
	b = kbin.AppendInt16(b, m.Version)
	b = kbin.AppendInt32(b, m.LeaderID)
	for _, ids := range [][]int32{m.Voters, m.GrantingVoters} {
		b = kbin.AppendCompactArrayLen(b, len(ids))
		for _, id := range ids {
			b = append(kbin.AppendInt32(b, id), 0)
		}
	}
	return append(b, 0)
}

func (m *SnapshotHeaderRecord) appendValue(b []byte) []byte {
	return append(kbin.AppendInt64(kbin.AppendInt16(b, m.Version), m.LastContainedLogTimestamp), 0)
}

func (m *SnapshotFooterRecord) appendValue(b []byte) []byte {
	return append(kbin.AppendInt16(b, m.Version), 0)
}

func (m *KRaftVersionRecord) appendValue(b []byte) []byte {
	return append(kbin.AppendInt16(kbin.AppendInt16(b, m.Version), m.KRaftVersion), 0)
}

func (m *VotersRecord) appendValue(b []byte) []byte {
	b = kbin.AppendInt16(b, m.Version)
	b = kbin.AppendCompactArrayLen(b, len(m.Voters))
	for _, v := range m.Voters {
		b = kbin.AppendInt32(b, v.VoterID)
		b = kbin.AppendUUID(b, v.VoterDirectoryID)
		b = kbin.AppendCompactArrayLen(b, len(v.Endpoints))
		for _, e := range v.Endpoints {
			b = kbin.AppendCompactString(b, e.Name)
			b = kbin.AppendCompactString(b, e.Host)
			b = append(kbin.AppendUint16(b, e.Port), 0)
		}
		b = kbin.AppendInt16(b, v.MinSupportedVersion)
		b = kbin.AppendInt16(b, v.MaxSupportedVersion)
		b = append(b, 0, 0)
	}
	return append(b, 0)
}
