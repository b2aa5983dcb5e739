package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestBuildSourceRangeDefaults: the ConfigMap's whitelist- and
// denylist-source-range are the lists of routes whose Ingress sets none;
// a route whose own list is invalid does not fall back to them; they
// never reach nginx.conf (Global.rendered).
func TestBuildSourceRangeDefaults(t *testing.T) {
	objs := []runtime.Object{
		service("default", "web", svcPort("http", 80)), slice("default", "web-1", "web", "http", 80, ready("10.0.0.1")),
		fixtures.ConfigMap("ingress", "cfg", "whitelist-source-range", "192.0.2.0/24", "denylist-source-range", "192.0.2.7"),
		newIngress("default", "plain", rule("plain.test", prefix("/", "web", 80))),
		newIngress("default", "own", nginx("allowlist-source-range", "10.0.0.0/8"), nginx("denylist-source-range", "10.0.0.1"), rule("own.test", prefix("/", "web", 80))),
		newIngress("default", "bad", nginx("allowlist-source-range", "nonsense"), rule("bad.test", prefix("/", "web", 80))),
	}
	cfg := buildWith(t, objs, func(o *Options) { o.ConfigMap = "ingress/cfg" })
	checkDataPlane(t, cfg)
	want := map[string]config.LocationSettings{
		"plain.test": {AllowSourceRange: []string{"192.0.2.0/24"}, DenySourceRange: []string{"192.0.2.7/32"}},
		"own.test":   {AllowSourceRange: []string{"10.0.0.0/8"}, DenySourceRange: []string{"10.0.0.1/32"}},
		"bad.test":   {SourceRangeInvalid: true},
	}
	for _, s := range cfg.Servers {
		w, ok := want[s.Hostname]
		if !ok {
			continue
		}
		st := s.Locations[0].Settings
		if !slices.Equal(st.AllowSourceRange, w.AllowSourceRange) || !slices.Equal(st.DenySourceRange, w.DenySourceRange) || st.SourceRangeInvalid != w.SourceRangeInvalid {
			t.Errorf("%s: allow %v deny %v invalid %v, want %+v", s.Hostname, st.AllowSourceRange, st.DenySourceRange, st.SourceRangeInvalid, w)
		}
	}
	if r := cfg.Global.Rendered(); r.AllowSourceRange != "" || r.DenySourceRange != "" {
		t.Errorf("the route defaults reach nginx.conf: %+v", r)
	}
}

// TestBuildBlockLists: every Server gets the ConfigMap's block lists; they
// never reach nginx.conf.
func TestBuildBlockLists(t *testing.T) {
	objs := []runtime.Object{
		service("default", "web", svcPort("http", 80)), slice("default", "web-1", "web", "http", 80, ready("10.0.0.1")),
		fixtures.ConfigMap("ingress", "cfg", "block-user-agents", "~*bot", "block-referers", "spam.example", "block-cidrs", "192.0.2.1"),
		newIngress("default", "a", rule("a.test", prefix("/", "web", 80))),
	}
	cfg := buildWith(t, objs, func(o *Options) { o.ConfigMap = "ingress/cfg" })
	checkDataPlane(t, cfg)
	for _, s := range cfg.Servers {
		if s.Block == nil || !slices.Equal(s.Block.UserAgents, []string{"~*bot"}) || !slices.Equal(s.Block.Referers, []string{"spam.example"}) ||
			!slices.Equal(s.Block.CIDRs, []string{"192.0.2.1/32"}) {
			t.Errorf("%s: Block %+v", s.Hostname, s.Block)
		}
	}
	if r := cfg.Global.Rendered(); r.BlockUserAgents != "" || r.BlockReferers != "" || r.BlockCIDRs != "" {
		t.Errorf("the block lists reach nginx.conf: %+v", r)
	}
}
