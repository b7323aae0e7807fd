package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/observer"
)

// The network benchmark (bench/network.sh, -network): the initial sync of the large
// snapshot from a real KRaft controller (observer.LoadQuorum: FetchSnapshot, then the
// log up to the high watermark) against observer.Load of the same snapshot file from
// disk, each in fresh processes, in one run.
//
// The controller is a lone controller-only Kafka node (kafkatest.LoneController, a
// static quorum of itself, kraft.version 0) formatted by kafka-storage and then given
// metagen's snapshot in its empty __cluster_metadata-0: Kafka truncates its empty log
// to the snapshot's end offset, loads the snapshot, is elected and serves it. The
// snapshot is written for that controller: one controller (node id 1001, its
// RegisterControllerRecord) and no KRaftVersion or Voters control records, which a
// static quorum does not have. The snapshot's twelve brokers never heartbeat; the
// controller's broker.session.timeout.ms is an hour so that it does not fence them
// (and move a million leaders) during the run.

// networkConfig is o.config() for the lone controller.
func (o *options) networkConfig() (metagen.Config, error) {
	c, err := o.config()
	if err != nil {
		return c, err
	}
	c.Controllers, c.KRaftVersion = 1, 0
	return c, c.Validate()
}

// childNetwork loads the metadata log from the controller at addr in this fresh
// process (LoadQuorum) and reports as childLoad does.
func childNetwork(o *options) error {
	c, err := o.networkConfig()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	start := time.Now()
	l, err := observer.LoadQuorum(ctx, observer.Config{Controllers: []string{o.childNetwork}})
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	if err != nil {
		return err
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	r := loadResult{LoadNs: elapsed.Nanoseconds(), CPUNs: cpu.Nanoseconds(), HeapBytes: int64(after.HeapAlloc) - int64(before.HeapAlloc),
		AllocBytes: int64(after.TotalAlloc - before.TotalAlloc), PeakRSS: peakRSS(),
		Partitions: int64(l.Image.NumPartitions()), Records: l.Image.Provenance().Offset + 1, Check: "ok"}
	if err := c.Check(l.Image, 0); err != nil {
		r.Check = err.Error()
	}
	runtime.KeepAlive(l)
	return json.NewEncoder(os.Stdout).Encode(r)
}

func runNetwork(o *options) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	c, err := o.networkConfig()
	if err != nil {
		return err
	}
	dir, err := workDir(o, "metabench-network-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	fmt.Printf("== kraftwatch network benchmark: %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("machine: %d CPUs, GOMAXPROCS %d, %s, load average %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), loadavg())
	jvm := append(append([]string{}, kafkatest.KafkaJVMOptions...), "-Xmx"+o.controllerXmx, "-Xms"+o.controllerXmx)
	fmt.Printf("kafka:   %s, %s; controller JVM options: %s\n\n", o.version, javaVersion(), strings.Join(jvm, " "))

	gen := filepath.Join(dir, "snapshot", "__cluster_metadata-0")
	files, err := metagen.WriteDir(gen, c, 0)
	if err != nil {
		return err
	}
	fmt.Printf("snapshot: %d topics x %d partitions = %d partitions, RF %d over %d brokers, metadata.version %d, one controller, kraft.version 0\n",
		c.Topics, c.Partitions, c.NumPartitions(), c.ReplicationFactor, c.Brokers, c.MetadataVersion)
	fmt.Printf("          %s: %.1f MB, %d batches\n", filepath.Base(files.Snapshot), mb(files.SnapshotStats.Bytes), files.SnapshotStats.Batches)

	start := time.Now()
	ctl, err := kafkatest.StartLoneController(ctx, filepath.Join(dir, "controller"), kafkatest.LoneOptions{
		Version: o.version, ID: int(c.ControllerID(0)), JVMOptions: jvm,
		Props: map[string]string{"broker.session.timeout.ms": "3600000"},
		Prepare: func(meta string) error {
			return copyFile(files.Snapshot, filepath.Join(meta, filepath.Base(files.Snapshot)))
		}})
	if err != nil {
		return err
	}
	defer ctl.Stop()
	// Kafka's own account of the load: the controller has replayed the snapshot once
	// it logs that it started.
	if err := waitLog(ctx, ctl, "Kafka Server started"); err != nil {
		return err
	}
	rss, _ := ctl.RSS()
	fmt.Printf("controller %d at %s (cluster %s) started on the snapshot in %v, RSS %.0f MB\n",
		ctl.ID, ctl.Addr, ctl.ClusterID, time.Since(start).Round(time.Millisecond), mb(rss))

	// Warm-up, untimed: the controller's first FetchSnapshot answers also compile its
	// code. It checks that Kafka serves the whole snapshot.
	w, err := childRun(ctx, o, "-child-network", ctl.Addr, 0)
	if err != nil {
		return fmt.Errorf("warm-up: %w; controller's server.log:\n%s", err, ctl.LogTail(30))
	}
	if w.Check != "ok" {
		return fmt.Errorf("the image fetched from the controller differs from the snapshot: %s", w.Check)
	}
	fmt.Printf("warm-up: %v over the network, image checked in full (%d partitions, log to offset %d)\n\n",
		dur(w.LoadNs), w.Partitions, w.Records-1)

	var nets, disks []loadResult
	for round := range o.runs {
		fmt.Printf("round %d/%d\n", round+1, o.runs)
		n, err := childRun(ctx, o, "-child-network", ctl.Addr, 0)
		if err != nil {
			return err
		}
		if n.Check != "ok" {
			return fmt.Errorf("network image: %s", n.Check)
		}
		nets = append(nets, n)
		fmt.Printf("  network (LoadQuorum):  %8v (CPU %v), peak RSS %.0f MB\n", dur(n.LoadNs), dur(n.CPUNs), mb(n.PeakRSS))
		d, err := childRun(ctx, o, "-child-load", gen, 0)
		if err != nil {
			return err
		}
		if d.Check != "ok" {
			return fmt.Errorf("disk image: %s", d.Check)
		}
		disks = append(disks, d)
		fmt.Printf("  disk (Load):           %8v (CPU %v), peak RSS %.0f MB\n", dur(d.LoadNs), dur(d.CPUNs), mb(d.PeakRSS))
	}
	net := median(nets, func(l loadResult) float64 { return float64(l.LoadNs) / 1e9 })
	disk := median(disks, func(l loadResult) float64 { return float64(l.LoadNs) / 1e9 })
	netCPU := median(nets, func(l loadResult) float64 { return float64(l.CPUNs) / 1e9 })
	diskCPU := median(disks, func(l loadResult) float64 { return float64(l.CPUNs) / 1e9 })
	fmt.Printf("\n== results (medians of %d runs; load average now %s)\n", o.runs, loadavg())
	fmt.Printf("initial sync of %d partitions: network %.3f s (CPU %.3f s), disk %.3f s (CPU %.3f s): %.2fx\n",
		c.NumPartitions(), net, netCPU, disk, diskCPU, net/disk)
	ok := net <= 2*disk
	fmt.Printf("target:\n  [%s] network initial sync within 2x of the disk load of the same snapshot: %.2fx\n",
		map[bool]string{true: "ok  ", false: "MISS"}[ok], net/disk)
	if !ok {
		return fmt.Errorf("missed the target: network %.3f s is %.2fx the disk load's %.3f s", net, net/disk, disk)
	}
	return nil
}

// waitLog waits until the controller's server.log holds line.
func waitLog(ctx context.Context, ctl *kafkatest.LoneController, line string) error {
	for {
		b, _ := os.ReadFile(filepath.Join(ctl.Dir, "server.log"))
		if strings.Contains(string(b), line) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controller: no %q in its log: %w; server.log:\n%s", line, ctx.Err(), ctl.LogTail(30))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func copyFile(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
