package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestMatchHost(t *testing.T) {
	tests := map[string]struct {
		pattern, host string
		want          bool
	}{
		"exact":                {"a.com", "a.com", true},
		"exact other":          {"a.com", "b.com", false},
		"wildcard one label":   {"*.a.com", "b.a.com", true},
		"wildcard not bare":    {"*.a.com", "a.com", false},
		"wildcard not deeper":  {"*.a.com", "c.b.a.com", false},
		"wildcard empty label": {"*.a.com", ".a.com", false},
		"wildcard suffix only": {"*.a.com", "ba.com", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := config.MatchHost(tc.pattern, tc.host); got != tc.want {
				t.Errorf("MatchHost(%q, %q) = %v", tc.pattern, tc.host, got)
			}
		})
	}
}

func TestBuildAnnotations(t *testing.T) {
	const ing = "default/ing"
	routeWith := func(name string, age int, opts ...ingOpt) runtime.Object {
		return newIngress("default", name, append(opts, created(age), rule(name+".example.com", prefix("/", "web", 80)))...)
	}
	lb := be("default", "web", "80", ep("10.0.0.1", 8080))
	ewma := lb
	ewma.LoadBalance = config.LoadBalanceEWMA
	hashed := lb
	hashed.UpstreamHashBy = "$request_uri"
	runBuildCases(t, map[string]buildCase{
		"location settings from annotations; bad ones ignored, Ingress served": {
			objs: objs(webService(), one(newIngress("default", "ing",
				nginx("proxy-read-timeout", "120"), nginx("proxy-body-size", "8m"), nginx("backend-protocol", "HTTPS"),
				nginx("rewrite-target", "/$1"), nginx("whitelist-source-range", "10.0.0.0/8"),
				nginx("proxy-send-timeout", "1s; }"),
				rule("a.example.com", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", withSettings(loc("/", config.PathRegex, web80, ing),
				config.LocationSettings{ProxyReadTimeout: 120, ProxyBodySize: "8m", BackendProtocol: "HTTPS", RewriteTarget: "/$1",
					AllowSourceRange: []string{"10.0.0.0/8"}}))},
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/proxy-send-timeout="1s; }": contains ';'; ignored`},
		},
		"backend settings from the oldest Ingress that sets them": {
			objs: objs(webService(), one(
				routeWith("plain", 0),
				routeWith("hash", 5, nginx("upstream-hash-by", "$request_uri")),
				routeWith("ewma", 1, nginx("load-balance", "ewma")),
				routeWith("same", 9, nginx("load-balance", "ewma")))),
			backends: []config.Backend{ewma},
			problems: []string{"Ingress default/hash: backend default-web-80: load-balance, upstream-hash-by and affinity annotations differ from Ingress default/ewma, which is older and is used; ignored"},
		},
		"no Ingress sets balancing: round robin": {
			objs:     objs(webService(), one(routeWith("a", 0))),
			backends: []config.Backend{lb},
		},
		"hash by": {
			objs:     objs(webService(), one(routeWith("a", 0, nginx("upstream-hash-by", "$request_uri")))),
			backends: []config.Backend{hashed},
		},
	})
}

// TestBuildBodySize checks that an accepted proxy-body-size reaches the
// location as given and converts to its byte count.
func TestBuildBodySize(t *testing.T) {
	tests := map[string]struct {
		value   string
		want    int64 // -1: rejected with a Problem
		problem string
	}{
		"eleven digits of bytes": {value: "99999999999", want: 99999999999},
		"gigabytes":              {value: "3g", want: 3 << 30},
		"over 1 TiB":             {value: "1025g", want: -1, problem: `proxy-body-size="1025g": must be an nginx size`},
		"fraction":               {value: "1.5m", want: -1, problem: `proxy-body-size="1.5m": must be an nginx size`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := buildWith(t, objs(webService(), one(newIngress("default", "ing", nginx("proxy-body-size", tc.value),
				rule("a.example.com", prefix("/", "web", 80))))), nil)
			got := cfg.Servers[1].Locations[0].Settings.ProxyBodySize
			if tc.want < 0 {
				if got != "" {
					t.Errorf("ProxyBodySize = %q, want none", got)
				}
				checkProblems(t, cfg.Problems, []string{tc.problem})
				return
			}
			checkProblems(t, cfg.Problems, nil)
			if n, ok := got.Bytes(); string(got) != tc.value || !ok || n != tc.want {
				t.Errorf("ProxyBodySize = %q (%d, %v), want %q (%d)", got, n, ok, tc.value, tc.want)
			}
		})
	}
}
