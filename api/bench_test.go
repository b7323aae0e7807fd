package api_test

import (
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/image"
)

// BenchmarkAPI measures the time a request holds the engine (List, Detail: what
// runs on its goroutine) and the whole HTTP answer (with JSON encoding) under 100,000
// synthetic groups (25,000 of each type, 3 members each, consumer and share groups
// with assignments).
//
//	go test ./api -run '^$' -bench API -benchmem
func BenchmarkAPI(b *testing.B) {
	s := groups.NewState()
	for _, kv := range groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 25000, Members: 3, Topics: 2000, TopicsPerMember: 3, Assignments: true}) {
		if _, err := s.Replay(kv.Key, kv.Value); err != nil {
			b.Fatal(err)
		}
	}
	v := syncedView(b, s, image.Empty)
	if s.Len() != 100000 {
		b.Fatalf("%d groups", s.Len())
	}
	mid := events.GroupKey{Type: events.ConsumerGroup, ID: "group-12500"}
	for _, bc := range []struct {
		name string
		q    api.ListQuery
	}{
		{"list/first-page", api.ListQuery{}},
		{"list/page-after-cursor", api.ListQuery{After: &mid}},
		{"list/consumer-stable-prefix", api.ListQuery{Type: events.ConsumerGroup, State: groups.StateStable, Prefix: "group-1"}},
		{"list/1000", api.ListQuery{Limit: 1000}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if l := api.List(v, bc.q); len(l.Groups) == 0 {
					b.Fatal("empty page")
				}
			}
			reportCPU(b, cpu0)
		})
	}
	k := events.GroupKey{Type: events.ConsumerGroup, ID: "group-12345"}
	b.Run("detail", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			if _, ok := api.Detail(v, k); !ok {
				b.Fatal("no group")
			}
		}
		reportCPU(b, cpu0)
	})
	srv := server(b, v)
	for _, path := range []string{"/v1/groups", "/v1/groups?limit=1000", "/v1/groups/consumer/group-12345"} {
		b.Run("http"+path, func(b *testing.B) {
			b.ReportAllocs()
			h := srv.Config.Handler
			cpu0 := cpuTime()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code, rec.Body)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}

// reportCPU reports the CPU time of this process per operation since cpu0: on a
// shared machine wall time also counts other processes.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
