// Command demo is `make demo`: kraftwatch end to end on this machine. It starts a
// two-broker KRaft Kafka from the pinned release's jars (internal/kafkatest), runs
// kraftwatch with its embedded NATS server and `kraftwatch watch` beside it, makes the
// changes that need a rebalance, prints each rebalance-needed event as it arrives, and
// cleans everything up. With -keep it leaves everything running after the scenario and
// prints where to look, until Ctrl-C.
//
// Ctrl-C (SIGINT to the terminal's process group) reaches only make and the demo:
// every process the demo starts runs in a process group of its own, so the demo stops
// them in order, removes its directory and exits 0, which leaves make quiet.
//
//	go build -o bin/demo ./tools/demo && bin/demo -kraftwatch bin/kraftwatch [-keep]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

func main() {
	bin := flag.String("kraftwatch", "bin/kraftwatch", "the kraftwatch binary")
	keep := flag.Bool("keep", false, "leave Kafka and kraftwatch running after the scenario, until Ctrl-C")
	flag.Parse()
	os.Exit(runUntilSignal(func(ctx context.Context) error { return demo(ctx, *bin, *keep) }))
}

// runUntilSignal runs fn until it returns or SIGINT or SIGTERM arrives, and returns the
// exit code: 0 when fn succeeds or was stopped by a signal (the user asked for it), 1
// when it failed on its own.
func runUntilSignal(fn func(ctx context.Context) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := fn(ctx)
	switch {
	case ctx.Err() != nil:
		fmt.Println("\n==> Stopped; everything the demo started is gone.")
		return 0
	case err != nil:
		fmt.Fprintf(os.Stderr, "\ndemo failed: %v\n", err)
		return 1
	}
	return 0
}

// command is exec.Command for a process of the demo's: in a process group of its own,
// so that Ctrl-C reaches only the demo, which stops it; killed if the demo dies.
func command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// stop ends a process started by command: SIGTERM, then SIGKILL after 10 s.
func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

func say(format string, args ...any) {
	fmt.Printf("\n==> "+format+"\n", args...)
}

// warmRun is how long a warm `make demo` took on a 2-core machine (nothing to compile
// or download); README.md says the same.
const warmRun = "40-45 seconds"

