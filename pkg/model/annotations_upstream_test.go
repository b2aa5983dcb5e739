package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestHeadersOf(t *testing.T) {
	cm := fixtures.ConfigMap("default", "h",
		"X-Good", "a value; with \"quotes\" and {braces}",
		"x-good", "case repeat",
		"Bad Name", "v",
		"X-Empty", "",
		"X-CRLF", "a\r\nInjected: 1",
		"X-Dollar", "$remote_addr",
		"X-Tab", "a\tb",
		"X-Utf8", "é")
	got, problems := headersOf(cm, headerRule{what: "w", noDollar: true})
	want := []config.Header{{Name: "X-Good", Value: "a value; with \"quotes\" and {braces}"}, {Name: "X-Tab", Value: "a\tb"}}
	check.Equal(t, "headers", got, want)
	check.Contains(t, problems, []string{
		`header "Bad Name" is not a header name`, `header "X-CRLF" the value holds a control`,
		`header "X-Dollar" holds '$'`, `header "X-Empty" the value is empty`,
		`header "X-Utf8" the value holds a control or non-ASCII`, `header "x-good" repeats a header name`,
	})
}

// controllerCM is the controller ConfigMap of the header tests.
const controllerCM = "ingress/controller"

func headerOpts(o *Options) { o.ConfigMap = controllerCM }

func TestBuildHeaderConfigMaps(t *testing.T) {
	route := func(opts ...ingOpt) runtime.Object {
		return newIngress("default", "ing", append(opts, rule("a.example.com", prefix("/", "web", 80)))...)
	}
	controller := func(kv ...string) runtime.Object { return fixtures.ConfigMap("ingress", "controller", kv...) }
	cases := map[string]struct {
		objs     []runtime.Object
		req      []config.Header
		resp     []config.Header
		custom   []config.Header
		closed   bool // the routes answer 503 (CustomHeadersUnavailable)
		problems []string
	}{
		"no ConfigMap": {objs: one(route())},
		"proxy-set-headers and add-headers on every server": {
			objs: one(route(), controller("proxy-set-headers", "ingress/req", "add-headers", "ingress/resp"),
				fixtures.ConfigMap("ingress", "req", "X-Using", "ingress-sync", "Host", "evil", "X-Forwarded-For", "1.2.3.4", "X-Var", "${msec}"),
				fixtures.ConfigMap("ingress", "resp", "X-Frame-Options", "DENY", "X-Var", "$host")),
			req:  []config.Header{{Name: "X-Using", Value: "ingress-sync"}},
			resp: []config.Header{{Name: "X-Frame-Options", Value: "DENY"}},
			problems: []string{
				`ConfigMap ingress/req: ConfigMap proxy-set-headers: header "Host" is set by the proxy itself`,
				`ConfigMap ingress/req: ConfigMap proxy-set-headers: header "X-Forwarded-For" is set by the proxy itself`,
				`ConfigMap ingress/req: ConfigMap proxy-set-headers: header "X-Var" holds '$'`,
				`ConfigMap ingress/resp: ConfigMap add-headers: header "X-Var" holds '$'`,
			},
		},
		"missing header ConfigMaps": {
			objs: one(route(), controller("proxy-set-headers", "ingress/req", "add-headers", "ingress/resp")),
			problems: []string{`ConfigMap ingress/req: ConfigMap ingress/req named by the controller ConfigMap's proxy-set-headers not found`,
				`ConfigMap ingress/resp: ConfigMap ingress/resp named by the controller ConfigMap's add-headers not found`},
		},
		"custom-headers needs global-allowed-response-headers": {
			objs: one(route(nginx("custom-headers", "default/hdrs")), controller(),
				fixtures.ConfigMap("default", "hdrs", "X-Custom", "42")),
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/custom-headers ConfigMap default/hdrs: header "X-Custom" is not listed in the controller ConfigMap's global-allowed-response-headers`},
		},
		"custom-headers allowed, '$' as written": {
			objs: one(route(nginx("custom-headers", "default/hdrs")), controller("global-allowed-response-headers", "x-custom, X-Dollar"),
				fixtures.ConfigMap("default", "hdrs", "X-Custom", "42", "X-Dollar", "$remote_addr", "X-Other", "1")),
			custom:   []config.Header{{Name: "X-Custom", Value: "42"}, {Name: "X-Dollar", Value: "$remote_addr"}},
			problems: []string{`header "X-Other" is not listed`},
		},
		"custom-headers of another namespace": {
			objs:     one(route(nginx("custom-headers", "other/hdrs")), controller("global-allowed-response-headers", "X-Custom"), fixtures.ConfigMap("other", "hdrs", "X-Custom", "42")),
			closed:   true,
			problems: []string{`custom-headers=other/hdrs: the ConfigMap must be in the Ingress's namespace default; the Ingress's routes answer 503`},
		},
		"custom-headers ConfigMap missing": {
			objs:     one(route(nginx("custom-headers", "default/hdrs"))),
			closed:   true,
			problems: []string{`custom-headers: ConfigMap default/hdrs not found; the Ingress's routes answer 503`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := buildWith(t, objs(webService(), tc.objs), headerOpts)
			checkDataPlane(t, got)
			for _, s := range got.Servers {
				check.Equal(t, s.Hostname+" request headers", s.RequestHeaders, tc.req)
				check.Equal(t, s.Hostname+" response headers", s.ResponseHeaders, tc.resp)
			}
			a := got.Servers[1]
			check.Equal(t, "custom headers", a.Locations[0].Settings.ResponseHeaders, tc.custom)
			check.Equal(t, "routes answer 503", a.Locations[0].Settings.CustomHeadersUnavailable, tc.closed)
			checkProblems(t, got.Problems, tc.problems)
		})
	}
}

