// Command offsets measures kraftwatch's start-up replay of __consumer_offsets against
// a real one-node Kafka (bench/offsets.sh runs it). It writes a realistic mix once:
// offset commits of member-less groups (OffsetCommit with generation -1, as
// tools and Flink-style committers send them, the bulk of a real topic) plus a few
// KIP-848 consumer groups of Kafka's Java client (their group, assignment and offset
// records). Then, in each round, it restarts the broker and reads from its server.log
// how long the group coordinator took to load the same partitions (the anchor, its
// "Finished loading" lines), and starts each kraftwatch binary given (-bin, in
// rotating order) on the cluster: wall time and CPU time from its "reading group
// records" log line to its "group records caught up" line, records/s, CPU per
// record and peak RSS. Then live rounds (live.go): the broker's commit ceiling under a
// firehose of OffsetCommit requests without kraftwatch and with each binary reading,
// kraftwatch's CPU per record, and the latency of a partition add to its decision,
// quiet and during the firehose. Each figure is printed as a Go benchmark line for
// benchstat (-col /bin).
//
//	go run ./bench/offsets -bin after=/tmp/kw -count 6
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

type binFlag []string

func (b *binFlag) String() string     { return strings.Join(*b, ",") }
func (b *binFlag) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	var (
		bins       binFlag
		records    = flag.Int("records", 1_000_000, "offset-commit records to write (member-less groups)")
		groups     = flag.Int("groups", 10_000, "member-less groups committing")
		topicParts = flag.Int("topic-partitions", 50, "partitions of the topic the groups commit offsets of (records per commit)")
		consumers  = flag.Int("consumer-groups", 3, "KIP-848 consumer groups (Java members, 2 per group)")
		offsetsN   = flag.Int("offsets-partitions", 6, "partitions of __consumer_offsets")
		count      = flag.Int("count", 6, "start-up replay rounds (0: none)")
		liveCount  = flag.Int("live-count", 3, "live rounds (0: none)")
		phase      = flag.Duration("live", 20*time.Second, "length of one firehose of OffsetCommit requests")
		samples    = flag.Int("samples", 5, "partition adds timed per live round, quiet and during the firehose each")
		writers    = flag.Int("writers", 16, "goroutines sending OffsetCommit requests in a firehose")
		dir        = flag.String("dir", "", "directory of the cluster (default a temporary one, removed at the end)")
	)
	flag.Var(&bins, "bin", "NAME=PATH of a kraftwatch binary to measure (repeatable)")
	flag.Parse()
	if len(bins) == 0 {
		log.Fatal("offsets: no -bin NAME=PATH")
	}
	ctx := context.Background()
	if *dir == "" {
		d, err := os.MkdirTemp("", "kraftwatch-offsets-bench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	c, err := kafkatest.Start(ctx, filepath.Join(*dir, "kafka"), kafkatest.Options{Props: map[string]string{
		"offsets.topic.num.partitions": strconv.Itoa(*offsetsN),
		"num.io.threads":               "4",
	}}, log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if err := generate(ctx, c, *records, *groups, *topicParts, *consumers); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote the mix in %v", time.Since(start).Round(time.Millisecond))

	results := map[string][]replay{}
	for round := range *count {
		coord, err := coordinatorLoad(ctx, c)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("BenchmarkOffsetsReplay/bin=kafka-coordinator 1 %d ns/op %.0f records/s\n", coord.wall.Nanoseconds(), coord.rate())
		results["kafka-coordinator"] = append(results["kafka-coordinator"], coord)
		for i := range bins {
			name, path, _ := strings.Cut(bins[(i+round)%len(bins)], "=")
			r, err := runKraftwatch(ctx, c, path, filepath.Join(*dir, fmt.Sprintf("kw-%s-%d", name, round)))
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			fmt.Printf("BenchmarkOffsetsReplay/bin=%s 1 %d ns/op %.0f records/s %.1f cpu-ns/record %d peak-RSS-B\n",
				name, r.wall.Nanoseconds(), r.rate(), float64(r.cpu.Nanoseconds())/float64(r.records), r.rss)
			results[name] = append(results[name], r)
		}
	}
	var lives map[string][]live
	if *liveCount > 0 {
		lives, err = liveRounds(ctx, c, bins, *liveCount, liveConfig{phase: *phase, samples: *samples, writers: *writers,
			groups: *groups, topicParts: *topicParts, dir: *dir})
		if err != nil {
			log.Fatal(err)
		}
	}
	ok := true
	target := func(met bool, format string, args ...any) {
		verdict := "met"
		if !met {
			verdict, ok = "MISSED", false
		}
		fmt.Printf("target %s: "+format+"\n", append([]any{verdict}, args...)...)
	}
	if *count > 0 {
		summary(results, bins, target)
	}
	if *liveCount > 0 {
		liveSummary(lives, bins, target)
	}
	if !ok {
		os.Exit(1)
	}
}

