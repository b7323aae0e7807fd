// Command demo is `make demo`: kraftwatch end to end on this machine. It starts a
// two-broker KRaft Kafka from the pinned release's jars (internal/kafkatest), runs
// kraftwatch with its embedded NATS server and `kraftwatch watch` beside it, makes the
// changes that need a rebalance, prints each rebalance-needed event as it arrives, and
// cleans everything up.
//
//	go run ./tools/demo -kraftwatch bin/kraftwatch
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
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := demo(ctx, *bin); err != nil {
		fmt.Fprintf(os.Stderr, "\ndemo failed: %v\n", err)
		os.Exit(1)
	}
}

func say(format string, args ...any) {
	fmt.Printf("\n==> "+format+"\n", args...)
}

func demo(ctx context.Context, bin string) (err error) {
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kraftwatch-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

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
	kw := exec.Command(bin, "run")
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
	kw.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := kw.Start(); err != nil {
		return err
	}
	defer func() {
		kw.Process.Signal(syscall.SIGTERM)
		kw.Wait()
		if err != nil {
			b, _ := os.ReadFile(kwLog.Name())
			fmt.Printf("\nkraftwatch's log (%s):\n%s", kwLog.Name(), tail(string(b), 40))
		}
	}()
	if err := waitReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", httpPort), 2*time.Minute); err != nil {
		kwLog.Close()
		b, _ := os.ReadFile(kwLog.Name())
		return fmt.Errorf("kraftwatch not ready: %w\n%s", err, b)
	}
	fmt.Printf("    kraftwatch is ready: http://127.0.0.1:%d/readyz answers 200, metrics on /metrics\n", httpPort)

	say("Watching events: kraftwatch watch --nats nats://127.0.0.1:%d", natsPort)
	watch := exec.Command(bin, "watch", "--nats", fmt.Sprintf("nats://127.0.0.1:%d", natsPort))
	watch.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := watch.StdoutPipe()
	if err != nil {
		return err
	}
	watch.Stderr = io.Discard
	if err := watch.Start(); err != nil {
		return err
	}
	defer func() {
		watch.Process.Signal(syscall.SIGTERM)
		watch.Wait()
	}()
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
	say("Done: every change that needs a rebalance of 'billing' was announced once.")
	return nil
}

// show prints events for a while: want of them, or whatever arrives within a short
// quiet period when want is 0.
func show(ctx context.Context, events <-chan string, want int, timeout time.Duration) error {
	deadline := time.After(timeout)
	quiet := 3 * time.Second
	for got := 0; ; {
		var idle <-chan time.Time
		if got >= want {
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
