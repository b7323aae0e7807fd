// Command metabench measures, in one run, how fast kraftwatch and Kafka's own
// kafka-metadata-shell load the same large KRaft snapshot, and how much heap
// kraftwatch's image takes. bench/metadata.sh runs it; see bench/README.md.
//
// It writes a snapshot of the cluster the flags describe (by default 10,000 topics x
// 100 partitions = 1M partitions, RF 3 over 12 brokers in 4 racks) and a trivial one
// (one topic of one partition), then, for -runs rounds, each in fresh processes:
//
//   - kraftwatch: observer.Load of the snapshot's directory (read, check, decode,
//     replay into a full image.Image); the load's wall time, and the heap the image
//     holds after a GC, per partition. The first image is compared with the Config
//     in full (every broker, topic and partition).
//   - Kafka: kafka-metadata-shell --snapshot on the trivial snapshot and then on the
//     large one, with kafka-run-class.sh's JVM options and -Xmx as given. Measured
//     from the JVM's start: "caught up" when the shell prints Starting... (Kafka's
//     MetadataLoader replayed every batch and applied its image) and "image" when
//     `tree /image/provenance` first shows the snapshot's last offset (the shell
//     can answer from the whole file). The trivial snapshot's times are JVM start-up
//     and shell overhead; the adjusted figures subtract them. The first large load
//     is checked: every topic is listed and one partition is compared.
//
// Each round also times the floor under a load (-child-decode): reading, checking
// (CRC) and decoding the same file as the load reads it, on one goroutine, without
// building an image.
//
// It prints both tools' figures and the ratios (medians), checks the targets on the
// fastest run of each side (load <= 2 s; >= 15x faster than Kafka's shell until it shows the image
// and >= 8x until its loader caught up, JVM start-up subtracted; the load's CPU within
// 2x of the floor's; <= 120 bytes of heap per partition) and exits 1 if one is missed.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/observer"
)

type options struct {
	version                                string
	topics, partitions, rf, brokers, racks int
	runs                                   int
	xmx, jvmOpts                           string
	dir                                    string
	keep, oneshot                          bool
	childLoad, cpuprofile                  string
	timeout                                time.Duration
	changes, sequentialChanges             int
	order                                  string
	childLive, childProfile, memprofile    string
	childDecode                            string
	shell, loadOnly                        bool
	network                                bool
	childNetwork, controllerXmx            string
	kraftwatch                             string
	memoryLimit                            float64
}

// segmentChanges is how many leader changes the segment of order ord holds.
func (o *options) segmentChanges(ord metagen.Order) int {
	switch {
	case ord != metagen.OrderSequential:
		return o.changes
	case o.sequentialChanges > 0:
		return o.sequentialChanges
	}
	return 5 * o.changes
}

