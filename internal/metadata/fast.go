package metadata

import (
	"encoding/binary"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// decodePartitionFast decodes value into x when it is a PartitionRecord in the form
// Kafka writes: one-byte frame header, varints of at most five bytes, every count and
// length in range, only Kafka's tagged fields (the leader recovery state and the ELR
// lists) or unknown ones, nothing after the body. It reports whether it did; for
// anything else it leaves the arena as it was and x half written, and the caller
// takes the general path, which also explains what is wrong. What it decodes is what the
// general path decodes (TestPartitionFastMatchesGeneral, FuzzRecord). With a nil
// arena, arrays are newly allocated.
func decodePartitionFast(value []byte, x *PartitionRecord, a *arena) (int16, bool) {
	if len(value) < 3 || value[0] != FrameVersion || value[1] != byte(TypePartition) || value[2] > 2 {
		return 0, false
	}
	v := int16(value[2])
	var ints, uuids int
	if a != nil {
		ints, uuids = len(a.ints), len(a.uuids)
	}
	f := fastReader{b: value[3:], a: a}
	rec := x
	rec.PartitionID = f.int32()
	f.uuidTo(&rec.TopicID)
	rec.Replicas = f.int32s(false)
	rec.ISR = f.int32s(false)
	rec.RemovingReplicas = f.int32s(false)
	rec.AddingReplicas = f.int32s(false)
	rec.Leader = f.int32()
	rec.LeaderEpoch = f.int32()
	rec.PartitionEpoch = f.int32()
	rec.Directories = nil
	if v >= 1 {
		rec.Directories = f.uuidArray(false)
	}
	rec.LeaderRecoveryState, rec.EligibleLeaderReplicas, rec.LastKnownELR = 0, nil, nil
	n := f.uvarint()
	if n > uint64(f.left()/2) || n > kbin.MaxTaggedFields {
		f.bad = true // the slow path says why
	}
	prev := int64(-1)
	for ; n > 0 && !f.bad; n-- {
		tag, size := f.uvarint(), f.uvarint()
		if f.bad || tag > 1<<31 || int64(tag) <= prev || size > uint64(f.left()) {
			f.bad = true
			break
		}
		prev = int64(tag)
		p := fastReader{b: f.b[f.p : f.p+int(size)], a: a}
		f.p += int(size)
		switch {
		case tag == 0:
			rec.LeaderRecoveryState = int8(p.byte())
		case tag == 1 && v >= 2:
			rec.EligibleLeaderReplicas = p.int32s(true)
		case tag == 2 && v >= 2:
			rec.LastKnownELR = p.int32s(true)
		case tag <= 2:
			p.bad = true // a known tag at a version without it
		default:
			f.bad = true // a newer Kafka's tag: the general decoder skips and counts it
		}
		if p.bad || p.left() != 0 {
			f.bad = true
		}
	}
	if f.bad || f.left() != 0 {
		if a != nil {
			a.ints, a.uuids = a.ints[:ints], a.uuids[:uuids]
		}
		return 0, false
	}
	return v, true
}

// decodePartitionChangeFast is decodePartitionFast for a PartitionChangeRecord (a
// leader change, the record of a rolling restart's burst): one-byte frame header,
// the partition and topic ids, then only tagged fields, each known one as Kafka
// writes it, unknown ones skipped, nothing after them. For anything else it leaves
// the arena as it was and returns false (TestPartitionChangeFastMatchesGeneral,
// FuzzRecord).
func decodePartitionChangeFast(value []byte, x *PartitionChangeRecord, a *arena) (int16, bool) {
	if len(value) < 3 || value[0] != FrameVersion || value[1] != byte(TypePartitionChange) || value[2] > 2 {
		return 0, false
	}
	v := int16(value[2])
	var ints, uuids int
	if a != nil {
		ints, uuids = len(a.ints), len(a.uuids)
	}
	f := fastReader{b: value[3:], a: a}
	// Cleared where it is, then written field by field: a record built aside and
	// copied in is moved in 16-byte loads over the smaller stores that built it,
	// which stall (bench/burst.sh).
	*x = PartitionChangeRecord{}
	x.Leader, x.LeaderRecoveryState = LeaderUnchanged, LeaderRecoveryUnchanged
	x.PartitionID = f.int32()
	f.uuidTo(&x.TopicID)
	n := f.uvarint()
	if n > uint64(f.left()/2) || n > kbin.MaxTaggedFields {
		f.bad = true // the slow path says why
	}
	prev := int64(-1)
	for ; n > 0 && !f.bad; n-- {
		tag, size := f.uvarint(), f.uvarint()
		if f.bad || tag > 1<<31 || int64(tag) <= prev || size > uint64(f.left()) {
			f.bad = true
			break
		}
		prev = int64(tag)
		p := fastReader{b: f.b[f.p : f.p+int(size)], a: a}
		f.p += int(size)
		switch {
		case tag == 0:
			x.ISR = p.int32s(true)
		case tag == 1:
			x.Leader = p.int32()
		case tag == 2:
			x.Replicas = p.int32s(true)
		case tag == 3:
			x.RemovingReplicas = p.int32s(true)
		case tag == 4:
			x.AddingReplicas = p.int32s(true)
		case tag == 5:
			x.LeaderRecoveryState = int8(p.byte())
		case tag == 6 && v >= 2:
			x.EligibleLeaderReplicas = p.int32s(true)
		case tag == 7 && v >= 2:
			x.LastKnownELR = p.int32s(true)
		case tag == 8 && v >= 1:
			x.Directories = p.uuidArray(true)
		case tag <= 8:
			p.bad = true // a known tag at a version without it
		default:
			f.bad = true // a newer Kafka's tag: the general decoder skips and counts it
		}
		if p.bad || p.left() != 0 {
			f.bad = true
		}
	}
	if f.bad || f.left() != 0 {
		if a != nil {
			a.ints, a.uuids = a.ints[:ints], a.uuids[:uuids]
		}
		return 0, false
	}
	return v, true
}

// fastReader reads what decodePartitionFast accepts. After the first thing it does
// not accept, bad is set and it reads zeros. It moves an index through b rather than
// reslicing b: a slice written through a pointer costs a write barrier check each time.
type fastReader struct {
	b   []byte
	p   int // the next byte
	a   *arena
	bad bool
}

// left is the number of bytes not read yet.
func (f *fastReader) left() int { return len(f.b) - f.p }

func (f *fastReader) byte() byte {
	if f.left() < 1 {
		f.bad = true
		return 0
	}
	c := f.b[f.p]
	f.p++
	return c
}

func (f *fastReader) int32() int32 {
	if f.left() < 4 {
		f.bad = true
		return 0
	}
	v := int32(binary.BigEndian.Uint32(f.b[f.p:]))
	f.p += 4
	return v
}

// uuidTo reads a UUID into u, where it is to be kept: a UUID returned is copied
// through the stack, a stall each time (see decodePartitionChangeFast).
func (f *fastReader) uuidTo(u *UUID) {
	if f.left() < 16 {
		f.bad = true
		*u = UUID{}
		return
	}
	copy(u[:], f.b[f.p:])
	f.p += 16
}

// uvarint reads an unsigned varint of at most five bytes.
func (f *fastReader) uvarint() uint64 {
	b := f.b[f.p:]
	var u uint64
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			f.p += i + 1
			return u
		}
	}
	f.bad = true
	return 0
}

