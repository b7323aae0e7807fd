package main

import (
	"os"
	"path/filepath"
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
	})
	if err != nil {
		t.Fatal(err)
	}
	errs := splitErrors(cfg.validate())
	want := []string{"METADATA_LOG_DIR", "BOOTSTRAP_SERVERS", "KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME",
		"KAFKA_SASL_PASSWORD", "NATS_MODE", "STREAM_REPLICAS", "STREAM_MAX_AGE", "HASH_SCHEME", "GROUP_EXCLUDE",
		"HTTP_ADDR", "LOG_LEVEL", "LOG_FORMAT"}
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
	if err := cfg.validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if cfg.metadataDir() != meta {
		t.Errorf("metadataDir = %s, want %s", cfg.metadataDir(), meta)
	}
	if id, err := cfg.clusterID(); err != nil || id != "MkU3OEVBNTcwNTJENDM2Qk" {
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
