package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/image/imagetest"
	"github.com/kraftwatch/kraftwatch/internal/fixture"
)

// whatifServer serves the API over brokers 1, 3 in rack a, 2, 4 in rack b, 5 in
// rack c; orders on 1,2 (two partitions), payments on 3,5; g-orders and g-all
// (a regex) consumer groups, s-pay a share group.
func whatifServer(t *testing.T) *httptest.Server {
	t.Helper()
	img := imagetest.Replay(t, image.Empty, image.Provenance{},
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"RegisterBrokerRecord BrokerID=2 BrokerEpoch=1 Rack=b",
		"RegisterBrokerRecord BrokerID=3 BrokerEpoch=1 Rack=a",
		"RegisterBrokerRecord BrokerID=4 BrokerEpoch=1 Rack=b",
		"RegisterBrokerRecord BrokerID=5 BrokerEpoch=1 Rack=c",
		"TopicRecord Name=orders TopicID=orders",
		"PartitionRecord TopicID=orders PartitionID=0 Replicas=1,2 ISR=1,2 Leader=1",
		"PartitionRecord TopicID=orders PartitionID=1 Replicas=2,1 ISR=2,1 Leader=2",
		"TopicRecord Name=payments TopicID=payments",
		"PartitionRecord TopicID=payments PartitionID=0 Replicas=3,5 ISR=3,5 Leader=3")
	s := groups.NewState()
	for _, l := range []string{"member consumer g-orders m1 topics=orders", "member consumer g-all m1 regex=.*", "member share s-pay m1 topics=payments"} {
		rec, err := groupstest.ParseText(l)
		if err != nil {
			t.Fatal(err)
		}
		s.Apply(&rec)
	}
	cache, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeMurmur3})
	tr := groups.NewTracker(s, cache)
	tr.Sync(img)
	v := &engine.View{State: s, Image: img, Tracker: tr, Scheme: hashcache.SchemeMurmur3, Synced: true}
	mux := http.NewServeMux()
	api.Register(mux, func(_ context.Context, fn func(*engine.View)) error { fn(v); return nil })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestWhatIfCommand runs `kraftwatch whatif` against a real API server and compares
