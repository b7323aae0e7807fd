// Package kafkatest runs a real Apache Kafka cluster in KRaft mode for tests: the
// release's own jars, fetched from Maven Central by fetch-kafka.sh, started as `java`
// processes on free 127.0.0.1 ports in a temporary directory.
//
// By default node 1 is a combined controller+broker and further nodes are broker-only,
// each with its own broker.rack. With Options.Controllers the quorum is dedicated:
// the brokers keep node ids 1, 2, … (Nodes[0] is still the first broker) and the
// controllers (process.roles=controller, node ids 101, 102, …) come after them in
// Nodes, formatted together with --initial-controllers (a dynamic quorum, kraft.version
// 1) and found through controller.quorum.bootstrap.servers. Every broker has a
// PLAINTEXT listener (inter-broker and Bootstrap) and every controller a PLAINTEXT
// CONTROLLER listener, which the nodes use among themselves; Options.Security adds
// client listeners to the brokers with TLS (a CA generated at start) and SASL (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512), Options.ControllerSecurity adds controller listeners
// (TLS with client certificates, SASL over TLS) for clients of the quorum, and
// Options.Authorizer runs StandardAuthorizer on the controllers. Every JVM is started
// in its own process group with a parent-death signal, and Close (or the test's
// cleanup) stops them: no JVM outlives the test binary.
//
// The cluster also runs Kafka's own tools from the same jars (kafka-topics,
// kafka-console-consumer, kafka-dump-log, kafka-metadata-shell) so tests can compare
// kraftwatch's view with Kafka's.
//
// A Cluster is safe for concurrent use by the goroutines of one test; starting and
// stopping nodes should not race with each other.
package kafkatest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// DefaultVersion is the Kafka release used when KAFKA_VERSION is unset: the newest 4.x
// whose whole tool set, kafka-metadata-shell included, is published on Maven Central
// (4.4.0's broker works too, but its kafka-shell artifact was never published).
const DefaultVersion = "4.3.1"

// ErrNoShell reports a Kafka release without a published kafka-metadata-shell.
var ErrNoShell = errors.New("kafkatest: kafka-metadata-shell is not published for this Kafka version")

// Version returns the Kafka version chosen by KAFKA_VERSION, or DefaultVersion.
func Version() string {
	if v := os.Getenv("KAFKA_VERSION"); v != "" {
		return v
	}
	return DefaultVersion
}

// Options configure a cluster.
type Options struct {
	// Version of Apache Kafka; empty means Version().
	Version string
	// Controllers is the number of dedicated controllers (process.roles=controller),
	// node ids 101, 102, …, after the brokers in Cluster.Nodes; 0 makes node 1 a
	// combined controller+broker, the only controller.
	Controllers int
	// Rack of node 1, the first broker (broker.rack); empty means none.
	Rack string
	// Brokers adds broker-only nodes, one per entry, with that broker.rack ("" = none).
	Brokers []string
	// Props are extra server properties for every node, e.g.
	// "metadata.log.max.record.bytes.between.snapshots" (see ShortMetadataLog).
	Props map[string]string
	// ControllerProps are extra server properties for the controllers only, applied
	// after Props.
	ControllerProps map[string]string
	// Features are passed to kafka-storage format as --feature name=level.
	Features map[string]int
	// Security adds to every node one client listener per protocol, named after it
	// (Node.Listeners, Cluster.BootstrapFor). SASL listeners enable SASLMechanisms for
	// Users; TLS listeners present a certificate for 127.0.0.1, ::1 and localhost
	// signed by a CA generated at start (Cluster.CAFile). No client certificate is
	// asked for, and there is no authorizer.
	Security []Protocol
	// ControllerSecurity adds to every controller one more controller listener per
	// protocol, named CONTROLLER_<protocol> (Node.ControllerListeners,
	// Cluster.ControllerBootstrapFor), for clients of the quorum such as an observer;
	// the nodes keep using the PLAINTEXT CONTROLLER listener among themselves. The TLS
	// listeners present the certificate of Security's and an SSL listener requires a
	// client certificate (mutual TLS; Cluster.ClientCertFile, principal User:<CN>);
	// SASL listeners enable SASLMechanisms for Users. SASL_PLAINTEXT and SASL_SSL are
	// accepted, SSL is mutual TLS.
	ControllerSecurity []Protocol
	// Authorizer runs Kafka's StandardAuthorizer on the controllers (combined node 1:
	// on its broker listeners too). Its super users are User:ANONYMOUS (the nodes
	// themselves, on the PLAINTEXT listeners) and SuperUsers; a client of another
	// listener needs ACLs (Cluster.AddClusterACL).
	Authorizer bool
	// SuperUsers are further super users ("User:name") when Authorizer is set.
	SuperUsers []string
	// Users are the SASL users, name to password ([A-Za-z0-9._-]+ each), with
	// PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 credentials; empty means DefaultUsers.
	Users map[string]string
}