func main() {
	var o options
	fs := flag.NewFlagSet("metabench", flag.ExitOnError)
	o.version = os.Getenv("KAFKA_VERSION")
	if o.version == "" {
		o.version = kafkatest.DefaultVersion
	}
	fs.StringVar(&o.version, "kafka-version", o.version, "Kafka release (env KAFKA_VERSION); it needs a published kafka-metadata-shell")
	fs.IntVar(&o.topics, "topics", 10_000, "topics")
	fs.IntVar(&o.partitions, "partitions", 100, "partitions per topic")
	fs.IntVar(&o.rf, "rf", 3, "replication factor")
	fs.IntVar(&o.brokers, "brokers", 12, "brokers")
	fs.IntVar(&o.racks, "racks", 4, "racks")
	fs.IntVar(&o.runs, "runs", 3, "rounds of measurements; medians are reported")
	fs.StringVar(&o.xmx, "xmx", "8g", "kafka-metadata-shell heap (-Xmx and -Xms)")
	fs.StringVar(&o.jvmOpts, "jvm-opts", strings.Join(kafkatest.KafkaJVMOptions, " "), "kafka-metadata-shell JVM options besides the heap (default: kafka-run-class.sh's)")
	fs.StringVar(&o.dir, "dir", "", "work directory for the snapshots (default: a temporary one, removed)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory")
	fs.BoolVar(&o.oneshot, "oneshot", true, "also time one non-interactive `kafka-metadata-shell ... tree /image/provenance` and show what it printed")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up after this long")
	fs.StringVar(&o.childLoad, "child-load", "", "load this metadata log dir once in this process and print the figures as JSON (what each round runs)")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "with -child-load or -child-live: write a CPU profile of the load to this file")
	fs.IntVar(&o.changes, "changes", 0, "the leader-change burst benchmark (bench/burst.sh): a segment of this many partition leader changes after the snapshot (with -child-*: the segment's)")
	fs.IntVar(&o.sequentialChanges, "sequential-changes", 0, "with -changes: the sequential order's segment holds this many (default 5 x -changes: its burst is 5 times as fast, so as long a one is measurable)")
	fs.StringVar(&o.order, "order", "rolling,sequential", "with -changes: the orders of the leader changes, comma-separated, the first the headline (metagen: rolling, sequential)")
	fs.StringVar(&o.childLive, "child-live", "", "with -changes: follow this metadata log dir's snapshot in this process, link its segment in once ready, and print the figures as JSON")
	fs.Float64Var(&o.memoryLimit, "memory-limit", 1.5, "with -changes: also follow each segment live under a Go memory limit (GOMEMLIMIT) of this many times the image's heap, as kraftwatch runs under a container's limit; 0: not (with -child-live: the limit of this run)")
	fs.StringVar(&o.childDecode, "child-decode", "", "read, check (CRC) and decode this metadata log dir's snapshot once in this process, building no image, and print the figures as JSON")
	fs.StringVar(&o.memprofile, "memprofile", "", "with -child-load or -child-live: write an allocation profile of the load to this file")
	fs.StringVar(&o.childProfile, "profile", "", "write a CPU profile of each kraftwatch child to PREFIX.<mode>.<changes>.pprof")
	fs.BoolVar(&o.loadOnly, "load-only", false, "with -child-load: print the load's wall and CPU time and exit, before the heap figures and the check (to count the load's own instructions: GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind metabench -child-load DIR -load-only)")
	fs.BoolVar(&o.shell, "shell", true, "with -changes: measure Kafka's kafka-metadata-shell too")
	fs.BoolVar(&o.network, "network", false, "the network benchmark (bench/network.sh): initial sync from a real controller serving the snapshot against the disk load of the same file")
	fs.StringVar(&o.childNetwork, "child-network", "", "load the metadata log from the controller at this host:port once in this process (LoadQuorum) and print the figures as JSON")
	fs.StringVar(&o.controllerXmx, "controller-xmx", "4g", "with -network: the controller's heap (-Xmx and -Xms)")
	fs.StringVar(&o.kraftwatch, "kraftwatch", "", "the kraftwatch binary (bench/metadata.sh builds it): its peak RSS on a one-partition snapshot is printed beside metabench's, to tell whether the RSS a child starts with is what kraftwatch would hold")
	fs.Parse(os.Args[1:])

	if o.memprofile != "" {
		runtime.MemProfileRate = 4096
	}
	var err error
	switch {
	case o.childLoad != "":
		err = childLoad(&o)
	case o.childDecode != "":
		err = childDecode(&o)
	case o.childLive != "":
		err = childLive(&o)
	case o.childNetwork != "":
		err = childNetwork(&o)
	case o.network:
		err = runNetwork(&o)
	case o.changes > 0:
		err = runBurst(&o)
	default:
		err = run(&o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "metabench:", err)
		os.Exit(1)
	}
}

func (o *options) config() (metagen.Config, error) {
	c, err := metagen.ForKafka(o.version)
	if err != nil {
		return c, err
	}
	c.Topics, c.Partitions, c.ReplicationFactor, c.Brokers, c.Racks = o.topics, o.partitions, o.rf, o.brokers, o.racks
	orders, err := o.orders()
	if err != nil {
		return c, err
	}
	c.Order = orders[0]
	return c, c.Validate()
}

