package kafkatest

import (
	"archive/zip"
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Fetch makes sure the jars of Kafka version are in the repository's .cache/kafka and
// returns that release's directory (libs/, streams/ and, when published, shell/).
func Fetch(version string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	home := filepath.Join(root, ".cache", "kafka", version)
	_, err1 := os.Stat(filepath.Join(home, ".complete"))
	_, err2 := os.Stat(filepath.Join(home, "streams", ".complete"))
	if err1 == nil && err2 == nil {
		return home, nil
	}
	cmd := exec.Command(filepath.Join(root, "internal", "kafkatest", "fetch-kafka.sh"), version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("kafkatest: fetching Kafka %s: %w\n%s", version, err, tail(string(out), 20))
	}
	return home, nil
}

// RepoRoot is the directory holding the module's go.mod, found from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("kafkatest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// CreateTopic creates a topic with kafka-topics. Configs are "key=value" pairs.
func (c *Cluster) CreateTopic(ctx context.Context, name string, partitions, replicationFactor int, configs ...string) error {
	args := []string{"--bootstrap-server", c.Bootstrap(), "--create", "--topic", name,
		"--partitions", strconv.Itoa(partitions), "--replication-factor", strconv.Itoa(replicationFactor)}
	for _, kv := range configs {
		args = append(args, "--config", kv)
	}
	_, err := c.Tool(ctx, "org.apache.kafka.tools.TopicCommand", args...)
	return err
}

// AlterPartitions raises a topic's partition count with kafka-topics.
func (c *Cluster) AlterPartitions(ctx context.Context, name string, partitions int) error {
	_, err := c.Tool(ctx, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", c.Bootstrap(),
		"--alter", "--topic", name, "--partitions", strconv.Itoa(partitions))
	return err
}

// DeleteTopic deletes a topic with kafka-topics.
func (c *Cluster) DeleteTopic(ctx context.Context, name string) error {
	_, err := c.Tool(ctx, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", c.Bootstrap(),
		"--delete", "--topic", name)
	return err
}

// AlterTopicConfig sets a topic config ("key=value") with kafka-configs.
func (c *Cluster) AlterTopicConfig(ctx context.Context, topic, kv string) error {
	_, err := c.Tool(ctx, c.class("org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand"),
		"--bootstrap-server", c.Bootstrap(), "--alter", "--entity-type", "topics", "--entity-name", topic, "--add-config", kv)
	return err
}

// DescribeTopics runs kafka-topics --describe and returns its output.
func (c *Cluster) DescribeTopics(ctx context.Context) (string, error) {
	return c.Tool(ctx, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", c.Bootstrap(), "--describe")
}

// binScripts are the scripts of Kafka's bin/ that WriteBinScripts writes, by class.
var binScripts = map[string]string{
	"kafka-topics.sh":           "org.apache.kafka.tools.TopicCommand",
	"kafka-console-consumer.sh": "org.apache.kafka.tools.consumer.ConsoleConsumer",
	"kafka-consumer-groups.sh":  "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
}

// WriteBinScripts writes into dir a few of the scripts of a Kafka distribution's bin/
// (kafka-topics.sh, kafka-console-consumer.sh, kafka-consumer-groups.sh), each running
// its class from the release's jars as the distribution's script does, so that a script
// written for Kafka's image can be run against the cluster.
func (c *Cluster) WriteBinScripts(dir string) error {
	for name, class := range binScripts {
		script := fmt.Sprintf("#!/bin/sh\nexec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Xmx256m -Dlog4j2.level=WARN -cp '%s' %s \"$@\"\n",
			filepath.Join(c.home, "libs", "*"), class)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// class returns the first of the named classes found in the release's kafka jars: some
// tools moved from Scala (kafka.*) to Java (org.apache.kafka.tools.*) between releases.
func (o *Offline) class(names ...string) string {
	jars, _ := filepath.Glob(filepath.Join(o.home, "libs", "kafka*.jar"))
	for _, name := range names {
		file := strings.ReplaceAll(name, ".", "/") + ".class"
		for _, j := range jars {
			r, err := zip.OpenReader(j)
			if err != nil {
				continue
			}
			found := false
			for _, f := range r.File {
				found = found || f.Name == file
			}
			r.Close()
			if found {
				return name
			}
		}
	}
	return names[len(names)-1]
}

// Group kinds for StartMember.
const (
	KindConsumer = "consumer" // KIP-848 consumer group (group.protocol=consumer)
	KindClassic  = "classic"  // classic consumer group (group.protocol=classic)
	KindShare    = "share"    // KIP-932 share group
)

// Member is a running group member: a JVM running java/GroupMember.java (StartMember)
// or java/streams/StreamsApp.java (StartStreamsApp).
type Member struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}

	mu    sync.Mutex
	lines []string
	cond  chan struct{} // closed and replaced on every new line
}

// StartMember starts one member of group with Kafka's Java client. kind is KindConsumer,
// KindClassic or KindShare; exactly one of topics and regex is set (a regex is
// broker-side for KindConsumer, client-side for KindClassic). Close makes it leave.
func (c *Cluster) StartMember(ctx context.Context, group, kind string, topics []string, regex string) (*Member, error) {
	classes, err := c.compileJava(ctx)
	if err != nil {
		return nil, err
	}
	sub := "topics:" + strings.Join(topics, ",")
	if regex != "" {
		sub = "regex:" + regex
	}
	return startMember(javaCmd(filepath.Join(c.home, "libs", "*")+":"+classes,
		"-Xmx256m", "-Dlog4j2.level=WARN", "GroupMember", c.Bootstrap(), group, kind, sub))
}

// StartMembersInOneJVM is StartMember for n members of one group in one JVM, a consumer
// thread each (client ids <group>-member-<i>), which is much cheaper than n JVMs. Each
// prints "member <i> assigned ..."; Close makes them all leave.
func (c *Cluster) StartMembersInOneJVM(ctx context.Context, group, kind string, topics []string, n int) (*Member, error) {
	classes, err := c.compileJava(ctx)
	if err != nil {
		return nil, err
	}
	return startMember(javaCmd(filepath.Join(c.home, "libs", "*")+":"+classes,
		"-Xmx512m", "-Dlog4j2.level=WARN", "GroupMember", c.Bootstrap(), group, kind, "topics:"+strings.Join(topics, ","), strconv.Itoa(n)))
}

// StreamsApp is the test bed's Kafka Streams application (java/streams/StreamsApp.java)
// as StartStreamsApp runs it.
type StreamsApp struct {
	ID      string   // application.id: the streams group
	Topics  []string // source topics read by name
	Pattern string   // a source pattern, used where the release allows it
	// ReplicationFactor is the internal topics' replication.factor; 0 means the
	// broker's default.
	ReplicationFactor int
	// InstanceID, when set, is the group.instance.id: a static member (streams
	// groups accept one from Kafka 4.4).
	InstanceID string
}

// StartStreamsApp starts app with group.protocol=streams: sub-topology 0 reads the
// named source topics (and the pattern where the release allows one: KafkaStreams
// refuses it with the streams protocol in 4.1 to 4.4, and the application prints
// "pattern unsupported: ...") and writes to the repartition topic
// <ID>-rekey-repartition (2 partitions); sub-topology 1 counts into a store backed by
// the changelog <ID>-counts-changelog. It prints "state RUNNING" once running. Close
// makes it leave. The cluster needs streams groups enabled (StreamsOptions).
func (c *Cluster) StartStreamsApp(ctx context.Context, app StreamsApp) (*Member, error) {
	classes, err := c.compileStreams(ctx)
	if err != nil {
		return nil, err
	}
	state, err := os.MkdirTemp(c.dir, "streams-"+app.ID+"-")
	if err != nil {
		return nil, err
	}
	rf := app.ReplicationFactor
	if rf == 0 {
		rf = -1
	}
	cp := filepath.Join(c.home, "streams", "*") + ":" + filepath.Join(c.home, "libs", "*") + ":" + classes
	args := []string{"-Xmx256m", "-Dlog4j2.level=WARN", "StreamsApp",
		c.Bootstrap(), app.ID, strings.Join(app.Topics, ","), app.Pattern, state, strconv.Itoa(rf)}
	if app.InstanceID != "" {
		args = append(args, app.InstanceID)
	}
	return startMember(javaCmd(cp, args...))
}

// StreamsOptions returns opts with streams groups enabled where the release needs it.
// In Kafka 4.1 streams groups are early access: storage is formatted with
// streams.version 0, level 1 is an unstable feature level (kafka-storage format
// refuses it without unstable.feature.versions.enable), and StreamsGroupHeartbeat v0
// is marked latestVersionUnstable (the broker offers it only with
// unstable.api.versions.enable). So 4.1 gets both properties and --feature
// streams.version=1. From 4.2 on the feature is production ready and on by default.
func StreamsOptions(opts Options) Options {
	if !strings.HasPrefix(cmp.Or(opts.Version, Version()), "4.1.") {
		return opts
	}
	opts.Features = maps.Clone(opts.Features)
	if opts.Features == nil {
		opts.Features = map[string]int{}
	}
	opts.Features["streams.version"] = 1
	opts.Props = maps.Clone(opts.Props)
	if opts.Props == nil {
		opts.Props = map[string]string{}
	}
	opts.Props["unstable.feature.versions.enable"] = "true"
	opts.Props["unstable.api.versions.enable"] = "true"
	return opts
}

func startMember(cmd *exec.Cmd) (*Member, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	m := &Member{cmd: cmd, stdin: stdin, done: make(chan struct{}), cond: make(chan struct{})}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			m.mu.Lock()
			m.lines = append(m.lines, s.Text())
			close(m.cond)
			m.cond = make(chan struct{})
			m.mu.Unlock()
		}
		cmd.Wait()
		close(m.done)
	}()
	return m, nil
}

