package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// LoneOptions configure a LoneController.
type LoneOptions struct {
	// Version of Apache Kafka; empty means Version().
	Version string
	// ID is the controller's node id (the voter of its static quorum).
	ID int
	// ClusterID is the cluster id kafka-storage format writes; empty makes one.
	ClusterID string
	// JVMOptions are the JVM's options besides the classpath; empty means
	// KafkaJVMOptions and -Xmx2g.
	JVMOptions []string
	// Props are extra server properties.
	Props map[string]string
	// Prepare, when set, is called after kafka-storage format and before the first
	// start with the node's __cluster_metadata-0 directory (created, empty): put a
	// snapshot there, and Kafka starts from it.
	Prepare func(metadataDir string) error
}

// LoneController is one controller-only Kafka node (process.roles=controller) whose
// quorum is itself, declared statically (controller.quorum.voters: kraft.version 0,
// so no voters record is needed in its log), with one PLAINTEXT CONTROLLER listener
// on 127.0.0.1. It serves the metadata log to observers (Fetch, FetchSnapshot)
// without a broker: a way to have a real controller serve a snapshot written by a
// tool. Its methods are for the goroutine that started it.
type LoneController struct {
	ID        int
	ClusterID string
	Addr      string // the CONTROLLER listener, 127.0.0.1:port
	Dir       string // server.properties, server.log, data/
	cmd       *exec.Cmd
	done      chan struct{}
}

// StartLoneController formats a LoneController under dir, calls o.Prepare, starts
// its JVM and waits until its listener accepts connections (it may still be loading
// its log then). The JVM is killed when this process dies.
func StartLoneController(ctx context.Context, dir string, o LoneOptions) (*LoneController, error) {
	if o.Version == "" {
		o.Version = Version()
	}
	home, err := Fetch(o.Version)
	if err != nil {
		return nil, err
	}
	classpath := filepath.Join(home, "libs", "*")
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	l := &LoneController{ID: o.ID, ClusterID: o.ClusterID, Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), Dir: dir}
	if l.ClusterID == "" {
		out, err := runTool(ctx, classpath, "kafka.tools.StorageTool", "random-uuid")
		if err != nil {
			return nil, err
		}
		l.ClusterID = strings.TrimSpace(lastLine(out))
	}
	data := filepath.Join(dir, "data")
	props := map[string]string{
		"node.id":                               fmt.Sprint(o.ID),
		"process.roles":                         "controller",
		"listeners":                             "CONTROLLER://" + l.Addr,
		"advertised.listeners":                  "CONTROLLER://" + l.Addr,
		"controller.listener.names":             "CONTROLLER",
		"listener.security.protocol.map":        "CONTROLLER:PLAINTEXT",
		"controller.quorum.voters":              fmt.Sprintf("%d@%s", o.ID, l.Addr),
		"log.dirs":                              data,
		"num.network.threads":                   "2",
		"num.io.threads":                        "2",
		"background.threads":                    "2",
		"num.recovery.threads.per.data.dir":     "1",
		"metadata.log.max.snapshot.interval.ms": "3600000",
	}
	maps.Copy(props, o.Props)
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(config, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	log4j := fmt.Sprintf("status = warn\nappender.file.type = File\nappender.file.name = file\nappender.file.fileName = %s\n"+
		"appender.file.layout.type = PatternLayout\nappender.file.layout.pattern = [%%d] %%p %%m (%%c)%%n\n"+
		"rootLogger.level = info\nrootLogger.appenderRef.file.ref = file\n", filepath.Join(dir, "server.log"))
	if err := os.WriteFile(filepath.Join(dir, "log4j2.properties"), []byte(log4j), 0o644); err != nil {
		return nil, err
	}
	if _, err := runTool(ctx, classpath, "kafka.tools.StorageTool", "format", "-t", l.ClusterID, "-c", config); err != nil {
		return nil, err
	}
	meta := filepath.Join(data, "__cluster_metadata-0")
	if err := os.MkdirAll(meta, 0o755); err != nil {
		return nil, err
	}
	if o.Prepare != nil {
		if err := o.Prepare(meta); err != nil {
			return nil, err
		}
	}
	jvm := o.JVMOptions
	if len(jvm) == 0 {
		jvm = append(slices.Clone(KafkaJVMOptions), "-Xmx2g")
	}
	args := append(slices.Clone(jvm), "-cp", classpath,
		"-Dlog4j2.configurationFile="+filepath.Join(dir, "log4j2.properties"), "kafka.Kafka", config)
	stdout, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		return nil, err
	}
	l.cmd = exec.Command("java", args...)
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	l.cmd.Stdout, l.cmd.Stderr = stdout, stdout
	if err := l.cmd.Start(); err != nil {
		stdout.Close()
		return nil, fmt.Errorf("kafkatest: start controller %d: %w", o.ID, err)
	}
	l.done = make(chan struct{})
	go func() {
		l.cmd.Wait()
		stdout.Close()
		close(l.done)
	}()
	for {
		select {
		case <-l.done:
			return nil, fmt.Errorf("kafkatest: controller %d exited during start-up; server.log:\n%s", o.ID, l.LogTail(30))
		case <-ctx.Done():
			l.Stop()
			return nil, fmt.Errorf("kafkatest: controller %d did not start: %w; server.log:\n%s", o.ID, ctx.Err(), l.LogTail(30))
		case <-time.After(200 * time.Millisecond):
		}
		if conn, err := net.DialTimeout("tcp", l.Addr, time.Second); err == nil {
			conn.Close()
			return l, nil
		}
	}
}

// Stop stops the JVM: SIGTERM, SIGKILL after 20 s.
func (l *LoneController) Stop() {
	if l.cmd == nil {
		return
	}
	syscall.Kill(-l.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-l.done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
		<-l.done
	}
	l.cmd = nil
}

// LogTail returns the last lines of the controller's server.log.
func (l *LoneController) LogTail(lines int) string {
	b, err := os.ReadFile(filepath.Join(l.Dir, "server.log"))
	if err != nil {
		return err.Error()
	}
	return tail(string(b), lines)
}

// RSS is the resident set size of the controller's JVM, in bytes.
func (l *LoneController) RSS() (int64, error) {
	if l.cmd == nil {
		return 0, errors.New("kafkatest: controller not running")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", l.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			_, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb << 10, err
		}
	}
	return 0, errors.New("kafkatest: no VmRSS")
}