// orders are the -order flag's orders.
func (o *options) orders() ([]metagen.Order, error) {
	var orders []metagen.Order
	for name := range strings.SplitSeq(o.order, ",") {
		ord, err := metagen.ParseOrder(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		orders = append(orders, ord)
	}
	return orders, nil
}

// loadResult is what a child process reports about one kraftwatch load.
type loadResult struct {
	LoadNs     int64 `json:"load_ns"`
	CPUNs      int64 `json:"cpu_ns"` // user+system CPU time of the load, all threads
	HeapBytes  int64 `json:"heap_bytes"`
	AllocBytes int64 `json:"alloc_bytes"` // allocated during the load (TotalAlloc)
	PeakRSS    int64 `json:"peak_rss"`    // the process's peak RSS (VmHWM) after the load
	StartRSS   int64 `json:"start_rss"`   // its RSS (VmRSS) at the start, before any image
	// StartFileRSS is the file-backed part of StartRSS (RssFile): the binary's pages.
	StartFileRSS int64 `json:"start_file_rss,omitempty"`
	// End is the runtime's memory as the load returned, before any further GC (load
	// only): what the peak is made of, as the peak comes at the load's end.
	End        memClasses `json:"end"`
	Partitions int64      `json:"partitions"`
	Records    int64      `json:"records"`
	Check      string     `json:"check"`
	// Live only: the updates published from the segment's arrival to its last, and
	// the largest heap a GC found live meanwhile (runtime/metrics /gc/heap/live:bytes).
	Updates      int64 `json:"updates,omitempty"`
	PeakLiveHeap int64 `json:"peak_live_heap,omitempty"`
	// Live under a memory limit only: the limit set, and the GCs during the burst.
	MemoryLimit int64  `json:"memory_limit,omitempty"`
	GCs         uint32 `json:"gcs,omitempty"`
}

// childLoad loads a metadata log dir in this fresh process and reports the load's wall
// time and the heap the image holds.
func childLoad(o *options) error {
	c, err := o.config()
	if err != nil {
		return err
	}
	startRSS, startFile := rss(), procStatus("RssFile:")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	cpu0 := cpuTime()
	start := time.Now()
	l, err := observer.LoadConfig(observer.Config{Dir: o.childLoad, LoadGC: loadGC()})
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	end := readMemClasses()
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	if o.loadOnly {
		r := loadResult{LoadNs: elapsed.Nanoseconds(), CPUNs: cpu.Nanoseconds(), Partitions: int64(l.Image.NumPartitions()), Check: "not checked"}
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	r := loadResult{LoadNs: elapsed.Nanoseconds(), CPUNs: cpu.Nanoseconds(), HeapBytes: int64(after.HeapAlloc) - int64(before.HeapAlloc),
		AllocBytes: int64(after.TotalAlloc - before.TotalAlloc), PeakRSS: peakRSS(), StartRSS: startRSS, StartFileRSS: startFile, End: end,
		Partitions: int64(l.Image.NumPartitions()), Records: l.Image.Provenance().Offset + 1, Check: "ok"}
	runtime.KeepAlive(l)
	writeMemProfile(o)
	if err := c.Check(l.Image, o.changes); err != nil {
		r.Check = err.Error()
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// loadGC is observer.Config.LoadGC as kraftwatch sets it (run.go), so that the
// children measure what kraftwatch runs: on unless GOGC or GOMEMLIMIT is set.
func loadGC() bool { return os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" }

// shellRun is one kafka-metadata-shell load, each time measured from the JVM's start,
// and the CPU time the JVM used in all (start to exit).
type shellRun struct {
	loading, caughtUp, image, cpu time.Duration
}

// cpuTime is the user and system CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(o *options) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	c, err := o.config()
	if err != nil {
		return err
	}
	tiny := c
	tiny.Topics, tiny.Partitions = 1, 1
	tools, err := shellTools(o.version)
	if err != nil {
		return err
	}
	dir, err := workDir(o, "metabench-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}

	fmt.Printf("== kraftwatch metadata benchmark: %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("machine: %d CPUs, GOMAXPROCS %d, %s, load average %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), loadavg())
	fmt.Printf("kafka:   %s, %s\n", o.version, javaVersion())
	jvm := append(strings.Fields(o.jvmOpts), "-Xmx"+o.xmx, "-Xms"+o.xmx)
	fmt.Printf("shell JVM options: %s\n\n", strings.Join(jvm, " "))

	start := time.Now()
	big, err := metagen.WriteDir(filepath.Join(dir, "big", "__cluster_metadata-0"), c, 0)
	if err != nil {
		return err
	}
	small, err := metagen.WriteDir(filepath.Join(dir, "tiny", "__cluster_metadata-0"), tiny, 0)
	if err != nil {
		return err
	}
	fmt.Printf("snapshot: %d topics x %d partitions = %d partitions, RF %d over %d brokers in %d racks, metadata.version %d\n",
		c.Topics, c.Partitions, c.NumPartitions(), c.ReplicationFactor, c.Brokers, c.Racks, c.MetadataVersion)
	fmt.Printf("          %s: %.1f MB, %d batches (largest %.1f MB), %d records; written in %v\n\n",
		filepath.Base(big.Snapshot), mb(big.SnapshotStats.Bytes), big.SnapshotStats.Batches,
		mb(int64(big.SnapshotStats.MaxBatch)), big.SnapshotStats.Records, time.Since(start).Round(time.Millisecond))
	lastBig, lastTiny := big.SnapshotStats.LastOffset-1, small.SnapshotStats.LastOffset-1 // before the footer

	var loads, decodes []loadResult
	var tinyRuns, bigRuns []shellRun
	for round := range o.runs {
		fmt.Printf("round %d/%d\n", round+1, o.runs)
		l, err := childRun(ctx, o, "-child-load", filepath.Dir(big.Snapshot), 0)
		if err != nil {
			return err
		}
		if l.Check != "ok" || l.Partitions != c.NumPartitions() {
			return fmt.Errorf("kraftwatch's image of %d partitions differs from the snapshot: %s", l.Partitions, l.Check)
		}
		loads = append(loads, l)
		fmt.Printf("  kraftwatch load:                 %8v (CPU %v), heap %d B/partition, peak RSS %.0f MB (%.0f MB at the start; image checked in full)\n",
			dur(l.LoadNs), dur(l.CPUNs), l.HeapBytes/l.Partitions, mb(l.PeakRSS), mb(l.StartRSS))
		dl, err := childRun(ctx, o, "-child-decode", filepath.Dir(big.Snapshot), 0)
		if err != nil {
			return err
		}
		decodes = append(decodes, dl)
		fmt.Printf("  read + CRC + decode, no image:   %8v (CPU %v)\n", dur(dl.LoadNs), dur(dl.CPUNs))

		t, err := shellLoad(ctx, tools, jvm, small.Snapshot, lastTiny, nil)
		if err != nil {
			return fmt.Errorf("kafka-metadata-shell on the trivial snapshot: %w", err)
		}
		tinyRuns = append(tinyRuns, t)
		fmt.Printf("  kafka shell, trivial snapshot:   caught up %8v, image %8v (JVM up %v; CPU %v)\n", rnd(t.caughtUp), rnd(t.image), rnd(t.loading), rnd(t.cpu))

		var check func(*kafkatest.Shell) error
		if round == 0 {
			check = func(sh *kafkatest.Shell) error { return checkShell(ctx, sh, &c) }
		}
		b, err := shellLoad(ctx, tools, jvm, big.Snapshot, lastBig, check)
		if err != nil {
			return fmt.Errorf("kafka-metadata-shell on the large snapshot: %w", err)
		}
		bigRuns = append(bigRuns, b)
		fmt.Printf("  kafka shell, large snapshot:     caught up %8v, image %8v (JVM up %v; CPU %v)%s\n", rnd(b.caughtUp), rnd(b.image), rnd(b.loading), rnd(b.cpu),
			map[bool]string{true: "; image checked: all topics, one partition", false: ""}[round == 0])
	}
	if o.oneshot {
		if err := oneshot(ctx, tools, jvm, big.Snapshot, lastBig); err != nil {
			return err
		}
	}

	kw := median(loads, func(l loadResult) float64 { return float64(l.LoadNs) / 1e9 })
	heap := median(loads, func(l loadResult) float64 { return float64(l.HeapBytes) / float64(l.Partitions) })
	kCaught := median(bigRuns, func(r shellRun) float64 { return r.caughtUp.Seconds() })
	kImage := median(bigRuns, func(r shellRun) float64 { return r.image.Seconds() })
	tCaught := median(tinyRuns, func(r shellRun) float64 { return r.caughtUp.Seconds() })
	tImage := median(tinyRuns, func(r shellRun) float64 { return r.image.Seconds() })
	adjCaught, adjImage := kCaught-tCaught, kImage-tImage
	kwCPU := median(loads, func(l loadResult) float64 { return float64(l.CPUNs) / 1e9 })
	decCPU := median(decodes, func(l loadResult) float64 { return float64(l.CPUNs) / 1e9 })
	decWall := median(decodes, func(l loadResult) float64 { return float64(l.LoadNs) / 1e9 })
	kCPU := median(bigRuns, func(r shellRun) float64 { return r.cpu.Seconds() })
	tCPU := median(tinyRuns, func(r shellRun) float64 { return r.cpu.Seconds() })

	fmt.Printf("\n== results (medians of %d runs; load average now %s)\n", o.runs, loadavg())
	fmt.Printf("kraftwatch   observer.Load, %d partitions:      %6.3f s             heap %.1f B/partition (%.0f MB)\n",
		c.NumPartitions(), kw, heap, heap*float64(c.NumPartitions())/1e6)
	fmt.Printf("kafka shell  image shown (tree /image/provenance): raw %6.3f s  trivial %6.3f s  adjusted %6.3f s\n", kImage, tImage, adjImage)
	fmt.Printf("kafka shell  loader caught up (Starting...):       raw %6.3f s  trivial %6.3f s  adjusted %6.3f s\n", kCaught, tCaught, adjCaught)
	fmt.Printf("ratio kafka/kraftwatch: image shown %.1fx adjusted (%.1fx raw); loader caught up %.1fx adjusted (%.1fx raw)\n",
		adjImage/kw, kImage/kw, adjCaught/kw, kCaught/kw)
	fmt.Println("  (raw: from the JVM's start, JVM start-up included; adjusted: minus the same for a one-partition snapshot)")
	fmt.Printf("CPU time (all threads): kraftwatch %.3f s; kafka shell %.3f s, trivial %.3f s, adjusted %.3f s: %.1fx\n",
		kwCPU, kCPU, tCPU, kCPU-tCPU, (kCPU-tCPU)/kwCPU)
	fmt.Println("  (CPU time depends less on other load on the machine than wall time does; the shell's is start to exit)")
	fmt.Printf("floor: read + CRC + decode of the same file, no image: %.3f s wall, CPU %.3f s; the load's CPU is %.2fx that\n", decWall, decCPU, kwCPU/decCPU)
	rssRatio := median(loads, func(l loadResult) float64 { return float64(l.PeakRSS) / float64(l.HeapBytes) })
	rssAbove := median(loads, func(l loadResult) float64 { return float64(l.PeakRSS-l.StartRSS) / float64(l.HeapBytes) })
	fmt.Printf("peak RSS of the load: %.2fx the image's heap (%.2fx above the process's RSS at its start, %.0f MB without an image); bench/burst.sh checks it (<= 1.5x)\n",
		rssRatio, rssAbove, median(loads, func(l loadResult) float64 { return mb(l.StartRSS) }))
	peakParts("  ", loads)
	if err := startRSSCompared(ctx, o, filepath.Dir(small.Snapshot)); err != nil {
		return err
	}

	// The targets compare the fastest run of each side, as bench/burst.sh does: on a
	// shared machine other work only ever slows a run down, never speeds it up. The
	// medians above are printed beside them.
	fast := func(loads []loadResult) float64 {
		return fastest(loads, func(l loadResult) float64 { return float64(l.LoadNs) / 1e9 })
	}
	fastCPU := func(loads []loadResult) float64 {
		return fastest(loads, func(l loadResult) float64 { return float64(l.CPUNs) / 1e9 })
	}
	fKW, fKWCPU, fDecCPU := fast(loads), fastCPU(loads), fastCPU(decodes)
	fImage := fastest(bigRuns, func(r shellRun) float64 { return r.image.Seconds() }) -
		fastest(tinyRuns, func(r shellRun) float64 { return r.image.Seconds() })
	fCaught := fastest(bigRuns, func(r shellRun) float64 { return r.caughtUp.Seconds() }) -
		fastest(tinyRuns, func(r shellRun) float64 { return r.caughtUp.Seconds() })
	fmt.Printf("fastest runs: kraftwatch %.3f s (CPU %.3f s), the floor's CPU %.3f s, Kafka's shell adjusted: image shown %.3f s, loader caught up %.3f s\n",
		fKW, fKWCPU, fDecCPU, fImage, fCaught)

	var missed []string
	target := func(ok bool, format string, args ...any) {
		status := "ok  "
		if !ok {
			status = "MISS"
			missed = append(missed, fmt.Sprintf(format, args...))
		}
		fmt.Printf("  [%s] "+format+"\n", append([]any{status}, args...)...)
	}
	fmt.Println("targets (the fastest run of each side; medians in brackets):")
	target(fKW <= 2, "%d-partition snapshot loaded in <= 2 s: %.3f s (%.3f s)", c.NumPartitions(), fKW, kw)
	target(fImage/fKW >= 15, ">= 15x faster than Kafka's shell until it shows the image (JVM start-up subtracted): %.1fx (%.1fx)", fImage/fKW, adjImage/kw)
	target(fCaught/fKW >= 8, ">= 8x faster than Kafka's loader caught up (JVM start-up subtracted): %.1fx (%.1fx)", fCaught/fKW, adjCaught/kw)
	target(fKWCPU <= 2*fDecCPU, "load CPU within 2x of read + CRC + decode: %.2fx (%.2fx)", fKWCPU/fDecCPU, kwCPU/decCPU)
	target(heap <= 120, "<= 120 bytes of heap per partition: %.1f", heap)
	if len(missed) > 0 {
		return fmt.Errorf("missed %d target(s): %s", len(missed), strings.Join(missed, "; "))
	}
	return nil
}

// childRun runs one load in a fresh child process (this binary, -child-load or
// -child-live) of a dir whose segment holds changes leader changes.
func childRun(ctx context.Context, o *options, mode, dir string, changes int) (loadResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return loadResult{}, err
	}
	args := []string{mode, dir, "-kafka-version", o.version,
		"-topics", fmt.Sprint(o.topics), "-partitions", fmt.Sprint(o.partitions), "-rf", fmt.Sprint(o.rf),
		"-brokers", fmt.Sprint(o.brokers), "-racks", fmt.Sprint(o.racks), "-changes", fmt.Sprint(changes),
		"-order", o.order, "-timeout", o.timeout.String()}
	if mode == "-child-live" {
		args = append(args, "-memory-limit", fmt.Sprint(o.memoryLimit))
	}
	if o.childProfile != "" {
		name := fmt.Sprintf("%s.%s.%d", o.childProfile, strings.TrimPrefix(mode, "-child-"), changes)
		if changes > 0 {
			name = fmt.Sprintf("%s.%s.%s.%d", o.childProfile, strings.TrimPrefix(mode, "-child-"), o.order, changes)
		}
		args = append(args, "-cpuprofile", name+".pprof", "-memprofile", name+".alloc.pprof")
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return loadResult{}, fmt.Errorf("kraftwatch load: %w", err)
	}
	var r loadResult
	return r, json.Unmarshal(out, &r)
}

// shellLoad starts kafka-metadata-shell on a snapshot, waits until its image shows
// lastOffset, runs check (if any), and stops it.
func shellLoad(ctx context.Context, tools *kafkatest.Offline, jvm []string, snapshot string, lastOffset int64, check func(*kafkatest.Shell) error) (shellRun, error) {
	sh, err := tools.StartShell(ctx, jvm, snapshot)
	if err != nil {
		return shellRun{}, err
	}
	img, err := sh.WaitImage(ctx, lastOffset)
	if err == nil && check != nil {
		err = check(sh)
	}
	sh.Close()
	return shellRun{loading: sh.Loading, caughtUp: sh.CaughtUp, image: img, cpu: sh.CPU()}, err
}

// checkShell proves that Kafka read the whole large snapshot: every topic is listed,
// and the last partition of the last topic is the one written.
func checkShell(ctx context.Context, sh *kafkatest.Shell, c *metagen.Config) error {
	out, err := sh.Run(ctx, "ls /image/topics/byName")
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, n := range strings.Fields(out) {
		names[n] = true
	}
	for t := range c.Topics {
		if !names[c.TopicName(t)] {
			return fmt.Errorf("kafka-metadata-shell lists %d topics and not %s", len(names), c.TopicName(t))
		}
	}
	t, p := c.Topics-1, c.Partitions-1
	out, err = sh.Run(ctx, fmt.Sprintf("cat /image/topics/byName/%s/%d", c.TopicName(t), p))
	if err != nil {
		return err
	}
	rs := strings.ReplaceAll(fmt.Sprint(c.Replicas(nil, t, p)), " ", ", ")
	if want := fmt.Sprintf("PartitionRegistration(replicas=%s, directories=[%s", rs, c.Directory(c.Replicas(nil, t, p)[0])); !strings.Contains(out, want) {
		return fmt.Errorf("kafka-metadata-shell shows %s-%d as %q, want it to start with %q", c.TopicName(t), p, strings.TrimSpace(out), want)
	}
	return nil
}

// oneshot times the non-interactive form, `kafka-metadata-shell --snapshot FILE tree
// /image/provenance`, and shows what it printed: Kafka's shell runs the command as
// soon as its loader caught up, before its own image is published.
func oneshot(ctx context.Context, tools *kafkatest.Offline, jvm []string, snapshot string, lastOffset int64) error {
	cmd, err := tools.ShellCommand(jvm, snapshot, "tree", "/image/provenance")
	if err != nil {
		return err
	}
	cmd.Stderr = io.Discard
	start := time.Now()
	out, err := outputCtx(ctx, cmd)
	elapsed := time.Since(start)
	if err != nil {
		return fmt.Errorf("kafka-metadata-shell tree /image/provenance: %w", err)
	}
	var prov string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "offset ") {
			prov = line
		}
	}
	note := "the whole snapshot"
	if !strings.HasPrefix(prov, fmt.Sprintf("offset %d,", lastOffset)) {
		note = fmt.Sprintf("NOT the snapshot (its last record is at offset %d): the command ran before the shell published its image", lastOffset)
	}
	fmt.Printf("one-shot `kafka-metadata-shell --snapshot <large> tree /image/provenance`: %v wall, printed %q: %s\n", rnd(elapsed), prov, note)
	return nil
}

func outputCtx(ctx context.Context, cmd *exec.Cmd) (string, error) {
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		kafkatest.KillGroup(cmd)
		<-done
		return out.String(), ctx.Err()
	}
}

