package main

// The leader-change burst benchmark (bench/burst.sh): a rolling
// restart moves the leader of every partition, written by metagen as a segment of
// -changes PartitionChangeRecords after the snapshot, once per -order (by default
// metagen.OrderRolling, the headline, and metagen.OrderSequential for comparison; the
// orders alternate within each round). In each round, in fresh processes:
//
//   - kraftwatch at load: observer.Load of the snapshot alone, then of the snapshot
//     and the segment; the burst is the difference (wall, CPU, bytes allocated per
//     change). Peak RSS of the second load (VmHWM) against the heap its image holds.
//   - kraftwatch live: an Observer started on the snapshot alone; once Ready, the
//     segment is linked into the directory (a long catch-up, as after a pause); the
//     burst is from the link until the update at the segment's last offset has been
//     published, and its allocations per change. Peak RSS against the image's heap.
//   - Kafka: kafka-metadata-shell on the snapshot and the segment joined into one file
//     (the same bytes: the segment's offsets continue the snapshot's), until its image
//     shows the file's last offset and the partition the last change moved has the
//     leader and epoch written. The burst is timed inside that one JVM, from its
//     loader's own log (loaderLog4j): from the moment Kafka's MetadataLoader applied
//     the snapshot's last batch to the moment it applied the segment's last. The
//     former anchor, the difference between the image shown in this run and in one on
//     the snapshot alone (two JVMs of 3-6 s each, so +-0.5 s of noise or more), is
//     printed beside it.
//
// It prints every figure with its ratio against its anchor and exits 1 when a target
// is missed: >= 5x Kafka's shell at load and live in every round (each round's Kafka
// loader against that round's kraftwatch, run back to back, so that a loaded moment
// slows both), <= 64 B allocated per change, peak RSS <= 1.5x the image's heap (live:
// in a third child, under a Go memory limit of -memory-limit times the image's heap,
// its CPU against the unlimited one's). The ratio of the fastest round of each side is
// printed beside it. The sequential segment is 5 times as long as the rolling one
// (-sequential-changes): its burst is that much faster, and 0.1 s is inside this
// machine's noise.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/observer"
)

// peakRSS is this process's peak resident set size (VmHWM), in bytes.
func peakRSS() int64 { return procStatus("VmHWM:") }

// rss is this process's resident set size now (VmRSS), in bytes: before a load, what
// the Go runtime and the binary hold without an image.
func rss() int64 { return procStatus("VmRSS:") }

// procStatus is a size in kB of /proc/self/status, in bytes; 0 when unknown.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// childLive runs an Observer on a copy of the snapshot's directory, and once it is
// ready links the segment in and waits for the update at its last offset.
func childLive(o *options) error {
	startRSS := rss()
	c, err := o.config()
	if err != nil {
		return err
	}
	src := o.childLive
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	var snap, seg string
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".checkpoint":
			snap = e.Name()
		case ".log":
			seg = e.Name()
		}
	}
	if snap == "" || seg == "" {
		return fmt.Errorf("%s: want a snapshot and a segment", src)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Dir(src)), "live-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "__cluster_metadata-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := os.Link(filepath.Join(src, snap), filepath.Join(dir, snap)); err != nil {
		return err
	}
	last := c.SnapshotEndOffset() + 1 + int64(o.changes) - 1 // a LeaderChange control record, then the changes
	done := make(chan struct{})
	var at time.Time
	var updates int64
	obs, err := observer.New(observer.Config{Dir: dir, LoadGC: loadGC(), Handler: func(u observer.Update) {
		if u.Reset {
			return
		}
		updates++
		if u.Provenance.Offset == last {
			at = time.Now()
			close(done)
		}
	}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- obs.Run(ctx) }()
	select {
	case <-obs.Ready():
	case <-time.After(o.timeout):
		return fmt.Errorf("observer not ready: %v", obs.LastError())
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var limit int64
	if o.memoryLimit > 0 {
		// The image's heap is what a GC just found live: the limit is a multiple of it,
		// as an operator would size a container for this cluster.
		limit = int64(o.memoryLimit * float64(before.HeapAlloc))
		debug.SetMemoryLimit(limit)
	}
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
	var peakLive atomic.Int64
	stopGC := afterEachGC(func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if v := int64(s[0].Value.Uint64()); v > peakLive.Load() {
			peakLive.Store(v)
		}
	})
	cpu0 := cpuTime()
	start := time.Now()
	if err := os.Link(filepath.Join(src, seg), filepath.Join(dir, seg)); err != nil {
		return err
	}
	select {
	case <-done:
	case <-time.After(o.timeout):
		return fmt.Errorf("no update at offset %d; image at %d: %v", last, obs.Image().Provenance().Offset, obs.LastError())
	}
	elapsed := at.Sub(start)
	cpu := cpuTime() - cpu0
	stopGC()
	pprof.StopCPUProfile()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	peak := peakRSS()
	im := obs.Image()
	writeMemProfile(o)
	cancel()
	<-runErr
	runtime.GC()
	runtime.GC()
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	r := loadResult{LoadNs: elapsed.Nanoseconds(), CPUNs: cpu.Nanoseconds(), HeapBytes: int64(end.HeapAlloc),
		AllocBytes: int64(alloc), PeakRSS: peak, StartRSS: startRSS, Partitions: int64(im.NumPartitions()), Records: im.Provenance().Offset + 1, Check: "ok",
		Updates: updates, PeakLiveHeap: peakLive.Load(), MemoryLimit: limit, GCs: after.NumGC - before.NumGC}
	if err := c.Check(im, o.changes); err != nil {
		r.Check = err.Error()
	}
	runtime.KeepAlive(im)
	return json.NewEncoder(os.Stdout).Encode(r)
}

