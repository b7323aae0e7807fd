package kafkatest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Offline runs Kafka's offline tools for metadata log files (kafka-dump-log and
// kafka-metadata-shell) from a release's jars, without a cluster. It is safe for
// concurrent use; every tool runs in its own JVM.
type Offline struct {
	Version string
	home    string
}

// Tools fetches the jars of Kafka version once (into .cache/kafka, as Fetch does) and
// returns its offline tools.
func Tools(version string) (*Offline, error) {
	home, err := Fetch(version)
	if err != nil {
		return nil, err
	}
	return &Offline{Version: version, home: home}, nil
}

// HasShell reports whether kafka-metadata-shell is published for the release.
func (o *Offline) HasShell() bool {
	_, err := os.Stat(filepath.Join(o.home, "shell"))
	return err == nil
}

// DumpLog runs kafka-dump-log --cluster-metadata-decoder on metadata log files (.log
// or .checkpoint) and returns its output.
func (o *Offline) DumpLog(ctx context.Context, files ...string) (string, error) {
	class := o.class("org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments")
	return runTool(ctx, filepath.Join(o.home, "libs", "*"), class, "--cluster-metadata-decoder", "--files", strings.Join(files, ","))
}

// KafkaJVMOptions are the JVM options kafka-run-class.sh gives every Kafka tool,
// kafka-metadata-shell.sh included (KAFKA_JVM_PERFORMANCE_OPTS); the heap
// (KAFKA_HEAP_OPTS, -Xmx256M by default) is the caller's choice.
var KafkaJVMOptions = []string{"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
	"-Djava.awt.headless=true"}

// quickJVMOptions start a small tool fast (tests on small files).
var quickJVMOptions = []string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xmx512m",
	"-Djava.awt.headless=true"}

