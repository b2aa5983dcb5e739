package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestBuildRoutingAnnotations(t *testing.T) {
	const ing = "default/ing"
	route := func(opts ...ingOpt) []runtime.Object {
		return one(newIngress("default", "ing", append(opts, rule("a.example.com", prefix("/app", "web", 80)))...))
	}
	app := func(s config.LocationSettings) config.Location {
		return withSettings(loc("/app", config.PathPrefix, web80, ing), s)
	}
	// The catch-all of the host takes the settings of its one Ingress.
	host := func(app config.Location) []config.Server {
		root := withSettings(catchAll(""), app.Settings)
		return []config.Server{srv("_", catchAll("")), srv("a.example.com", app, root)}
	}
	defaultCORS := &config.CORS{Methods: config.DefaultCORSMethods, Headers: config.DefaultCORSHeaders, Credentials: true, MaxAge: config.DefaultCORSMaxAge}
	runBuildCases(t, map[string]buildCase{
		"permanent-redirect defaults to 301": {
			objs:    objs(webService(), route(nginx("permanent-redirect", "https://example.org/new?a=b"))),
			servers: host(app(config.LocationSettings{Redirect: &config.Redirect{URL: "https://example.org/new?a=b", Code: 301}})),
		},
		"permanent-redirect-code and temporal-redirect, which wins": {
			objs: objs(webService(), route(nginx("permanent-redirect", "https://p.example.org"), nginx("permanent-redirect-code", "308"),
				nginx("temporal-redirect", "http://t.example.org/x"))),
			servers: host(app(config.LocationSettings{Redirect: &config.Redirect{URL: "http://t.example.org/x", Code: 302}})),
		},
		"temporal-redirect-code outside 300 to 307 keeps 302": {
			objs:     objs(webService(), route(nginx("temporal-redirect", "http://t.example.org"), nginx("temporal-redirect-code", "308"))),
			servers:  host(app(config.LocationSettings{Redirect: &config.Redirect{URL: "http://t.example.org", Code: 302}})),
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/temporal-redirect-code="308": must be between 300 and 307; ignored`},
		},
		"redirect URLs that are not absolute http URLs are left out": {
			objs:    objs(webService(), route(nginx("permanent-redirect", "/relative"), nginx("temporal-redirect", "ftp://x.example.org"))),
			servers: host(app(config.LocationSettings{})),
			problems: []string{
				`Ingress default/ing: annotation nginx.ingress.kubernetes.io/permanent-redirect="/relative": must be an absolute http or https URL; ignored`,
				`Ingress default/ing: annotation nginx.ingress.kubernetes.io/temporal-redirect="ftp://x.example.org": must be an absolute http or https URL; ignored`,
			},
		},
		"redirect URL with characters ingress-nginx refuses": {
			objs:     objs(webService(), route(nginx("permanent-redirect", "https://example.org/a b"))),
			servers:  host(app(config.LocationSettings{})),
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/permanent-redirect="https://example.org/a b": contains ' ' (allowed: letters, digits and -._~/:,?&=); ignored`},
		},
		"ssl redirect shape": {
			objs:    objs(webService(), route(nginx("preserve-trailing-slash", "true"), nginx("use-port-in-redirects", "true"))),
			servers: host(app(config.LocationSettings{PreserveTrailingSlash: true, UsePortInRedirects: true})),
		},
		"x-forwarded-prefix applies with a rewrite only": {
			objs: objs(webService(), one(
				newIngress("default", "ing", nginx("rewrite-target", "/$1"), nginx("x-forwarded-prefix", "/api"),
					rule("a.example.com", implSpecific("/api/(.*)", "web", 80))),
				newIngress("default", "other", nginx("x-forwarded-prefix", "/x"), rule("b.example.com", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")),
				srv("a.example.com", withSettings(rxLoc("/api/(.*)", ing), config.LocationSettings{RewriteTarget: "/$1", XForwardedPrefix: "/api"}), loc("/", config.PathRegex, "", "")),
				srv("b.example.com", loc("/", config.PathPrefix, web80, "default/other"))},
		},
		"app-root is host-wide, the first location's Ingress winning": {
			objs: objs(webService(), one(
				newIngress("default", "ing", nginx("app-root", "/app1"), rule("a.example.com", prefix("/app", "web", 80))),
				newIngress("default", "long", created(1), nginx("app-root", "/app2"), rule("a.example.com", prefix("/longer", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), {Hostname: "a.example.com", AppRoot: "/app2", Locations: []config.Location{
				loc("/longer", config.PathPrefix, web80, "default/long"), loc("/app", config.PathPrefix, web80, ing), catchAll("")}}},
		},
		"app-root must be a path": {
			objs:     objs(webService(), route(nginx("app-root", "https://example.org/x"))),
			servers:  host(app(config.LocationSettings{})),
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/app-root="https://example.org/x": must be an absolute path starting with /; ignored`},
		},
		"enable-cors with the defaults": {
			objs:    objs(webService(), route(nginx("enable-cors", "true"))),
			servers: host(app(config.LocationSettings{CORS: defaultCORS})),
		},
		"cors settings; * anywhere allows any origin": {
			objs: objs(webService(), route(nginx("enable-cors", "true"), nginx("cors-allow-origin", "https://a.example.org, *"),
				nginx("cors-allow-methods", "GET, POST"), nginx("cors-allow-headers", "X-A, X-B"), nginx("cors-expose-headers", "*, X-C"),
				nginx("cors-allow-credentials", "false"), nginx("cors-max-age", "0"))),
			servers: host(app(config.LocationSettings{CORS: &config.CORS{Methods: "GET, POST", Headers: "X-A, X-B", Expose: "*, X-C", MaxAge: 0}})),
		},
		"cors origins: valid ones kept, others left out with a problem": {
			objs: objs(webService(), route(nginx("enable-cors", "true"),
				nginx("cors-allow-origin", "https://*.example.org:8443, http://a.example.org, example.org, null"))),
			servers: host(app(config.LocationSettings{CORS: &config.CORS{Origins: []string{"https://*.example.org:8443", "http://a.example.org", "null"},
				Methods: config.DefaultCORSMethods, Headers: config.DefaultCORSHeaders, Credentials: true, MaxAge: config.DefaultCORSMaxAge}})),
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/cors-allow-origin: origins ["example.org"] are not scheme://host[:port] or null; left out`},
		},
		"cors without any valid origin adds nothing": {
			objs:     objs(webService(), route(nginx("enable-cors", "true"), nginx("cors-allow-origin", "example.org"))),
			servers:  host(app(config.LocationSettings{})),
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/cors-allow-origin: origins ["example.org"] are not scheme://host[:port] or null; left out`},
		},
		"bad cors values keep the defaults": {
			objs: objs(webService(), route(nginx("enable-cors", "true"), nginx("cors-allow-methods", "GET, <POST>"),
				nginx("cors-max-age", "-1"))),
			servers: host(app(config.LocationSettings{CORS: defaultCORS})),
			problems: []string{
				`Ingress default/ing: annotation nginx.ingress.kubernetes.io/cors-allow-methods="GET, <POST>": must be a list of methods such as "GET, POST"; ignored`,
				`Ingress default/ing: annotation nginx.ingress.kubernetes.io/cors-max-age="-1": must be a whole number; ignored`,
			},
		},
		"cors settings without enable-cors do nothing": {
			objs:    objs(webService(), route(nginx("cors-allow-origin", "https://a.example.org"))),
			servers: host(app(config.LocationSettings{})),
		},
		"from-to-www-redirect adds a redirecting server for the other name": {
			objs: objs(webService(), one(
				newIngress("default", "ing", nginx("from-to-www-redirect", "true"), rule("a.example.com", prefix("/app", "web", 80))),
				newIngress("default", "www", nginx("from-to-www-redirect", "true"), rule("www.b.example.com", prefix("/", "web", 80))),
				newIngress("default", "both", nginx("from-to-www-redirect", "true"), rule("c.example.com", prefix("/", "web", 80)),
					rule("www.c.example.com", prefix("/", "web", 80))),
				newIngress("default", "wild", nginx("from-to-www-redirect", "true"), rule("*.d.example.com", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")),
				srv("*.d.example.com", loc("/", config.PathPrefix, web80, "default/wild")),
				srv("a.example.com", loc("/app", config.PathPrefix, web80, ing), catchAll("")),
				{Hostname: "b.example.com", RedirectTo: "www.b.example.com"},
				srv("c.example.com", loc("/", config.PathPrefix, web80, "default/both")),
				{Hostname: "www.a.example.com", RedirectTo: "a.example.com"},
				srv("www.b.example.com", loc("/", config.PathPrefix, web80, "default/www")),
				srv("www.c.example.com", loc("/", config.PathPrefix, web80, "default/both"))},
		},
	})
}

func TestBuildCatchAllAndGlobalDefaults(t *testing.T) {
	const ing = "default/ing"
	cm := func(kv ...string) []runtime.Object { return one(fixtures.ConfigMap("ingress", "cfg", kv...)) }
	withCM := func(o *Options) { o.ConfigMap = "ingress/cfg" }
	allow := config.LocationSettings{AllowSourceRange: []string{"10.0.0.0/8"}}
	runBuildCases(t, map[string]buildCase{
		"the catch-all takes the settings of the host's oldest Ingress, without its rewrite": {
			objs: objs(webService(), one(
				newIngress("default", "ing", nginx("whitelist-source-range", "10.0.0.0/8"), nginx("rewrite-target", "/"),
					nginx("use-regex", "true"), rule("a.example.com", implSpecific("/app", "web", 80))),
				newIngress("default", "new", created(1), nginx("proxy-read-timeout", "9"), rule("a.example.com", prefix("/new", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				withSettings(rxLoc("/new/", "default/new"), config.LocationSettings{ProxyReadTimeout: 9}),
				withSettings(rxLoc("/new", "default/new"), config.LocationSettings{ProxyReadTimeout: 9}),
				withSettings(rxLoc("/app", ing), config.LocationSettings{RewriteTarget: "/", AllowSourceRange: []string{"10.0.0.0/8"}}),
				withSettings(loc("/", config.PathRegex, "", ""), allow))},
		},
		"ConfigMap timeouts and body size are route defaults, annotations win": {
			objs: objs(webService(), cm("proxy-read-timeout", "120", "proxy-body-size", "8m", "proxy-connect-timeout", "5"),
				one(newIngress("default", "ing", nginx("proxy-read-timeout", "7"), rule("a.example.com", prefix("/app", "web", 80))))),
			opts: withCM,
			servers: []config.Server{srv("_", withSettings(catchAll(""), config.LocationSettings{ProxyReadTimeout: 120, ProxyBodySize: "8m"})),
				srv("a.example.com",
					withSettings(loc("/app", config.PathPrefix, web80, ing), config.LocationSettings{ProxyReadTimeout: 7, ProxyBodySize: "8m"}),
					withSettings(catchAll(""), config.LocationSettings{ProxyReadTimeout: 7, ProxyBodySize: "8m"}))},
		},
	})
}

// TestGlobalRouteDefaultsDoNotReload: a ConfigMap change of the proxy
// timeouts or body size changes routes only.
func TestGlobalRouteDefaultsDoNotReload(t *testing.T) {
	opts := testOptions()
	opts.ConfigMap = "ingress/cfg"
	build := func(kv ...string) *config.Configuration {
		return Build(newTestStore(t, append(objs(webService()), fixtures.ConfigMap("ingress", "cfg", kv...),
			newIngress("default", "ing", rule("a.example.com", prefix("/app", "web", 80))))...), opts)
	}
	old := build()
	for _, kv := range [][]string{{"proxy-read-timeout", "300"}, {"proxy-connect-timeout", "1"}, {"proxy-send-timeout", "9"}, {"proxy-body-size", "0"}} {
		ch := config.Diff(old, build(kv...))
		if ch.Reload || len(ch.ServersUpserted) != 2 {
			t.Errorf("%s=%s: reload %v (%q), %d servers upserted; want no reload, both servers", kv[0], kv[1], ch.Reload, ch.ReloadReasons, len(ch.ServersUpserted))
		}
	}
}

// TestGlobalLoadBalance: the ConfigMap's load-balance is the balancer of
// backends whose Ingresses set none; an annotation wins; no reload.
func TestGlobalLoadBalance(t *testing.T) {
	opts := testOptions()
	opts.ConfigMap = "ingress/cfg"
	build := func(kv ...string) *config.Configuration {
		return Build(newTestStore(t, append(objs(webService()), fixtures.ConfigMap("ingress", "cfg", kv...),
			service("default", "api", svcPort("", 80)),
			newIngress("default", "ing", rule("a.example.com", prefix("/", "web", 80))),
			newIngress("default", "api", nginx("load-balance", "round_robin"), rule("b.example.com", prefix("/", "api", 80))))...), opts)
	}
	old, cfg := build(), build("load-balance", "ewma")
	got := map[string]string{}
	for _, b := range cfg.Backends.All() {
		got[b.Name] = b.LoadBalance
	}
	if want := map[string]string{web80: config.LoadBalanceEWMA, "default-api-80": config.LoadBalanceRoundRobin}; !maps.Equal(got, want) {
		t.Errorf("balancers %v, want %v", got, want)
	}
	if ch := config.Diff(old, cfg); ch.Reload || len(ch.BackendsUpserted) != 1 {
		t.Errorf("reload %v, %d backends upserted; want no reload, one backend", ch.Reload, len(ch.BackendsUpserted))
	}
}
