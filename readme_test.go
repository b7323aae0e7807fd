package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"

	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

var update = flag.Bool("update", false, "rewrite the generated sections of README.md and the chart's schema")

// TestReadme checks that README.md's configuration and metrics tables are the ones the
// program has; -update rewrites them.
func TestReadme(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	want := readme
	want = replaceSection(t, want, "settings", settingsTable())
	want = replaceSection(t, want, "metrics", metricsTable(t))
	if want == readme {
		return
	}
	if *update {
		if err := os.WriteFile("README.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Error("README.md's generated tables are out of date; run: go test -run TestReadme -update .")
}

func replaceSection(t *testing.T, doc, name, table string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)(<!-- ` + name + `:[^\n]*-->\n).*?(<!-- /` + name + ` -->)`)
	if !re.MatchString(doc) {
		t.Fatalf("README.md has no <!-- %s: ... --> section", name)
	}
	return re.ReplaceAllLiteralString(doc, re.FindStringSubmatch(doc)[1]+table+"<!-- /"+name+" -->")
}

func settingsTable() string {
	var b strings.Builder
	b.WriteString("| Variable | Default | Meaning |\n|---|---|---|\n")
	for _, s := range settings() {
		def := "`" + s[1] + "`"
		if s[1] == "" {
			def = ""
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s[0], def, strings.ReplaceAll(s[2], "|", `\|`))
	}
	return b.String()
}

// testStages returns real stages that are never run: an observer of an empty
// directory, a groups reader of a closed port and a publisher on an in-process NATS
// server.
func testStages(t *testing.T) (*observer.Observer, *groups.Reader, *publish.Publisher) {
	t.Helper()
	obs, err := observer.New(observer.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := groups.NewReader(groups.ReaderConfig{Brokers: []string{"127.0.0.1:9"}})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(natstest.Start(t).ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	pub, err := publish.New(publish.Config{Conn: nc, ClusterID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	return obs, reader, pub
}

// metricsTable lists the kraftwatch_* metrics of a registry built from real stages.
func metricsTable(t *testing.T) string {
	t.Helper()
	obs, reader, pub := testStages(t)
	eng, err := engine.New(engine.Config{ClusterID: "c", Scheme: "murmur3", GroupsCaughtUp: reader.CaughtUp(), Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	// The stages' own metrics; those of the group state (metrics_groups.go,
	// metrics_rebalanced.go) have a section of their own.
	reg := newHealthRegistry(eng.Ready)
	newInfoMetric(reg, buildInfo{"dev", "cluster", "disk", "murmur3"})
	newObserverMetrics(reg, obs.Metrics())
	newReaderMetrics(reg, reader)
	newEngineMetrics(reg, eng)
	newPublishMetrics(reg, pub)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "kraftwatch_") {
			continue
		}
		typ := strings.ToLower(dto.MetricType_name[int32(f.GetType())])
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s |\n", f.GetName(), typ, f.GetHelp()))
	}
	for _, m := range partitionLagMetrics { // no series before the reader runs
		rows = append(rows, fmt.Sprintf("| `kraftwatch_%s` | gauge | %s |\n", m.name, m.help))
	}
	slices.Sort(rows)
	return "| Metric | Type | Meaning |\n|---|---|---|\n" + strings.Join(rows, "")
}