// WaitFor waits until the member printed a line containing substr, and returns it.
func (m *Member) WaitFor(ctx context.Context, substr string) (string, error) {
	seen := 0
	for {
		m.mu.Lock()
		lines, cond := m.lines, m.cond
		m.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if strings.Contains(lines[seen], substr) {
				return lines[seen], nil
			}
		}
		select {
		case <-cond:
		case <-m.done:
			return "", fmt.Errorf("kafkatest: member exited before printing %q (output %q)", substr, lines)
		case <-ctx.Done():
			return "", fmt.Errorf("kafkatest: member did not print %q: %w (output %q)", substr, ctx.Err(), lines)
		}
	}
}

// Lines returns the lines the member printed so far.
func (m *Member) Lines() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.lines)
}

// Subscribe makes the member (every member of its JVM) subscribe to topics instead: a
// KIP-848 member sends its new subscription with its next heartbeat.
func (m *Member) Subscribe(topics []string) error {
	_, err := io.WriteString(m.stdin, "subscribe topics:"+strings.Join(topics, ",")+"\n")
	return err
}

// Kill kills the member's JVM (SIGKILL) and waits for it: it does not leave its group,
// so the coordinator fences it when its session times out.
func (m *Member) Kill() {
	syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	<-m.done
}

// Close makes the member leave its group (by closing its stdin) and waits for it;
// after 15 s it is killed.
func (m *Member) Close() {
	m.stdin.Close()
	select {
	case <-m.done:
	case <-time.After(15 * time.Second):
		syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.done
	}
}

