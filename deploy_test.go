package main

import (
	"encoding/json"
	"maps"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftwatch/kraftwatch/cli"
	"go.yaml.in/yaml/v3"
)

// No Docker engine runs where the tests run, so these tests read compose.yaml and the
// Dockerfile and check them against the program itself.

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	User        string            `yaml:"user"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Profiles []string `yaml:"profiles"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

func TestComposeKraftwatchSettingsExist(t *testing.T) {
	kw := readCompose(t).Services["kraftwatch"]
	if len(kw.Environment) == 0 {
		t.Fatal("compose.yaml: kraftwatch service has no environment")
	}
	known := map[string]bool{}
	for _, s := range settings() {
		known[s[0]] = true
	}
	var environ []string
	for k, v := range kw.Environment {
		if !known[k] {
			t.Errorf("compose.yaml sets %s, which is not a kraftwatch setting", k)
		}
		environ = append(environ, k+"="+v)
	}
	if _, err := loadConfig(environ); err != nil {
		t.Errorf("compose.yaml's kraftwatch environment does not parse: %v", err)
	}
}

// TestComposeMetadataMount checks that kraftwatch reads, read-only, the volume Kafka
// writes its log dirs (and so its metadata log) to.
func TestComposeMetadataMount(t *testing.T) {
	c := readCompose(t)
	kafka, kw := c.Services["kafka"], c.Services["kraftwatch"]
	logDir := kafka.Environment["KAFKA_LOG_DIRS"]
	if md := kafka.Environment["KAFKA_METADATA_LOG_DIR"]; md != "" {
		logDir = md
	}
	if logDir == "" {
		t.Fatal("kafka service sets neither KAFKA_LOG_DIRS nor KAFKA_METADATA_LOG_DIR")
	}
	var volume string
	for _, v := range kafka.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && path.Clean(parts[1]) == path.Clean(logDir) {
			volume = parts[0]
		}
	}
	if volume == "" {
		t.Fatalf("no kafka volume is mounted at its log dir %s", logDir)
	}
	if _, ok := c.Volumes[volume]; !ok {
		t.Errorf("volume %s is not a named volume", volume)
	}
	metaDir := kw.Environment["KRAFTWATCH_METADATA_LOG_DIR"]
	found := false
	for _, v := range kw.Volumes {
		parts := strings.Split(v, ":")
		if parts[0] != volume {
			continue
		}
		found = true
		if len(parts) != 3 || !slices.Contains(strings.Split(parts[2], ","), "ro") {
			t.Errorf("kraftwatch mounts %s without :ro (%q)", volume, v)
		}
		if path.Clean(parts[1]) != path.Clean(metaDir) {
			t.Errorf("kraftwatch mounts %s at %s but KRAFTWATCH_METADATA_LOG_DIR is %s", volume, parts[1], metaDir)
		}
	}
	if !found {
		t.Fatalf("kraftwatch does not mount Kafka's volume %s", volume)
	}
	if kw.User != "1000:1000" {
		t.Errorf("kraftwatch runs as %q; Kafka's snapshots are readable by Kafka's user (1000) only", kw.User)
	}
	if kafka.Environment["KRAFTWATCH_BOOTSTRAP_SERVERS"] != "" {
		t.Error("kraftwatch setting on the kafka service")
	}
	host, port, err := net.SplitHostPort(kw.Environment["KRAFTWATCH_BOOTSTRAP_SERVERS"])
	if err != nil || host != "kafka" || !strings.Contains(kafka.Environment["KAFKA_ADVERTISED_LISTENERS"], "//kafka:"+port) {
		t.Errorf("KRAFTWATCH_BOOTSTRAP_SERVERS %q does not match Kafka's advertised listeners %q",
			kw.Environment["KRAFTWATCH_BOOTSTRAP_SERVERS"], kafka.Environment["KAFKA_ADVERTISED_LISTENERS"])
	}
}