// afterEachGC calls f on the finalizer goroutine after each garbage collection, until
// stop is called: a finalizer that sets itself again on the object it finalizes (one
// with a pointer, which the tiny allocator does not batch with others).
func afterEachGC(f func()) (stop func()) {
	type sentinel struct{ _ *int }
	var stopped atomic.Bool
	var fin func(*sentinel)
	fin = func(s *sentinel) {
		if stopped.Load() {
			return
		}
		f()
		runtime.SetFinalizer(s, fin)
	}
	runtime.SetFinalizer(&sentinel{}, fin)
	return func() { stopped.Store(true) }
}

// burstRound is one round's figures: the snapshot alone, then per order.
type burstRound struct {
	snap      loadResult
	shellSnap shellRun
	orders    []orderRound
}

type orderRound struct {
	// live is without a memory limit, limited under -memory-limit (when set).
	load, live, limited loadResult
	shellJ              shellRun
	replay              loaderReplay
}

// burstSegment is one order's segment and the same bytes joined to the snapshot for
// Kafka's shell, and the partition its last change moved, as written.
type burstSegment struct {
	order   metagen.Order
	changes int // leader changes in the segment (options.segmentChanges)
	dir     string
	files   metagen.Files
	joined  string
	last    lastChange
}

// lastChange is the partition the last change of a segment moved: its topic and
// index, and its leader and leader epoch after the segment.
type lastChange struct {
	topic         string
	partition     int
	leader, epoch int32
}

// lastChangeOf finds the partition the last of the first changes changes moved: the
// one whose count of moves differs after changes-1 changes.
func lastChangeOf(c *metagen.Config, changes int) (lastChange, error) {
	leaders, moves := c.LeadersAfter(changes)
	_, before := c.LeadersAfter(changes - 1)
	for k := range moves {
		if moves[k] != before[k] {
			return lastChange{topic: c.TopicName(k / c.Partitions), partition: k % c.Partitions, leader: leaders[k], epoch: moves[k]}, nil
		}
	}
	return lastChange{}, fmt.Errorf("no partition moved by change %d", changes)
}

// check asks the shell for the partition and fails unless it shows the leader and
// leader epoch written: the shell replayed the segment to its end.
func (l lastChange) check(ctx context.Context, sh *kafkatest.Shell) error {
	out, err := sh.Run(ctx, fmt.Sprintf("cat /image/topics/byName/%s/%d", l.topic, l.partition))
	if err != nil {
		return err
	}
	if !strings.Contains(out, fmt.Sprintf(" leader=%d,", l.leader)) || !strings.Contains(out, fmt.Sprintf(" leaderEpoch=%d,", l.epoch)) {
		return fmt.Errorf("kafka-metadata-shell shows %s-%d as %q, want leader=%d and leaderEpoch=%d (the segment's last change)",
			l.topic, l.partition, strings.TrimSpace(out), l.leader, l.epoch)
	}
	return nil
}