// Cluster is a running KRaft cluster. Kafka's offline tools (DumpLog, StartShell)
// of the same release come with it.
type Cluster struct {
	*Offline
	ClusterID string
	Nodes     []*Node
	// CAFile is the PEM file of the CA that signed the TLS listeners' certificate;
	// "" without a TLS listener in Options.Security or Options.ControllerSecurity.
	CAFile string
	// ClientCertFile and ClientKeyFile are a PEM client certificate (CN=ClientCN,
	// signed by the CA) and its PKCS#8 key, for the mutual TLS controller listener;
	// "" without a TLS listener.
	ClientCertFile, ClientKeyFile string
	// Users are the SASL users (name to password); nil without a SASL listener.
	Users map[string]string

	security     []Protocol
	ctrlSecurity []Protocol
	authorizer   bool
	superUsers   []string
	tlsDir       string // ca.pem, server.pem, client-cert.pem, client-key.pem
	dir          string // root of the node directories
	logf         func(format string, args ...any)
}

// Node is one Kafka process.
type Node struct {
	ID         int
	Controller bool   // runs the controller role
	Broker     bool   // runs the broker role
	Dir        string // the node's directory: server.properties, logs, data/
	LogDir     string // log.dirs and metadata.log.dir
	BrokerAddr string // 127.0.0.1:port of the PLAINTEXT listener; "" on a controller-only node
	// ControllerAddr is the 127.0.0.1:port of the PLAINTEXT CONTROLLER listener; ""
	// on a broker-only node.
	ControllerAddr string
	// Listeners are the 127.0.0.1:port addresses of Options.Security's listeners
	// (brokers).
	Listeners map[Protocol]string
	// ControllerListeners are the 127.0.0.1:port addresses of
	// Options.ControllerSecurity's listeners (controllers).
	ControllerListeners map[Protocol]string

	c     *Cluster
	rack  string
	props map[string]string
	dirID string // directory id of the metadata log dir (dedicated controllers)
	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{}
}

// New starts a cluster for a test and stops it at the test's end. It skips the test
// when Java or Maven are missing, unless CI=true, where that is a failure.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	RequireTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, t.TempDir(), opts, t.Logf)
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.Nodes {
				t.Logf("node %d server.log tail:\n%s", n.ID, n.LogTail(40))
			}
		}
		c.Close()
	})
	return c
}

// RequireTools skips t when java or mvn is missing, or fails it when CI=true.
func RequireTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("kafkatest: %s not found and CI=true", tool)
			}
			t.Skipf("kafkatest: %s not found; real Kafka tests need Java 17+ and Maven", tool)
		}
	}
}

