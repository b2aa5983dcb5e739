package e2e

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestRouting: host and path rules route through both nginx, with the
// Ingress v1 semantics of Exact, Prefix, wildcard hosts and default backends.
func TestRouting(t *testing.T) {
	ns := setup(t)
	web := service(t, ns, "web")
	api := service(t, ns, "api")
	wild := service(t, ns, "wild")
	applyIngress(t, ours(ns, "routes",
		fixtures.Rule(ns+".example.com",
			fixtures.Prefix("/", web.Name, 80),
			fixtures.Exact("/api", api.Name, 80),
			fixtures.Exact("/exact/", api.Name, 80),
			fixtures.Prefix("/v1/", api.Name, 80)),
		fixtures.Rule("*."+ns+".wild.example.com", fixtures.Prefix("/", wild.Name, 80)),
	))
	h := "http://" + ns + ".example.com"
	wh := ns + ".wild.example.com"
	routes(t, nil, map[string]string{
		h + "/":                                  "web",
		h + "/api":                               "api", // Exact
		h + "/api/":                              "web", // Exact matches only itself
		h + "/apix":                              "web",
		h + "/v1":                                "api", // Prefix, trailing slash of the rule ignored
		h + "/v1/":                               "api",
		h + "/v1/users":                          "api",
		h + "/v1x":                               "web", // element-wise: /v1 does not match /v1x
		h + "/V1/users":                          "web", // case sensitive
		h + "/exact/":                            "api",
		h + "/exact":                             "web", // no nginx auto-redirect to /exact/
		"http://a." + wh + "/":                   "wild",
		"http://a.b." + wh + "/":                 "", // a wildcard matches one label only
		"http://" + wh + "/":                     "",
		"http://unknown-" + ns + ".example.com/": "", // no rule: the 404 default
	})
	converged(t)
}

// TestDefaultBackend: spec.defaultBackend answers what no rule matches.
func TestDefaultBackend(t *testing.T) {
	ns := setup(t)
	web := service(t, ns, "web")
	fallback := service(t, ns, "fallback")
	applyIngress(t, ours(ns, "with-default",
		fixtures.DefaultBackend(fallback.Name, 80),
		fixtures.Rule(ns+".example.com", fixtures.Exact("/exact", web.Name, 80)),
	))
	routes(t, nil, map[string]string{
		"http://" + ns + ".example.com/exact": "web",
		"http://" + ns + ".example.com/other": "fallback",
	})
}

// TestOtherClassIgnored: an Ingress of another class changes nothing.
func TestOtherClassIgnored(t *testing.T) {
	ns := setup(t)
	web := service(t, ns, "web")
	applyIngress(t, ours(ns, "ours", fixtures.Rule(ns+".example.com", fixtures.Prefix("/", web.Name, 80))))
	routes(t, nil, map[string]string{"http://" + ns + ".example.com/": "web"})
	before := converged(t)
	applyIngress(t, fixtures.Ingress(ns, "theirs", fixtures.Class("other-class"),
		fixtures.Rule("theirs-"+ns+".example.com", fixtures.Prefix("/", web.Name, 80))))
	if after := converged(t); after != before {
		t.Fatalf("an Ingress of another class changed the configuration: %s -> %s", before, after)
	}
	routes(t, nil, map[string]string{"http://theirs-" + ns + ".example.com/": ""})
}

// TestRegexRewriteDoesNotBlockLaterIngresses is issue 11's "Why" point 2:
// the common ingress-nginx regex-and-rewrite Ingress, then an ordinary one.
// Both are served by both syncers, and neither reloads nginx.
func TestRegexRewriteDoesNotBlockLaterIngresses(t *testing.T) {
	ns := setup(t)
	service(t, ns, "api")
	service(t, ns, "later")
	converged(t)
	before := snapshot(t)
	applyIngress(t, ours(ns, "regex",
		fixtures.Annotation("nginx.ingress.kubernetes.io/rewrite-target", "/$1"),
		fixtures.Rule("regex.example.com",
			fixtures.Path(networkingv1.PathTypeImplementationSpecific, "/api/(.*)", "api", 80))))
	applyIngress(t, ours(ns, "later", fixtures.Rule("later.example.com", fixtures.Prefix("/", "later", 80))))
	reaches(t, nil, map[string]hit{
		"http://later.example.com/":              {backend: "later", path: "/"},
		"http://regex.example.com/api/users":     {backend: "api", path: "/users"},
		"http://regex.example.com/API/users?x=1": {backend: "api", path: "/users"}, // case-insensitive
		"http://regex.example.com/api/":          {backend: "api", path: "/"},
		"http://regex.example.com/v2/api/users":  {}, // anchored at the start
		"http://regex.example.com/":              {},
	})
	converged(t)
	before.unchanged(t, "a regex Ingress or the one after it")
}
