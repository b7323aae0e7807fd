package natstest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ClusterOptions configures StartCluster.
type ClusterOptions struct {
	// Nodes is the number of nats-server processes; default 3.
	Nodes int
	// TLS makes clients and routes use TLS with certificates of a CA made for the test
	// (Cluster.CA); routes verify each other's certificates.
	TLS bool
	// Users are user name -> password pairs clients must log in with; none means no
	// authentication. Routes then log in with a user of their own.
	Users map[string]string
}

// Cluster is a JetStream cluster of nats-server processes (Binary) on fixed ports and
// stores, so that a node can be SIGKILLed and started again with its state. Its methods
// are for the goroutine of the test that started it.
type Cluster struct {
	t     testing.TB
	bin   string
	dir   string
	opts  ClusterOptions
	CA    string // the CA certificate file when TLS is on
	Nodes []*Node
}

// Node is one nats-server of a Cluster.
type Node struct {
	Name      string // server_name: n1, n2, ...
	port, rpt int
	conf, log string
	cmd       *exec.Cmd
	done      chan struct{}
}

// URL is the node's client URL; it stays the same across restarts.
func (n *Node) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// Running reports whether the node's process runs.
func (n *Node) Running() bool { return n.cmd != nil }

// StartCluster starts the nodes and waits until JetStream answers (a meta leader is
// elected). The processes are killed at the end of the test, which logs their log tails
// when it failed. Under -short it skips t: a cluster takes seconds to form and its
// tests tens of seconds to kill leaders; they run in make test.
func StartCluster(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a NATS cluster; runs in make test")
	}
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	c := &Cluster{t: t, bin: Binary(t), dir: t.TempDir(), opts: opts}
	if opts.TLS {
		c.CA = writeCerts(t, c.dir)
	}
	for i := range opts.Nodes {
		c.Nodes = append(c.Nodes, &Node{Name: fmt.Sprintf("n%d", i+1), port: freePort(t), rpt: freePort(t)})
	}
	for _, n := range c.Nodes {
		n.conf, n.log = filepath.Join(c.dir, n.Name+".conf"), filepath.Join(c.dir, n.Name+".log")
		if err := os.WriteFile(n.conf, []byte(c.config(n)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range c.Nodes {
			c.Kill(n)
			if t.Failed() {
				b, _ := os.ReadFile(n.log)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("nats-server %s log tail:\n%s", n.Name, strings.Join(lines[max(0, len(lines)-12):], "\n"))
			}
		}
	})
	for _, n := range c.Nodes {
		c.Start(n)
	}
	var user, password string
	for u, p := range opts.Users {
		user, password = u, p
		break
	}
	nc := c.Connect(c.URLs(), user, password)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("natstest: JetStream cluster not ready after a minute: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c
}

func (c *Cluster) config(n *Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %s\nlisten: 127.0.0.1:%d\njetstream { store_dir: %q }\n", n.Name, n.port, filepath.Join(c.dir, n.Name))
	tlsBlock := func(verify bool) string {
		return fmt.Sprintf("tls { cert_file: %q, key_file: %q, ca_file: %q, verify: %v, timeout: 5 }",
			filepath.Join(c.dir, "server.pem"), filepath.Join(c.dir, "server-key.pem"), c.CA, verify)
	}
	if c.opts.TLS {
		b.WriteString(tlsBlock(false) + "\n")
	}
	routeAuth := ""
	if len(c.opts.Users) > 0 {
		b.WriteString("authorization {\n  users = [\n")
		for u, p := range c.opts.Users {
			fmt.Fprintf(&b, "    { user: %q, password: %q }\n", u, p)
		}
		b.WriteString("  ]\n}\n")
		routeAuth = "route:route-secret@"
	}
	var routes []string
	for _, o := range c.Nodes {
		if o != n {
			routes = append(routes, fmt.Sprintf("nats://%s127.0.0.1:%d", routeAuth, o.rpt))
		}
	}
	fmt.Fprintf(&b, "cluster {\n  name: natstest\n  listen: 127.0.0.1:%d\n  routes: [%s]\n", n.rpt, strings.Join(routes, ", "))
	if routeAuth != "" {
		b.WriteString("  authorization { user: route, password: route-secret }\n")
	}
	if c.opts.TLS {
		b.WriteString("  " + tlsBlock(true) + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// Start starts node n (again, after Kill) and waits until it listens.
func (c *Cluster) Start(n *Node) {
	c.t.Helper()
	if n.cmd != nil {
		c.t.Fatalf("natstest: %s already running", n.Name)
	}
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(c.bin, "-c", n.conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.t.Fatalf("natstest: starting %s: %v", n.Name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	n.cmd, n.done = cmd, done
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(n.port), time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("natstest: %s not listening: %v", n.Name, err)
		}
	}
}

// Kill SIGKILLs node n; nothing when it is not running.
func (c *Cluster) Kill(n *Node) {
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Kill()
	<-n.done
	n.cmd = nil
}

// Pause stops node n with SIGSTOP: it keeps its sockets open and answers nothing, as a
// hung process (a stuck VM, a long GC pause) does. Resume ends it; Kill works on a
// paused node too.
func (c *Cluster) Pause(n *Node) {
	c.t.Helper()
	if n.cmd == nil {
		c.t.Fatalf("natstest: %s not running", n.Name)
	}
	if err := n.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		c.t.Fatalf("natstest: pausing %s: %v", n.Name, err)
	}
}

// Resume continues node n after Pause (SIGCONT).
func (c *Cluster) Resume(n *Node) {
	c.t.Helper()
	if n.cmd == nil {
		return
	}
	if err := n.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		c.t.Fatalf("natstest: resuming %s: %v", n.Name, err)
	}
}

// Node returns the node called name (a server_name, as JetStream names stream leaders).
func (c *Cluster) Node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	c.t.Fatalf("natstest: no node %q", name)
	return nil
}

// URLs is every node's client URL, comma-separated.
func (c *Cluster) URLs() string {
	var u []string
	for _, n := range c.Nodes {
		u = append(u, n.URL())
	}
	return strings.Join(u, ",")
}

// Options are the connection options the cluster needs: the CA, and user and password
// when not empty.
func (c *Cluster) Options(user, password string) []nats.Option {
	opts := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond), nats.Timeout(2 * time.Second)}
	if c.CA != "" {
		opts = append(opts, nats.RootCAs(c.CA))
	}
	if user != "" {
		opts = append(opts, nats.UserInfo(user, password))
	}
	return opts
}

// Connect connects to urls with Options; the connection is closed at the end of the
// test.
func (c *Cluster) Connect(urls, user, password string) *nats.Conn {
	c.t.Helper()
	nc, err := nats.Connect(urls, c.Options(user, password)...)
	if err != nil {
		c.t.Fatalf("natstest: connecting to %s: %v", urls, err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeCerts writes a CA and a certificate for 127.0.0.1 (server and client use, for
// the routes' mutual TLS) into dir and returns the CA file.
func writeCerts(t testing.TB, dir string) string {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "natstest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey := key()
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "nats-server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write("ca.pem", "CERTIFICATE", caDER)
	write("server.pem", "CERTIFICATE", srvDER)
	write("server-key.pem", "EC PRIVATE KEY", srvKeyDER)
	return filepath.Join(dir, "ca.pem")
}