var compileMu sync.Mutex

// compileJava compiles java/*.java against the release's jars, once per release and
// version of the sources.
func (c *Cluster) compileJava(ctx context.Context) (string, error) {
	return c.compile(ctx, "java", "classes", filepath.Join(c.home, "libs", "*"))
}

// compileStreams compiles java/streams/*.java against the release's jars and
// kafka-streams, once per release and version of the sources.
func (c *Cluster) compileStreams(ctx context.Context) (string, error) {
	return c.compile(ctx, filepath.Join("java", "streams"), "classes-streams",
		filepath.Join(c.home, "streams", "*")+":"+filepath.Join(c.home, "libs", "*"))
}

// compile compiles internal/kafkatest/<src>/*.java with classpath into the release's
// <out>-<hash of the sources>/, unless that directory is already there.
func (c *Cluster) compile(ctx context.Context, src, out, classpath string) (string, error) {
	compileMu.Lock()
	defer compileMu.Unlock()
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	srcs, _ := filepath.Glob(filepath.Join(root, "internal", "kafkatest", src, "*.java"))
	h := sha256.New()
	for _, f := range srcs {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	dir := filepath.Join(c.home, fmt.Sprintf("%s-%x", out, h.Sum(nil)[:6]))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(c.home, out+"-tmp-")
	if err != nil {
		return "", err
	}
	args := append([]string{"-cp", classpath, "-d", tmp}, srcs...)
	if b, err := exec.CommandContext(ctx, "javac", args...).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("kafkatest: javac %s: %w\n%s", src, err, b)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr != nil {
			return "", err
		}
		// Another test process compiled the same sources meanwhile.
	}
	return dir, nil
}