// replay is one measured load of the partitions.
type replay struct {
	wall, cpu time.Duration
	records   int64
	rss       int64
}

func (r replay) rate() float64 { return float64(r.records) / r.wall.Seconds() }

// Targets, checked on the last -bin's fastest run.
const (
	targetRate     = 3e6 // records/s
	targetVsKafka  = 5   // × the coordinator's load
	targetCPUPerOp = 400 // ns of CPU per record
)

// summary prints the fastest and median of each side and the ratios to the
// coordinator's load (fastest against fastest: other work only slows a run down),
// then the targets on the last -bin.
func summary(results map[string][]replay, bins []string, target func(bool, string, ...any)) {
	best := func(rs []replay) (fast, median replay) {
		s := slices.Clone(rs)
		slices.SortFunc(s, func(a, b replay) int { return int(a.wall - b.wall) })
		return s[0], s[len(s)/2]
	}
	coord, coordMed := best(results["kafka-coordinator"])
	fmt.Printf("\ncoordinator load: fastest %v, median %v, %d records\n", coord.wall.Round(time.Millisecond), coordMed.wall.Round(time.Millisecond), coord.records)
	for _, b := range bins {
		name, _, _ := strings.Cut(b, "=")
		f, m := best(results[name])
		fmt.Printf("%s: fastest %v (%.2f M records/s, %.0f ns CPU/record, peak RSS %.1f MB), median %v; %.2f× the coordinator's load (median %.2f×); %d records\n",
			name, f.wall.Round(time.Millisecond), f.rate()/1e6, float64(f.cpu.Nanoseconds())/float64(f.records), float64(f.rss)/1e6,
			m.wall.Round(time.Millisecond), coord.wall.Seconds()/f.wall.Seconds(), coordMed.wall.Seconds()/m.wall.Seconds(), f.records)
	}
	name, _, _ := strings.Cut(bins[len(bins)-1], "=")
	f, _ := best(results[name])
	target(f.rate() >= targetRate, "%s replays >= %.0f M records/s: %.2f M", name, targetRate/1e6, f.rate()/1e6)
	target(coord.wall.Seconds()/f.wall.Seconds() >= targetVsKafka, "%s >= %d× the coordinator's load: %.2f×", name, targetVsKafka, coord.wall.Seconds()/f.wall.Seconds())
	cpu := float64(f.cpu.Nanoseconds()) / float64(f.records)
	target(cpu <= targetCPUPerOp, "%s <= %d ns CPU per record: %.0f ns", name, targetCPUPerOp, cpu)
}

