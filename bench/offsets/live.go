package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// Live targets, checked on the last -bin.
const (
	targetCeiling   = 0.9  // the broker's commit ceiling with kraftwatch reading / without
	targetLiveCPU   = 1000 // ns of kraftwatch CPU per record read live
	targetLatencyMs = 20   // ms: firehose median latency minus quiet median
)

// liveConfig is what a live round needs.
type liveConfig struct {
	phase      time.Duration // length of one firehose
	samples    int           // partition adds per load (quiet, firehose)
	writers    int           // goroutines sending OffsetCommit requests
	groups     int           // member-less groups committing
	topicParts int           // offsets per OffsetCommit request
	dir        string
}

// live is one firehose: without kraftwatch (bin "none") or with one reading.
type live struct {
	commits     float64 // offset commits (records) per second the broker took
	brokerCPU   float64 // broker CPU ns per commit
	kwCPU       float64 // kraftwatch CPU ns per record it read (0 without)
	lag         float64 // kraftwatch's records lag at the end of the firehose
	quiet, busy []time.Duration
}

const latencyTopic = "offsets-bench-latency"

// liveRounds runs count rounds; in each, a firehose without kraftwatch (the anchor)
// and one with each binary, in rotating order. With a binary, samples partition adds
// are timed quiet before its firehose and samples during it: from the
// CreatePartitions request to kraftwatch's "rebalance needed" line for the latency
// group, a KIP-848 group of one Java member reading latencyTopic. It prints a
// benchmark line per firehose and latency sample set.
func liveRounds(ctx context.Context, c *kafkatest.Cluster, bins []string, count int, cfg liveConfig) (map[string][]live, error) {
	client := &kafka.Client{Addr: kafka.TCP(c.Bootstrap()), Timeout: 30 * time.Second}
	for attempt := 1; ; attempt++ { // the broker may have just restarted
		res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: latencyTopic, NumPartitions: 1, ReplicationFactor: 1}}})
		if err == nil {
			err = res.Errors[latencyTopic]
		}
		if err == nil {
			break
		}
		if attempt == 20 {
			return nil, err
		}
		time.Sleep(500 * time.Millisecond)
	}
	m, err := c.StartMembersInOneJVM(ctx, "offsets-bench-latency", kafkatest.KindConsumer, []string{latencyTopic}, 1)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if _, err := m.WaitFor(ctx, "assigned "); err != nil {
		return nil, err
	}
	broker, err := brokerPID(c.Nodes[0])
	if err != nil {
		return nil, err
	}
	partitions := 1
	results := map[string][]live{}
	sides := append([]string{"none="}, bins...)
	for round := range count {
		for i := range sides {
			name, path, _ := strings.Cut(sides[(i+round)%len(sides)], "=")
			var l live
			if path == "" {
				l, err = firehose(ctx, client, broker, nil, cfg, nil)
			} else {
				l, err = liveKraftwatch(ctx, c, client, broker, path, filepath.Join(cfg.dir, fmt.Sprintf("live-%s-%d", name, round)), cfg, &partitions)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			fmt.Printf("BenchmarkOffsetsLive/bin=%s 1 %.0f commits/s %.0f broker-cpu-ns/commit", name, l.commits, l.brokerCPU)
			if path != "" {
				fmt.Printf(" %.1f cpu-ns/record %.0f lag-records", l.kwCPU, l.lag)
			}
			fmt.Println()
			for _, s := range []struct {
				load string
				ds   []time.Duration
			}{{"quiet", l.quiet}, {"firehose", l.busy}} {
				for _, d := range s.ds {
					fmt.Printf("BenchmarkOffsetsLatency/bin=%s/load=%s 1 %d ns/op\n", name, s.load, d.Nanoseconds())
				}
			}
			results[name] = append(results[name], l)
		}
	}
	return results, nil
}