// loaderLog4j is the log4j2 configuration of the shell on the joined files: errors to
// stdout as log4j's default configuration logs them, and Kafka's metadata loader
// (org.apache.kafka.image.loader) at DEBUG into the file named by the system property
// kraftwatch.loaderlog, each line stamped with System.nanoTime (%N) and flushed as it
// is written. For every batch, MetadataBatchLoader logs "handleCommit: Generated a
// metadata delta between A and B from 1 batch(es) in T us." when it has replayed the
// batch ending at offset B (T: the replay), before applying it, and MetadataLoader
// then logs "maybePublishMetadata(LOG_DELTA): ..." once the image is applied (that it
// is still catching up, or at the last batch that it finished).
const loaderLog4j = `status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = %d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n
appender.loader.type = File
appender.loader.name = loader
appender.loader.fileName = ${sys:kraftwatch.loaderlog}
appender.loader.append = false
appender.loader.bufferedIO = true
appender.loader.immediateFlush = true
appender.loader.layout.type = PatternLayout
appender.loader.layout.pattern = %N %c{1} %m%n
rootLogger.level = error
rootLogger.appenderRef.out.ref = out
logger.loader.name = org.apache.kafka.image.loader
logger.loader.level = debug
logger.loader.additivity = false
logger.loader.appenderRef.loader.ref = loader
`

// loaderReplay is how long Kafka's loader took inside one JVM from applying the batch
// that ends at one offset to applying the batch that ends at another, read from the
// log of loaderLog4j.
type loaderReplay struct {
	elapsed time.Duration
	batches int // applied after the first, up to and including the last
	lines   int // log lines written in between
	// minGap is the shortest time between two lines in between: one line costs no
	// more, so lines*minGap bounds what the logging added to elapsed.
	minGap time.Duration
}

var deltaLine = regexp.MustCompile(`^handleCommit: Generated a metadata delta between -?\d+ and (\d+) from `)

// parseLoaderLog reads a loader log of loaderLog4j and times the replay from the
// batch ending at offset from to the batch ending at offset to, each when its image
// was applied.
func parseLoaderLog(r io.Reader, from, to int64) (loaderReplay, error) {
	var rep loaderReplay
	var t0, prev int64
	pending := int64(-1) // the last offset of the batch replayed and not yet applied
	started := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		stamp, rest, ok := strings.Cut(sc.Text(), " ")
		class, msg, ok2 := strings.Cut(rest, " ")
		t, err := strconv.ParseInt(stamp, 10, 64)
		if !ok || !ok2 || err != nil {
			return rep, fmt.Errorf("line %d: want <nanoTime> <logger> <message>, got %q", n, sc.Text())
		}
		// LogContext prefixes each message with "[MetadataLoader id=-1] ".
		if _, m, ok := strings.Cut(msg, "] "); ok {
			msg = m
		}
		if started {
			rep.lines++
			if gap := time.Duration(t - prev); rep.minGap == 0 || gap < rep.minGap {
				rep.minGap = gap
			}
		}
		prev = t
		switch {
		case class == "MetadataBatchLoader":
			if m := deltaLine.FindStringSubmatch(msg); m != nil {
				pending, _ = strconv.ParseInt(m[1], 10, 64)
			}
		case class == "MetadataLoader" && strings.HasPrefix(msg, "maybePublishMetadata(") && pending >= 0:
			switch {
			case pending == from:
				t0, started = t, true
			case started:
				rep.batches++
				if pending == to {
					rep.elapsed = time.Duration(t - t0)
					return rep, nil
				}
			}
			pending = -1
		}
	}
	if err := sc.Err(); err != nil {
		return rep, err
	}
	if !started {
		return rep, fmt.Errorf("no batch ending at offset %d applied", from)
	}
	return rep, fmt.Errorf("no batch ending at offset %d applied after the one ending at %d", to, from)
}

// readLoaderLog is parseLoaderLog of a file.
func readLoaderLog(path string, from, to int64) (loaderReplay, error) {
	f, err := os.Open(path)
	if err != nil {
		return loaderReplay{}, err
	}
	defer f.Close()
	rep, err := parseLoaderLog(f, from, to)
	if err != nil {
		return rep, fmt.Errorf("kafka's loader log %s: %w", path, err)
	}
	return rep, nil
}

