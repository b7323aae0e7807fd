package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestValidateReportsEveryProblem checks that each bad setting gets its own message
// naming its variable, all at once.
func TestValidateReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	cfg, err := loadConfig([]string{
		"KRAFTWATCH_METADATA_LOG_DIR=" + filepath.Join(dir, "missing"),
		"KRAFTWATCH_BOOTSTRAP_SERVERS=kafka",
		"KRAFTWATCH_KAFKA_SASL_MECHANISM=GSSAPI",
		"KRAFTWATCH_NATS_MODE=carrier-pigeon",
		"KRAFTWATCH_STREAM_REPLICAS=7",
		"KRAFTWATCH_STREAM_MAX_AGE=soon",
		"KRAFTWATCH_HASH_SCHEME=md5",
		"KRAFTWATCH_GROUP_EXCLUDE=(",
		"KRAFTWATCH_HTTP_ADDR=8080",
		"KRAFTWATCH_LOG_LEVEL=loud",
		"KRAFTWATCH_LOG_FORMAT=xml",
		"KRAFTWATCH_CONTROLLER_MAX_UNCOMMITTED_BYTES=0",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, verr := cfg.validate()
	errs := splitErrors(verr)
	want := []string{"METADATA_LOG_DIR", "BOOTSTRAP_SERVERS", "KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME",
		"KAFKA_SASL_PASSWORD", "NATS_MODE", "STREAM_REPLICAS", "STREAM_MAX_AGE", "HASH_SCHEME", "GROUP_EXCLUDE",
		"HTTP_ADDR", "LOG_LEVEL", "LOG_FORMAT", "CONTROLLER_MAX_UNCOMMITTED_BYTES"}
	if len(errs) != len(want) {
		t.Errorf("%d errors, want %d: %v", len(errs), len(want), errs)
	}
	for _, w := range want {
		found := false
		for _, e := range errs {
			found = found || strings.HasPrefix(e.Error(), "KRAFTWATCH_"+w+":")
		}
		if !found {
			t.Errorf("no error for KRAFTWATCH_%s in %v", w, errs)
		}
	}
}

func TestValidDefaultsAndClusterID(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "__cluster_metadata-0")
	if err := os.Mkdir(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	props := "#\nnode.id=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\nversion=1\n"
	if err := os.WriteFile(filepath.Join(dir, "meta.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig([]string{"KRAFTWATCH_METADATA_LOG_DIR=" + dir, "KRAFTWATCH_BOOTSTRAP_SERVERS=a:9092,b:9092"})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfg.validate()
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, v := range []string{"none", "MY_EVENTS"} {
		c := cfg
		c.EventsStream = v
		if _, err := c.validate(); err != nil {
			t.Errorf("KRAFTWATCH_EVENTS_STREAM=%s: %v", v, err)
		}
	}
	if rc.metadataDir != meta {
		t.Errorf("metadataDir = %s, want %s", rc.metadataDir, meta)
	}
	if id, err := rc.readClusterID(); err != nil || id != "MkU3OEVBNTcwNTJENDM2Qk" {
		t.Errorf("clusterID = %q, %v", id, err)
	}
	cfg.Kafka.TLSInsecure = true
	if d, err := cfg.Kafka.Dialer(); err != nil || d.TLS == nil || !d.TLS.InsecureSkipVerify {
		t.Errorf("KAFKA_TLS_INSECURE_SKIP_VERIFY alone should turn TLS on: %+v %v", d, err)
	}
}

// TestBadConfigExitCode runs `kraftwatch run` with a bad environment: exit code 2
// and one line per problem.
func TestBadConfigExitCode(t *testing.T) {
	var stdout, stderr strings.Builder
	code := mainCode([]string{"run"}, []string{"KRAFTWATCH_STREAM_REPLICAS=0"}, &stdout, &stderr)
	if code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	for _, v := range []string{"KRAFTWATCH_METADATA_LOG_DIR:", "KRAFTWATCH_BOOTSTRAP_SERVERS:", "KRAFTWATCH_STREAM_REPLICAS:"} {
		if !strings.Contains(stderr.String(), v) {
			t.Errorf("stderr lacks %s:\n%s", v, stderr.String())
		}
	}
	stderr.Reset()
	if code := mainCode([]string{"run"}, []string{"KRAFTWATCH_KAFKA_TLS=maybe"}, &stdout, &stderr); code != 2 {
		t.Errorf("unparsable bool: exit code %d, want 2 (%s)", code, stderr.String())
	}
}

// TestNetworkModeConfig checks the choice between the two metadata sources and the
// controller listener's security settings.
func TestNetworkModeConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		want []string // variables with an error, in any order
	}{
		{"neither", nil, []string{"METADATA_LOG_DIR"}},
		{"both", []string{"KRAFTWATCH_METADATA_LOG_DIR=" + dir, "KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS=c:9093"},
			[]string{"CONTROLLER_BOOTSTRAP_SERVERS"}},
		{"network", []string{"KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS=c1:9093, c2:9093"}, nil},
		{"not host:port", []string{"KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS=c1"}, []string{"CONTROLLER_BOOTSTRAP_SERVERS"}},
		{"blank", []string{"KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS= , "}, []string{"CONTROLLER_BOOTSTRAP_SERVERS"}},
		{"controller security", []string{"KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS=c:9093",
			"KRAFTWATCH_CONTROLLER_SASL_MECHANISM=SCRAM-SHA-512", "KRAFTWATCH_CONTROLLER_TLS_CERT_FILE=" + filepath.Join(dir, "nope.pem")},
			[]string{"CONTROLLER_SASL_USERNAME", "CONTROLLER_SASL_PASSWORD", "CONTROLLER_TLS_CERT_FILE", "CONTROLLER_TLS_CERT_FILE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(append(tc.env, "KRAFTWATCH_BOOTSTRAP_SERVERS=b:9092"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			rc, verr := cfg.validate()
			for _, e := range splitErrors(verr) {
				if e == nil {
					continue
				}
				name, msg, _ := strings.Cut(strings.TrimPrefix(e.Error(), "KRAFTWATCH_"), ":")
				got = append(got, name)
				if strings.Contains(msg, "KAFKA_") && strings.HasPrefix(name, "CONTROLLER_") {
					t.Errorf("a controller setting's message names a KAFKA_ variable: %v", e)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("errors for %v, want %v", got, want)
			}
			if tc.name == "network" {
				oc, err := rc.observerConfig("")
				if err != nil || !slices.Equal(oc.Controllers, []string{"c1:9093", "c2:9093"}) || oc.Dir != "" || oc.Principal != "User:ANONYMOUS" {
					t.Errorf("observerConfig = %+v, %v", oc, err)
				}
			}
		})
	}
	for _, s := range settings() {
		if strings.HasPrefix(s[0], "KRAFTWATCH_CONTROLLER_") && strings.Contains(s[2], "KAFKA_") {
			t.Errorf("%s's description names a KAFKA_ variable: %s", s[0], s[2])
		}
	}
}

// TestEveryConfigErrorNamed: values of the wrong type, NATS URLs, unreadable and
// unwritable directories and ports each get an error naming their variable, all at once,
// with exit code 2.
func TestEveryConfigErrorNamed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		want []string // variables named in stderr
	}{
		{"types", []string{"KRAFTWATCH_KAFKA_TLS=maybe", "KRAFTWATCH_EMBEDDED_NATS_PORT=abc", "KRAFTWATCH_HASH_SCHEME=x"},
			[]string{"KAFKA_TLS: \"maybe\" is not true or false", "EMBEDDED_NATS_PORT: \"abc\" is not an integer", "HASH_SCHEME:", "METADATA_LOG_DIR:"}},
		{"not a url", []string{"KRAFTWATCH_NATS_URL=::not a url::"}, []string{"NATS_URL: \"::not a url::\""}},
		{"no scheme separator", []string{"KRAFTWATCH_NATS_URL=http//127.0.0.1:4222"}, []string{"NATS_URL: \"http//127.0.0.1:4222\" is not a NATS URL"}},
		{"http scheme", []string{"KRAFTWATCH_NATS_URL=nats://a:4222,http://b:4222"}, []string{"NATS_URL: \"http://b:4222\": scheme \"http\""}},
		{"metadata dir is a file", []string{"KRAFTWATCH_METADATA_LOG_DIR=" + file}, []string{"METADATA_LOG_DIR: " + file + " is not a directory"}},
		{"embedded store under a file", []string{"KRAFTWATCH_EMBEDDED_NATS_DIR=" + filepath.Join(file, "js")}, []string{"EMBEDDED_NATS_DIR:"}},
		{"http port", []string{"KRAFTWATCH_HTTP_ADDR=:http8080"}, []string{"HTTP_ADDR: \":http8080\": port"}},
		{"events stream name", []string{"KRAFTWATCH_EVENTS_STREAM=a.b"}, []string{"EVENTS_STREAM: \"a.b\" is not none or a stream name"}},
		{"events stream is the stream", []string{"KRAFTWATCH_STREAM_NAME=KW", "KRAFTWATCH_EVENTS_STREAM=KW"}, []string{"EVENTS_STREAM: \"KW\" is STREAM_NAME too"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			env := append([]string{"KRAFTWATCH_BOOTSTRAP_SERVERS=k:9092"}, tc.env...)
			if !slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, "KRAFTWATCH_METADATA_LOG_DIR=") }) &&
				!slices.Contains(tc.want, "METADATA_LOG_DIR:") {
				env = append(env, "KRAFTWATCH_METADATA_LOG_DIR="+dir)
			}
			if code := mainCode([]string{"run"}, env, &stdout, &stderr); code != 2 {
				t.Fatalf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), "KRAFTWATCH_"+w) {
					t.Errorf("stderr lacks KRAFTWATCH_%s:\n%s", w, stderr.String())
				}
			}
		})
	}
	t.Run("unreadable metadata dir", func(t *testing.T) {
		if os.Geteuid() == 0 {
			asNobody(t)
			return
		}
		locked := filepath.Join(t.TempDir(), "locked")
		if err := os.Mkdir(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		var stdout, stderr strings.Builder
		code := mainCode([]string{"run"}, []string{"KRAFTWATCH_BOOTSTRAP_SERVERS=k:9092", "KRAFTWATCH_METADATA_LOG_DIR=" + locked}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "KRAFTWATCH_METADATA_LOG_DIR: "+locked+" cannot be read") {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
		}
	})
}

// asNobody runs the calling test again in a copy of the test binary as user nobody
// (root reads a directory of mode 000, so permission checks need another user), and
// fails when that run fails.
func asNobody(t *testing.T) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("running as root without setpriv (util-linux) to test as another user: %v", err)
	}
	dir, err := os.MkdirTemp("", "kraftwatch-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "config.test")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", exe,
		"-test.run=^"+strings.ReplaceAll(t.Name(), "/", "$/^")+"$", "-test.v")
	cmd.Dir, cmd.Env = dir, []string{"TMPDIR=" + dir, "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
