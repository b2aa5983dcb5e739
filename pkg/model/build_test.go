package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// buildCase is one table case: input objects, options (testOptions when
// nil) and the expected servers, backends and problems. A nil servers or
// backends is not checked.
type buildCase struct {
	objs     []runtime.Object
	opts     func(*Options)
	servers  []config.Server
	backends []config.Backend
	problems []string
}

// buildWith builds objs with testOptions changed by opts (when not nil).
func buildWith(t *testing.T, objs []runtime.Object, opts func(*Options)) *config.Configuration {
	t.Helper()
	o := testOptions()
	if opts != nil {
		opts(&o)
	}
	return Build(newTestStore(t, objs...), o)
}

func runBuildCases(t *testing.T, cases map[string]buildCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := buildWith(t, tc.objs, tc.opts)
			checkDataPlane(t, got)
			if tc.servers != nil {
				check.Equal(t, "servers", got.Servers, tc.servers)
			}
			if tc.backends != nil {
				check.Equal(t, "backends", withoutChecksums(got.Backends), tc.backends)
			}
			checkProblems(t, got.Problems, tc.problems)
		})
	}
}

const web80 = "default-web-80"

func webService() []runtime.Object {
	return []runtime.Object{
		service("default", "web", svcPort("", 80)),
		slice("default", "web-1", "web", "", 8080, ready("10.0.0.1")),
	}
}