// ShellCommand returns kafka-metadata-shell, not started, for one non-interactive
// command on file, run with jvmOpts (nil: small and quick), in its own process group
// and killed if this process dies; stop it early with KillGroup. The file is read in
// place, as by StartShell.
func (o *Offline) ShellCommand(jvmOpts []string, file string, command ...string) (*exec.Cmd, error) {
	if !o.HasShell() {
		return nil, fmt.Errorf("%w (%s)", ErrNoShell, o.Version)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(file)), ".lock")); err == nil {
		return nil, fmt.Errorf("kafkatest: %s is in a metadata log dir with a .lock; copy it first", file)
	}
	if jvmOpts == nil {
		jvmOpts = quickJVMOptions
	}
	args := append(append([]string{}, jvmOpts...), "-cp", filepath.Join(o.home, "shell", "*"),
		"org.apache.kafka.shell.MetadataShell", "--snapshot", file)
	cmd := exec.Command("java", append(args, command...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// KillGroup kills a started command of ShellCommand and everything it started.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Shell is an interactive kafka-metadata-shell session: one JVM that loaded one file
// and answers commands on its stdin. It is not safe for concurrent use. Close it.
type Shell struct {
	// Start is when the JVM was started; Loading is when the shell printed
	// "Loading..." (the JVM is up and the file is open), CaughtUp when it printed
	// "Starting..." (Kafka's MetadataLoader has replayed every batch and applied its
	// image); both are measured from Start.
	Start             time.Time
	Loading, CaughtUp time.Duration

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	done   chan struct{}
	mu     sync.Mutex
	out    []byte        // stdout not yet consumed
	all    bytes.Buffer  // all of stdout
	signal chan struct{} // closed and replaced when out grows or the JVM exits
	stderr bytes.Buffer
	exited bool
}

// shellPrompt is what the shell prints before reading each command; on a pipe (a
// "dumb" terminal) no newline follows it and the command is not echoed.
const shellPrompt = ">> "

// StartShell starts kafka-metadata-shell on file in interactive mode and waits until
// it prompts for the first command. jvmOpts are the JVM options (nil: small and quick,
// for tests; pass KafkaJVMOptions and a heap size to measure Kafka as it ships). The
// file is read in place: the shell takes the .lock of the file's grandparent
// directory if there is one, so a live log dir is refused here (copy the file first).
// The JVM is killed when ctx ends and when this process dies.
func (o *Offline) StartShell(ctx context.Context, jvmOpts []string, file string) (*Shell, error) {
	cmd, err := o.ShellCommand(jvmOpts, file)
	if err != nil {
		return nil, err
	}
	s := &Shell{cmd: cmd, done: make(chan struct{}), signal: make(chan struct{})}
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &lockedWriter{mu: &s.mu, w: &s.stderr}
	s.Start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go s.read(stdout)
	go func() {
		select {
		case <-ctx.Done():
			s.kill()
		case <-s.done:
		}
	}()
	if _, err := s.next(ctx); err != nil { // the banner, up to the first prompt
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Shell) read(stdout io.Reader) {
	buf := make([]byte, 64<<10)
	var line []byte // the current line, to spot Loading... and Starting...
	for {
		n, err := stdout.Read(buf)
		now := time.Since(s.Start)
		s.mu.Lock()
		s.out = append(s.out, buf[:n]...)
		s.all.Write(buf[:n])
		for _, c := range buf[:n] {
			if c != '\n' {
				line = append(line, c)
				continue
			}
			switch strings.TrimSpace(string(line)) {
			case "Loading...":
				s.Loading = now
			case "Starting...":
				s.CaughtUp = now
			}
			line = line[:0]
		}
		if err != nil {
			s.exited = true
		}
		close(s.signal)
		s.signal = make(chan struct{})
		s.mu.Unlock()
		if err != nil {
			s.cmd.Wait()
			close(s.done)
			return
		}
	}
}

// next waits for the next prompt and returns what the shell printed before it.
func (s *Shell) next(ctx context.Context) (string, error) {
	for {
		s.mu.Lock()
		if i := bytes.Index(s.out, []byte(shellPrompt)); i >= 0 {
			text := string(s.out[:i])
			s.out = s.out[i+len(shellPrompt):]
			s.mu.Unlock()
			return text, nil
		}
		exited, signal := s.exited, s.signal
		s.mu.Unlock()
		if exited {
			return "", fmt.Errorf("kafkatest: kafka-metadata-shell exited: %v\n%s", s.cmd.ProcessState, s.Stderr(20))
		}
		select {
		case <-signal:
		case <-ctx.Done():
			return "", fmt.Errorf("kafkatest: kafka-metadata-shell: %w\n%s", ctx.Err(), s.Stderr(20))
		}
	}
}

// Run runs one shell command (e.g. "tree /image/topics/byName") and returns its
// output.
func (s *Shell) Run(ctx context.Context, command string) (string, error) {
	if strings.ContainsAny(command, "\n\r") {
		return "", fmt.Errorf("kafkatest: shell command %q spans lines", command)
	}
	if _, err := io.WriteString(s.stdin, command+"\n"); err != nil {
		return "", fmt.Errorf("kafkatest: kafka-metadata-shell stdin: %w", err)
	}
	return s.next(ctx)
}

var provenanceRE = regexp.MustCompile(`offset (-?\d+), epoch (-?\d+)`)

// WaitImage polls the shell's /image/provenance until the image it shows is at offset
// lastOffset or later (for a snapshot file, the in-file offset of its last metadata
// record), and returns when that was, measured from Start: the moment the shell can
// answer from the whole file. Kafka's shell publishes its image some time after
// CaughtUp; before that it shows an empty image at offset -1.
func (s *Shell) WaitImage(ctx context.Context, lastOffset int64) (time.Duration, error) {
	for {
		out, err := s.Run(ctx, "tree /image/provenance")
		if err != nil {
			return 0, err
		}
		m := provenanceRE.FindStringSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("kafkatest: unexpected provenance %q", out)
		}
		if off, _ := strconv.ParseInt(m[1], 10, 64); off >= lastOffset {
			return time.Since(s.Start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("kafkatest: shell image still at offset %s: %w", m[1], ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Transcript returns everything the shell printed on stdout so far: the banner,
// command output, and its log (log4j's default configuration logs errors there, such
// as "Ignoring control record with type SNAPSHOT_HEADER" for every snapshot, or the
// faults of records Kafka could not replay).
func (s *Shell) Transcript() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all.String()
}

// Stderr returns the last lines the shell wrote to stderr (its log).
func (s *Shell) Stderr(lines int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return tail(s.stderr.String(), lines)
}

// Close asks the shell to exit, and kills it if it has not within 10 s.
func (s *Shell) Close() {
	io.WriteString(s.stdin, "exit\n")
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.kill()
		<-s.done
	}
}

// CPU is the CPU time (user and system, all threads) the shell's JVM used from start
// to exit; it is known once Close returned, 0 before.
func (s *Shell) CPU() time.Duration {
	select {
	case <-s.done:
		return s.cmd.ProcessState.UserTime() + s.cmd.ProcessState.SystemTime()
	default:
		return 0
	}
}

func (s *Shell) kill() { KillGroup(s.cmd) }

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w.Len() > 1<<20 { // keep the tail only
		b := w.w.Bytes()
		rest := append([]byte(nil), b[len(b)-512<<10:]...)
		w.w.Reset()
		w.w.Write(rest)
	}
	return w.w.Write(p)
}