func runBurst(o *options) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	orders, err := o.orders()
	if err != nil {
		return err
	}
	c, err := o.config()
	if err != nil {
		return err
	}
	var tools *kafkatest.Offline
	if o.shell {
		if tools, err = shellTools(o.version); err != nil {
			return err
		}
	}
	dir, err := workDir(o, "metabench-burst-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	fmt.Printf("== kraftwatch leader-change burst benchmark: %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("machine: %d CPUs, GOMAXPROCS %d, %s, load average %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), loadavg())
	jvm := append(strings.Fields(o.jvmOpts), "-Xmx"+o.xmx, "-Xms"+o.xmx)
	if o.shell {
		fmt.Printf("kafka:   %s, %s\nshell JVM options: %s\n", o.version, javaVersion(), strings.Join(jvm, " "))
	}
	start := time.Now()
	sf, err := metagen.WriteDir(filepath.Join(dir, "snap", "__cluster_metadata-0"), c, 0)
	if err != nil {
		return err
	}
	fmt.Printf("snapshot: %d topics x %d partitions = %d partitions, RF %d over %d brokers in %d racks: %.1f MB\n",
		c.Topics, c.Partitions, c.NumPartitions(), c.ReplicationFactor, c.Brokers, c.Racks, mb(sf.SnapshotStats.Bytes))
	tiny := c
	tiny.Topics, tiny.Partitions = 1, 1
	tf, err := metagen.WriteDir(filepath.Join(dir, "tiny", "__cluster_metadata-0"), tiny, 0)
	if err != nil {
		return err
	}
	var segs []burstSegment
	for _, ord := range orders {
		c.Order = ord
		s := burstSegment{order: ord, changes: o.segmentChanges(ord), dir: filepath.Join(dir, ord.String(), "__cluster_metadata-0")}
		if s.files, err = metagen.WriteDir(s.dir, c, s.changes); err != nil {
			return err
		}
		if s.last, err = lastChangeOf(&c, s.changes); err != nil {
			return err
		}
		// Kafka's shell reads one file: the snapshot and the segment joined.
		if o.shell {
			s.joined = filepath.Join(dir, ord.String()+"-joined", "__cluster_metadata-0", "joined.checkpoint")
			if err := joinFiles(s.joined, s.files.Snapshot, s.files.Segment); err != nil {
				return err
			}
		}
		st := s.files.SegmentStats
		fmt.Printf("segment %-10s %d leader changes (PartitionChangeRecord) in %d batches (%.0f records per batch): %.1f MB\n",
			ord.String()+":", s.changes, st.Batches-1, float64(st.Records)/float64(st.Batches-1), mb(st.Bytes))
		segs = append(segs, s)
	}
	fmt.Printf("  %s\n  %s\nwritten in %v\n\n", orderDoc[metagen.OrderRolling], orderDoc[metagen.OrderSequential], time.Since(start).Round(time.Millisecond))
	lastSnap := sf.SnapshotStats.LastOffset - 1 // before the footer
	log4j := filepath.Join(dir, "loader-log4j2.properties")
	if err := os.WriteFile(log4j, []byte(loaderLog4j), 0o644); err != nil {
		return err
	}

	var rounds []burstRound
	for round := range o.runs {
		fmt.Printf("round %d/%d (load average %s)\n", round+1, o.runs, loadavg())
		var r burstRound
		if r.snap, err = childRun(ctx, o, "-child-load", filepath.Dir(sf.Snapshot), 0); err != nil {
			return err
		}
		fmt.Printf("  kraftwatch snapshot load:      %8v (CPU %v), peak RSS %.0f MB, image heap %.0f MB\n",
			dur(r.snap.LoadNs), dur(r.snap.CPUNs), mb(r.snap.PeakRSS), mb(r.snap.HeapBytes))
		if o.shell {
			if r.shellSnap, err = shellLoad(ctx, tools, jvm, sf.Snapshot, lastSnap, nil); err != nil {
				return fmt.Errorf("kafka-metadata-shell on the snapshot: %w", err)
			}
			fmt.Printf("  kafka shell, snapshot:           caught up %8v, image %8v (CPU %v)\n", rnd(r.shellSnap.caughtUp), rnd(r.shellSnap.image), rnd(r.shellSnap.cpu))
		}
		for _, s := range segs {
			oo := *o
			oo.order = s.order.String()
			var or orderRound
			if or.load, err = childRun(ctx, &oo, "-child-load", s.dir, s.changes); err != nil {
				return err
			}
			oo.memoryLimit = 0
			if or.live, err = childRun(ctx, &oo, "-child-live", s.dir, s.changes); err != nil {
				return err
			}
			checked := []loadResult{r.snap, or.load, or.live}
			if o.memoryLimit > 0 {
				oo.memoryLimit = o.memoryLimit
				if or.limited, err = childRun(ctx, &oo, "-child-live", s.dir, s.changes); err != nil {
					return err
				}
				checked = append(checked, or.limited)
			}
			for _, l := range checked {
				if l.Check != "ok" {
					return fmt.Errorf("kraftwatch's image differs from what was written (%s): %s", s.order, l.Check)
				}
			}
			fmt.Printf("  %s:\n", s.order)
			fmt.Printf("    kraftwatch snapshot + segment: %8v (CPU %v), peak RSS %.0f MB, image heap %.0f MB: burst at load %v, %.0f B allocated per change\n",
				dur(or.load.LoadNs), dur(or.load.CPUNs), mb(or.load.PeakRSS), mb(or.load.HeapBytes),
				dur(or.load.LoadNs-r.snap.LoadNs), float64(or.load.AllocBytes-r.snap.AllocBytes)/float64(s.changes))
			fmt.Printf("    kraftwatch live:               %8v (CPU %v) from the segment's arrival to its last update, %.0f B allocated per change, peak RSS %.0f MB, image heap %.0f MB; %d updates, peak heap live after a GC %.0f MB\n",
				dur(or.live.LoadNs), dur(or.live.CPUNs), float64(or.live.AllocBytes)/float64(s.changes), mb(or.live.PeakRSS), mb(or.live.HeapBytes),
				or.live.Updates, mb(or.live.PeakLiveHeap))
			if l := or.limited; o.memoryLimit > 0 {
				fmt.Printf("    kraftwatch live, memory limit %.0f MB: %8v (CPU %v), %d GCs, peak RSS %.0f MB, image heap %.0f MB\n",
					mb(l.MemoryLimit), dur(l.LoadNs), dur(l.CPUNs), l.GCs, mb(l.PeakRSS), mb(l.HeapBytes))
			}
			if o.shell {
				logFile := filepath.Join(dir, fmt.Sprintf("loader-%s-%d.log", s.order, round+1))
				jvmJ := append(slices.Clip(jvm), "-Dlog4j2.configurationFile="+log4j, "-Dkraftwatch.loaderlog="+logFile)
				last := s.files.SegmentStats.LastOffset
				check := func(sh *kafkatest.Shell) error { return s.last.check(ctx, sh) }
				if or.shellJ, err = shellLoad(ctx, tools, jvmJ, s.joined, last, check); err != nil {
					return fmt.Errorf("kafka-metadata-shell on the snapshot and the %s segment: %w", s.order, err)
				}
				if or.replay, err = readLoaderLog(logFile, lastSnap, last); err != nil {
					return err
				}
				fmt.Printf("    kafka shell, snapshot + segment: caught up %8v, image %8v (CPU %v); %s-%d as written\n",
					rnd(or.shellJ.caughtUp), rnd(or.shellJ.image), rnd(or.shellJ.cpu), s.last.topic, s.last.partition)
				fmt.Printf("      burst in Kafka's loader:     %8v (%d batches applied, %d log lines at least %v apart)\n",
					rnd(or.replay.elapsed), or.replay.batches, or.replay.lines, or.replay.minGap.Round(100*time.Nanosecond))
				fmt.Printf("      burst as two JVMs' difference (the former anchor): %v\n", rnd(or.shellJ.image-r.shellSnap.image))
			}
			r.orders = append(r.orders, or)
		}
		rounds = append(rounds, r)
	}

	if err := startRSSCompared(ctx, o, filepath.Dir(tf.Snapshot)); err != nil {
		return err
	}
	var missed []string
	fmt.Printf("\n== results (medians of %d runs; load average now %s)\n", o.runs, loadavg())
	for i, s := range segs {
		missed = append(missed, burstResults(o, s, rounds, i)...)
	}
	if len(missed) > 0 {
		return fmt.Errorf("missed %d target(s): %s", len(missed), strings.Join(missed, "; "))
	}
	return nil
}

var orderDoc = map[metagen.Order]string{
	metagen.OrderRolling: "rolling: a rolling restart as Kafka's controller writes it: broker by broker, its controlled shutdown moves " +
		"the partitions it leads, topic by topic, in batches of <= 10,000, and the preferred leader election moves them back, spread over all topics, in batches of <= 1,000",
	metagen.OrderSequential: "sequential: partition after partition, topics in order: each batch of 100 touches one topic",
}

// burstResults prints one order's medians and targets and returns the missed ones.
func burstResults(o *options, s burstSegment, rounds []burstRound, i int) []string {
	sec := func(ns int64) float64 { return float64(ns) / 1e9 }
	med := func(f func(r burstRound, or orderRound) float64) float64 {
		return median(rounds, func(r burstRound) float64 { return f(r, r.orders[i]) })
	}
	perChange := func(b int64) float64 { return float64(b) / float64(s.changes) }
	atLoad := med(func(r burstRound, or orderRound) float64 { return sec(or.load.LoadNs - r.snap.LoadNs) })
	atLoadCPU := med(func(r burstRound, or orderRound) float64 { return sec(or.load.CPUNs - r.snap.CPUNs) })
	live := med(func(_ burstRound, or orderRound) float64 { return sec(or.live.LoadNs) })
	liveCPU := med(func(_ burstRound, or orderRound) float64 { return sec(or.live.CPUNs) })
	allocLoad := med(func(r burstRound, or orderRound) float64 { return perChange(or.load.AllocBytes - r.snap.AllocBytes) })
	allocLive := med(func(_ burstRound, or orderRound) float64 { return perChange(or.live.AllocBytes) })
	rssLoad := med(func(_ burstRound, or orderRound) float64 {
		return float64(or.load.PeakRSS) / float64(or.load.HeapBytes)
	})
	rssLive := med(func(_ burstRound, or orderRound) float64 {
		return float64(or.live.PeakRSS) / float64(or.live.HeapBytes)
	})
	above := func(l loadResult) float64 { return float64(l.PeakRSS-l.StartRSS) / float64(l.HeapBytes) }
	aboveLoad := med(func(_ burstRound, or orderRound) float64 { return above(or.load) })
	aboveLive := med(func(_ burstRound, or orderRound) float64 { return above(or.live) })
	startRSS := med(func(_ burstRound, or orderRound) float64 { return float64(or.load.StartRSS) / 1e6 })
	// The fastest of each side: at load the fastest load of snapshot + segment minus
	// the fastest of the snapshot alone, each a run that others can only slow down.
	least := func(f func(r burstRound, or orderRound) float64) float64 {
		m := math.Inf(1)
		for _, r := range rounds {
			m = min(m, f(r, r.orders[i]))
		}
		return m
	}
	minLoad := least(func(_ burstRound, or orderRound) float64 { return sec(or.load.LoadNs) }) -
		least(func(r burstRound, _ orderRound) float64 { return sec(r.snap.LoadNs) })
	minLive := least(func(_ burstRound, or orderRound) float64 { return sec(or.live.LoadNs) })
	fmt.Printf("%s order:\n", s.order)
	fmt.Printf("kraftwatch  %d changes at load:  %6.3f s (CPU %.3f s), %5.1f B allocated per change, peak RSS %.2fx the image's heap; fastest %.3f s\n",
		s.changes, atLoad, atLoadCPU, allocLoad, rssLoad, minLoad)
	fmt.Printf("kraftwatch  %d changes live:     %6.3f s (CPU %.3f s), %5.1f B allocated per change, peak RSS %.2fx the image's heap; fastest %.3f s\n",
		s.changes, live, liveCPU, allocLive, rssLive, minLive)
	fmt.Printf("  (peak RSS above the process's RSS at its start, %.0f MB without an image: %.2fx the image's heap at load, %.2fx live)\n",
		startRSS, aboveLoad, aboveLive)
	var loads []loadResult
	for _, r := range rounds {
		loads = append(loads, r.orders[i].load)
	}
	peakParts("  at load: ", loads)
	liveHeap := med(func(_ burstRound, or orderRound) float64 {
		return float64(or.live.PeakLiveHeap) / float64(or.live.HeapBytes)
	})
	updates := med(func(_ burstRound, or orderRound) float64 { return float64(or.live.Updates) })
	if liveHeap > 0 {
		fmt.Printf("  (live: %.0f updates; the most heap a GC found live was %.2fx the image's: mostly the image published before an update and\n"+
			"   the copy of the parts of it the update changes; GOGC=100 lets the heap grow to twice that before the next GC)\n", updates, liveHeap)
	} else {
		fmt.Printf("  (live: %.0f updates; no GC during the burst)\n", updates)
	}
	// Live peak RSS is bounded by the Go runtime's memory limit (kraftwatch sets it from
	// the container's), not by the image: its target is checked under the limit.
	rssTarget, rssRun := rssLive, "live"
	if o.memoryLimit > 0 {
		rssTarget = med(func(_ burstRound, or orderRound) float64 {
			return float64(or.limited.PeakRSS) / float64(or.limited.HeapBytes)
		})
		rssRun = fmt.Sprintf("live under a memory limit of %.1fx", o.memoryLimit)
		cpu := med(func(_ burstRound, or orderRound) float64 { return sec(or.limited.CPUNs) })
		fmt.Printf("kraftwatch  %d changes %s: %6.3f s (CPU %.3f s, %.2fx without the limit), %.0f GCs, peak RSS %.2fx the image's heap (%.2fx above the start)\n",
			s.changes, rssRun, med(func(_ burstRound, or orderRound) float64 { return sec(or.limited.LoadNs) }), cpu, cpu/liveCPU,
			med(func(_ burstRound, or orderRound) float64 { return float64(or.limited.GCs) }), rssTarget,
			med(func(_ burstRound, or orderRound) float64 { return above(or.limited) }))
	}
	var missed []string
	target := func(ok bool, format string, args ...any) {
		status := "ok  "
		if !ok {
			status = "MISS"
			missed = append(missed, s.order.String()+": "+fmt.Sprintf(format, args...))
		}
		fmt.Printf("  [%s] "+format+"\n", append([]any{status}, args...)...)
	}
	if o.shell {
		kReplay := med(func(_ burstRound, or orderRound) float64 { return or.replay.elapsed.Seconds() })
		minReplay := least(func(_ burstRound, or orderRound) float64 { return or.replay.elapsed.Seconds() })
		logging := med(func(_ burstRound, or orderRound) float64 {
			return (time.Duration(or.replay.lines) * or.replay.minGap).Seconds()
		})
		kImage := med(func(r burstRound, or orderRound) float64 { return (or.shellJ.image - r.shellSnap.image).Seconds() })
		kCaught := med(func(r burstRound, or orderRound) float64 {
			return (or.shellJ.caughtUp - r.shellSnap.caughtUp).Seconds()
		})
		kCPU := med(func(r burstRound, or orderRound) float64 { return (or.shellJ.cpu - r.shellSnap.cpu).Seconds() })
		fmt.Printf("kafka shell %d changes:          %6.3f s in its loader, one JVM (fastest %.3f s; its log lines took at most %.3f s of it)\n",
			s.changes, kReplay, minReplay, logging)
		fmt.Printf("  (the former anchor, two JVMs' difference: %.3f s to the image shown, loader caught up %.3f s, CPU %.3f s)\n", kImage, kCaught, kCPU)
		fmt.Printf("ratio kafka/kraftwatch, medians: at load %.1fx, live %.1fx (CPU, two JVMs' difference: %.1fx, %.1fx)\n",
			kReplay/atLoad, kReplay/live, kCPU/atLoadCPU, kCPU/liveCPU)
		fmt.Printf("ratio kafka/kraftwatch, the fastest round of each side: at load %.1fx, live %.1fx\n", minReplay/minLoad, minReplay/minLive)
		fmt.Println("targets (each round: Kafka's loader in that round against kraftwatch in that round):")
		// At load the burst is a difference of two runs; a noisy machine can make it <= 0,
		// and a ratio of such is no measurement: it counts as a miss.
		every := func(what string, burst func(r burstRound, or orderRound) float64) {
			lo, hi, at := math.Inf(1), 0.0, 0
			for k, r := range rounds {
				x := 0.0
				if b := burst(r, r.orders[i]); b > 0 {
					x = r.orders[i].replay.elapsed.Seconds() / b
				}
				if x < lo {
					lo, at = x, k
				}
				hi = max(hi, x)
			}
			b, note := burst(rounds[at], rounds[at].orders[i]), ""
			if b <= 0 {
				note = ": a difference <= 0 is noise, not a measurement"
			}
			target(lo >= 5, ">= 5x Kafka's shell %s in every round: %.2f-%.1fx (the lowest, round %d: %.3f s vs %.3f s)%s",
				what, lo, hi, at+1, rounds[at].orders[i].replay.elapsed.Seconds(), b, note)
		}
		every("at load", func(r burstRound, or orderRound) float64 { return sec(or.load.LoadNs - r.snap.LoadNs) })
		every("live", func(_ burstRound, or orderRound) float64 { return sec(or.live.LoadNs) })
	} else {
		fmt.Println("targets:")
	}
	target(allocLoad <= 64, "<= 64 B allocated per change at load: %.1f", allocLoad)
	target(allocLive <= 64, "<= 64 B allocated per change live: %.1f", allocLive)
	target(rssLoad <= 1.5, "peak RSS <= 1.5x the image's heap at load: %.2fx", rssLoad)
	target(rssTarget <= 1.5, "peak RSS <= 1.5x the image's heap %s: %.2fx", rssRun, rssTarget)
	return missed
}

// joinFiles writes the files one after the other into path.
func joinFiles(path string, files ...string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, name := range files {
		in, err := os.Open(name)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// memClasses is the Go runtime's memory (runtime/metrics /memory/classes), mapped and
// not released to the OS: at most what of it is resident.
type memClasses struct {
	HeapObjects int64 `json:"heap_objects"` // live objects and garbage not yet swept
	HeapSpare   int64 `json:"heap_spare"`   // spans free, and the unused room of those in use
	Metadata    int64 `json:"metadata"`     // the runtime's own: GC metadata, spans, mcaches
	Other       int64 `json:"other"`        // stacks, profiling buckets, the rest
}

// memClassNames are the runtime/metrics names readMemClasses reads, in its order.
var memClassNames = [...]string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes", "/memory/classes/heap/free:bytes",
	"/memory/classes/metadata/other:bytes", "/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/mspan/free:bytes", "/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes",
	"/memory/classes/profiling/buckets:bytes", "/memory/classes/other:bytes",
}

// readMemClasses reads memClasses now.
func readMemClasses() memClasses {
	s := make([]metrics.Sample, len(memClassNames))
	for i, n := range memClassNames {
		s[i].Name = n
	}
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	return memClasses{HeapObjects: v(0), HeapSpare: v(1) + v(2), Metadata: v(3) + v(4) + v(5) + v(6) + v(7),
		Other: v(8) + v(9) + v(10) + v(11)}
}

// peakParts prints what a load's peak RSS is made of (the medians of loads): the RSS
// at the start (the binary's pages, the runtime), and the runtime's memory as the
// load ended, where its peak is; and the peak less the heap's objects beyond the
// image, what no buffer or garbage of the load would leave.
func peakParts(indent string, loads []loadResult) {
	m := func(f func(l loadResult) int64) float64 {
		return median(loads, func(l loadResult) float64 { return float64(f(l)) })
	}
	peak, start, file := m(func(l loadResult) int64 { return l.PeakRSS }), m(func(l loadResult) int64 { return l.StartRSS }), m(func(l loadResult) int64 { return l.StartFileRSS })
	heap, objects := m(func(l loadResult) int64 { return l.HeapBytes }), m(func(l loadResult) int64 { return l.End.HeapObjects })
	spare, meta, other := m(func(l loadResult) int64 { return l.End.HeapSpare }), m(func(l loadResult) int64 { return l.End.Metadata }), m(func(l loadResult) int64 { return l.End.Other })
	if heap <= 0 || objects <= 0 {
		return
	}
	f := func(b float64) float64 { return b / 1e6 }
	fmt.Printf("%speak RSS %.1f MB: at the start %.1f MB (%.1f MB of it the binary's file-backed pages); as the load ended the heap's objects %.1f MB\n"+
		"%s  (the image %.1f MB, %.1f MB more: buffers and garbage not yet collected), spans' spare room %.1f MB, runtime metadata %.1f MB, stacks and other %.1f MB\n",
		indent, f(peak), f(start), f(file), f(objects), indent, f(heap), f(objects-heap), f(spare), f(meta), f(other))
	fmt.Printf("%s  the peak less the objects beyond the image, %.1f MB, would be %.2fx the image's heap\n", indent, f(peak-(objects-heap)), (peak-(objects-heap))/heap)
}

// startRSSCompared prints the peak RSS of metabench's load child and of the kraftwatch
// binary (-kraftwatch: kraftwatch hashes, under GNU time) on the one-partition
// snapshot in dir: what each process holds without an image, so whether the RSS the
// children start with, counted in their peak, is what kraftwatch would hold.
func startRSSCompared(ctx context.Context, o *options, dir string) error {
	l, err := childRun(ctx, o, "-child-load", dir, 0)
	if err != nil {
		return err
	}
	if o.kraftwatch == "" {
		fmt.Printf("one-partition snapshot: metabench's load child peaks at %.1f MB RSS (%.1f MB file-backed at its start); -kraftwatch BIN compares kraftwatch's own\n",
			mb(l.PeakRSS), mb(l.StartFileRSS))
		return nil
	}
	// GNU time, as the rusage of a child of this process would count this process's
	// RSS too: a child forked with the parent's memory keeps its peak across exec.
	tm, err := exec.LookPath("time")
	if err != nil {
		fmt.Printf("one-partition snapshot: metabench's load child peaks at %.1f MB RSS; no GNU time to measure kraftwatch's own\n", mb(l.PeakRSS))
		return nil
	}
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, tm, "-f", "maxrss %M", o.kraftwatch, "hashes", dir)
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		return fmt.Errorf("%s -f 'maxrss %%M' %s hashes %s: %w: %s", tm, o.kraftwatch, dir, err, stderr.String())
	}
	var kb int64
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if _, err := fmt.Sscanf(lines[len(lines)-1], "maxrss %d", &kb); err != nil {
		return fmt.Errorf("%s: want GNU time's %q, got %q", tm, "maxrss %M", stderr.String())
	}
	kw := kb << 10
	fmt.Printf("one-partition snapshot: peak RSS of kraftwatch hashes %.1f MB, of metabench's load child %.1f MB (%.1f MB file-backed at its start):\n"+
		"  kraftwatch's own process holds %.1f MB %s without an image than the children whose peak RSS is counted here\n",
		mb(kw), mb(l.PeakRSS), mb(l.StartFileRSS), math.Abs(mb(kw-l.PeakRSS)), map[bool]string{true: "more", false: "less"}[kw >= l.PeakRSS])
	return nil
}