func objs(groups ...[]runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func one(o ...runtime.Object) []runtime.Object { return o }

func TestBuildRouting(t *testing.T) {
	const ing = "default/ing"
	runBuildCases(t, map[string]buildCase{
		"prefix path on a host": {
			objs: objs(webService(), one(newIngress("default", "ing", rule("a.example.com", prefix("/foo", "web", 80))))),
			servers: []config.Server{
				srv("_", catchAll("")),
				srv("a.example.com", loc("/foo", config.PathPrefix, web80, ing), catchAll("")),
			},
			backends: []config.Backend{be("default", "web", "80", ep("10.0.0.1", 8080))},
		},
		"trailing slash of a prefix is ignored": {
			objs:    objs(webService(), one(newIngress("default", "ing", rule("a.example.com", prefix("/foo/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/foo", config.PathPrefix, web80, ing), catchAll(""))},
		},
		"exact path keeps its trailing slash": {
			objs:    objs(webService(), one(newIngress("default", "ing", rule("a.example.com", exact("/foo/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/foo/", config.PathExact, web80, ing), catchAll(""))},
		},
		"implementation specific is prefix, empty path is root": {
			objs: objs(webService(), one(newIngress("default", "ing", rule("a.example.com",
				implSpecific("/api/", "web", 80), implSpecific("", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				loc("/api", config.PathPrefix, web80, ing), loc("/", config.PathPrefix, web80, ing))},
		},
		"exact before prefix for the same path, longest first, then reverse byte order": {
			objs: objs(webService(), one(newIngress("default", "ing", rule("a.example.com",
				prefix("/a", "web", 80), exact("/", "web", 80), prefix("/abc", "web", 80),
				exact("/a", "web", 80), prefix("/b", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				loc("/abc", config.PathPrefix, web80, ing), loc("/b", config.PathPrefix, web80, ing), loc("/a", config.PathExact, web80, ing),
				loc("/a", config.PathPrefix, web80, ing), loc("/", config.PathExact, web80, ing), catchAll(""))},
		},
		"rule without host goes to the default server": {
			objs:    objs(webService(), one(newIngress("default", "ing", rule("", prefix("/x", "web", 80))))),
			servers: []config.Server{srv("_", loc("/x", config.PathPrefix, web80, ing), catchAll(""))},
		},
		"prefix root of a rule replaces the catch-all": {
			objs:    objs(webService(), one(newIngress("default", "ing", rule("", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", loc("/", config.PathPrefix, web80, ing))},
		},
		"wildcard and exact hosts are separate servers, sorted": {
			objs: objs(webService(), one(newIngress("default", "ing",
				rule("b.example.com", prefix("/", "web", 80)), rule("*.example.com", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")),
				srv("*.example.com", loc("/", config.PathPrefix, web80, ing)),
				srv("b.example.com", loc("/", config.PathPrefix, web80, ing))},
		},
		"rule without paths still creates its server": {
			objs:    objs(webService(), one(newIngress("default", "ing", rule("a.example.com")))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", catchAll(""))},
		},
		"no ingress: only the default server": {
			servers:  []config.Server{srv("_", catchAll(""))},
			backends: []config.Backend{},
		},
		"invalid paths and hosts are left out, the rest is served": {
			objs: objs(webService(), one(newIngress("default", "ing",
				rule("a.example.com", prefix("foo", "web", 80), prefix("/ok", "web", 80), exact("/a b", "web", 80),
					prefix("/x;}", "web", 80), prefix("/$host", "web", 80), prefix("/a\nb", "web", 80),
					prefix("/a/../b", "web", 80), prefix("/a//b", "web", 80), prefix("/q?x", "web", 80),
					httpPath("Regex", "/r", "web", 80)),
				rule("Bad_Host.com", prefix("/", "web", 80)),
				rule("a.*.com", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/ok", config.PathPrefix, web80, ing), catchAll(""))},
			problems: []string{
				`host a.example.com path "/$host": may only contain`,
				`host a.example.com path "/a b": may only contain`,
				`host a.example.com path "/a/../b": must not contain //`,
				`host a.example.com path "/a//b": must not contain //`,
				`host a.example.com path "/a\nb": may only contain`,
				`host a.example.com path "/q?x": may only contain`,
				`host a.example.com path "/r": unknown pathType "Regex"`,
				`host a.example.com path "/x;}": may only contain`,
				`host a.example.com path "foo": must be an absolute path`,
				`rule host "Bad_Host.com" is not a valid DNS name`,
				`rule host "a.*.com" is not a valid DNS name`,
			},
		},
	})
}

func TestBuildBackends(t *testing.T) {
	const ing = "default/ing"
	route := func(port any) runtime.Object {
		return newIngress("default", "ing", rule("a.example.com", prefix("/", "web", port)))
	}
	named := service("default", "web", svcPort("http", 80), svcPort("metrics", 9090))
	runBuildCases(t, map[string]buildCase{
		"port by name resolves the slice port of the same name": {
			objs: one(named, route("http"),
				slice("default", "web-1", "web", "http", 8080, ready("10.0.0.2"), ready("10.0.0.1")),
				slice("default", "web-2", "web", "metrics", 9100, ready("10.0.0.9"))),
			backends: []config.Backend{be("default", "web", "http", ep("10.0.0.1", 8080), ep("10.0.0.2", 8080))},
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/", config.PathPrefix, "default-web-http", ing))},
		},
		"port by number uses the service port's name": {
			objs: one(named, route(80),
				slice("default", "web-1", "web", "http", 8080, ready("10.0.0.1")),
				slice("default", "web-2", "web", "metrics", 9100, ready("10.0.0.9"))),
			backends: []config.Backend{be("default", "web", "80", ep("10.0.0.1", 8080))},
		},
		"only ready endpoints, unset readiness counts as ready": {
			objs: one(named, route("http"),
				slice("default", "web-1", "web", "http", 8080, ready("10.0.0.1"), notReady("10.0.0.2"), readyUnknown("10.0.0.3"))),
			backends: []config.Backend{be("default", "web", "http", ep("10.0.0.1", 8080), ep("10.0.0.3", 8080))},
		},
		"all slices of the service merged, sorted and de-duplicated": {
			objs: one(named, route("http"),
				slice("default", "web-b", "web", "http", 8080, ready("10.0.0.3"), ready("10.0.0.1")),
				slice("default", "web-a", "web", "http", 8080, ready("10.0.0.2"), ready("10.0.0.1")),
				slice("default", "other", "other", "http", 8080, ready("10.9.9.9")),
				slice("other", "web-x", "web", "http", 8080, ready("10.8.8.8"))),
			backends: []config.Backend{be("default", "web", "http", ep("10.0.0.1", 8080), ep("10.0.0.2", 8080), ep("10.0.0.3", 8080))},
		},
		"slice ports the data plane cannot connect to are not used": {
			objs: one(named, route("http"),
				slice("default", "web-0", "web", "http", 0, ready("10.0.0.1")),
				slice("default", "web-big", "web", "http", 65536, ready("10.0.0.2")),
				slice("default", "web-neg", "web", "http", -1, ready("10.0.0.3")),
				slice("default", "web-max", "web", "http", 65535, ready("10.0.0.4"))),
			backends: []config.Backend{be("default", "web", "http", ep("10.0.0.4", 65535))},
		},
		"service without endpoints is a backend without endpoints": {
			objs:     one(named, route("http")),
			backends: []config.Backend{be("default", "web", "http")},
		},
		"unknown service: path left out, the rest served": {
			objs: objs(webService(), one(newIngress("default", "ing", rule("a.example.com",
				prefix("/a", "nope", 80), prefix("/b", "web", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/b", config.PathPrefix, web80, ing), catchAll(""))},
			backends: []config.Backend{be("default", "web", "80", ep("10.0.0.1", 8080))},
			problems: []string{"host a.example.com path /a: service default/nope not found; path left out"},
		},
		"missing port number and name": {
			objs: one(named, newIngress("default", "ing", rule("a.example.com",
				prefix("/a", "web", 81), prefix("/b", "web", "grpc"), prefix("/c", "web", 0)))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", catchAll(""))},
			problems: []string{
				"path /a: service default/web has no port 81",
				"path /b: service default/web has no port grpc",
				"path /c: service web has no port name or number",
			},
		},
		"invalid service and port names": {
			objs: one(named, newIngress("default", "ing", rule("a.example.com",
				prefix("/a", "web;x", 80), prefix("/b", "web", "http}"), prefix("/c", "Web", 80)))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", catchAll(""))},
			problems: []string{
				`path /a: service "web;x" in namespace "default" is not a valid name`,
				`path /b: service web port name "http}" is not valid`,
				`path /c: service "Web" in namespace "default" is not a valid name`,
			},
		},
		"external name service is not supported": {
			objs:     one(externalName("default", "web", "example.org"), route(80)),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", catchAll(""))},
			problems: []string{"service default/web is of type ExternalName, which is not supported"},
		},
		"resource backend is not supported": {
			objs: one(newIngress("default", "ing", rule("a.example.com", networkingv1.HTTPIngressPath{
				Path: "/", PathType: ptr(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}}}))),
			problems: []string{"only Service backends are supported"},
		},
		"service of another namespace is not used": {
			objs:     one(service("other", "web"), route(80)),
			problems: []string{"service default/web not found"},
		},
		"backend name collision gets a hash suffix": {
			objs: one(service("a-b", "c"), service("a", "b-c"),
				newIngress("a-b", "i1", rule("x.example.com", prefix("/", "c", 80))),
				newIngress("a", "i2", rule("y.example.com", prefix("/", "b-c", 80)))),
			servers: []config.Server{srv("_", catchAll("")),
				srv("x.example.com", loc("/", config.PathPrefix, "a-b-c-80-"+keyHash(backendKey{"a-b", "c", "80"}), "a-b/i1")),
				srv("y.example.com", loc("/", config.PathPrefix, "a-b-c-80", "a/i2"))},
		},
	})
}

func ptr[T any](v T) *T { return &v }

func TestBuildDefaultBackend(t *testing.T) {
	dflt := service("kube-system", "fallback", svcPort("http", 8080))
	withFlag := func(o *Options) { o.DefaultBackendService = "kube-system/fallback" }
	runBuildCases(t, map[string]buildCase{
		"flag service answers unmatched requests on its first port": {
			objs:     one(dflt, slice("kube-system", "fb", "fallback", "http", 8080, ready("10.1.0.1"))),
			opts:     withFlag,
			servers:  []config.Server{srv("_", catchAll("kube-system-fallback-8080"))},
			backends: []config.Backend{be("kube-system", "fallback", "8080", ep("10.1.0.1", 8080))},
		},
		"spec.defaultBackend wins over the flag, the oldest Ingress wins": {
			objs: objs(webService(), one(dflt, service("default", "other"),
				newIngress("default", "young", created(10), defaultBackend("other", 80)),
				newIngress("default", "old", created(1), defaultBackend("web", 80), rule("a.example.com")))),
			opts:     withFlag,
			servers:  []config.Server{srv("_", catchAll(web80)), srv("a.example.com", catchAll(web80))},
			backends: []config.Backend{be("default", "web", "80", ep("10.0.0.1", 8080))},
			problems: []string{"Ingress default/young: spec.defaultBackend: ignored, Ingress default/old is older and its default backend (service web port 80) is used"},
		},
		"invalid spec.defaultBackend is skipped": {
			objs:     one(dflt, newIngress("default", "ing", defaultBackend("nope", 80))),
			opts:     withFlag,
			servers:  []config.Server{srv("_", catchAll("kube-system-fallback-8080"))},
			problems: []string{"Ingress default/ing: spec.defaultBackend: service default/nope not found; ignored"},
		},
		"missing flag service falls back to the built-in 404": {
			opts:     withFlag,
			servers:  []config.Server{srv("_", catchAll(""))},
			problems: []string{"Service kube-system/fallback: default backend service not found"},
		},
		"malformed flag": {
			opts:     func(o *Options) { o.DefaultBackendService = "fallback" },
			problems: []string{`Options /default-backend-service: "fallback" is not namespace/name`},
		},
	})
}

func TestBuildConflicts(t *testing.T) {
	other := service("default", "other")
	runBuildCases(t, map[string]buildCase{
		"oldest Ingress wins whatever its name": {
			objs: objs(webService(), one(other,
				newIngress("default", "a", created(5), rule("a.example.com", prefix("/x", "other", 80))),
				newIngress("default", "b", created(1), rule("a.example.com", prefix("/x", "web", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/x", config.PathPrefix, web80, "default/b"), catchAll(""))},
			backends: []config.Backend{be("default", "web", "80", ep("10.0.0.1", 8080))},
			problems: []string{"Ingress default/a: host a.example.com path /x (Prefix): conflicts with Ingress default/b, which is older"},
		},
		"same age: namespace then name decide": {
			objs: objs(webService(), one(other, service("aaa", "web"),
				newIngress("default", "b", rule("a.example.com", prefix("/x", "web", 80))),
				newIngress("default", "a", rule("a.example.com", prefix("/x", "other", 80))),
				newIngress("aaa", "z", rule("b.example.com", prefix("/x", "web", 80))),
				newIngress("default", "c", rule("b.example.com", prefix("/x", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")),
				srv("a.example.com", loc("/x", config.PathPrefix, "default-other-80", "default/a"), catchAll("")),
				srv("b.example.com", loc("/x", config.PathPrefix, "aaa-web-80", "aaa/z"), catchAll(""))},
			problems: []string{
				"Ingress default/b: host a.example.com path /x (Prefix): conflicts with Ingress default/a",
				"Ingress default/c: host b.example.com path /x (Prefix): conflicts with Ingress aaa/z",
			},
		},
		"different path types do not conflict": {
			objs: objs(webService(), one(other,
				newIngress("default", "a", rule("a.example.com", prefix("/x", "other", 80))),
				newIngress("default", "b", rule("a.example.com", exact("/x", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				loc("/x", config.PathExact, web80, "default/b"), loc("/x", config.PathPrefix, "default-other-80", "default/a"), catchAll(""))},
		},
		"conflicts in a server with many locations": {
			objs: objs(webService(), one(
				newIngress("default", "many", created(1), rule("a.example.com", manyPaths(20)...)),
				newIngress("default", "late", created(2), rule("a.example.com", prefix("/p17", "web", 80), prefix("/new", "web", 80))))),
			problems: []string{"Ingress default/late: host a.example.com path /p17 (Prefix): conflicts with Ingress default/many"},
		},
		"prefix with and without trailing slash conflict, also within one Ingress": {
			objs: objs(webService(), one(
				newIngress("default", "a", rule("a.example.com", prefix("/x/", "web", 80), implSpecific("/x", "web", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/x", config.PathPrefix, web80, "default/a"), catchAll(""))},
			problems: []string{"Ingress default/a: host a.example.com path /x (Prefix): defined twice; the first rule is used"},
		},
	})
}

func TestBuildClasses(t *testing.T) {
	route := func(name string, opts ...ingOpt) runtime.Object {
		return newIngress("default", name, append(opts, rule(name+".example.com", prefix("/", "web", 80)))...)
	}
	hosts := func(names ...string) []config.Server {
		out := []config.Server{srv("_", catchAll(""))}
		for _, n := range names {
			out = append(out, srv(n+".example.com", loc("/", config.PathPrefix, web80, "default/"+n)))
		}
		return out
	}
	runBuildCases(t, map[string]buildCase{
		"ingressClassName of our controller's class or of the flag": {
			objs: objs(webService(), one(ingressClass("ours", testController, false), ingressClass("theirs", "example.com/other", false),
				route("a", className("ours")), route("b", className("nginx")), route("c", className("theirs")),
				route("d", className("unknown")))),
			servers: hosts("a", "b"),
		},
		"a class named like the flag but of another controller is not ours": {
			objs:    objs(webService(), one(ingressClass("nginx", "example.com/other", false), route("a", className("nginx")))),
			servers: hosts(),
		},
		"legacy annotation": {
			objs: objs(webService(), one(route("a", noClass(), annotation(ingress.LegacyClassAnnotation, "nginx")),
				route("b", noClass(), annotation(ingress.LegacyClassAnnotation, "other")))),
			servers: hosts("a"),
		},
		"no class: not served by default": {
			objs:    objs(webService(), one(route("a", noClass()), route("b", noClass(), annotation(ingress.LegacyClassAnnotation, "")))),
			servers: hosts(),
		},
		"no class: served when our class is the default": {
			objs:    objs(webService(), one(ingressClass("ours", testController, true), route("a", noClass()))),
			servers: hosts("a"),
		},
		"no class: another controller's default class does not count": {
			objs:    objs(webService(), one(ingressClass("theirs", "example.com/other", true), route("a", noClass()))),
			servers: hosts(),
		},
		"no class: served with WatchIngressWithoutClass": {
			objs:    objs(webService(), one(route("a", noClass()))),
			opts:    func(o *Options) { o.WatchIngressWithoutClass = true },
			servers: hosts("a"),
		},
		"problems of Ingresses that are not ours are not reported": {
			objs:    objs(webService(), one(route("a", className("other"), nginx("proxy-read-timeout", "x")))),
			servers: hosts(),
		},
	})
}

func TestServes(t *testing.T) {
	classes := map[string]*networkingv1.IngressClass{
		"ours": ingressClass("ours", testController, true), "theirs": ingressClass("theirs", "example.com/x", false),
	}
	tests := map[string]struct {
		ing  *networkingv1.Ingress
		want bool
	}{
		"our class":                  {newIngress("d", "i", className("ours")), true},
		"their class":                {newIngress("d", "i", className("theirs")), false},
		"flag class without object":  {newIngress("d", "i"), true},
		"legacy annotation":          {newIngress("d", "i", noClass(), annotation(ingress.LegacyClassAnnotation, "nginx")), true},
		"legacy other":               {newIngress("d", "i", noClass(), annotation(ingress.LegacyClassAnnotation, "x")), false},
		"field wins over annotation": {newIngress("d", "i", className("theirs"), annotation(ingress.LegacyClassAnnotation, "nginx")), false},
		"no class, default class":    {newIngress("d", "i", noClass()), true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ingress.Serves(tc.ing, classes, testOptions().classes()); got != tc.want {
				t.Errorf("Serves = %v, want %v", got, tc.want)
			}
		})
	}
}

func manyPaths(n int) []networkingv1.HTTPIngressPath {
	out := make([]networkingv1.HTTPIngressPath, n)
	for i := range out {
		out[i] = prefix(fmt.Sprintf("/p%d", i), "web", 80)
	}
	return out
}