// liveKraftwatch starts bin, waits for it to catch up, times cfg.samples partition
// adds quiet, then runs a firehose with as many adds spread over it; then stops it.
func liveKraftwatch(ctx context.Context, c *kafkatest.Cluster, client *kafka.Client, broker int, bin, dir string, cfg liveConfig, partitions *int) (live, error) {
	kw, err := startKraftwatch(ctx, c, bin, dir)
	if err != nil {
		return live{}, err
	}
	defer kw.stop()
	if _, err := kw.caughtUp(); err != nil {
		return live{}, err
	}
	// Let the start-up announcements pass, so that each decision read is a sample's.
	time.Sleep(time.Second)
	for len(kw.decided) > 0 {
		<-kw.decided
	}
	var quiet []time.Duration
	for range cfg.samples {
		d, err := addPartition(ctx, client, kw, partitions)
		if err != nil {
			return live{}, err
		}
		quiet = append(quiet, d)
		time.Sleep(200 * time.Millisecond)
	}
	var busy []time.Duration
	var sampleErr error
	l, err := firehose(ctx, client, broker, kw, cfg, func(ctx context.Context) {
		// After a second of warm-up, spread over the firehose's first 80 %.
		gap := cfg.phase * 8 / 10 / time.Duration(cfg.samples+1)
		for i := range cfg.samples {
			if !sleepCtx(ctx, max(time.Second, gap)) {
				sampleErr = fmt.Errorf("%d of %d partition adds in the firehose; make -live longer", i, cfg.samples)
				return
			}
			d, err := addPartition(ctx, client, kw, partitions)
			if err != nil {
				sampleErr = err
				return
			}
			busy = append(busy, d)
		}
	})
	if err == nil {
		err = sampleErr
	}
	l.quiet, l.busy = quiet, busy
	return l, err
}

// addPartition adds a partition to latencyTopic and returns the time from the request
// to kraftwatch's "rebalance needed" line for the latency group (its own clock).
func addPartition(ctx context.Context, client *kafka.Client, kw *kraftwatch, partitions *int) (time.Duration, error) {
	*partitions++
	start := time.Now()
	res, err := client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: latencyTopic, Count: int32(*partitions)}}})
	if err == nil {
		err = res.Errors[latencyTopic]
	}
	if err != nil {
		return 0, fmt.Errorf("add partition %d to %s: %w", *partitions, latencyTopic, err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case d := <-kw.decided:
			if d.group == "offsets-bench-latency" && !d.at.Before(start) {
				return d.at.Sub(start), nil
			}
		case tail := <-kw.ended:
			return 0, fmt.Errorf("kraftwatch ended:\n%s", tail)
		case <-timeout:
			return 0, fmt.Errorf("no decision for the latency group 30 s after partition %d was added", *partitions)
		}
	}
}

// firehose sends OffsetCommit requests from cfg.writers goroutines for cfg.phase and
// measures the commits the broker took per second and its CPU per commit; with kw, the
// CPU kraftwatch spent per record it read and its lag at the end. during, when set,
// runs beside the writers until the phase ends.
func firehose(ctx context.Context, client *kafka.Client, broker int, kw *kraftwatch, cfg liveConfig, during func(context.Context)) (live, error) {
	const topic = "offsets-bench"
	phase, cancel := context.WithTimeout(ctx, cfg.phase)
	defer cancel()
	// The writers' requests use ctx: one in flight when the phase ends completes.
	var (
		commits atomic.Int64
		next    atomic.Int64
		errOnce sync.Once
		werr    error
		wg      sync.WaitGroup
	)
	var kwPID int
	var rec0 float64
	var kwCPU0 time.Duration
	if kw != nil {
		kwPID = kw.cmd.Process.Pid
		var err error
		if rec0, err = kw.metric("kraftwatch_group_records_total"); err != nil {
			return live{}, err
		}
		kwCPU0 = cpuTime(kwPID)
	}
	t0, cpu0 := time.Now(), cpuTime(broker)
	for range cfg.writers {
		wg.Go(func() {
			offsets := make([]kafka.OffsetCommit, cfg.topicParts)
			for phase.Err() == nil {
				i := int(next.Add(1))
				for p := range offsets {
					offsets[p] = kafka.OffsetCommit{Partition: p, Offset: int64(1_000_000 + i)}
				}
				if err := commit(ctx, client, fmt.Sprintf("offsets-%05d", i%cfg.groups), topic, offsets); err != nil {
					errOnce.Do(func() { werr = err })
					cancel()
					return
				}
				if phase.Err() == nil {
					commits.Add(int64(len(offsets)))
				}
			}
		})
	}
	if during != nil {
		wg.Go(func() { during(phase) })
	}
	<-phase.Done()
	elapsed, brokerCPU, n := time.Since(t0), cpuTime(broker)-cpu0, commits.Load()
	var l live
	var merr error
	if kw != nil {
		kwCPU := cpuTime(kwPID) - kwCPU0
		var rec float64
		rec, merr = kw.metric("kraftwatch_group_records_total")
		l.kwCPU = float64(kwCPU.Nanoseconds()) / (rec - rec0)
		if merr == nil {
			l.lag, merr = kw.metric("kraftwatch_group_records_lag")
		}
	}
	wg.Wait()
	if werr != nil {
		return live{}, werr
	}
	if merr != nil {
		return live{}, merr
	}
	l.commits = float64(n) / elapsed.Seconds()
	l.brokerCPU = float64(brokerCPU.Nanoseconds()) / float64(n)
	return l, nil
}