// fastest is the least of f over xs, 0 for none.
func fastest[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := f(xs[0])
	for _, x := range xs[1:] {
		m = min(m, f(x))
	}
	return m
}

func median[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func javaVersion() string {
	out, err := exec.Command("java", "-version").CombinedOutput()
	if err != nil {
		return "java: " + err.Error()
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "version") {
			return strings.TrimSpace(line)
		}
	}
	return strings.TrimSpace(string(out))
}

func mb(n int64) float64                { return float64(n) / 1e6 }
func dur(ns int64) time.Duration        { return time.Duration(ns).Round(time.Millisecond) }
func rnd(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// writeMemProfile writes the allocation profile of -memprofile, if asked for.
func writeMemProfile(o *options) {
	if o.memprofile == "" {
		return
	}
	f, err := os.Create(o.memprofile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "metabench:", err)
		return
	}
	defer f.Close()
	runtime.GC() // the profile shows what the last GC saw
	pprof.Lookup("allocs").WriteTo(f, 0)
}

// shellTools are the offline tools of Kafka version, which must publish
// kafka-metadata-shell.
func shellTools(version string) (*kafkatest.Offline, error) {
	tools, err := kafkatest.Tools(version)
	if err != nil {
		return nil, err
	}
	if !tools.HasShell() {
		return nil, fmt.Errorf("no kafka-metadata-shell is published for Kafka %s; use KAFKA_VERSION=%s", version, kafkatest.DefaultVersion)
	}
	return tools, nil
}

// workDir is -dir, or a new temporary directory named after pattern.
func workDir(o *options, pattern string) (string, error) {
	if o.dir != "" {
		return o.dir, nil
	}
	return os.MkdirTemp("", pattern)
}
