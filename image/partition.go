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
}

// partition is the compact form stored in an image, 32 bytes plus one int32 array
// holding replicas, ISR, removing, adding, ELR and last-known ELR replicas and, when
// any is set, the directory of each replica (four int32 per uuid). data points at the
// array's first element (nil when it is empty); n gives its length, each list of at
// most maxList. Arrays are immutable once stored, so partitions with the same lists
// may share one. A leaf of a topic's trie is a run of these slots, copied whole when a
// Delta changes one of them, so their size is most of what a leader change allocates.
type partition struct {
	data           *int32
	id             int32
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	n              [nLists]uint8
	// state is 0 for an empty slot of a leaf, else 1 + the leader recovery state.
	state uint8
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

// The lists packed in partition.data, in order.
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

func (p *partition) list(which int) []int32 {
	start := 0
	for i := range which {
		start += p.width(i)
	}
	end := start + p.width(which)
	return p.all()[start:end:end]
}

// all is the whole packed array.
func (p *partition) all() []int32 {
	n := 0
	for i := range nLists {
		n += p.width(i)
	}
	if n == 0 {
		return []int32{} // never nil, as the lists were before data became a pointer
	}
	return unsafe.Slice(p.data, n)
}

// replicas is list(listReplicas), the first list: no widths to add up.
func (p *partition) replicas() []int32 {
	r := int(p.n[listReplicas])
	if r == 0 {
		return p.all()[:0:0]
	}
	return unsafe.Slice(p.data, r)
}

// setData stores data as the packed array; p.n must describe it.
func (p *partition) setData(data []int32) {
	p.data = nil
	if len(data) > 0 {
		p.data = unsafe.SliceData(data)
	}
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
func (p Partition) Replicas() []int32 { return p.p.replicas() }

// ISR is the in-sync replica set. Do not modify.
func (p Partition) ISR() []int32 { return p.p.list(listISR) }

// RemovingReplicas are replicas being removed by a reassignment. Do not modify.
func (p Partition) RemovingReplicas() []int32 { return p.p.list(listRemoving) }

// AddingReplicas are replicas being added by a reassignment. Do not modify.
func (p Partition) AddingReplicas() []int32 { return p.p.list(listAdding) }

// ELR is the eligible leader replica set (KIP-966). Do not modify.
func (p Partition) ELR() []int32 { return p.p.list(listELR) }

// LastKnownELR is the last known ELR. Do not modify.
func (p Partition) LastKnownELR() []int32 { return p.p.list(listLastKnownELR) }

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
	d := p.p.list(listDirs)
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
func (p Partition) Equal(q Partition) bool { return p.p.equal(&q.p) }

func (p *partition) equal(q *partition) bool {
	return p.id == q.id && p.leader == q.leader && p.leaderEpoch == q.leaderEpoch &&
		p.partitionEpoch == q.partitionEpoch && p.state == q.state && p.n == q.n &&
		(p.data == q.data || slices.Equal(p.all(), q.all())) // shared lists need no comparing
}

// packLists builds partition.data from the lists; dirs may be nil.
func packLists(p *partition, lists [listDirs][]int32, dirs []kbin.UUID) {
	size := 0
	for i, l := range lists {
		p.n[i] = uint8(len(l))
		size += len(l)
	}
	p.n[listDirs] = 0
	if anyDirectory(dirs) {
		p.n[listDirs] = uint8(len(dirs))
		size += 4 * len(dirs)
	}
	data := make([]int32, 0, size)
	for _, l := range lists {
		data = append(data, l...)
	}
	if p.n[listDirs] > 0 {
		n := len(data)
		data = data[:n+4*len(dirs)]
		copyDirectories(data[n:], dirs)
	}
	p.setData(data)
}

// copyDirectories copies the bytes of dirs into dst, 4 int32 per UUID, and returns
// the int32s it wrote. The int32s hold the UUID's bytes as they are in memory: they
// are only ever compared and copied back (Directories), never read as numbers.
func copyDirectories(dst []int32, dirs []kbin.UUID) int {
	if len(dirs) == 0 {
		return 0
	}
	return copy(int32Bytes(dst), unsafe.Slice(&dirs[0][0], 16*len(dirs))) / 4
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