// count reads a compact array length as reader.count does for elements of size
// bytes: -1 for null, which only a nullable array may be.
func (f *fastReader) count(nullable bool, size int) int {
	u := f.uvarint()
	// (u-1)*size > len is (u-1) > len/size, as kbin checks it, without dividing.
	if f.bad || u > kbin.MaxArrayLen+1 || (u == 0 && !nullable) || (int64(u)-1)*int64(size) > int64(f.left()) {
		f.bad = true
		return -1
	}
	return int(u) - 1
}

// int32s reads a compact []int32 with reader.int32s's rules for null and empty.
func (f *fastReader) int32s(nullable bool) []int32 {
	var n int
	if p := f.p; !f.bad && p < len(f.b) && f.b[p] < 0x80 {
		// A one-byte count (fewer than 127 ints, as Kafka writes replica lists), read
		// here with count's checks: calling count costs more than the rest.
		n = int(f.b[p]) - 1
		f.p = p + 1
		if n < 0 && !nullable || 4*n > f.left() {
			f.bad = true
		}
	} else {
		n = f.count(nullable, 4)
	}
	switch {
	case f.bad || n < 0:
		return nil
	case n == 0:
		if nullable {
			return emptyInt32s
		}
		return nil
	}
	var s []int32
	if a := f.a; a != nil {
		start := len(a.ints)
		a.ints = growInts(a.ints, n)
		s = a.ints[start : start+n : start+n]
	} else {
		s = make([]int32, n)
	}
	// Four bytes of raw per element, each a full slice expression the compiler can
	// prove in range: no bounds check inside the loop.
	raw := f.b[f.p : f.p+4*n]
	for i := range s {
		if len(raw) < 4 {
			break // never: raw holds 4*len(s) bytes
		}
		s[i] = int32(binary.BigEndian.Uint32(raw))
		raw = raw[4:]
	}
	f.p += 4 * n
	return s
}