// metric reads one unlabelled series from kraftwatch's /metrics.
func (kw *kraftwatch) metric(name string) (float64, error) {
	res, err := http.Get("http://" + kw.httpAddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	s := bufio.NewScanner(res.Body)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("kraftwatch /metrics: no %s", name)
}

// brokerPID finds the JVM of node n by its server.properties on the command line.
func brokerPID(n *kafkatest.Node) (int, error) {
	props := filepath.Join(n.Dir, "server.properties")
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), props) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process runs %s", props)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// liveSummary prints the fastest and median commit ceiling of each side, the
// kraftwatch CPU per record and the latency medians, then checks the live targets on
// the last -bin.
func liveSummary(results map[string][]live, bins []string, target func(bool, string, ...any)) {
	// side is one side's figures over its rounds, each sorted.
	type side struct {
		ceiling, cpu, brokerCPU []float64
		quiet, busy             []time.Duration
	}
	sides := func(ls []live) side {
		var s side
		for _, l := range ls {
			s.ceiling, s.cpu, s.brokerCPU = append(s.ceiling, l.commits), append(s.cpu, l.kwCPU), append(s.brokerCPU, l.brokerCPU)
			s.quiet, s.busy = append(s.quiet, l.quiet...), append(s.busy, l.busy...)
		}
		slices.Sort(s.ceiling)
		slices.Sort(s.cpu)
		slices.Sort(s.brokerCPU)
		slices.Sort(s.quiet)
		slices.Sort(s.busy)
		return s
	}
	best := func(s []float64) float64 { return s[len(s)-1] }
	median := func(s []float64) float64 { return s[len(s)/2] }
	none := sides(results["none"])
	fmt.Printf("\nbroker commit ceiling without kraftwatch: best %.0f/s, median %.0f/s\n", best(none.ceiling), median(none.ceiling))
	var s side
	var name string
	for _, b := range bins {
		name, _, _ = strings.Cut(b, "=")
		s = sides(results[name])
		fmt.Printf("%s: ceiling best %.0f/s (%.3f× without), median %.0f/s (%.3f×); CPU per record %.0f–%.0f ns; broker CPU per commit %.0f–%.0f ns; rebalance-needed latency median quiet %v, firehose %v (%d samples each)\n",
			name, best(s.ceiling), best(s.ceiling)/best(none.ceiling), median(s.ceiling), median(s.ceiling)/median(none.ceiling),
			s.cpu[0], best(s.cpu), s.brokerCPU[0], best(s.brokerCPU),
			s.quiet[len(s.quiet)/2].Round(100*time.Microsecond), s.busy[len(s.busy)/2].Round(100*time.Microsecond), len(s.busy))
	}
	// The targets, on the last -bin.
	ratio := best(s.ceiling) / best(none.ceiling)
	target(ratio >= targetCeiling, "%s: broker's commit ceiling with it reading >= %.1f× without: %.3f×", name, targetCeiling, ratio)
	target(s.cpu[0] <= targetLiveCPU, "%s <= %d ns CPU per record live: %.0f ns", name, targetLiveCPU, s.cpu[0])
	diff := s.busy[len(s.busy)/2] - s.quiet[len(s.quiet)/2]
	target(diff <= targetLatencyMs*time.Millisecond, "%s: rebalance-needed latency during the firehose within %d ms of quiet (medians): %+.1f ms",
		name, targetLatencyMs, float64(diff)/float64(time.Millisecond))
}
