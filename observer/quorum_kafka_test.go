//go:build e2e

package observer

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// TestQuorumAgainstKafka follows a real single-node cluster's metadata log over its
// controller listener and checks, after each change, that the network source and the
// disk source end at the same image at the same offset. It starts Kafka, so it is
// built with the e2e tag: go test -tags e2e -run TestQuorumAgainstKafka ./observer/ The multi-controller
// scenarios (leader kill, snapshot bootstrap, ACLs, TLS and SASL) are in
// e2e/quorum_test.go.
func TestQuorumAgainstKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka")
	}
	c := kafkatest.New(t, kafkatest.Options{Props: map[string]string{
		// Snapshots early, so that a fresh observer starts from FetchSnapshot.
		"metadata.log.max.record.bytes.between.snapshots": "2000",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := c.Controllers()[0]
	cfg := Config{Controllers: []string{c.ControllerBootstrap()}, Logger: testLogger(t)}

	updates := make(chan Update, 1024)
	live := cfg
	live.Handler = func(u Update) { updates <- u }
	live.ClusterID = c.ClusterID // sent with every Fetch and FetchSnapshot; Kafka checks it
	o, err := New(live)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	defer func() { cancel(); <-done }()

	id, err := DescribeCluster(ctx, cfg)
	if err != nil || id != c.ClusterID {
		t.Fatalf("DescribeCluster = %q, %v; want %q", id, err, c.ClusterID)
	}
	select {
	case <-o.Ready():
	case <-ctx.Done():
		t.Fatalf("not ready: %v", o.LastError())
	}
	for i := range 6 {
		name := fmt.Sprintf("t%d", i)
		if err := c.CreateTopic(ctx, name, 3, 1); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := c.AlterPartitions(ctx, name, 5); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, ctx, o, func(im *image.Image) bool { _, ok := im.TopicByName(name); return ok })
		// The disk log of the only node is committed as soon as it is written; compare
		// once both are at the same offset.
		compareWithDisk(t, ctx, o.Image(), node.MetadataLogDir())

		// A fresh load: the leader's snapshot (once one exists) and the log after it.
		lc := cfg
		lc.ClusterID = c.ClusterID
		l, err := LoadQuorum(ctx, lc)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("LoadQuorum: %s, offset %d, %d topics", l.Snapshot, l.Image.Provenance().Offset, l.Image.NumTopics())
		compareWithDisk(t, ctx, l.Image, node.MetadataLogDir())
	}
	if m := o.Metrics(); m.Errors.Load() != 0 || m.LeaderID.Load() != int64(node.ID) || m.HighWatermark.Load() <= 0 {
		t.Errorf("errors %d, leader %d, high watermark %d", m.Errors.Load(), m.LeaderID.Load(), m.HighWatermark.Load())
	}
	for len(updates) > 0 {
		<-updates
	}
}

func waitFor(t *testing.T, ctx context.Context, o *Observer, ok func(*image.Image) bool) {
	t.Helper()
	for {
		if im := o.Image(); im != nil && ok(im) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out; last error %v", o.LastError())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// compareWithDisk loads dir until it reaches im's offset and checks that both images
// are the same.
func compareWithDisk(t *testing.T, ctx context.Context, im *image.Image, dir string) {
	t.Helper()
	for {
		l, err := Load(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l.Image.Provenance().Offset >= im.Provenance().Offset {
			if l.Image.Provenance().Offset > im.Provenance().Offset {
				// The log moved on (NoOps every 500 ms): only the records up to im's
				// offset can be compared, and NoOps change nothing.
				if d := image.Diff(l.Image, im); !d.Empty() {
					t.Fatalf("network image at %d differs from the disk image at %d: %s",
						im.Provenance().Offset, l.Image.Provenance().Offset, d)
				}
				return
			}
			if d := image.Diff(l.Image, im); !d.Empty() || l.Image.Provenance() != im.Provenance() {
				t.Fatalf("network image %+v differs from the disk image %+v: %s", im.Provenance(), l.Image.Provenance(), d)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("disk log never reached the network image's offset")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// testLogger logs to the test's log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