// TestHealthChecksAndPorts checks that the health checks hit endpoints the program
// serves, on the port it listens on, and that the published and exposed ports agree.
func TestHealthChecksAndPorts(t *testing.T) {
	c := readCompose(t)
	kw := c.Services["kraftwatch"]
	_, port, err := net.SplitHostPort(kw.Environment["KRAFTWATCH_HTTP_ADDR"])
	if err != nil {
		t.Fatalf("KRAFTWATCH_HTTP_ADDR: %v", err)
	}
	srv := httptest.NewServer(httpHandler(func() []stageState { return nil }, func() error { return nil }, prometheus.NewRegistry(), nil, nil))
	defer srv.Close()
	check := func(where string, test []string) {
		t.Helper()
		if len(test) < 4 || test[0] != "CMD" || test[1] != "/kraftwatch" || test[2] != "probe" {
			t.Errorf("%s: health check %q is not /kraftwatch probe URL", where, test)
			return
		}
		u, err := url.Parse(test[3])
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if u.Port() != port {
			t.Errorf("%s: health check port %s, kraftwatch listens on %s", where, u.Port(), port)
		}
		var stderr strings.Builder
		if code := cli.Probe([]string{srv.URL + u.Path}, &stderr); code != 0 {
			t.Errorf("%s: kraftwatch probe %s exits %d: %s", where, u.Path, code, stderr.String())
		}
	}
	check("compose.yaml", kw.Healthcheck.Test)
	if !slices.ContainsFunc(kw.Ports, func(p string) bool { return strings.HasSuffix(p, ":"+port) }) {
		t.Errorf("compose.yaml publishes %v, not kraftwatch's port %s", kw.Ports, port)
	}

	df := readDockerfile(t)
	if m := regexp.MustCompile(`(?m)^EXPOSE (\d+)`).FindStringSubmatch(df); m == nil || m[1] != port {
		t.Errorf("Dockerfile EXPOSE %v, kraftwatch listens on %s", m, port)
	}
	m := regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD (\[.*\])`).FindStringSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile has no HEALTHCHECK")
	}
	var test []string
	if err := yaml.Unmarshal([]byte(m[1]), &test); err != nil {
		t.Fatal(err)
	}
	check("Dockerfile", append([]string{"CMD"}, test...))
}

func readDockerfile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDockerfileBuild checks the image is multi-stage, static, non-root, and built
// with the flags of `make build`.
func TestDockerfileBuild(t *testing.T) {
	df := readDockerfile(t)
	if n := len(regexp.MustCompile(`(?m)^FROM `).FindAllString(df, -1)); n < 2 {
		t.Errorf("Dockerfile has %d stages, want a build stage and a small final stage", n)
	}
	users := regexp.MustCompile(`(?m)^USER (\S+)`).FindAllStringSubmatch(df, -1)
	if len(users) == 0 || strings.HasPrefix(users[len(users)-1][1], "0") || strings.HasPrefix(users[len(users)-1][1], "root") {
		t.Errorf("Dockerfile's final USER is %v, want a non-root user", users)
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile(`(?m)^build:\n\t(.*)$`).FindSubmatch(mk)
	ldflags := regexp.MustCompile(`(?m)^LDFLAGS\s*\?=\s*(.*)$`).FindSubmatch(mk)
	if build == nil || ldflags == nil {
		t.Fatal("Makefile has no build target or LDFLAGS")
	}
	makeCmd := strings.ReplaceAll(string(build[1]), "$(LDFLAGS)", strings.TrimSpace(string(ldflags[1])))
	makeCmd = strings.ReplaceAll(makeCmd, "$(GO)", "go")
	for _, flag := range []string{"CGO_ENABLED=0", "-trimpath", "-ldflags '" + strings.TrimSpace(string(ldflags[1])) + "'"} {
		if !strings.Contains(makeCmd, flag) {
			t.Errorf("make build lacks %s: %s", flag, makeCmd)
		}
		if !strings.Contains(df, flag) {
			t.Errorf("Dockerfile's go build lacks %s (make build has it)", flag)
		}
	}
}

// TestComposeNetworkMode checks the layout without a shared volume: kraftwatch-network
// mounts nothing, its settings are valid, and it talks to Kafka's controller listener
// as the voters know it.
func TestComposeNetworkMode(t *testing.T) {
	c := readCompose(t)
	kafka, kw := c.Services["kafka"], c.Services["kraftwatch-network"]
	if kw.Environment == nil {
		t.Fatal("compose.yaml has no kraftwatch-network service")
	}
	if len(kw.Volumes) != 0 {
		t.Errorf("kraftwatch-network mounts %v; network mode needs no volume", kw.Volumes)
	}
	var environ []string
	known := map[string]bool{}
	for _, s := range settings() {
		known[s[0]] = true
	}
	for k, v := range kw.Environment {
		if !known[k] {
			t.Errorf("kraftwatch-network sets %s, which is not a kraftwatch setting", k)
		}
		environ = append(environ, k+"="+v)
	}
	cfg, err := loadConfig(environ)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfg.validate()
	if err != nil {
		t.Errorf("kraftwatch-network's settings are not valid: %v", err)
	}
	if !rc.networkMode() || cfg.MetadataLogDir != "" {
		t.Errorf("kraftwatch-network is not in network mode: %+v", cfg)
	}
	// KAFKA_CONTROLLER_QUORUM_VOTERS is id@host:port of the controller listener.
	voters := kafka.Environment["KAFKA_CONTROLLER_QUORUM_VOTERS"]
	_, voter, _ := strings.Cut(voters, "@")
	if cfg.ControllerBootstrapServers != voter {
		t.Errorf("KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS %q is not the controller listener %q (voters %q)",
			cfg.ControllerBootstrapServers, voter, voters)
	}
	_, port, _ := net.SplitHostPort(voter)
	if !strings.Contains(kafka.Environment["KAFKA_LISTENERS"], "CONTROLLER://:"+port) {
		t.Errorf("kafka does not listen for controllers on %s: %s", port, kafka.Environment["KAFKA_LISTENERS"])
	}
	_, httpPort, err := net.SplitHostPort(cfg.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	if len(kw.Healthcheck.Test) < 4 || !strings.Contains(kw.Healthcheck.Test[3], ":"+httpPort+"/readyz") {
		t.Errorf("kraftwatch-network health check %q does not probe /readyz on %s", kw.Healthcheck.Test, httpPort)
	}
	if !slices.ContainsFunc(kw.Ports, func(p string) bool { return strings.HasSuffix(p, ":"+httpPort) }) {
		t.Errorf("kraftwatch-network publishes %v, not its port %s", kw.Ports, httpPort)
	}
	if kw.Profiles == nil || kw.Environment["KRAFTWATCH_HTTP_ADDR"] == c.Services["kraftwatch"].Environment["KRAFTWATCH_HTTP_ADDR"] {
		t.Errorf("kraftwatch-network should be in a profile, on another port than kraftwatch")
	}
}

// TestComposeEvent checks the event one-shot: Kafka's image (its tools), the script it
// mounts exists, and it talks to the broker kraftwatch reads.
func TestComposeEvent(t *testing.T) {
	c := readCompose(t)
	ev, ok := c.Services["event"]
	if !ok {
		t.Fatal("compose.yaml has no event service")
	}
	if ev.Image != c.Services["kafka"].Image {
		t.Errorf("event runs %s, want Kafka's image %s (its tools)", ev.Image, c.Services["kafka"].Image)
	}
	if !slices.Equal(ev.Profiles, []string{"event"}) {
		t.Errorf("event has profiles %v, want [event] (docker compose up must not run it)", ev.Profiles)
	}
	if want := c.Services["kraftwatch"].Environment["KRAFTWATCH_BOOTSTRAP_SERVERS"]; ev.Environment["BOOTSTRAP"] != want {
		t.Errorf("event's BOOTSTRAP %q, kraftwatch reads %q", ev.Environment["BOOTSTRAP"], want)
	}
	if len(ev.Volumes) != 1 {
		t.Fatalf("event mounts %v, want the script", ev.Volumes)
	}
	src, _, _ := strings.Cut(ev.Volumes[0], ":")
	if _, err := os.Stat(src); err != nil {
		t.Errorf("event mounts %s: %v", src, err)
	}
}

const chartSchema = "deploy/helm/kraftwatch/values.schema.json"

// TestChartSettings checks that the chart's schema accepts as extraEnv names exactly the
// settings of kraftwatch run, so that a misspelt one fails at install; -update
// rewrites the list.
func TestChartSettings(t *testing.T) {
	b, err := os.ReadFile(chartSchema)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range settings() {
		names = append(names, s[0])
	}
	var schema struct {
		Properties struct {
			ExtraEnv struct {
				Items struct {
					Properties struct {
						Name struct {
							Enum []string `json:"enum"`
						} `json:"name"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"extraEnv"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("%s: %v", chartSchema, err)
	}
	if slices.Equal(schema.Properties.ExtraEnv.Items.Properties.Name.Enum, names) {
		return
	}
	if !*update {
		t.Fatalf("%s: extraEnv's names are not kraftwatch's settings; run: go test -run TestChartSettings -update .", chartSchema)
	}
	// The first enum after "extraEnv" is the names' (the check above says where).
	doc := string(b)
	i := strings.Index(doc, `"extraEnv": {`)
	loc := regexp.MustCompile(`(?s)"enum": \[.*?\]`).FindStringIndex(doc[i:])
	if i < 0 || loc == nil {
		t.Fatalf("%s: no extraEnv name enum", chartSchema)
	}
	indent := strings.Repeat(" ", 14)
	list := `"enum": [` + "\n" + indent + `"` + strings.Join(names, "\",\n"+indent+"\"") + "\"\n" + indent[:12] + "]"
	doc = doc[:i+loc[0]] + list + doc[i+loc[1]:]
	if err := os.WriteFile(chartSchema, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOperationsSettings checks that every KRAFTWATCH_ variable docs/operations.md
// names (its settings, in prose and in its command lines) is a setting of kraftwatch
// run; a name ending in _ (KRAFTWATCH_CONTROLLER_SASL_*) must begin some.
func TestOperationsSettings(t *testing.T) {
	b, err := os.ReadFile("docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range settings() {
		known[s[0]] = true
	}
	names := regexp.MustCompile(`\bKRAFTWATCH_[A-Z0-9_]+\b`).FindAllString(string(b), -1)
	if len(names) < 10 {
		t.Fatalf("docs/operations.md names only %d settings", len(names))
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_") {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(known)), func(s string) bool { return strings.HasPrefix(s, n) }) {
				t.Errorf("docs/operations.md names %s*, which begins no setting", n)
			}
		} else if !known[n] {
			t.Errorf("docs/operations.md names %s, which is not a setting of kraftwatch run", n)
		}
	}
}
