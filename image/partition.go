package image

import (
	"slices"
	"unsafe"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// Partition is one partition's registration. It is a small value that shares its
// arrays with the Image it came from: the slices its methods return must not be
// modified.
type Partition struct {
	p partition
	// data is the packed lists of p (see partition), nil when every list is empty.
	data *int32
}

// partition is the compact form stored in an image: a 28-byte slot that holds no
// pointer, so a leaf's run of slots is allocated noscan and the garbage collector
// never looks into it. The slot's lists are one int32 array holding replicas, ISR,
// removing, adding, ELR and last-known ELR replicas and, when any is set, the
// directory of each replica (four int32 per uuid), each list of at most maxList;
// n gives their lengths. The array starts off int32s into the chunk that entry
// chunk of its leaf's table (pnode.chunks) points at; both are 0 when every list
// is empty. Arrays are immutable once stored, so partitions with the same lists may
// share one. A leaf of a topic's trie is a run of these slots, copied whole when a
// Delta changes one of them, so their size is most of what a leader change
// allocates. A slot that holds no partition is all zeros.
type partition struct {
	id             int32
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	off            uint16
	n              [nLists]uint8
	// state is 0 for an empty slot of a leaf, else 1 + the leader recovery state.
	state uint8
	chunk uint8
}

// maxList is the longest replica list (and directory list) a partition holds; Replay
// refuses longer ones (ErrInvalid). Every list is at most as long as the replicas,
// so this bounds the replication factor, not the number of brokers.
const maxList = 1<<8 - 1

// present reports whether the slot holds a partition.
func (p *partition) present() bool { return p.state != 0 }

// lrs is the leader recovery state, 0 or 1.
func (p *partition) lrs() int8 { return int8(p.state) - 1 }

// stateOf is partition.state for a partition with leader recovery state lrs (0 or 1).
func stateOf(lrs int8) uint8 { return 1 + uint8(lrs) }

// hasLists reports whether any list of the slot is non-empty: whether chunk and off
// lead to an array.
func (p *partition) hasLists() bool { return p.n != [nLists]uint8{} }

// The lists packed in a partition's array, in order.
const (
	listReplicas = iota
	listISR
	listRemoving
	listAdding
	listELR
	listLastKnownELR
	listDirs // counted in uuids, stored as 4 int32 each (copyDirectories)
	nLists
)

func (p *Partition) list(which int) []int32 {
	start := 0
	for i := range which {
		start += p.p.width(i)
	}
	end := start + p.p.width(which)
	return p.all()[start:end:end]
}

// all is the whole packed array.
func (p *Partition) all() []int32 {
	n := 0
	for i := range nLists {
		n += p.p.width(i)
	}
	if n == 0 {
		return []int32{} // never nil, as the lists were before data became a pointer
	}
	return unsafe.Slice(p.data, n)
}

// replicas is list(listReplicas), the first list: no widths to add up.
func (p *Partition) replicas() []int32 {
	r := int(p.p.n[listReplicas])
	if r == 0 {
		return p.all()[:0:0]
	}
	return unsafe.Slice(p.data, r)
}

func (p *partition) width(which int) int {
	if which == listDirs {
		return 4 * int(p.n[which])
	}
	return int(p.n[which])
}

// ID is the partition index.
func (p Partition) ID() int32 { return p.p.id }

// Replicas are the replica broker ids in preferred order. Do not modify.
func (p Partition) Replicas() []int32 { return p.replicas() }

// ISR is the in-sync replica set. Do not modify.
func (p Partition) ISR() []int32 { return p.list(listISR) }

// RemovingReplicas are replicas being removed by a reassignment. Do not modify.
func (p Partition) RemovingReplicas() []int32 { return p.list(listRemoving) }

// AddingReplicas are replicas being added by a reassignment. Do not modify.
func (p Partition) AddingReplicas() []int32 { return p.list(listAdding) }

// ELR is the eligible leader replica set (KIP-966). Do not modify.
func (p Partition) ELR() []int32 { return p.list(listELR) }

// LastKnownELR is the last known ELR. Do not modify.
func (p Partition) LastKnownELR() []int32 { return p.list(listLastKnownELR) }

// Leader is the leader's broker id, or -1.
func (p Partition) Leader() int32 { return p.p.leader }

// LeaderEpoch counts leader changes.
func (p Partition) LeaderEpoch() int32 { return p.p.leaderEpoch }

// PartitionEpoch counts changes of any kind.
func (p Partition) PartitionEpoch() int32 { return p.p.partitionEpoch }

// LeaderRecoveryState is 0 (recovered) or 1 (recovering from an unclean election).
func (p Partition) LeaderRecoveryState() int8 { return p.p.lrs() }

// Directories returns the log directory of each replica, newly allocated. Replicas
// with no known directory (Kafka's MIGRATING) have the zero UUID.
func (p Partition) Directories() []kbin.UUID {
	d := p.list(listDirs)
	out := make([]kbin.UUID, len(p.Replicas()))
	if len(d) == 0 {
		return out
	}
	out = out[:len(d)/4]
	copy(unsafe.Slice(&out[0][0], 16*len(out)), int32Bytes(d)) // as copyDirectories stored them
	return out
}

// HasDirectories reports whether any replica has a known directory.
func (p Partition) HasDirectories() bool { return p.p.n[listDirs] > 0 }

// Equal reports whether two partitions have the same registration.
func (p Partition) Equal(q Partition) bool { return p.equal(&q) }

func (p *Partition) equal(q *Partition) bool {
	a, b := &p.p, &q.p
	return a.id == b.id && a.leader == b.leader && a.leaderEpoch == b.leaderEpoch &&
		a.partitionEpoch == b.partitionEpoch && a.state == b.state && a.n == b.n &&
		(p.data == q.data || slices.Equal(p.all(), q.all())) // shared lists need no comparing
}

// packLists sets p's list lengths and stores its lists (dirs may be nil) as the bulk
// path does: packed into d.scratch, then interned.
func (d *Delta) packLists(p *partition, lists [listDirs][]int32, dirs []kbin.UUID) listRef {
	data := d.scratchLists()
	at := 0
	for i, l := range lists {
		at = packList(p, i, data, at, l)
	}
	p.n[listDirs] = 0
	if anyDirectory(dirs) {
		p.n[listDirs] = uint8(len(dirs))
		at += copyDirectories(data[at:], dirs)
	}
	return d.intern(data[:at])
}

// copyDirectories copies the bytes of dirs into dst, 4 int32 per UUID, and returns
// the int32s it wrote. The int32s hold the UUID's bytes as they are in memory: they
// are only ever compared and copied back (Directories), never read as numbers.
func copyDirectories(dst []int32, dirs []kbin.UUID) int {
	// A UUID at a time, as one 16-byte move: a replica's few directories cost less
	// this way than a call to memmove.
	dst = dst[:4*len(dirs)]
	for i, u := range dirs {
		*(*kbin.UUID)(unsafe.Pointer(&dst[4*i])) = u
	}
	return len(dst)
}

// anyDirectory reports whether some uuid is not MIGRATING (the zero UUID); Kafka
// stores an all-MIGRATING list as "no directories".
func anyDirectory(dirs []kbin.UUID) bool {
	for _, u := range dirs {
		if u != (kbin.UUID{}) {
			return true
		}
	}
	return false
}