// uuidArray reads a compact []uuid with reader.uuidArray's rules for null and empty.
func (f *fastReader) uuidArray(nullable bool) []UUID {
	n := f.count(nullable, 16)
	switch {
	case f.bad || n < 0:
		return nil
	case n == 0:
		if nullable {
			return emptyUUIDs
		}
		return nil
	}
	var s []UUID
	if a := f.a; a != nil {
		start := len(a.uuids)
		a.uuids = growUUIDs(a.uuids, n)
		s = a.uuids[start : start+n : start+n]
	} else {
		s = make([]UUID, n)
	}
	raw := f.b[f.p : f.p+16*n]
	for i := range s {
		s[i] = UUID(raw[16*i : 16*i+16])
	}
	f.p += 16 * n
	return s
}

// A LeaderChange is a PartitionChangeRecord that changes only the leader and its
// recovery state (tags 1 and 5), as a leader election writes it: 28 bytes where a
// decoded PartitionChangeRecord takes 200. A live catch-up decodes on one goroutine
// and replays on another; handing these over instead of the records keeps most of
// what crosses between the two cores' caches out of a leader-change burst
// (bench/burst.sh, the live sequential burst, guards it).
type LeaderChange struct {
	TopicID             UUID
	PartitionID, Leader int32
	LeaderRecoveryState int8
}

// DecodeLeaderChange decodes value into c when it is a PartitionChangeRecord as
// Kafka writes it that holds no tagged field but the leader (1) and the leader
// recovery state (5), and reports whether it is (else c is half written); Decode
// returns the same record (LeaderChange.Record; TestPartitionChangeFastMatchesGeneral,
// FuzzRecord).
// It writes c in place: a LeaderChange returned by value is copied through the
// stack in 16-byte moves over the smaller stores that built it, which the CPU
// cannot forward, a stall per copy.
func DecodeLeaderChange(value []byte, c *LeaderChange) (int16, bool) {
	if len(value) < 3 || value[0] != FrameVersion || value[1] != byte(TypePartitionChange) || value[2] > 2 {
		return 0, false
	}
	f := fastReader{b: value[3:]}
	c.PartitionID = f.int32()
	f.uuidTo(&c.TopicID)
	c.Leader, c.LeaderRecoveryState = LeaderUnchanged, LeaderRecoveryUnchanged
	prev := uint64(0) // the last tag read; tags come in ascending order
	for n := f.uvarint(); n > 0 && !f.bad; n-- {
		tag, size := f.uvarint(), f.uvarint()
		switch {
		case tag == 1 && size == 4 && prev == 0:
			c.Leader = f.int32()
		case tag == 5 && size == 1 && prev < 5:
			c.LeaderRecoveryState = int8(f.byte())
		default:
			return 0, false
		}
		prev = tag
	}
	if f.bad || f.left() != 0 {
		return 0, false
	}
	return int16(value[2]), true
}

// Record returns c as the PartitionChangeRecord it was decoded from.
func (c *LeaderChange) Record() PartitionChangeRecord {
	return PartitionChangeRecord{PartitionID: c.PartitionID, TopicID: c.TopicID, Leader: c.Leader, LeaderRecoveryState: c.LeaderRecoveryState}
}