// Start fetches the jars if needed, formats and starts every node under dir, and waits
// until each broker answers. On error, everything started is stopped.
func Start(ctx context.Context, dir string, opts Options, logf func(string, ...any)) (_ *Cluster, err error) {
	if opts.Version == "" {
		opts.Version = Version()
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := checkSecurity(opts); err != nil {
		return nil, err
	}
	tools, err := Tools(opts.Version)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Offline: tools, dir: dir, logf: logf, security: opts.Security, ctrlSecurity: opts.ControllerSecurity,
		authorizer: opts.Authorizer, superUsers: opts.SuperUsers}
	all := slices.Concat(opts.Security, opts.ControllerSecurity)
	if slices.ContainsFunc(all, Protocol.sasl) {
		c.Users = maps.Clone(opts.Users)
		if len(c.Users) == 0 {
			c.Users = maps.Clone(DefaultUsers)
		}
	}
	if slices.ContainsFunc(all, Protocol.tls) {
		c.tlsDir = filepath.Join(dir, "tls")
		c.CAFile = filepath.Join(c.tlsDir, "ca.pem")
		c.ClientCertFile = filepath.Join(c.tlsDir, "client-cert.pem")
		c.ClientKeyFile = filepath.Join(c.tlsDir, "client-key.pem")
		if err := writeTLS(c.tlsDir); err != nil {
			return nil, fmt.Errorf("kafkatest: TLS certificates: %w", err)
		}
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	out, err := c.Tool(ctx, "kafka.tools.StorageTool", "random-uuid")
	if err != nil {
		return nil, err
	}
	c.ClusterID = strings.TrimSpace(lastLine(out))

	racks := append([]string{opts.Rack}, opts.Brokers...)
	// Ports: per broker the PLAINTEXT listener and Security's; per controller the
	// CONTROLLER listener and ControllerSecurity's.
	nctrl := max(opts.Controllers, 1)
	ports, err := freePorts(len(racks)*(1+len(opts.Security)) + nctrl*(1+len(opts.ControllerSecurity)))
	if err != nil {
		return nil, err
	}
	port := func() string {
		p := ports[0]
		ports = ports[1:]
		return fmt.Sprintf("127.0.0.1:%d", p)
	}
	newNode := func(id int) *Node {
		n := &Node{ID: id, Dir: filepath.Join(dir, fmt.Sprintf("node-%d", id)), c: c, props: opts.Props}
		n.LogDir = filepath.Join(n.Dir, "data")
		return n
	}
	for i, rack := range racks {
		n := newNode(i + 1)
		n.Broker, n.rack = true, rack
		n.BrokerAddr = port()
		if len(opts.Security) > 0 {
			n.Listeners = map[Protocol]string{}
			for _, p := range opts.Security {
				n.Listeners[p] = port()
			}
		}
		c.Nodes = append(c.Nodes, n)
	}
	if opts.Controllers == 0 {
		c.Nodes[0].Controller = true
	}
	for i := range opts.Controllers {
		n := newNode(101 + i)
		n.Controller = true
		n.dirID = randomUUID()
		c.Nodes = append(c.Nodes, n)
	}
	for _, n := range c.Controllers() {
		n.ControllerAddr = port()
		if len(opts.ControllerSecurity) > 0 {
			n.ControllerListeners = map[Protocol]string{}
			for _, p := range opts.ControllerSecurity {
				n.ControllerListeners[p] = port()
			}
		}
		if len(opts.ControllerProps) > 0 {
			n.props = maps.Clone(opts.Props)
			if n.props == nil {
				n.props = map[string]string{}
			}
			maps.Copy(n.props, opts.ControllerProps)
		}
	}
	// Each format is a JVM of its own: run them side by side.
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, n := range c.Nodes {
		wg.Go(func() { errs[i] = n.format(ctx, opts.Features) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Controllers first (together: a dedicated quorum elects its leader once a
	// majority runs), then the brokers.
	for _, group := range [][]*Node{c.dedicatedControllers(), c.Brokers()} {
		errs := make([]error, len(group))
		for i, n := range group {
			wg.Go(func() { errs[i] = n.Start(ctx) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}
	if err := c.waitBrokers(ctx); err != nil {
		return nil, err
	}
	logf("kafkatest: Apache Kafka %s (broker says %q) cluster %s, %d broker(s), %d controller(s), bootstrap %s, controllers %s",
		c.Version, c.Nodes[0].KafkaVersion(), c.ClusterID, len(c.Brokers()), len(c.Controllers()), c.Bootstrap(), c.ControllerBootstrap())
	return c, nil
}

// Brokers returns the nodes with the broker role, by node id.
func (c *Cluster) Brokers() []*Node {
	return slices.DeleteFunc(slices.Clone(c.Nodes), func(n *Node) bool { return !n.Broker })
}

// Controllers returns the nodes with the controller role, by node id.
func (c *Cluster) Controllers() []*Node {
	return slices.DeleteFunc(slices.Clone(c.Nodes), func(n *Node) bool { return !n.Controller })
}

// dedicatedControllers returns the controller-only nodes.
func (c *Cluster) dedicatedControllers() []*Node {
	return slices.DeleteFunc(slices.Clone(c.Nodes), func(n *Node) bool { return n.Broker })
}

// ControllerBootstrap returns the PLAINTEXT CONTROLLER listener of every controller,
// comma-separated: controller.quorum.bootstrap.servers, and what the tools'
// --bootstrap-controller takes.
func (c *Cluster) ControllerBootstrap() string {
	var addrs []string
	for _, n := range c.Controllers() {
		addrs = append(addrs, n.ControllerAddr)
	}
	return strings.Join(addrs, ",")
}

// Bootstrap returns the bootstrap servers of every broker, comma-separated.
func (c *Cluster) Bootstrap() string {
	var addrs []string
	for _, n := range c.Brokers() {
		addrs = append(addrs, n.BrokerAddr)
	}
	return strings.Join(addrs, ",")
}

// Close stops every node: SIGTERM, then SIGKILL after a grace period. The brokers stop
// first, so that their controlled shutdown finds the controllers.
func (c *Cluster) Close() {
	for _, group := range [][]*Node{c.Brokers(), c.dedicatedControllers()} {
		var wg sync.WaitGroup
		for _, n := range group {
			wg.Go(func() { n.Stop() })
		}
		wg.Wait()
	}
}

// MetadataLogDir is the node's __cluster_metadata-0 directory.
func (n *Node) MetadataLogDir() string { return filepath.Join(n.LogDir, "__cluster_metadata-0") }

// Rack is the node's current broker.rack ("" = none).
func (n *Node) Rack() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rack
}

// defaultProps size a test cluster for one machine: internal topics with one replica
// and few partitions, few threads, quick group heartbeats. Options.Props override them.
var defaultProps = map[string]string{
	"offsets.topic.replication.factor":                 "1",
	"offsets.topic.num.partitions":                     "3",
	"transaction.state.log.replication.factor":         "1",
	"transaction.state.log.min.isr":                    "1",
	"transaction.state.log.num.partitions":             "1",
	"share.coordinator.state.topic.replication.factor": "1",
	"share.coordinator.state.topic.min.isr":            "1",
	"share.coordinator.state.topic.num.partitions":     "1",
	"group.initial.rebalance.delay.ms":                 "0",
	"group.consumer.min.heartbeat.interval.ms":         "1000",
	"group.consumer.heartbeat.interval.ms":             "1000",
	"group.streams.min.heartbeat.interval.ms":          "1000",
	"group.streams.heartbeat.interval.ms":              "2000",
	"group.streams.initial.rebalance.delay.ms":         "0",
	"auto.create.topics.enable":                        "false",
	"auto.leader.rebalance.enable":                     "false",
	"broker.heartbeat.interval.ms":                     "500",
	"num.network.threads":                              "2",
	"num.io.threads":                                   "2",
	"background.threads":                               "2",
	"num.recovery.threads.per.data.dir":                "1",
	// A test may give its group a short session (group config consumer.session.timeout.ms)
	// so that a killed member is fenced within seconds; the default stays 45 s.
	"group.consumer.min.session.timeout.ms": "3000",
}

func (n *Node) properties() string {
	var b strings.Builder
	p := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	p("node.id", strconv.Itoa(n.ID))
	p("controller.quorum.bootstrap.servers", n.c.ControllerBootstrap())
	var roles, listeners, names, protocols []string
	if n.Broker {
		roles = append(roles, "broker")
		listeners = append(listeners, "PLAINTEXT://"+n.BrokerAddr)
		protocols = append(protocols, "PLAINTEXT:PLAINTEXT")
		for _, proto := range n.c.security {
			listeners = append(listeners, fmt.Sprintf("%s://%s", proto, n.Listeners[proto]))
			protocols = append(protocols, fmt.Sprintf("%s:%s", proto, proto))
		}
		p("inter.broker.listener.name", "PLAINTEXT")
	}
	names = append(names, "CONTROLLER")
	protocols = append(protocols, "CONTROLLER:PLAINTEXT")
	if n.Controller {
		roles = append(roles, "controller")
		listeners = append(listeners, "CONTROLLER://"+n.ControllerAddr)
		for _, proto := range n.c.ctrlSecurity {
			name := controllerListener(proto)
			names = append(names, name)
			listeners = append(listeners, fmt.Sprintf("%s://%s", name, n.ControllerListeners[proto]))
			protocols = append(protocols, fmt.Sprintf("%s:%s", name, proto))
		}
	}
	p("process.roles", strings.Join(roles, ","))
	p("controller.listener.names", strings.Join(names, ","))
	p("listener.security.protocol.map", strings.Join(protocols, ","))
	p("listeners", strings.Join(listeners, ","))
	p("advertised.listeners", strings.Join(listeners, ","))
	n.securityProps(p)
	p("log.dirs", n.LogDir)
	if n.rack != "" && n.Broker {
		p("broker.rack", n.rack)
	}
	props := map[string]string{}
	for k, v := range defaultProps {
		props[k] = v
	}
	for k, v := range n.props {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p(k, props[k])
	}
	return b.String()
}

func (n *Node) writeConfig() error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return err
	}
	log4j := fmt.Sprintf(`status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = %s
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%%d] %%p %%m (%%c)%%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = info
`, filepath.Join(n.Dir, "server.log"))
	if err := os.WriteFile(filepath.Join(n.Dir, "log4j2.properties"), []byte(log4j), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.Dir, "server.properties"), []byte(n.properties()), 0o644)
}

func (n *Node) format(ctx context.Context, features map[string]int) error {
	if err := n.writeConfig(); err != nil {
		return err
	}
	args := []string{"format", "-t", n.c.ClusterID, "-c", filepath.Join(n.Dir, "server.properties")}
	switch {
	case n.Controller && n.dirID == "":
		args = append(args, "--standalone")
	case n.Controller:
		var voters []string
		for _, v := range n.c.Controllers() {
			voters = append(voters, fmt.Sprintf("%d@%s:%s", v.ID, v.ControllerAddr, v.dirID))
		}
		args = append(args, "--initial-controllers", strings.Join(voters, ","))
	default:
		args = append(args, "--no-initial-controllers")
	}
	if n.Controller {
		args = append(args, n.c.scramArgs()...)
	}
	for name, level := range features {
		args = append(args, "--feature", fmt.Sprintf("%s=%d", name, level))
	}
	_, err := n.c.Tool(ctx, "kafka.tools.StorageTool", args...)
	return err
}

// randomUUID returns a random Kafka Uuid in its base64 text form, as
// Uuid.randomUuid does: never one whose text starts with "-" (a command line would
// take it for an option).
func randomUUID() string {
	for {
		var b [16]byte
		rand.Read(b[:])
		s := base64.RawURLEncoding.EncodeToString(b[:])
		if s[0] != '-' {
			return s
		}
	}
}

// addr is the listener Start waits for: the broker's, or a controller-only node's
// CONTROLLER listener.
func (n *Node) addr() string {
	if n.Broker {
		return n.BrokerAddr
	}
	return n.ControllerAddr
}

// Start starts the node's JVM and waits until its broker listener (a controller-only
// node: its CONTROLLER listener) accepts connections.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return fmt.Errorf("kafkatest: node %d already running", n.ID)
	}
	if err := n.writeConfig(); err != nil {
		return err
	}
	stdout, err := os.OpenFile(filepath.Join(n.Dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	heap := "-Xmx768m"
	if !n.Broker {
		heap = "-Xmx384m"
	}
	cmd := n.c.java("-Xms128m", heap,
		"-Dlog4j2.configurationFile="+filepath.Join(n.Dir, "log4j2.properties"),
		"kafka.Kafka", filepath.Join(n.Dir, "server.properties"))
	cmd.Stdout, cmd.Stderr = stdout, stdout
	if err := cmd.Start(); err != nil {
		stdout.Close()
		return fmt.Errorf("kafkatest: start node %d: %w", n.ID, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		stdout.Close()
		close(done)
	}()
	n.cmd, n.done = cmd, done
	for {
		select {
		case <-done:
			n.cmd = nil
			return fmt.Errorf("kafkatest: node %d exited during start-up; server.log:\n%s", n.ID, n.LogTail(30))
		case <-ctx.Done():
			return fmt.Errorf("kafkatest: node %d did not start: %w; server.log:\n%s", n.ID, ctx.Err(), n.LogTail(30))
		case <-time.After(200 * time.Millisecond):
		}
		if conn, err := net.DialTimeout("tcp", n.addr(), time.Second); err == nil {
			conn.Close()
			return nil
		}
	}
}

// Stop stops the node's JVM: SIGTERM (a controlled shutdown), SIGKILL after 20 s.
func (n *Node) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	pgid := n.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-n.done
	}
	n.cmd = nil
}

// Kill stops the node's JVM with SIGKILL, as a crash would.
func (n *Node) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	<-n.done
	n.cmd = nil
}

// Restart stops the node (SIGTERM), sets its broker.rack (unchanged when rack is nil),
// starts it again and waits until the cluster sees every broker.
func (n *Node) Restart(ctx context.Context, rack *string) error {
	n.Stop()
	if rack != nil {
		n.mu.Lock()
		n.rack = *rack
		n.mu.Unlock()
	}
	if err := n.Start(ctx); err != nil {
		return err
	}
	return n.c.waitBrokers(ctx)
}

// LogTail returns the last lines of the node's server.log.
func (n *Node) LogTail(lines int) string {
	b, err := os.ReadFile(filepath.Join(n.Dir, "server.log"))
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

var versionLine = regexp.MustCompile(`Kafka version: (\S+)`)

// KafkaVersion is the version the broker logged at start-up.
func (n *Node) KafkaVersion() string {
	f, err := os.Open(filepath.Join(n.Dir, "server.log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	v := ""
	for s.Scan() {
		if m := versionLine.FindStringSubmatch(s.Text()); m != nil {
			v = m[1]
		}
	}
	return v
}

// waitBrokers waits until the cluster's metadata lists every broker.
func (c *Cluster) waitBrokers(ctx context.Context) error {
	want := len(c.Brokers())
	var last error
	for {
		conn, err := kafka.DialContext(ctx, "tcp", c.Nodes[0].BrokerAddr)
		if err == nil {
			brokers, berr := conn.Brokers()
			conn.Close()
			if berr == nil && len(brokers) == want {
				return nil
			}
			last = fmt.Errorf("%d of %d brokers registered (err %v)", len(brokers), want, berr)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafkatest: waiting for %d brokers: %w (last: %v)", want, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// java builds a command running a class from the release's jars, in its own process
// group and killed if the test binary dies.
func (c *Cluster) java(args ...string) *exec.Cmd {
	return javaCmd(filepath.Join(c.home, "libs", "*"), args...)
}

func javaCmd(classpath string, args ...string) *exec.Cmd {
	full := append([]string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
		"-Djava.awt.headless=true", "-cp", classpath}, args...)
	cmd := exec.Command("java", full...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Tool runs one of Kafka's command-line classes to completion and returns its stdout.
// Its stderr is returned in the error when it fails.
func (c *Cluster) Tool(ctx context.Context, class string, args ...string) (string, error) {
	return runTool(ctx, filepath.Join(c.home, "libs", "*"), class, args...)
}

func runTool(ctx context.Context, classpath, class string, args ...string) (string, error) {
	cmd := javaCmd(classpath, append([]string{"-Xmx512m", "-Dlog4j2.level=WARN", class}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("kafkatest: %s %s: %w\n%s", class, strings.Join(args, " "), err, tail(stderr.String(), 20))
	}
	return stdout.String(), nil
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