// generate writes records offset commits from groups member-less groups, each commit
// one offset per partition of a topic of topicParts partitions, and starts consumers
// KIP-848 groups of two Java members on the same topic, which leave at the end.
func generate(ctx context.Context, c *kafkatest.Cluster, records, groups, topicParts, consumers int) error {
	const topic = "offsets-bench"
	client := &kafka.Client{Addr: kafka.TCP(c.Bootstrap()), Timeout: 30 * time.Second}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: topicParts, ReplicationFactor: 1}}})
	if err != nil {
		return err
	}
	if err := res.Errors[topic]; err != nil {
		return err
	}
	var members []*kafkatest.Member
	defer func() {
		for _, m := range members {
			m.Close()
		}
	}()
	for g := range consumers {
		m, err := c.StartMembersInOneJVM(ctx, fmt.Sprintf("kip848-%d", g), kafkatest.KindConsumer, []string{topic}, 2)
		if err != nil {
			return err
		}
		members = append(members, m)
	}
	for _, m := range members {
		if _, err := m.WaitFor(ctx, "assigned "); err != nil {
			return err
		}
	}
	commits := records / topicParts
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			offsets := make([]kafka.OffsetCommit, topicParts)
			for {
				i := int(next.Add(1)) - 1
				if i >= commits {
					return
				}
				for p := range offsets {
					offsets[p] = kafka.OffsetCommit{Partition: p, Offset: int64(i/groups + 1)}
				}
				for attempt := 1; ; attempt++ {
					err := commit(ctx, client, fmt.Sprintf("offsets-%05d", i%groups), topic, offsets)
					if err == nil {
						break
					}
					if attempt == 50 || !errors.Is(err, kafka.NotCoordinatorForGroup) && !errors.Is(err, kafka.GroupCoordinatorNotAvailable) && !errors.Is(err, kafka.GroupLoadInProgress) {
						errs <- err
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func commit(ctx context.Context, client *kafka.Client, group, topic string, offsets []kafka.OffsetCommit) error {
	res, err := client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1, Topics: map[string][]kafka.OffsetCommit{topic: offsets}})
	if err != nil {
		return err
	}
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			return fmt.Errorf("group %s partition %d: %w", group, p.Partition, p.Error)
		}
	}
	return nil
}

// loadedRE is the coordinator's line once it has loaded a partition
// (CoordinatorRuntime, Kafka 4.x), after log4j's "[date time,ms] INFO ".
var loadedRE = regexp.MustCompile(`^\[(\S+ \S+)\] INFO .*Finished loading of metadata from __consumer_offsets-\d+ with epoch \d+ in (\d+)ms .* Loaded (\d+) records`)

// coordinatorLoad restarts the broker and measures, from the server.log lines it
// appends, how long its group coordinator took to load every __consumer_offsets
// partition: from the earliest start (a line's time minus its duration) to the last
// line, and the records it loaded.
func coordinatorLoad(ctx context.Context, c *kafkatest.Cluster) (replay, error) {
	n := c.Nodes[0]
	logFile := filepath.Join(n.Dir, "server.log")
	fi, err := os.Stat(logFile)
	if err != nil {
		return replay{}, err
	}
	if err := n.Restart(ctx, nil); err != nil {
		return replay{}, err
	}
	want := partitions(ctx, c)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		f, err := os.Open(logFile)
		if err != nil {
			return replay{}, err
		}
		var first, last time.Time
		var r replay
		found := 0
		if _, err := f.Seek(min(fi.Size(), fileSize(f)), 0); err == nil {
			s := bufio.NewScanner(f)
			s.Buffer(nil, 1<<20)
			for s.Scan() {
				m := loadedRE.FindStringSubmatch(s.Text())
				if m == nil {
					continue
				}
				end, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
				if err != nil {
					f.Close()
					return replay{}, fmt.Errorf("server.log: %v", err)
				}
				ms, _ := strconv.Atoi(m[2])
				recs, _ := strconv.ParseInt(m[3], 10, 64)
				if start := end.Add(-time.Duration(ms) * time.Millisecond); first.IsZero() || start.Before(first) {
					first = start
				}
				if end.After(last) {
					last = end
				}
				r.records += recs
				found++
			}
		}
		f.Close()
		if found >= want && want > 0 {
			r.wall = last.Sub(first)
			return r, nil
		}
		if time.Now().After(deadline) {
			return replay{}, fmt.Errorf("coordinator: %d of %d partitions loaded after 2 minutes", found, want)
		}
	}
}

func fileSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// partitions is the partition count of __consumer_offsets, 0 when unknown.
func partitions(ctx context.Context, c *kafkatest.Cluster) int {
	client := &kafka.Client{Addr: kafka.TCP(c.Bootstrap()), Timeout: 10 * time.Second}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"__consumer_offsets"}})
	if err != nil || len(md.Topics) != 1 {
		return 0
	}
	return len(md.Topics[0].Partitions)
}

