package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestBuildLimits: every location of the Ingress gets its limits with the
// ConfigMap's status codes; other Ingresses none.
func TestBuildLimits(t *testing.T) {
	svc := service("default", "web", svcPort("http", 80))
	limited := newIngress("default", "a", nginx("limit-rps", "3"), rule("a.test", prefix("/", "web", 80), prefix("/x", "web", 80)))
	other := newIngress("default", "b", rule("b.test", prefix("/", "web", 80)))
	for name, tc := range map[string]struct {
		kv         []string
		req, conn  int
		problem    string
		noProblems bool
	}{
		"the defaults":                   {noProblems: true},
		"429 and 503 (kept as default)":  {kv: []string{"limit-req-status-code", "429", "limit-conn-status-code", "503"}, req: 429, noProblems: true},
		"a code out of range is refused": {kv: []string{"limit-conn-status-code", "200"}, problem: "limit-conn-status-code"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := []runtime.Object{svc, limited, other}
			if tc.kv != nil {
				objs = append(objs, fixtures.ConfigMap("ingress", "cfg", tc.kv...))
			}
			opts := testOptions()
			opts.ConfigMap = "ingress/cfg"
			cfg := Build(newTestStore(t, objs...), opts)
			checkDataPlane(t, cfg)
			for _, s := range cfg.Servers {
				for _, l := range s.Locations {
					want := &config.RateLimit{RPS: 3, BurstMultiplier: 5, ReqStatus: tc.req, ConnStatus: tc.conn}
					if s.Hostname != "a.test" {
						want = nil
					}
					if !reflect.DeepEqual(l.Settings.RateLimit, want) {
						t.Errorf("%s%s: RateLimit = %+v, want %+v", s.Hostname, l.Path, l.Settings.RateLimit, want)
					}
				}
			}
			probs := strings.Join(problemStrings(cfg.Problems), "\n")
			if tc.noProblems && probs != "" || !strings.Contains(probs, tc.problem) {
				t.Errorf("problems %q, want %q", probs, tc.problem)
			}
		})
	}
}

// TestConfigMapLimitRate: the ConfigMap's limit-rate and limit-rate-after
// (kilobytes) are the defaults of the routes whose Ingress has no such
// annotation, as ingress-nginx's; an annotation, even 0, wins.
func TestConfigMapLimitRate(t *testing.T) {
	svc := service("default", "web", svcPort("http", 80))
	for name, tc := range map[string]struct {
		kv   []string
		ann  []string
		want *config.RateLimit
	}{
		"none":                         {want: nil},
		"limit-rate":                   {kv: []string{"limit-rate", "100"}, want: &config.RateLimit{Rate: 100 << 10}},
		"limit-rate and after":         {kv: []string{"limit-rate", "100", "limit-rate-after", "10"}, want: &config.RateLimit{Rate: 100 << 10, RateAfter: 10 << 10}},
		"after alone limits nothing":   {kv: []string{"limit-rate-after", "10"}, want: nil},
		"the annotation wins":          {kv: []string{"limit-rate", "100", "limit-rate-after", "10"}, ann: []string{"limit-rate", "5"}, want: &config.RateLimit{Rate: 5 << 10, RateAfter: 10 << 10}},
		"an annotation 0 turns it off": {kv: []string{"limit-rate", "100"}, ann: []string{"limit-rate", "0"}, want: nil},
		"with a request limit": {kv: []string{"limit-rate", "1", "limit-req-status-code", "429"}, ann: []string{"limit-rps", "3"},
			want: &config.RateLimit{RPS: 3, BurstMultiplier: 5, Rate: 1 << 10, ReqStatus: 429}},
	} {
		t.Run(name, func(t *testing.T) {
			opts := []ingOpt{rule("a.test", prefix("/", "web", 80))}
			for i := 0; i+1 < len(tc.ann); i += 2 {
				opts = append(opts, nginx(tc.ann[i], tc.ann[i+1]))
			}
			objs := []runtime.Object{svc, newIngress("default", "a", opts...)}
			if tc.kv != nil {
				objs = append(objs, fixtures.ConfigMap("ingress", "cfg", tc.kv...))
			}
			o := testOptions()
			o.ConfigMap = "ingress/cfg"
			cfg := Build(newTestStore(t, objs...), o)
			checkDataPlane(t, cfg)
			if len(cfg.Problems) > 0 {
				t.Errorf("problems %q", problemStrings(cfg.Problems))
			}
			for _, s := range cfg.Servers {
				for _, l := range s.Locations {
					if s.Hostname == "a.test" && !reflect.DeepEqual(l.Settings.RateLimit, tc.want) {
						t.Errorf("%s: RateLimit = %+v, want %+v", l.Path, l.Settings.RateLimit, tc.want)
					}
				}
			}
		})
	}
}

// rateLimit: what lua/limit.lua accepts.
func (c *contract) rateLimit(where string, r *config.RateLimit) {
	if r == nil {
		return
	}
	counts := []int{r.RPS, r.RPM, r.Connections}
	if slices.ContainsFunc(counts, func(n int) bool { return n < 0 || n > intent.MaxLimitCount }) ||
		r.BurstMultiplier < 0 || r.BurstMultiplier > intent.MaxBurstMultiplier || r.Rate < 0 || r.RateAfter < 0 ||
		r.Rate > intent.MaxLimitRateKB*1024 || r.RateAfter > intent.MaxLimitRateKB*1024 {
		c.fail("%s: rate limit %+v", where, *r)
	}
	for _, code := range []int{r.ReqStatus, r.ConnStatus} {
		if code != 0 && (code < 400 || code > 599) {
			c.fail("%s: limit status %d", where, code)
		}
	}
	for _, s := range r.Allowlist {
		if p, err := netip.ParsePrefix(s); err != nil || p.String() != s {
			c.fail("%s: limit allowlist entry %q", where, s)
		}
	}
}

// FuzzLimitValues: the limit parsers accept only what their contract says
// and never panic; a refused value marks the limit invalid.
func FuzzLimitValues(f *testing.F) {
	for _, s := range []string{"0", "10", "-1", "1e3", "99999999999", "10.0.0.0/8", "::1, 10.0.0.1", "", " 5", "5\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, name := range []string{"limit-rps", "limit-rate", "limit-burst-multiplier", "limit-allowlist"} {
			a := parsedSettings(map[string]string{ingress.AnnotationPrefix + name: v, ingress.AnnotationPrefix + "limit-connections": "1"})
			r := a.Location.RateLimit
			if r == nil {
				t.Fatalf("%s=%q: no RateLimit with limit-connections", name, v)
			}
			var c contract
			c.rateLimit(name, r)
			if len(c.violations) > 0 {
				t.Fatalf("%s=%q: %v", name, v, c.violations)
			}
			if r.Invalid != (len(a.Problems) > 0) {
				t.Fatalf("%s=%q: invalid %v, problems %q", name, v, r.Invalid, a.Problems)
			}
		}
	})
}
