package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
)

// descRecorder is a prometheus.Registerer that keeps the names of the
// metrics registered on it (from their Descs: a Vec without children
// gathers nothing, but describes itself).
type descRecorder struct{ names map[string]bool }

var fqNameRe = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqNameRe.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
		}
	}
	return nil
}

func (r *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *descRecorder) Unregister(prometheus.Collector) bool { return false }

// idleDataPlane stands in for the syncer's nginx: the test only
// registers metrics, nothing is applied or scraped.
type idleDataPlane struct{}

func (idleDataPlane) Client() *nginx.Client          { return nginx.NewClient(1, time.Second) }
func (idleDataPlane) Running() *config.Configuration { return nil }

// exportedNames are the metric names `syncer run` serves, registered as
// run registers them.
func exportedNames(t *testing.T) map[string]bool {
	f, err := parseRunFlags(nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	rec := &descRecorder{names: map[string]bool{}}
	controller := registerMetrics(rec, f, idleDataPlane{}, func() bool { return true })
	if _, err := syncer.New(syncertest.New(), syncer.Options{Pod: "p", Registerer: rec, Observe: controller.Observe}); err != nil {
		t.Fatal(err)
	}
	return rec.names
}

// metricRe finds the metric names of a query: ingress-sync's and
// ingress-nginx's prefixes.
var metricRe = regexp.MustCompile(`\b(?:nginx_ingress_controller|ingress_sync)_[a-zA-Z0-9_]+`)

// queriedNames returns every metric name in queries, the _bucket, _sum
// and _count series of a histogram as its name.
func queriedNames(queries []string, exported map[string]bool) []string {
	var out []string
	for _, q := range queries {
		for _, n := range metricRe.FindAllString(q, -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(n, suffix); ok && exported[base] {
					n = base
				}
			}
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// dashboardQueries returns the expressions of every panel and the
// queries of the template variables of deploy/monitoring/dashboard.json.
func dashboardQueries(t *testing.T) []string {
	data, err := os.ReadFile("../../deploy/monitoring/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Definition != "" { // the data source variable has none
			out = append(out, v.Definition)
		}
	}
	return out
}

// ruleQueries returns the expressions of deploy/monitoring/prometheusrule.yaml.
func ruleQueries(t *testing.T) []string {
	data, err := os.ReadFile("../../deploy/monitoring/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Kind string `json:"kind"`
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
					For   string `json:"for"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &r); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	if r.Kind != "PrometheusRule" {
		t.Fatalf("kind %q", r.Kind)
	}
	var out []string
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if rule.Alert == "" || rule.Expr == "" || rule.For == "" {
				t.Errorf("rule %+v needs an alert name, an expression and a for", rule)
			}
			out = append(out, rule.Expr)
		}
	}
	return out
}

// TestMonitoringMetricsExist: every metric the dashboard and the alerts
// query is one that `syncer run` exports, and every expression names one.
func TestMonitoringMetricsExist(t *testing.T) {
	exported := exportedNames(t)
	for _, c := range []struct {
		name    string
		queries []string
	}{
		{"dashboard.json", dashboardQueries(t)},
		{"prometheusrule.yaml", ruleQueries(t)},
		{"ingress-nginx's dashboards", ingressNginxDashboardNames(t)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.queries) < 6 {
				t.Fatalf("only %d queries", len(c.queries))
			}
			for _, q := range c.queries {
				if !metricRe.MatchString(q) {
					t.Errorf("query names no metric of ingress-sync: %s", q)
				}
			}
			for _, n := range queriedNames(c.queries, exported) {
				if !exported[n] {
					t.Errorf("%s queries %s, which the syncer does not export", c.name, n)
				}
			}
		})
	}
}

// ingressNginxDashboardNames returns the metric names of ingress-nginx's
// own Grafana dashboards (testdata/ingress-nginx-dashboards.txt says
// where they come from): they work unchanged on ingress-sync.
func ingressNginxDashboardNames(t *testing.T) []string {
	data, err := os.ReadFile("testdata/ingress-nginx-dashboards.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}
