package metagen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/observer"
)

// TestKafkaControllerServesGeneratedSnapshot is the small form of bench/network.sh:
// a real KRaft controller (a lone controller-only node, a static quorum of itself)
// started on a snapshot metagen wrote loads it and serves it over FetchSnapshot; the
// image kraftwatch's network source builds from it is the Config's. It skips without
// Java and Maven unless CI=true.
func TestKafkaControllerServesGeneratedSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM; runs in make test")
	}
	kafkatest.RequireTools(t)
	version := kafkatest.Version()
	c, err := ForKafka(version)
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions, c.Brokers, c.Racks = 20, 3, 6, 3
	c.Controllers, c.KRaftVersion = 1, 0 // the static quorum has no voters record
	dir := t.TempDir()
	files, err := WriteDir(filepath.Join(dir, "snapshot", "__cluster_metadata-0"), c, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	ctl, err := kafkatest.StartLoneController(ctx, filepath.Join(dir, "controller"), kafkatest.LoneOptions{
		Version: version, ID: int(c.ControllerID(0)),
		JVMOptions: []string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xmx512m"},
		Props:      map[string]string{"broker.session.timeout.ms": "3600000"},
		Prepare: func(meta string) error {
			b, err := os.ReadFile(files.Snapshot)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(meta, filepath.Base(files.Snapshot)), b, 0o644)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Stop()
	var l *observer.Loaded
	for {
		// The controller answers once it is elected, a second or so after it listens.
		l, err = observer.LoadQuorum(ctx, observer.Config{Controllers: []string{ctl.Addr}, MinBackoff: 200 * time.Millisecond})
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("loading from the controller: %v; its server.log:\n%s", err, ctl.LogTail(40))
	}
	t.Logf("controller started and served the snapshot in %v", time.Since(start).Round(time.Millisecond))
	if want := fmt.Sprintf("snapshot %d-%d of controller %s", c.SnapshotEndOffset(), c.Epoch, ctl.Addr); l.Snapshot != want {
		t.Errorf("loaded %q, want %q", l.Snapshot, want)
	}
	if err := c.Check(l.Image, 0); err != nil {
		t.Error(err)
	}
	if l.Image.Provenance().Offset < c.SnapshotEndOffset()-1 {
		t.Errorf("image at offset %d, before the snapshot's end %d", l.Image.Provenance().Offset, c.SnapshotEndOffset())
	}
}
