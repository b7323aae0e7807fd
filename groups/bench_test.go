package groups_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
)

// BenchmarkReplay measures decode + apply of a synthetic __consumer_offsets log
// into a fresh State, in records per second.
//
//	go test ./groups -run '^$' -bench Replay -benchmem
func BenchmarkReplay(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  groupstest.SyntheticConfig
	}{
		// Group records only; members of a group share its topics.
		{"group-records", groupstest.SyntheticConfig{Groups: 500, Members: 10, Topics: 2000, TopicsPerMember: 5, RegexEvery: 4}},
		// Group records only; every member has its own topics (worst case).
		{"group-records-distinct-members", groupstest.SyntheticConfig{Groups: 500, Members: 10, Topics: 2000, TopicsPerMember: 5, RegexEvery: 4, DistinctMembers: true}},
		// As group-records, plus 100 offset commits per group: 58% of the records.
		{"with-offset-commits", groupstest.SyntheticConfig{Groups: 500, Members: 10, Topics: 2000, TopicsPerMember: 5, RegexEvery: 4, OffsetCommits: 100}},
	} {
		log := groupstest.Synthetic(bc.cfg)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			cpu0 := cpuTime()
			for b.Loop() {
				s := groups.NewState()
				for _, kv := range log {
					if _, err := s.Replay(kv.Key, kv.Value); err != nil {
						b.Fatal(err)
					}
				}
				n += len(log)
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
			// On a shared machine wall time also counts other processes; CPU time of
			// this process (all threads, GC included) does not.
			b.ReportMetric(float64(n)/cpu.Seconds(), "records/cpu-s")
		})
	}
}

// BenchmarkDecode measures Decode alone, per record kind.
func BenchmarkDecode(b *testing.B) {
	log := groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 1, Members: 1, Topics: 10, TopicsPerMember: 5, RegexEvery: 0, OffsetCommits: 1})
	for _, kv := range log {
		rec, err := groups.Decode(kv.Key, kv.Value)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(rec.Type.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := groups.Decode(kv.Key, kv.Value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuTime returns the user+system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStateHeap measures the heap a State holds per group (of each of the four
// types) after replaying a synthetic log, without and with the assignment records
// of consumer and share groups.
//
//	go test ./groups -run '^$' -bench StateHeap -benchtime 1x
func BenchmarkStateHeap(b *testing.B) {
	for _, assignments := range []bool{false, true} {
		cfg := groupstest.SyntheticConfig{Groups: 25000, Members: 3, Topics: 2000, TopicsPerMember: 3, Assignments: assignments}
		log := groupstest.Synthetic(cfg)
		b.Run(fmt.Sprintf("assignments=%v", assignments), func(b *testing.B) {
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s := groups.NewState()
				for _, kv := range log {
					if _, err := s.Replay(kv.Key, kv.Value); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(s.Len()), "heap-B/group")
				runtime.KeepAlive(s)
			}
		})
	}
}