func demo(ctx context.Context, bin string, keep bool) (err error) {
	began := time.Now()
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kraftwatch-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	fmt.Printf("kraftwatch demo: %s when nothing needs compiling; Ctrl-C stops it and cleans up.\n", warmRun)
	say("Starting Apache Kafka %s (KRaft): node 1 controller+broker in rack-a, node 2 broker in rack-b", kafkatest.Version())
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	c, err := kafkatest.Start(startCtx, dir, kafkatest.Options{Rack: "rack-a", Brokers: []string{"rack-b"}}, nil)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		say("Cleaning up: stopping Kafka and kraftwatch, removing %s", dir)
		c.Close()
	}()
	fmt.Printf("    cluster %s, bootstrap %s, metadata log %s\n", c.ClusterID, c.Bootstrap(), c.Nodes[0].MetadataLogDir())

	natsPort, httpPort := freePort(), freePort()
	say("Starting kraftwatch (embedded NATS with JetStream on 127.0.0.1:%d, HTTP on :%d)", natsPort, httpPort)
	kw := command(bin, "run")
	kw.Env = append(os.Environ(),
		"KRAFTWATCH_METADATA_LOG_DIR="+c.Nodes[0].LogDir,
		"KRAFTWATCH_BOOTSTRAP_SERVERS="+c.Bootstrap(),
		fmt.Sprintf("KRAFTWATCH_EMBEDDED_NATS_PORT=%d", natsPort),
		"KRAFTWATCH_EMBEDDED_NATS_DIR="+filepath.Join(dir, "nats"),
		fmt.Sprintf("KRAFTWATCH_HTTP_ADDR=127.0.0.1:%d", httpPort),
		"KRAFTWATCH_LOG_FORMAT=text",
		"KRAFTWATCH_LOG_LEVEL=info",
	)
	kwLog, err := os.Create(filepath.Join(dir, "kraftwatch.log"))
	if err != nil {
		return err
	}
	kw.Stdout, kw.Stderr = kwLog, kwLog
	if err := kw.Start(); err != nil {
		return err
	}
	defer func() {
		stop(kw)
		if err != nil && ctx.Err() == nil {
			b, _ := os.ReadFile(kwLog.Name())
			fmt.Printf("\nkraftwatch's log (%s):\n%s", kwLog.Name(), tail(string(b), 40))
		}
	}()
	if err := waitReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", httpPort), 2*time.Minute); err != nil {
		kwLog.Close()
		b, _ := os.ReadFile(kwLog.Name())
		return fmt.Errorf("kraftwatch not ready: %w\n%s", err, b)
	}
	base, natsURL := fmt.Sprintf("http://127.0.0.1:%d", httpPort), fmt.Sprintf("nats://127.0.0.1:%d", natsPort)
	fmt.Printf("    kraftwatch is ready: %s/readyz answers 200\n", base)

	say("Watching events: kraftwatch watch --nats %s", natsURL)
	watch := command(bin, "watch", "--nats", natsURL)
	out, err := watch.StdoutPipe()
	if err != nil {
		return err
	}
	watch.Stderr = io.Discard
	if err := watch.Start(); err != nil {
		return err
	}
	defer stop(watch)
	events := make(chan string, 64)
	go func() {
		s := bufio.NewScanner(out)
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			events <- s.Text()
		}
		close(events)
	}()
	time.Sleep(500 * time.Millisecond)

	step := func(what string, fn func() error, want int) error {
		say("%s", what)
		if err := fn(); err != nil {
			return err
		}
		return show(ctx, events, want, 30*time.Second)
	}
	if err := step("Creating topic orders (3 partitions, replication factor 2)",
		func() error { return c.CreateTopic(ctx, "orders", 3, 2) }, 0); err != nil {
		return err
	}
	say("Starting a KIP-848 consumer group 'billing' on orders (Kafka's own Java client)")
	m, err := c.StartMember(ctx, "billing", kafkatest.KindConsumer, []string{"orders"}, "")
	if err != nil {
		return err
	}
	defer m.Close()
	if _, err := m.WaitFor(ctx, "assigned "); err != nil {
		return err
	}
	if err := show(ctx, events, 1, 30*time.Second); err != nil {
		return err
	}
	if err := step("Adding partitions: orders 3 -> 6",
		func() error { return c.AlterPartitions(ctx, "orders", 6) }, 1); err != nil {
		return err
	}
	rack := "rack-c"
	if err := step("Restarting broker 2 with broker.rack=rack-c (the racks of orders' replicas change)",
		func() error { return c.Nodes[1].Restart(ctx, &rack) }, 1); err != nil {
		return err
	}
	if err := step("Creating topic audit, which no group reads (no event expected)",
		func() error { return c.CreateTopic(ctx, "audit", 1, 1) }, 0); err != nil {
		return err
	}
	say("Done in %s: every change that needs a rebalance of 'billing' was announced once.", time.Since(began).Round(time.Second))
	if !keep {
		return nil
	}
	say("Left running (KEEP=1) until Ctrl-C, which stops everything and removes %s. Explore:", dir)
	for _, l := range explore(bin, base, natsURL, c.Bootstrap(), c.Nodes[0].MetadataLogDir()) {
		fmt.Println("    " + l)
	}
	say("New events appear below as they arrive.")
	return show(ctx, events, -1, 0)
}

// explore is what -keep prints: where to look while the demo runs.
func explore(bin, base, natsURL, bootstrap, metadataDir string) []string {
	rel := bin
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, bin); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	var out []string
	for _, l := range [][2]string{
		{"metrics", base + "/metrics"},
		{"readiness", base + "/readyz"},
		{"group state API", base + "/v1/groups"},
		{"groups", rel + " groups --url " + base},
		{"what if", rel + " whatif --url " + base + " --add-partitions orders=12"},
		{"events", rel + " watch --nats " + natsURL + " --since 1h"},
		{"metadata log", rel + " dump " + metadataDir},
		{"Kafka", bootstrap + " (topics orders and audit, group billing)"},
	} {
		out = append(out, fmt.Sprintf("%-16s %s", l[0], l[1]))
	}
	return out
}

// show prints events for a while: want of them, or whatever arrives within a short
// quiet period when want is 0. With want -1 it prints them until ctx ends.
func show(ctx context.Context, events <-chan string, want int, timeout time.Duration) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		deadline = time.After(timeout)
	}
	quiet := 3 * time.Second
	for got := 0; ; {
		var idle <-chan time.Time
		if want >= 0 && got >= want {
			idle = time.After(quiet)
		}
		select {
		case e, ok := <-events:
			if !ok {
				return fmt.Errorf("kraftwatch watch stopped")
			}
			fmt.Printf("    event: %s\n", e)
			got++
		case <-idle:
			if got == 0 {
				fmt.Println("    (no event)")
			}
			return nil
		case <-deadline:
			return fmt.Errorf("waited %v for %d event(s), saw %d", timeout, want, got)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func waitReady(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = strings.TrimSpace(string(b))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("after %v: %s", timeout, last)
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n") + "\n"
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
