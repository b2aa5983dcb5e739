package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestBuildSnippetsFailClosed: an Ingress carrying any *-snippet
// annotation is not served at all (rules, TLS, default backend), whatever
// allow-snippet-annotations says; the other Ingresses are unaffected.
func TestBuildSnippetsFailClosed(t *testing.T) {
	const refused = "snippets are never applied (raw nginx configuration); the Ingress is not served"
	full := func(opts ...ingOpt) []runtime.Object {
		return objs(webService(), one(tlsSecret(t, "default", "cert", "example"), newIngress("default", "snip",
			append(opts, created(1), defaultBackend("web", 80), tlsFor("cert", "a.example.com"),
				rule("a.example.com", prefix("/", "web", 80), exact("/admin", "web", 80)))...)))
	}
	nothing := []config.Server{srv("_", catchAll(""))}
	cases := map[string]buildCase{
		"without a snippet the Ingress is served": {
			objs:    full(),
			servers: []config.Server{srv("_", catchAll(web80)), tlsSrv("a.example.com", true, loc("/admin", config.PathExact, web80, "default/snip"), loc("/", config.PathPrefix, web80, "default/snip"))},
		},
		"allow-snippet-annotations in the ConfigMap changes nothing": {
			objs:     append(full(nginx("server-snippet", "return 200;")), fixtures.ConfigMap("ingress", "cfg", "allow-snippet-annotations", "true")),
			opts:     func(o *Options) { o.ConfigMap = "ingress/cfg" },
			servers:  nothing,
			problems: []string{"Ingress default/snip: annotation nginx.ingress.kubernetes.io/server-snippet: " + refused},
		},
		"the allow-snippet-annotations flag changes nothing": {
			objs:     full(nginx("configuration-snippet", "more_set_headers x;")),
			opts:     func(o *Options) { o.AllowSnippets = true },
			servers:  nothing,
			problems: []string{"Ingress default/snip: annotation nginx.ingress.kubernetes.io/configuration-snippet: " + refused},
		},
		"several snippets are named in one problem; other problems are still reported": {
			objs: full(nginx("auth-snippet", "deny all;"), nginx("stream-snippet", "x"), nginx("server-snippet", "x"),
				nginx("proxy-read-timeout", "1s; }")),
			servers: nothing,
			problems: []string{
				`Ingress default/snip: annotation nginx.ingress.kubernetes.io/proxy-read-timeout="1s; }": contains ';'; ignored`,
				"Ingress default/snip: annotations nginx.ingress.kubernetes.io/auth-snippet, nginx.ingress.kubernetes.io/server-snippet, nginx.ingress.kubernetes.io/stream-snippet: " + refused,
			},
		},
		"any other *-snippet annotation, even empty": {
			objs:     full(nginx("location-snippet", "")),
			servers:  nothing,
			problems: []string{"annotation nginx.ingress.kubernetes.io/location-snippet: " + refused},
		},
		"a refused Ingress claims nothing: a younger one serves the host": {
			objs: append(full(nginx("configuration-snippet", "allow 10.0.0.0/8; deny all;")),
				newIngress("default", "plain", created(5), rule("a.example.com", prefix("/", "web", 80)))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/", config.PathPrefix, web80, "default/plain"))},
			problems: []string{"Ingress default/snip: annotation nginx.ingress.kubernetes.io/configuration-snippet: " + refused},
		},
		"a snippet-like name outside the prefix is not a snippet": {
			objs:    objs(webService(), one(newIngress("default", "other", annotation("example.com/server-snippet", "x"), rule("a.example.com", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/", config.PathPrefix, web80, "default/other"))},
		},
	}
	runBuildCases(t, cases)
	cfg := buildWith(t, full(nginx("server-snippet", "return 200;")), nil)
	for _, c := range cfg.Certificates {
		if c.Name != config.FallbackCertificateName {
			t.Errorf("a refused Ingress left certificate %s", c.Name)
		}
	}
	if cfg.Backends.Len() != 0 || cfg.DefaultBackend != "" {
		t.Errorf("a refused Ingress left backends %v, default backend %q", cfg.Backends.Slice(), cfg.DefaultBackend)
	}
}