func TestBuildUpstreamSettings(t *testing.T) {
	cfg := buildWith(t, objs(webService(), one(
		newIngress("default", "vhost", created(1), nginx("upstream-vhost", "internal.example.com"), nginx("connection-proxy-header", "close"),
			rule("a.example.com", prefix("/v", "web", 80))),
		newIngress("default", "plain", created(2), rule("a.example.com", prefix("/p", "web", 80))))), nil)
	checkDataPlane(t, cfg)
	a := cfg.Servers[1]
	for _, l := range a.Locations {
		if l.Ingress == "" {
			continue // the catch-all takes the settings of the host's first path
		}
		want := config.LocationSettings{}
		if l.Ingress == "default/vhost" {
			want = config.LocationSettings{UpstreamVhost: "internal.example.com", ConnectionHeader: "close"}
		}
		if l.Settings.UpstreamVhost != want.UpstreamVhost || l.Settings.ConnectionHeader != want.ConnectionHeader {
			t.Errorf("%s: vhost %q connection %q, want %q %q", l.Path, l.Settings.UpstreamVhost, l.Settings.ConnectionHeader, want.UpstreamVhost, want.ConnectionHeader)
		}
	}
}

func hostnames(servers []config.Server) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Hostname
	}
	return out
}

func TestBuildServerAlias(t *testing.T) {
	cases := map[string]struct {
		objs     []runtime.Object
		hosts    []string
		problems []string
	}{
		"alias serves the host's routes": {
			objs:  one(newIngress("default", "a", nginx("server-alias", "bar.example.com, *.w.example.com"), rule("foo.example.com", prefix("/", "web", 80)))),
			hosts: []string{"_", "*.w.example.com", "bar.example.com", "foo.example.com"},
		},
		"alias that is another rule's host or the host itself": {
			objs: one(newIngress("default", "a", created(1), nginx("server-alias", "foo.example.com,b.example.com"), rule("foo.example.com", prefix("/a", "web", 80))),
				newIngress("default", "b", created(2), rule("b.example.com", prefix("/b", "web", 80)))),
			hosts:    []string{"_", "b.example.com", "foo.example.com"},
			problems: []string{`Ingress default/a: annotation nginx.ingress.kubernetes.io/server-alias: b.example.com is a host of a rule; not an alias of foo.example.com`},
		},
		"two Ingresses on one host: the oldest with aliases wins": {
			objs: one(newIngress("default", "old", created(1), rule("foo.example.com", prefix("/a", "web", 80))),
				newIngress("default", "mid", created(2), nginx("server-alias", "x.example.com"), rule("foo.example.com", prefix("/b", "web", 80))),
				newIngress("default", "new", created(3), nginx("server-alias", "y.example.com"), rule("foo.example.com", prefix("/c", "web", 80)))),
			hosts:    []string{"_", "foo.example.com", "x.example.com"},
			problems: []string{`Ingress default/new: annotation nginx.ingress.kubernetes.io/server-alias: host foo.example.com has the aliases of Ingress default/mid, which is older; ignored for this host`},
		},
		"one alias claimed by two hosts": {
			objs: one(newIngress("default", "young", created(2), nginx("server-alias", "x.example.com"), rule("a.example.com", prefix("/", "web", 80))),
				newIngress("default", "old", created(1), nginx("server-alias", "x.example.com"), rule("b.example.com", prefix("/", "web", 80)))),
			hosts:    []string{"_", "a.example.com", "b.example.com", "x.example.com"},
			problems: []string{`Ingress default/young: annotation nginx.ingress.kubernetes.io/server-alias: x.example.com is an alias of b.example.com for Ingress default/old, which is older; not an alias of a.example.com`},
		},
		"alias beats a www redirect of the same name": {
			objs: one(newIngress("default", "a", nginx("server-alias", "www.foo.example.com"), nginx("from-to-www-redirect", "true"),
				rule("foo.example.com", prefix("/", "web", 80)))),
			hosts: []string{"_", "foo.example.com", "www.foo.example.com"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := buildWith(t, objs(webService(), tc.objs), nil)
			checkDataPlane(t, cfg)
			check.Equal(t, "hosts", hostnames(cfg.Servers), tc.hosts)
			checkProblems(t, cfg.Problems, tc.problems)
			for _, s := range cfg.Servers {
				if s.RedirectTo != "" {
					t.Errorf("%s redirects to %s: an alias must not be a www redirect", s.Hostname, s.RedirectTo)
				}
			}
		})
	}
	// An alias copies its host's locations.
	cfg := buildWith(t, objs(webService(), one(newIngress("default", "a", nginx("server-alias", "bar.example.com"), rule("foo.example.com", prefix("/x", "web", 80))))), nil)
	foo, bar := cfg.Servers[2], cfg.Servers[1]
	bar.Hostname = foo.Hostname
	if !config.ServerEqual(&foo, &bar) {
		t.Errorf("alias differs from its host:\n%+v\n%+v", bar, foo)
	}
}

