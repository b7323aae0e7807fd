package clients_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/events/follow"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/publish"
)

// cluster is the Kafka cluster whose events the clients read; other is a second
// cluster whose streams are on the same server, so that every client is shown to read
// one cluster's events by naming it in the subject.
const (
	cluster = "MkU3OEVBNTcwNTJENDM2Qk"
	other   = "T3RoZXJDbHVzdGVySWRYWF"
)

// subject is what the clients subscribe to: the cluster's public subjects.
const subject = "kraftwatch." + cluster + ".>"

// groups are the groups publishSome announces, with ids that need the subject escape.
var groups = []string{"orders", "billing.v2", "with space"}

// transitions is how many events publishSome announces per group.
const transitions = 4

type setup struct {
	srv *server.Server
	p   *publish.Publisher
	// want holds the stored events' ids per group, in order; all of them in stream order.
	want map[string][]string
	all  []string
}

func (s *setup) url() string { return s.srv.ClientURL() }

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// start runs a nats-server and kraftwatch's publisher for two clusters on it, announces
// transitions events for each group (interleaved) of each cluster and waits until both
// events streams hold them all.
func start(t *testing.T) *setup {
	t.Helper()
	s := &setup{srv: natstest.Start(t), want: map[string][]string{}}
	ctx := context.Background()
	s.p = publishSome(t, s.url(), cluster)
	publishSome(t, s.url(), other)
	js, _ := jetstream.New(connect(t, s.url()))
	name, _ := follow.FindStream(ctx, js, "", cluster)
	c, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for range len(groups) * transitions {
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.DecodeRebalanceNeeded(m.Data())
		if err != nil {
			t.Fatal(err)
		}
		s.want[ev.Data.GroupID] = append(s.want[ev.Data.GroupID], ev.ID)
		s.all = append(s.all, ev.ID)
	}
	return s
}

// publishSome runs kraftwatch's publisher for clusterID on url, announces transitions
// events for each group (interleaved) and waits until its events stream holds them.
func publishSome(t *testing.T, url, clusterID string) *publish.Publisher {
	t.Helper()
	p, err := publish.New(publish.Config{Conn: connect(t, url), ClusterID: clusterID})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for k := range transitions {
		for i, g := range groups {
			ev := events.RebalanceNeeded{GroupID: g, GroupType: events.ConsumerGroup, NewHash: events.Hash(1000*i + k + 1),
				Reasons: []events.Reason{{Kind: events.PartitionsAdded, Topic: "t-" + g, OldPartitions: int32(k + 1), NewPartitions: int32(k + 2)}},
				Cause:   events.Cause{MetadataOffset: int64(10*k + i + 1), MetadataEpoch: 1}, CoordinatorEpoch: int32(k),
				Time: time.Date(2025, 1, 1, 0, 0, k, 0, time.UTC)}
			if k > 0 {
				ev.PreviousHash = events.SomeHash(int64(1000*i + k))
			}
			if err := p.Enqueue(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	js, _ := jetstream.New(connect(t, url))
	deadline := time.Now().Add(20 * time.Second)
	for {
		if name := p.EventsStream(); name != "" {
			st, err := js.Stream(ctx, name)
			if err == nil && st.CachedInfo().State.Msgs == uint64(len(groups)*transitions) {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster %s's events stream does not hold the %d events", clusterID, len(groups)*transitions)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkIDs fails unless got holds each stored event once and, when ordered, every
// group's in stream order (byGroup: the group of each id).
func (s *setup) checkIDs(t *testing.T, client string, got []string, byGroup map[string]string, ordered bool) {
	t.Helper()
	if len(got) != len(s.all) {
		t.Fatalf("%s received %d events, %d stored:\n%v", client, len(got), len(s.all), got)
	}
	seen := map[string]bool{}
	per := map[string][]string{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("%s received %s twice", client, id)
		}
		seen[id] = true
		per[byGroup[id]] = append(per[byGroup[id]], id)
	}
	for _, id := range s.all {
		if !seen[id] {
			t.Fatalf("%s did not receive %s", client, id)
		}
	}
	if ordered {
		for g, ids := range s.want {
			if strings.Join(per[g], ",") != strings.Join(ids, ",") {
				t.Fatalf("%s received group %q's events as %v, stored %v", client, g, per[g], ids)
			}
		}
	}
}

// repoRoot is the kraftwatch repository (two levels up).
func repoRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(strings.TrimSpace(string(out)))))
}

// next is the event after publishSome's last one for group.
func (s *setup) next(group string) events.RebalanceNeeded {
	k := transitions
	for i, g := range groups {
		if g == group {
			return events.RebalanceNeeded{GroupID: g, GroupType: events.ConsumerGroup, NewHash: events.Hash(1000*i + k + 1),
				PreviousHash: events.SomeHash(int64(1000*i + k)),
				Reasons:      []events.Reason{{Kind: events.PartitionsAdded, Topic: "t-" + g, OldPartitions: int32(k + 1), NewPartitions: int32(k + 2)}},
				Cause:        events.Cause{MetadataOffset: int64(10*k + i + 1), MetadataEpoch: 1}, CoordinatorEpoch: int32(k)}
		}
	}
	panic("no group " + group)
}
