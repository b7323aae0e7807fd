package deploytest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// promql is the parser Prometheus uses by default.
var promql = parser.NewParser(parser.Options{})

const (
	alertsFile     = "../prometheus/alerts.yaml"
	alertTestsFile = "../prometheus/alerts_test.yaml"
)

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert  string            `yaml:"alert"`
			Record string            `yaml:"record"`
			Expr   string            `yaml:"expr"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func TestAlertRules(t *testing.T) {
	abs, err := filepath.Abs(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "promtool", "check", "rules", abs); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	var rules ruleFile
	readYAML(t, alertsFile, &rules)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" {
				t.Errorf("rule %q is not an alert", r.Record)
			}
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			checkExpr(t, r.Alert, r.Expr)
		}
	}
	if n < 5 {
		t.Fatalf("%d alerts in %s", n, alertsFile)
	}
}

// TestAlertUnitTests runs promtool's unit tests and checks that they cover every alert:
// a case where it fires, and one where it does not (an empty expectation, or a series in
// the firing case that it does not fire for).
func TestAlertUnitTests(t *testing.T) {
	abs, err := filepath.Abs(alertTestsFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := []string{"test", "rules", abs}
	if out, err := run(t, "promtool", cmd...); err != nil || !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
	var rules ruleFile
	readYAML(t, alertsFile, &rules)
	var tests struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			Name        string `yaml:"name"`
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []struct {
					ExpLabels map[string]string `yaml:"exp_labels"`
				} `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	readYAML(t, alertTestsFile, &tests)
	if !slices.Equal(tests.RuleFiles, []string{filepath.Base(alertsFile)}) {
		t.Errorf("%s tests %v, want %s", alertTestsFile, tests.RuleFiles, filepath.Base(alertsFile))
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) == 0 {
				quiet[at.Alertname] = true
				continue
			}
			fires[at.Alertname] = true
			fired := map[string]bool{}
			for _, a := range at.ExpAlerts {
				fired[a.ExpLabels["instance"]] = true
			}
			for _, s := range tc.InputSeries {
				m, err := promql.ParseMetric(s.Series)
				if err != nil {
					t.Errorf("%s: %v", tc.Name, err)
					continue
				}
				if inst := m.Get("instance"); inst != "" && !fired[inst] {
					quiet[at.Alertname] = true
				}
			}
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if !fires[r.Alert] {
				t.Errorf("no unit test fires %s", r.Alert)
			}
			if !quiet[r.Alert] {
				t.Errorf("no unit test shows %s staying quiet", r.Alert)
			}
		}
	}
}

// checkExpr parses a PromQL expression and checks that every metric it selects is one
// kraftwatch exports (a kraftwatch_* family on its /metrics).
func checkExpr(t *testing.T, where, expr string) {
	t.Helper()
	e, err := promql.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return
	}
	names := 0
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		names++
		if !strings.HasPrefix(vs.Name, "kraftwatch_") || !metrics[vs.Name] {
			t.Errorf("%s: %s is not a metric kraftwatch exports", where, vs.Name)
		}
		return nil
	})
	if names == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		// Only the fields the test reads are declared; decode again without the check.
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
}
