package deploytest

import (
	"encoding/json"

	"github.com/prometheus/prometheus/promql/parser"
	"os"
	"regexp"
	"strings"
	"testing"
)

const dashboardFile = "../grafana/kraftwatch.json"

type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels      []panel `json:"panels"`
	Annotations struct {
		List []annotation `json:"list"`
	} `json:"annotations"`
}

// annotation is a Prometheus annotation query: an event wherever expr has a value.
type annotation struct {
	Name       string `json:"name"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	Enable      bool   `json:"enable"`
	Expr        string `json:"expr"`
	TitleFormat string `json:"titleFormat"`
	TextFormat  string `json:"textFormat"`
	Filter      any    `json:"filter"`
}

type panel struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Datasource  *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// grafanaVars are Grafana's variables as PromQL sees them after substitution.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// TestDashboard checks that every panel's queries parse and select only metrics
// kraftwatch exports, that panels have unique ids and titles, a description (the
// question the panel answers) and the dashboard's data source variable, and that the
// README describes each panel.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Error("dashboard without uid or title")
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if q, ok := v.Query.(map[string]any); ok {
			expr, _ := q["query"].(string)
			if m := regexp.MustCompile(`^label_values\((.*), *\w+\)$`).FindStringSubmatch(expr); m != nil {
				checkExpr(t, "variable "+v.Name, m[1])
			} else {
				t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, expr)
			}
		}
	}
	readme, err := os.ReadFile(repoRoot + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := readmeSection(string(readme), "### The dashboard")
	if section == "" {
		t.Error(`README.md has no "### The dashboard" section`)
	}
	ids, titles := map[int]bool{}, map[string]bool{}
	var all []panel
	for _, p := range d.Panels {
		all = append(all, p)
		all = append(all, p.Panels...)
	}
	queries := 0
	for _, p := range all {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if titles[p.Title] {
			t.Errorf("panel title %q twice", p.Title)
		}
		titles[p.Title] = true
		if p.Description == "" {
			t.Errorf("panel %q has no description", p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the ${datasource} variable", p.Title)
		}
		if p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v", p.Title, p.GridPos)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			for _, v := range regexp.MustCompile(`\$\{?(\w+)`).FindAllStringSubmatch(tg.Expr, -1) {
				if !strings.HasPrefix(v[1], "__") && !vars[v[1]] {
					t.Errorf("panel %q uses $%s, which the dashboard does not define", p.Title, v[1])
				}
			}
			checkExpr(t, "panel "+p.Title+" "+tg.RefID, grafanaVars.Replace(tg.Expr))
		}
		if section != "" && !strings.Contains(section, "**"+p.Title+"**") {
			t.Errorf("README's dashboard section does not describe panel %q", p.Title)
		}
	}
	if queries < 10 {
		t.Errorf("only %d queries", queries)
	}
	checkAnnotations(t, d.Annotations.List, vars)
}

// checkAnnotations checks that the dashboard marks, on every panel, when groups needed
// a rebalance and when the coordinator rebalanced, from the counters: each query
// parses, selects metrics kraftwatch exports, uses the dashboard's variables, and
// every {{label}} its title or text shows is a label of the metric that the query keeps.
func checkAnnotations(t *testing.T, list []annotation, vars map[string]bool) {
	t.Helper()
	shown := map[string]bool{}
	for _, a := range list {
		if a.Datasource == nil || a.Datasource.Type != "prometheus" || a.Datasource.UID != "${datasource}" {
			t.Errorf("annotation %q does not query the ${datasource} Prometheus", a.Name)
			continue
		}
		if !a.Enable || a.Filter != nil {
			t.Errorf("annotation %q is not shown on every panel (enable %v, filter %v)", a.Name, a.Enable, a.Filter)
		}
		where := "annotation " + a.Name
		for _, v := range regexp.MustCompile(`\$\{?(\w+)`).FindAllStringSubmatch(a.Expr, -1) {
			if !strings.HasPrefix(v[1], "__") && !vars[v[1]] {
				t.Errorf("%s uses $%s, which the dashboard does not define", where, v[1])
			}
		}
		expr := grafanaVars.Replace(a.Expr)
		checkExpr(t, where, expr)
		e, err := promql.ParseExpr(expr)
		if err != nil {
			continue
		}
		var selected []string
		kept := map[string]bool{}
		outer := true
		parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
			switch n := node.(type) {
			case *parser.VectorSelector:
				selected = append(selected, n.Name)
				shown[n.Name] = true
			case *parser.AggregateExpr:
				// The outermost aggregation decides which labels reach Grafana.
				if outer && !n.Without {
					for _, l := range n.Grouping {
						kept[l] = true
					}
				}
				outer = false
			}
			return nil
		})
		for _, m := range regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`).FindAllStringSubmatch(a.TitleFormat+a.TextFormat, -1) {
			if !kept[m[1]] {
				t.Errorf("%s shows {{%s}}, which its query does not keep", where, m[1])
			}
			for _, name := range selected {
				if !metricLabels[name][m[1]] {
					t.Errorf("%s shows {{%s}}, which %s does not have", where, m[1], name)
				}
			}
		}
	}
	for _, m := range []string{"kraftwatch_decisions_total", "kraftwatch_group_rebalances_total"} {
		if !shown[m] {
			t.Errorf("no annotation marks %s", m)
		}
	}
}

// readmeSection is the text from heading to the next heading of the same or a higher
// level.
func readmeSection(doc, heading string) string {
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+1+len(heading):]
	level := strings.Count(strings.Fields(heading)[0], "#")
	re := regexp.MustCompile(`(?m)^#{1,` + string(rune('0'+level)) + `} `)
	if loc := re.FindStringIndex(rest); loc != nil {
		rest = rest[:loc[0]]
	}
	return rest
}
