package e2etest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// shared holds what lives as long as the test binary: the clusters of Shared and the
// binary of Binary, removed by Main.
var shared struct {
	mu       sync.Mutex
	clusters map[string]*sharedCluster
	dirs     []string // temporary directories to remove
	build    func() (string, error)
}

type sharedCluster struct {
	once sync.Once
	c    *kafkatest.Cluster
	err  error
}

// Shared returns the Kafka cluster called name, started with opts by the first test
// that asks for it and shared by every later test of the test binary (a later call's
// opts are not looked at). It skips t as kafkatest.RequireTools does when Java is
// missing; it fails t when the cluster did not start.
func Shared(t testing.TB, name string, opts kafkatest.Options) *kafkatest.Cluster {
	t.Helper()
	kafkatest.RequireTools(t)
	shared.mu.Lock()
	if shared.clusters == nil {
		shared.clusters = map[string]*sharedCluster{}
	}
	sc := shared.clusters[name]
	if sc == nil {
		sc = &sharedCluster{}
		shared.clusters[name] = sc
	}
	shared.mu.Unlock()
	sc.once.Do(func() {
		start := time.Now()
		dir, err := tempDir("kraftwatch-e2e-" + name + "-")
		if err != nil {
			sc.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		sc.c, sc.err = kafkatest.Start(ctx, dir, opts, t.Logf)
		t.Logf("e2etest: shared Kafka %q ready in %v", name, time.Since(start).Round(time.Millisecond))
	})
	if sc.err != nil {
		t.Fatalf("e2etest: shared Kafka %q: %v", name, sc.err)
	}
	return sc.c
}

// Binary returns the path of the kraftwatch binary, built by the first call of the test
// binary (with -race when the test binary has the race detector).
func Binary(t testing.TB) string {
	t.Helper()
	shared.mu.Lock()
	if shared.build == nil {
		shared.build = sync.OnceValues(build)
	}
	b := shared.build
	shared.mu.Unlock()
	start := time.Now()
	bin, err := b()
	if err != nil {
		t.Fatalf("e2etest: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("e2etest: kraftwatch binary (race detector: %v) ready after %v", raceEnabled, d.Round(time.Millisecond))
	}
	return bin
}

func build() (string, error) {
	root, err := kafkatest.RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := tempDir("kraftwatch-e2e-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kraftwatch")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build kraftwatch: %w\n%s", err, out)
	}
	return bin, nil
}

// tempDir makes a directory that Main removes.
func tempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	shared.mu.Lock()
	shared.dirs = append(shared.dirs, dir)
	shared.mu.Unlock()
	return dir, nil
}

// Main runs the tests, then stops the shared clusters and removes the binary; a test
// package's TestMain calls os.Exit(e2etest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, sc := range shared.clusters {
		if sc.c != nil {
			sc.c.Close()
		}
	}
	for _, dir := range shared.dirs {
		os.RemoveAll(dir)
	}
	return code
}

// FreePort returns a TCP port of 127.0.0.1 that nothing listened on a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