// runKraftwatch starts bin on the cluster and measures its start-up replay: from its
// "reading group records" log line to its "group records caught up" line, read as they
// are written; then stops it.
func runKraftwatch(ctx context.Context, c *kafkatest.Cluster, bin, dir string) (replay, error) {
	kw, err := startKraftwatch(ctx, c, bin, dir)
	if err != nil {
		return replay{}, err
	}
	defer kw.stop()
	return kw.caughtUp()
}

// kraftwatch is a running kraftwatch process (disk mode, embedded NATS) whose log
// lines are read as they are written.
type kraftwatch struct {
	cmd      *exec.Cmd
	httpAddr string
	replayed chan replay   // the start-up replay, once caught up
	decided  chan decision // its "rebalance needed" lines
	ended    chan string   // its last lines, once its output ends
}

// decision is a "rebalance needed" log line: the group and the line's time.
type decision struct {
	group string
	at    time.Time
}

func startKraftwatch(ctx context.Context, c *kafkatest.Cluster, bin, dir string) (*kraftwatch, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	kw := &kraftwatch{
		cmd:      exec.CommandContext(ctx, bin, "run"),
		httpAddr: "127.0.0.1:" + strconv.Itoa(freePort()),
		replayed: make(chan replay, 1),
		decided:  make(chan decision, 1024),
		ended:    make(chan string, 1),
	}
	kw.cmd.Env = []string{
		"KRAFTWATCH_METADATA_LOG_DIR=" + c.Nodes[0].LogDir,
		"KRAFTWATCH_BOOTSTRAP_SERVERS=" + c.Bootstrap(),
		"KRAFTWATCH_HTTP_ADDR=" + kw.httpAddr,
		"KRAFTWATCH_EMBEDDED_NATS_PORT=" + strconv.Itoa(freePort()),
		"KRAFTWATCH_EMBEDDED_NATS_DIR=" + filepath.Join(dir, "nats"),
		"KRAFTWATCH_LOG_LEVEL=info",
	}
	out, err := kw.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	kw.cmd.Stderr = kw.cmd.Stdout
	if err := kw.cmd.Start(); err != nil {
		return nil, err
	}
	go kw.read(out)
	return kw, nil
}

// read scans the process's log lines until its output ends.
func (kw *kraftwatch) read(out io.Reader) {
	pid := kw.cmd.Process.Pid
	var t0 time.Time
	var cpu0 time.Duration
	var tail []string
	s := bufio.NewScanner(out)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		line := s.Text()
		tail = append(tail, line)
		if len(tail) > 20 {
			tail = tail[1:]
		}
		var l struct {
			Msg     string    `json:"msg"`
			Time    time.Time `json:"time"`
			Records int64     `json:"records"`
			Group   string    `json:"group"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		switch l.Msg {
		case "reading group records":
			t0, cpu0 = time.Now(), cpuTime(pid)
		case "group records caught up":
			if !t0.IsZero() {
				kw.replayed <- replay{wall: time.Since(t0), cpu: cpuTime(pid) - cpu0, records: l.Records, rss: peakRSS(pid)}
			}
		case "rebalance needed":
			select {
			case kw.decided <- decision{l.Group, l.Time}:
			default: // nobody waits for so many
			}
		}
	}
	kw.ended <- strings.Join(tail, "\n")
}

// caughtUp waits for the start-up replay, at most 5 minutes.
func (kw *kraftwatch) caughtUp() (replay, error) {
	select {
	case r := <-kw.replayed:
		return r, nil
	case tail := <-kw.ended:
		return replay{}, fmt.Errorf("kraftwatch ended before catching up:\n%s", tail)
	case <-time.After(5 * time.Minute):
		return replay{}, errors.New("kraftwatch: not caught up after 5 minutes")
	}
}

// stop ends the process: SIGTERM, SIGKILL after 10 s.
func (kw *kraftwatch) stop() {
	kw.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { kw.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		kw.cmd.Process.Kill()
		<-done
	}
}

// cpuTime is the user plus system CPU time of process pid (/proc/pid/stat).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// peakRSS is VmHWM of process pid in bytes.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
