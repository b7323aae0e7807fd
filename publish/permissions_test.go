package publish_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events/follow"
	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// TestLeastPermissions runs deploy/nats/kraftwatch.conf, the account docs/operations.md
// gives, on a nats-server process: as its kraftwatch user a publisher creates its
// streams and publishes, and one started again reads the last events back; as its
// reader user a core subscriber of kraftwatch.> gets every event, and a durable
// follow.Run subscriber reads them all from the events stream. Each user is refused what
// it need not do: kraftwatch publishing to the public subjects (only the stream may),
// the reader deleting a stream or publishing an event.
func TestLeastPermissions(t *testing.T) {
	root, err := kafkatest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	account, err := os.ReadFile(filepath.Join(root, "deploy", "nats", "kraftwatch.conf"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := fmt.Sprintf("listen: 127.0.0.1:%d\njetstream {store_dir: %q}\ninclude ./kraftwatch.conf\n", port, filepath.Join(dir, "js"))
	for name, content := range map[string]string{"server.conf": conf, "kraftwatch.conf": string(account)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	cmd := exec.Command(natstest.Binary(t), "-c", filepath.Join(dir, "server.conf"))
	cmd.Env = append(os.Environ(), "KRAFTWATCH_NATS_PASSWORD=kw-secret", "READER_NATS_PASSWORD=reader-secret")
	out := &lockedBuilder{b: &log}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("nats-server log:\n%s", log.String())
		}
	})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)

	// violations collects the permission errors the server reports to each user.
	var mu sync.Mutex
	violations := map[string][]string{}
	as := func(user, password string) *nats.Conn {
		t.Helper()
		var nc *nats.Conn
		waitFor(t, 30*time.Second, "nats-server to accept "+user, func() bool {
			nc, err = nats.Connect(url, nats.UserInfo(user, password), nats.Name(user),
				nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
					mu.Lock()
					defer mu.Unlock()
					violations[user] = append(violations[user], err.Error())
				}))
			return err == nil
		})
		t.Cleanup(nc.Close)
		return nc
	}
	kw, reader := as("kraftwatch", "kw-secret"), as("reader", "reader-secret")
	if _, err := nats.Connect(url, nats.UserInfo("reader", "wrong")); err == nil {
		t.Fatal("a wrong password was accepted")
	}

	core := subscribeCore(t, reader, "kraftwatch.>")
	p := newPublisher(t, baseConfig(t, kw))
	r := start(t, p)
	const n = 3
	groups := []string{"billing", "my.app"}
	for k := range n {
		for _, g := range groups {
			enqueue(t, p, transition(g, k))
		}
	}
	waitFor(t, 30*time.Second, "events published", finished(p, uint64(n*len(groups))))
	if s := p.Stats(); s.Published != uint64(n*len(groups)) || s.Failed != 0 {
		t.Fatalf("as kraftwatch: stats %+v, want %d published, no failure", s, n*len(groups))
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	again := newPublisher(t, baseConfig(t, kw))
	last, err := again.LoadLastPublished(context.Background())
	if err != nil || len(last) != len(groups) {
		t.Fatalf("as kraftwatch, started again: LoadLastPublished = %d groups, %v; want %d", len(last), err, len(groups))
	}
	msgs := readStream(t, kw, "kraftwatch")
	core.exactlyStored(t, msgs)

	// The reader follows the events stream with a durable consumer.
	js, err := jetstream.New(reader)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	err = follow.Run(ctx, js, follow.Config{ClusterID: clusterID, Durable: "reader"}, func(_ context.Context, d follow.Delivery) error {
		got = append(got, d.Subject)
		if len(got) == n*len(groups) {
			cancel()
		}
		return nil
	})
	if len(got) != n*len(groups) {
		t.Fatalf("as reader: follow.Run read %d events, want %d: %v", len(got), n*len(groups), err)
	}

	// What each user need not do is refused.
	if err := kw.Publish("kraftwatch."+clusterID+".group.consumer.forged", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := reader.Publish("_kraftwatch.kraftwatch."+clusterID+".group.consumer.forged", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	rjs, _ := jetstream.New(reader)
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer dcancel()
	if err := rjs.DeleteStream(dctx, "KRAFTWATCH_"+clusterID+"_EVENTS"); err == nil {
		t.Error("as reader: deleting the events stream succeeded")
	}
	kw.Flush()
	reader.Flush()
	waitFor(t, 10*time.Second, "both users' violations reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return refused(violations["kraftwatch"], "kraftwatch.") && refused(violations["reader"], "_kraftwatch.") &&
			refused(violations["reader"], "$JS.API.STREAM.DELETE")
	})
	if after := readStream(t, kw, "kraftwatch"); len(after) != len(msgs) {
		t.Errorf("the stream holds %d subjects after the refused publishes, want %d", len(after), len(msgs))
	}
}

// refused reports whether one of errs is a publish permissions violation for a subject
// starting with prefix.
func refused(errs []string, prefix string) bool {
	for _, e := range errs {
		if strings.Contains(e, "Permissions Violation for Publish to \""+prefix) {
			return true
		}
	}
	return false
}

// lockedBuilder is a strings.Builder for two writers (a process's stdout and stderr).
type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedBuilder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