func TestBuildServiceUpstream(t *testing.T) {
	svc := func(clusterIP string) []runtime.Object {
		s := service("default", "web", svcPort("http", 80))
		s.Spec.ClusterIP = clusterIP
		return []runtime.Object{s, slice("default", "web-1", "web", "http", 8080, ready("10.0.0.1"))}
	}
	route := func(name string, sec int, opts ...ingOpt) runtime.Object {
		return newIngress("default", name, append(opts, created(sec), rule(name+".example.com", prefix("/", "web", 80)))...)
	}
	cases := map[string]struct {
		objs     []runtime.Object
		opts     func(*Options)
		eps      []config.Endpoint
		problems []string
	}{
		"endpoints by default":                {objs: objs(svc("10.96.0.10"), one(route("a", 1))), eps: []config.Endpoint{ep("10.0.0.1", 8080)}},
		"the ClusterIP and port":              {objs: objs(svc("10.96.0.10"), one(route("a", 1, nginx("service-upstream", "true")))), eps: []config.Endpoint{ep("10.96.0.10", 80)}},
		"ConfigMap default":                   {objs: objs(svc("10.96.0.10"), one(route("a", 1), fixtures.ConfigMap("ingress", "controller", "service-upstream", "true"))), opts: headerOpts, eps: []config.Endpoint{ep("10.96.0.10", 80)}},
		"annotation false over the ConfigMap": {objs: objs(svc("10.96.0.10"), one(route("a", 1, nginx("service-upstream", "false")), fixtures.ConfigMap("ingress", "controller", "service-upstream", "true"))), opts: headerOpts, eps: []config.Endpoint{ep("10.0.0.1", 8080)}},
		"headless Service keeps its endpoints": {
			objs: objs(svc(corev1.ClusterIPNone), one(route("a", 1, nginx("service-upstream", "true")))), eps: []config.Endpoint{ep("10.0.0.1", 8080)},
			problems: []string{`Service default/web: service-upstream: the Service has no ClusterIP (headless); its endpoints are used`},
		},
		"Ingresses disagree: the oldest that sets it decides": {
			objs:     objs(svc("10.96.0.10"), one(route("a", 1), route("b", 2, nginx("service-upstream", "true")), route("c", 3, nginx("service-upstream", "false")))),
			eps:      []config.Endpoint{ep("10.96.0.10", 80)},
			problems: []string{`Ingress default/c: backend default-web-80: service-upstream differs from Ingress default/b, which is older and is used; ignored`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := buildWith(t, tc.objs, tc.opts)
			checkDataPlane(t, cfg)
			if cfg.Backends.Len() != 1 {
				t.Fatalf("backends %+v", cfg.Backends.Slice())
			}
			check.Equal(t, "endpoints", cfg.Backends.At(0).Endpoints, tc.eps)
			if be := cfg.Backends.At(0); be.Checksum != config.BackendChecksum(be) {
				t.Error("backend checksum does not cover the ClusterIP endpoint")
			}
			checkProblems(t, cfg.Problems, tc.problems)
		})
	}
}

