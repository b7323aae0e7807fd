package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
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
		"KRAFTWATCH_QUORUM_REQUEST_TIMEOUT=0s",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, verr := cfg.validate()
	errs := splitErrors(verr)
	want := []string{"METADATA_LOG_DIR", "BOOTSTRAP_SERVERS", "KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME",
		"KAFKA_SASL_PASSWORD", "NATS_MODE", "STREAM_REPLICAS", "STREAM_MAX_AGE", "HASH_SCHEME", "GROUP_EXCLUDE",
		"HTTP_ADDR", "LOG_LEVEL", "LOG_FORMAT", "CONTROLLER_MAX_UNCOMMITTED_BYTES", "QUORUM_REQUEST_TIMEOUT"}
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
	if rc, err := cfg.validate(); err != nil || rc.kafka.Dialer().TLS == nil || !rc.kafka.Dialer().TLS.InsecureSkipVerify {
		t.Errorf("KAFKA_TLS_INSECURE_SKIP_VERIFY alone should turn TLS on: %v", err)
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
				oc := rc.observerConfig("")
				if !slices.Equal(oc.Controllers, []string{"c1:9093", "c2:9093"}) || oc.Dir != "" || oc.Principal != "User:ANONYMOUS" {
					t.Errorf("observerConfig = %+v", oc)
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
		{"pprof addr", []string{"KRAFTWATCH_PPROF_ADDR=6060"}, []string{"PPROF_ADDR: \"6060\" is not host:port"}},
		{"events stream name", []string{"KRAFTWATCH_EVENTS_STREAM=a.b"}, []string{"EVENTS_STREAM: \"a.b\" is not none or a stream name"}},
		{"ping interval", []string{"KRAFTWATCH_NATS_PING_INTERVAL=0s", "KRAFTWATCH_NATS_MAX_PINGS_OUT=0"},
			[]string{"NATS_PING_INTERVAL: \"0s\" is not a positive Go duration", "NATS_MAX_PINGS_OUT: 0: at least 1"}},
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

// TestUnknownSettingNamed: a KRAFTWATCH_ variable that is no setting is an error
// (exit code 2) naming it and the closest setting.
func TestUnknownSettingNamed(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, env, want string
	}{
		{"swapped letters", "KRAFTWATCH_NATS_ULR=nats://n:4222", "KRAFTWATCH_NATS_ULR: not a setting of kraftwatch run; did you mean KRAFTWATCH_NATS_URL?"},
		{"one letter", "KRAFTWATCH_HASH_SCHEMA=kafka", "KRAFTWATCH_HASH_SCHEMA: not a setting of kraftwatch run; did you mean KRAFTWATCH_HASH_SCHEME?"},
		{"missing token", "KRAFTWATCH_SASL_MECHANISM=PLAIN", "did you mean KRAFTWATCH_KAFKA_SASL_MECHANISM?"},
		{"controller's", "KRAFTWATCH_CONTROLER_TLS=true", "did you mean KRAFTWATCH_CONTROLLER_TLS?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			env := []string{"KRAFTWATCH_BOOTSTRAP_SERVERS=k:9092", "KRAFTWATCH_METADATA_LOG_DIR=" + dir, "OTHER_VARIABLE=1", tc.env}
			if code := mainCode([]string{"run"}, env, &stdout, &stderr); code != 2 {
				t.Fatalf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
		})
	}
	if _, err := loadConfig([]string{"KRAFTWATCH_BOOTSTRAP_SERVERS=k:9092", "KAFKA_HEAP_OPTS=-Xmx1g"}); err != nil {
		t.Errorf("known and foreign variables: %v", err)
	}
}

// TestSettingsAreEnvFields: the settings --help lists, and that loadConfig knows, are
// those caarlos0/env reads.
func TestSettingsAreEnvFields(t *testing.T) {
	params, err := env.GetFieldParamsWithOptions(&config{}, env.Options{Prefix: envPrefix})
	if err != nil {
		t.Fatal(err)
	}
	var fromEnv, ours []string
	for _, p := range params {
		fromEnv = append(fromEnv, p.Key)
	}
	for _, f := range fields() {
		ours = append(ours, f.name)
	}
	if slices.Sort(fromEnv); !slices.Equal(fromEnv, slices.Sorted(slices.Values(ours))) {
		t.Errorf("caarlos0/env reads %v, fields() lists %v", fromEnv, ours)
	}
}

// TestOfflineChecks: every value that can be checked without the network is checked
// before anything connects, and its error names the variable: subjects, stream names,
// the contents of certificate, key, CA and credentials files, the hash scheme.
func TestOfflineChecks(t *testing.T) {
	dir := t.TempDir()
	f := writeTestFiles(t, dir)
	for _, tc := range []struct {
		name string
		env  []string
		want []string // messages in stderr; none: valid
	}{
		{"valid files", []string{"KRAFTWATCH_NATS_TLS_CA_FILE=" + f.ca, "KRAFTWATCH_NATS_TLS_CERT_FILE=" + f.cert,
			"KRAFTWATCH_NATS_TLS_KEY_FILE=" + f.key, "KRAFTWATCH_NATS_CREDS_FILE=" + f.creds,
			"KRAFTWATCH_KAFKA_TLS_CA_FILE=" + f.ca, "KRAFTWATCH_KAFKA_TLS_CERT_FILE=" + f.cert, "KRAFTWATCH_KAFKA_TLS_KEY_FILE=" + f.key,
			"KRAFTWATCH_KAFKA_SASL_MECHANISM=PLAIN", "KRAFTWATCH_KAFKA_SASL_USERNAME=u", "KRAFTWATCH_KAFKA_SASL_PASSWORD_FILE=" + f.password}, nil},
		{"subject prefix with a space", []string{"KRAFTWATCH_SUBJECT_PREFIX=a b.>"},
			[]string{`KRAFTWATCH_SUBJECT_PREFIX: "a b.>" is not tokens`}},
		{"subject prefix with an empty token", []string{"KRAFTWATCH_SUBJECT_PREFIX=a..b"}, []string{"KRAFTWATCH_SUBJECT_PREFIX:"}},
		{"subject prefix of the internal subjects", []string{"KRAFTWATCH_SUBJECT_PREFIX=_kraftwatch.x"},
			[]string{`KRAFTWATCH_SUBJECT_PREFIX: "_kraftwatch.x": its first token`}},
		{"internal prefix in core mode", []string{"KRAFTWATCH_SUBJECT_PREFIX=_kraftwatch.x", "KRAFTWATCH_NATS_MODE=core"}, nil},
		{"stream name with a dot", []string{"KRAFTWATCH_STREAM_NAME=a.b"}, []string{`KRAFTWATCH_STREAM_NAME: "a.b" is not a stream name`}},
		{"stream name with a wildcard", []string{"KRAFTWATCH_STREAM_NAME=A*"}, []string{"KRAFTWATCH_STREAM_NAME:"}},
		{"hash scheme", []string{"KRAFTWATCH_HASH_SCHEME=md5"}, []string{`KRAFTWATCH_HASH_SCHEME: "md5" is not murmur3 or kafka`}},
		{"NATS CA garbage", []string{"KRAFTWATCH_NATS_TLS_CA_FILE=" + f.garbage}, []string{"KRAFTWATCH_NATS_TLS_CA_FILE: " + f.garbage + " holds no PEM certificate"}},
		{"NATS cert garbage", []string{"KRAFTWATCH_NATS_TLS_CERT_FILE=" + f.garbage, "KRAFTWATCH_NATS_TLS_KEY_FILE=" + f.key},
			[]string{"KRAFTWATCH_NATS_TLS_CERT_FILE: with KRAFTWATCH_NATS_TLS_KEY_FILE:"}},
		{"NATS key of another cert", []string{"KRAFTWATCH_NATS_TLS_CERT_FILE=" + f.cert, "KRAFTWATCH_NATS_TLS_KEY_FILE=" + f.otherKey},
			[]string{"KRAFTWATCH_NATS_TLS_CERT_FILE: with KRAFTWATCH_NATS_TLS_KEY_FILE: tls: private key does not match"}},
		{"NATS key missing", []string{"KRAFTWATCH_NATS_TLS_CERT_FILE=" + f.cert, "KRAFTWATCH_NATS_TLS_KEY_FILE=" + filepath.Join(dir, "nope")},
			[]string{"KRAFTWATCH_NATS_TLS_KEY_FILE: stat"}},
		{"NATS creds garbage", []string{"KRAFTWATCH_NATS_CREDS_FILE=" + f.garbage}, []string{"KRAFTWATCH_NATS_CREDS_FILE: " + f.garbage + " holds no valid user JWT"}},
		{"NATS creds without seed", []string{"KRAFTWATCH_NATS_CREDS_FILE=" + f.jwtOnly}, []string{"KRAFTWATCH_NATS_CREDS_FILE: " + f.jwtOnly + " holds no user nkey seed"}},
		{"Kafka CA garbage", []string{"KRAFTWATCH_KAFKA_TLS_CA_FILE=" + f.garbage}, []string{"KRAFTWATCH_KAFKA_TLS_CA_FILE: " + f.garbage + " holds no PEM certificate"}},
		{"Kafka cert garbage", []string{"KRAFTWATCH_KAFKA_TLS_CERT_FILE=" + f.garbage, "KRAFTWATCH_KAFKA_TLS_KEY_FILE=" + f.key},
			[]string{"KRAFTWATCH_KAFKA_TLS_CERT_FILE: with KAFKA_TLS_KEY_FILE: tls: failed to find any PEM data"}},
		{"controller CA garbage", []string{"KRAFTWATCH_CONTROLLER_TLS_CA_FILE=" + f.garbage}, []string{"KRAFTWATCH_CONTROLLER_TLS_CA_FILE: " + f.garbage}},
		{"controller key of another cert", []string{"KRAFTWATCH_CONTROLLER_TLS_CERT_FILE=" + f.cert, "KRAFTWATCH_CONTROLLER_TLS_KEY_FILE=" + f.otherKey},
			[]string{"KRAFTWATCH_CONTROLLER_TLS_CERT_FILE: with CONTROLLER_TLS_KEY_FILE: tls: private key does not match"}},
		{"empty password file", []string{"KRAFTWATCH_KAFKA_SASL_MECHANISM=PLAIN", "KRAFTWATCH_KAFKA_SASL_USERNAME=u",
			"KRAFTWATCH_KAFKA_SASL_PASSWORD_FILE=" + f.empty}, []string{"KRAFTWATCH_KAFKA_SASL_PASSWORD_FILE: " + f.empty + " is empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			environ := append([]string{"KRAFTWATCH_BOOTSTRAP_SERVERS=k:9092", "KRAFTWATCH_METADATA_LOG_DIR=" + dir}, tc.env...)
			raw, err := loadConfig(environ)
			if err != nil {
				t.Fatal(err)
			}
			_, err = raw.validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid settings: %v", err)
				}
				return
			}
			var stdout, stderr strings.Builder
			if code := mainCode([]string{"run"}, environ, &stdout, &stderr); code != 2 {
				t.Fatalf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// testFiles are the paths writeTestFiles writes.
type testFiles struct {
	ca, cert, key, otherKey, creds, jwtOnly, password, garbage, empty string
}

// writeTestFiles writes into dir a self-signed CA that is also the client
// certificate, its key, another key, a NATS credentials file, the same without its
// seed, a password file, a garbage file and an empty one.
func writeTestFiles(t *testing.T, dir string) testFiles {
	t.Helper()
	f := testFiles{}
	write := func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newKey := func() (*ecdsa.PrivateKey, []byte) {
		t.Helper()
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	key, keyPEM := newKey()
	_, otherPEM := newKey()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kraftwatch"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	f.ca, f.cert, f.key, f.otherKey = write("ca.pem", certPEM), write("cert.pem", certPEM), write("key.pem", keyPEM), write("other.pem", otherPEM)

	account, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	userPub, _ := user.PublicKey()
	token, err := jwt.NewUserClaims(userPub).Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		t.Fatal(err)
	}
	f.creds = write("user.creds", creds)
	f.jwtOnly = write("jwt-only.creds", []byte("-----BEGIN NATS USER JWT-----\n"+token+"\n------END NATS USER JWT------\n"))
	f.password = write("password", []byte("secret\n"))
	f.garbage = write("garbage", []byte("not a certificate, a key or a credential\n"))
	f.empty = write("empty", nil)
	return f
}
