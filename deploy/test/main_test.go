package deploytest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tools, at the versions the tests pin. Each is built with `go install pkg@version`
// against its own go.mod (not this module's), into .cache/bin/<name>-<version>[-<variant>].
//   - helm with the -X flags of Helm's own Makefile: its version, and the Kubernetes
//     version of its client-go (1.37), which `helm install --dry-run` and `helm lint`
//     assume (a plain go install would assume 1.20);
//   - promtool without Prometheus's service discovery plugins (Prometheus's own
//     remove_all_sd tag: a fifth fewer packages to compile, nothing the rule commands use).
var tools = map[string]struct{ pkg, variant, tags, ldflags string }{
	"helm": {"helm.sh/helm/v3/cmd/helm@v3.22.0", "k8s1.37", "",
		"-X helm.sh/helm/v3/internal/version.version=v3.22.0" +
			" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37" +
			" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37"},
	"kubeconform": {"github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0", "", "", ""},
	"promtool":    {"github.com/prometheus/prometheus/cmd/promtool@v0.316.0", "nosd", "remove_all_sd", ""},
}

// kubeVersion is the Kubernetes version the chart is rendered for: that of the schemas
// (client-go v0.37.0, see k8sschema).
const kubeVersion = "1.37.0"

var (
	repoRoot = filepath.Clean("../..")

	toolMu   sync.Mutex
	toolPath = map[string]string{}

	// What the kraftwatch binary built from the work tree says about itself.
	settings map[string]bool // every KRAFTWATCH_* setting (kraftwatch --help)
	metrics  map[string]bool // every metric family on /metrics
	// metricLabels are the label names of each series name on /metrics.
	metricLabels map[string]map[string]bool
	kwBinary     string            // path of the binary
	endpoints    map[string]int    // status of each probed path on a running kraftwatch
	httpBody     map[string]string // body of each probed path
)

func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "deploytest:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func setup() error {
	dir, err := os.MkdirTemp("", "deploytest-")
	if err != nil {
		return err
	}
	kwBinary = filepath.Join(dir, "kraftwatch")
	build := exec.Command("go", "build", "-o", kwBinary, ".")
	build.Dir, build.Stdout, build.Stderr = repoRoot, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building kraftwatch: %w", err)
	}
	if settings, err = helpSettings(); err != nil {
		return err
	}
	return probeRunning(dir)
}

// buildTool returns the cached binary of pkg@version under .cache/bin, building it on
// first use.
func buildTool(name string) (string, error) {
	tl := tools[name]
	_, version, _ := strings.Cut(tl.pkg, "@")
	sub := name + "-" + version
	if tl.variant != "" {
		sub += "-" + tl.variant
	}
	dir, err := filepath.Abs(filepath.Join(repoRoot, ".cache", "bin", sub))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintf(os.Stderr, "deploytest: building %s into %s (once)\n", tl.pkg, dir)
	start := time.Now()
	cmd := exec.Command("go", "install", "-tags="+tl.tags, "-ldflags="+tl.ldflags, tl.pkg)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s: %w", tl.pkg, err)
	}
	fmt.Fprintf(os.Stderr, "deploytest: built %s in %s\n", name, time.Since(start).Round(time.Second))
	return bin, nil
}

// helpSettings reads the settings table `kraftwatch --help` prints.
func helpSettings() (map[string]bool, error) {
	out, err := exec.Command(kwBinary, "--help").Output()
	if err != nil {
		return nil, fmt.Errorf("kraftwatch --help: %w", err)
	}
	s := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && strings.HasPrefix(f[0], "KRAFTWATCH_") {
			s[f[0]] = true
		}
	}
	if len(s) < 10 {
		return nil, fmt.Errorf("kraftwatch --help lists only %d settings:\n%s", len(s), out)
	}
	return s, nil
}

// probeRunning starts kraftwatch (disk mode on an empty directory, embedded NATS, no
// Kafka: it serves HTTP but is never ready), records what /livez, /readyz and /metrics
// answer, reads the metric families, and stops it.
func probeRunning(dir string) error {
	httpPort, natsPort := freePort(), freePort()
	md := filepath.Join(dir, "metadata")
	if err := os.Mkdir(md, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(kwBinary, "run")
	cmd.Env = []string{
		"KRAFTWATCH_METADATA_LOG_DIR=" + md, "KRAFTWATCH_CLUSTER_ID=deploytest",
		"KRAFTWATCH_BOOTSTRAP_SERVERS=127.0.0.1:9", "KRAFTWATCH_HTTP_ADDR=" + fmt.Sprintf("127.0.0.1:%d", httpPort),
		fmt.Sprintf("KRAFTWATCH_EMBEDDED_NATS_PORT=%d", natsPort), "KRAFTWATCH_EMBEDDED_NATS_DIR=" + filepath.Join(dir, "nats"),
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	endpoints, httpBody = map[string]int{}, map[string]string{}
	for _, path := range []string{"/livez", "/readyz", "/metrics", "/no-such-path"} {
		for {
			resp, err := http.Get(base + path)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				endpoints[path], httpBody[path] = resp.StatusCode, string(b)
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kraftwatch never served %s: %v\n%s", path, err, log.String())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	metrics, metricLabels = map[string]bool{}, map[string]map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllStringSubmatch(httpBody["/metrics"], -1) {
		metrics[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`(?m)^(\w+)\{(.*)\} `).FindAllStringSubmatch(httpBody["/metrics"], -1) {
		if metricLabels[m[1]] == nil {
			metricLabels[m[1]] = map[string]bool{}
		}
		for _, l := range regexp.MustCompile(`(\w+)="`).FindAllStringSubmatch(m[2], -1) {
			metricLabels[m[1]][l[1]] = true
		}
	}
	if !metrics["kraftwatch_ready"] {
		return fmt.Errorf("/metrics has no kraftwatch_ready:\n%s", httpBody["/metrics"])
	}
	// Families with a series per __consumer_offsets partition have none until the
	// partitions are listed (never here, without Kafka); README's metrics table is
	// generated from the same registry and lists them.
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		return err
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `(kraftwatch_group_reader_\\w+)` \\| gauge \\|").FindAllStringSubmatch(string(readme), -1) {
		metrics[m[1]] = true
	}
	return nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// served reports whether a running kraftwatch serves path (a 404 is not serving it;
// /readyz answers 503 while not ready).
func served(path string) bool {
	code, ok := endpoints[path]
	return ok && code != http.StatusNotFound && endpoints["/no-such-path"] == http.StatusNotFound
}

// run runs a tool, built on first use, and returns its combined output.
func run(t *testing.T, tool string, args ...string) (string, error) {
	t.Helper()
	toolMu.Lock()
	bin, ok := toolPath[tool]
	if !ok {
		var err error
		if bin, err = buildTool(tool); err != nil {
			toolMu.Unlock()
			t.Fatal(err)
		}
		toolPath[tool] = bin
	}
	toolMu.Unlock()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