// TestHeaderConfigMapsReload: the header ConfigMaps' contents,
// proxy-set-headers and service-upstream change routes and backends only;
// nginx.conf changes (the response header filter) only when add-headers or
// global-allowed-response-headers turn response headers on or off.
func TestHeaderConfigMapsReload(t *testing.T) {
	base := objs(webService(), one(newIngress("default", "ing", nginx("custom-headers", "default/h"), rule("a.example.com", prefix("/", "web", 80))),
		fixtures.ConfigMap("ingress", "req", "X-A", "1"), fixtures.ConfigMap("default", "h", "X-A", "2")))
	build := func(kv ...string) *config.Configuration {
		return buildWith(t, objs(base, one(fixtures.ConfigMap("ingress", "controller", kv...))), headerOpts)
	}
	cases := map[string]struct {
		before, after []string
		reload        bool
	}{
		"proxy-set-headers":               {nil, []string{"proxy-set-headers", "ingress/req"}, false},
		"service-upstream":                {nil, []string{"service-upstream", "true"}, false},
		"add-headers on":                  {nil, []string{"add-headers", "ingress/req"}, true},
		"global-allowed-response-headers": {nil, []string{"global-allowed-response-headers", "X-A"}, true},
		"allow-list to add-headers": {[]string{"global-allowed-response-headers", "X-A"},
			[]string{"add-headers", "ingress/req", "global-allowed-response-headers", "X-B"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before, after := build(tc.before...), build(tc.after...)
			if got := before.Global.Rendered() != after.Global.Rendered(); got != tc.reload {
				t.Errorf("reload %v, want %v:\n%+v\n%+v", got, tc.reload, before.Global.Rendered(), after.Global.Rendered())
			}
			if config.ServerEqual(&before.Servers[1], &after.Servers[1]) && name != "service-upstream" {
				t.Error("servers equal: the headers do not reach the routes")
			}
		})
	}
}