// its output with golden files (go test ./cli -run TestWhatIfCommand -update).
func TestWhatIfCommand(t *testing.T) {
	srv := whatifServer(t)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	// orders-0 leaves rack b for rack c (racks a,b -> a,b,c -> a,c), orders-1 stays in
	// its racks (2 -> 4) but counts rack b twice while it moves (Kafka's hash): one to
	// three rebalances.
	os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,5]},{"topic":"orders","partition":1,"replicas":[4,1]}]}`), 0o644)
	suggested := filepath.Join(dir, "suggested.json")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"reassignment", []string{"--url", srv.URL, "--reassignment", plan}, 0},
		{"json", []string{"--url", srv.URL, "--reassignment", plan, "--json"}, 0},
		{"gate", []string{"--url", srv.URL, "--reassignment", plan, "--max-rebalances", "0"}, ExitTooManyRebalances},
		{"gate-passes", []string{"--url", srv.URL, "--reassignment", plan, "--max-rebalances", "3"}, 0},
		{"rack-and-partitions", []string{"--url", srv.URL, "--set-rack", "5=b", "--add-partitions", "orders=4", "--create-topic", "new=2"}, 0},
		{"decommission", []string{"--url", srv.URL, "--decommission", "3"}, 0},
		{"suggest", []string{"--url", srv.URL, "--decommission", "3", "--suggest", suggested, "--max-rebalances", "2"}, 0},
		{"suggest-stdout", []string{"--url", srv.URL, "--decommission", "5", "--suggest", "-"}, 0},
		{"unknown-topic", []string{"--url", srv.URL, "--delete-topic", "nope"}, 1},
		{"bad-add", []string{"--url", srv.URL, "--add-partitions", "orders"}, 2},
		{"nothing", []string{"--url", srv.URL}, 2},
		{"no-source", []string{"--decommission", "3"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := WhatIf(tc.args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errb.String())
			}
			got := out.String()
			if tc.code != 0 {
				got += "stderr: " + strings.ReplaceAll(errb.String(), srv.URL, "URL")
			}
			golden(t, filepath.Join("testdata", "whatif-"+tc.name+".txt"), got)
		})
	}
	b, err := os.ReadFile(suggested)
	if err != nil || !strings.Contains(string(b), `{"topic":"payments","partition":0,"replicas":[1,5]}`) {
		t.Errorf("--suggest wrote %q (%v), want payments-0 moved from 3 to 1, in rack a", b, err)
	}
}

// TestWhatIfOneShot runs `kraftwatch whatif` in one shot over the 4.3.1 fixture (real
// metadata log and __consumer_offsets: brokers 1 in rack-a and 2 in rack-c; g-list
// reads orders and payments, g-share payments) and against a real API server over
// the same inputs (--url): the same output and exit code, compared
// with golden files (go test ./cli -run TestWhatIfOneShot -update).
func TestWhatIfOneShot(t *testing.T) {
	im, state := fixtureInputs(t)
	loaded := 0
	load := func(dir, controllers, bootstrap string) (*image.Image, *groups.State, error) {
		loaded++
		if dir != "meta" || controllers != "" || bootstrap != "kafka:9092" {
			t.Errorf("loaded dir %q, controllers %q, bootstrap %q; want meta, none, kafka:9092", dir, controllers, bootstrap)
		}
		return im, state, nil
	}
	srv := groupsServer(t) // the same inputs

	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	// orders-0 leaves rack-c (racks a,c -> a), payments-1 swaps its leader (racks
	// unchanged), events.v1-0 too.
	os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1]},`+
		`{"topic":"payments","partition":1,"replicas":[2,1]},{"topic":"events.v1","partition":0,"replicas":[1,2]}]}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"reassignment", []string{"--reassignment", plan}, 0},
		{"json", []string{"--reassignment", plan, "--json"}, 0},
		{"gate", []string{"--reassignment", plan, "--max-rebalances", "0"}, ExitTooManyRebalances},
		{"rack-and-topics", []string{"--set-rack", "2=rack-a", "--add-partitions", "events.v2=3", "--create-topic", "events.v3=1", "--delete-topic", "payments"}, 0},
		{"suggest", []string{"--decommission", "2", "--suggest", "-"}, 0},
		{"unknown-topic", []string{"--delete-topic", "nope"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb, uout, uerrb bytes.Buffer
			code := whatIf(append(append([]string{"--bootstrap", "kafka:9092"}, tc.args...), "meta"), &out, &errb, load)
			ucode := WhatIf(append([]string{"--url", srv.URL}, tc.args...), &uout, &uerrb)
			if code != tc.code || ucode != tc.code {
				t.Fatalf("exit %d one-shot, %d with --url; want %d; stderr: %s%s", code, ucode, tc.code, errb.String(), uerrb.String())
			}
			if out.String() != uout.String() {
				t.Fatalf("one-shot output differs from --url's:\n%s\nwith --url:\n%s", out.String(), uout.String())
			}
			got := out.String()
			if tc.code != 0 {
				got += "stderr: " + errb.String()
				// The API's 400 carries the same reason.
				if _, reason, _ := strings.Cut(strings.TrimSpace(errb.String()), "kraftwatch whatif: "); !strings.Contains(uerrb.String(), reason) {
					t.Errorf("--url's error %q lacks the one-shot's %q", uerrb.String(), reason)
				}
			}
			golden(t, filepath.Join("testdata", "whatif-oneshot-"+tc.name+".txt"), got)
		})
	}
	if loaded != 6 {
		t.Errorf("the inputs were loaded %d times, want once per run", loaded)
	}

	// Bad usage loads nothing; a bootstrap server that refuses connections is named.
	defer func(d time.Duration) { readerStall = d }(readerStall)
	readerStall = time.Second
	meta := fixture.MetadataDir(t, "4.3.1")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--decommission", "2", meta}, 2, "usage: kraftwatch whatif"},
		{[]string{"--url", srv.URL, "--bootstrap", "kafka:9092", "--decommission", "2"}, 2, "usage: kraftwatch whatif"},
		{[]string{"--bootstrap", "kafka:9092", "--bootstrap-controller", "c:9093", "--decommission", "2", meta}, 2, "usage: kraftwatch whatif"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--decommission", "2", meta}, 1, "127.0.0.1:1: connect: connection refused"},
	} {
		var out, errb bytes.Buffer
		if code := WhatIf(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) || out.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want)
		}
	}
}