// headerTokenRE and headerValueRE are what lua/headers.lua accepts.
var (
	headerTokenRE = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}$")
	headerValueRE = regexp.MustCompile(`^[\t\x20-\x7e]+$`)
)

// headers checks a header list: sorted unique tokens, printable values;
// global lists (ConfigMap values) never hold '$' nor, for requests, a
// header nginx.conf sets.
func (c *contract) headers(where string, hs []config.Header, global bool) {
	for i, h := range hs {
		if !headerTokenRE.MatchString(h.Name) || !headerValueRE.MatchString(h.Value) || len(h.Value) > intent.MaxHeaderValueLen || global && strings.Contains(h.Value, "$") ||
			i > 0 && hs[i-1].Name >= h.Name {
			c.fail("%s: header %q: %q", where, h.Name, h.Value)
		}
		if global && strings.HasSuffix(where, "request") && slices.Contains(proxyOwnHeaders, strings.ToLower(h.Name)) {
			c.fail("%s: header %q is nginx.conf's", where, h.Name)
		}
	}
}

// TestHostileHeaderConfigMaps: whatever header ConfigMaps hold, only
// valid headers reach the data plane.
func TestHostileHeaderConfigMaps(t *testing.T) {
	data := map[string]string{}
	for i, v := range hostileValues {
		data[fmt.Sprintf("X-H%d", i)] = v
		if intent.ValidHeaderName(v) || i%3 == 0 {
			data[v] = "v"
		}
	}
	for _, k := range proxyOwnHeaders {
		data[k] = "x"
	}
	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	}
	controller := fixtures.ConfigMap("ingress", "controller", "proxy-set-headers", "ingress/h", "add-headers", "ingress/h",
		"global-allowed-response-headers", "X-H1,X-H2,X-H3")
	cfg := buildWith(t, objs(webService(), one(controller, cm("ingress", "h"), cm("default", "h"),
		newIngress("default", "ing", nginx("custom-headers", "default/h"), rule("a.example.com", prefix("/", "web", 80))))), headerOpts)
	checkDataPlane(t, cfg)
	if len(cfg.Servers[1].ResponseHeaders) == 0 || len(cfg.Servers[1].Locations[0].Settings.ResponseHeaders) == 0 {
		t.Errorf("no header passed: %+v", cfg.Servers[1])
	}
}

// TestBuildAliasCertificates: an alias gets its host's certificate when
// that covers the alias name; the catch-all of a host takes the custom
// headers of its first Ingress, as ingress-nginx's root location.
func TestBuildAliasCertificates(t *testing.T) {
	cfg := buildWith(t, objs(webService(), one(
		tlsSecret(t, "default", "tls", "example"),
		newIngress("default", "a", nginx("server-alias", "bar.example.com, other.test, *.w.example.com"), tlsFor("tls", "foo.example.com"),
			rule("foo.example.com", prefix("/x", "web", 80))))), nil)
	checkDataPlane(t, cfg)
	var hosts []string
	for _, c := range cfg.Certificates {
		if c.Name == "default/tls" {
			hosts = c.Hosts
		}
	}
	check.Equal(t, "certificate hosts", hosts, []string{"bar.example.com", "foo.example.com"})
	for _, s := range cfg.Servers {
		if s.Hostname != "_" && !s.TLS {
			t.Errorf("%s: not a TLS server like its host", s.Hostname)
		}
	}

	cfg = buildWith(t, objs(webService(), one(
		fixtures.ConfigMap("ingress", "controller", "global-allowed-response-headers", "X-A"), fixtures.ConfigMap("default", "h", "X-A", "1"),
		newIngress("default", "a", nginx("custom-headers", "default/h"), rule("a.example.com", prefix("/x", "web", 80))))), headerOpts)
	for _, l := range cfg.Servers[1].Locations {
		check.Equal(t, l.Path+" custom headers", l.Settings.ResponseHeaders, []config.Header{{Name: "X-A", Value: "1"}})
	}
}
