package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"
)

// Affinity and hashing annotations: values, defaults, how Ingresses
// routing to one backend combine, and the cookie path and canary rules of
// finishAffinity.

func TestCommonCookiePath(t *testing.T) {
	tests := map[string]struct {
		in   []string
		want string
	}{
		"none":               {nil, "/"},
		"one":                {[]string{"/something"}, "/something"},
		"trailing slash":     {[]string{"/foo/"}, "/foo/"},
		"siblings":           {[]string{"/something", "/somewhereelse"}, "/"},
		"nested":             {[]string{"/foo", "/foo/bar"}, "/foo"},
		"by whole elements":  {[]string{"/foo/bar", "/foo/baz", "/foobar"}, "/"},
		"common parent":      {[]string{"/a/b/c", "/a/b/d", "/a/b"}, "/a/b"},
		"with and without /": {[]string{"/foo/", "/foo"}, "/foo"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := commonCookiePath(tc.in); got != tc.want {
				t.Errorf("commonCookiePath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestAffinityBuild(t *testing.T) {
	web := func() config.Backend { return be("default", "web", "80", ep("10.0.0.1", 8080)) }
	sticky := func(path string, edit ...func(*config.Affinity)) config.Backend {
		b := web()
		b.Affinity = &config.Affinity{CookieName: config.DefaultCookieName, Mode: config.AffinityBalanced, CookiePath: path}
		for _, e := range edit {
			e(b.Affinity)
		}
		return b
	}
	aff := nginx("affinity", "cookie")
	runBuildCases(t, map[string]buildCase{
		"cookie path is the location's path": {
			objs:     objs(webService(), one(newIngress("default", "a", aff, rule("a.example.com", prefix("/something", "web", 80))))),
			backends: []config.Backend{sticky("/something")},
		},
		"two paths of the Ingress: their common path": {
			objs: objs(webService(), one(newIngress("default", "a", aff,
				rule("a.example.com", prefix("/something", "web", 80), prefix("/somewhereelse", "web", 80))))),
			backends: []config.Backend{sticky("/")},
		},
		"session-cookie-path wins": {
			objs: objs(webService(), one(newIngress("default", "a", aff, nginx("session-cookie-path", "/app"),
				rule("a.example.com", prefix("/something", "web", 80))))),
			backends: []config.Backend{sticky("/app")},
		},
		"paths of other Ingresses do not count": {
			objs: objs(webService(), one(
				newIngress("default", "a", created(0), aff, rule("a.example.com", prefix("/foo/bar", "web", 80))),
				newIngress("default", "b", created(1), rule("a.example.com", prefix("/foo", "web", 80))))),
			backends: []config.Backend{sticky("/foo/bar")},
		},
		"use-regex: the regex as written, with ingress-nginx's warning": {
			objs: objs(webService(), one(newIngress("default", "a", aff, nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("/foo/.*", "web", 80))))),
			backends: []config.Backend{sticky("/foo/.*")},
			problems: []string{`Ingress default/a: annotation nginx.ingress.kubernetes.io/session-cookie-path should be set when use-regex is true (as ingress-nginx warns): the cookie's Path is "/foo/.*"`},
		},
		"use-regex with session-cookie-path": {
			objs: objs(webService(), one(newIngress("default", "a", aff, nginx("use-regex", "true"), nginx("session-cookie-path", "/foo/bar"),
				rule("a.example.com", implSpecific("/foo/.*", "web", 80))))),
			backends: []config.Backend{sticky("/foo/bar")},
		},
		"the oldest Ingress decides every affinity setting": {
			objs: objs(webService(), one(
				newIngress("default", "old", created(0), aff, nginx("affinity-mode", "persistent"), rule("a.example.com", prefix("/a", "web", 80))),
				newIngress("default", "new", created(1), aff, nginx("session-cookie-name", "X"), rule("b.example.com", prefix("/b", "web", 80))))),
			backends: []config.Backend{sticky("/a", func(a *config.Affinity) { a.Mode = config.AffinityPersistent })},
			problems: []string{"Ingress default/new: backend default-web-80: load-balance, upstream-hash-by and affinity annotations differ from Ingress default/old, which is older and is used; ignored"},
		},
		"subset hashing": {
			objs: objs(webService(), one(newIngress("default", "a", nginx("upstream-hash-by", "$arg_x"), nginx("upstream-hash-by-subset", "true"),
				rule("a.example.com", prefix("/", "web", 80))))),
			backends: []config.Backend{func() config.Backend {
				b := web()
				b.UpstreamHashBy, b.UpstreamHashBySubsetSize = "$arg_x", 3
				return b
			}()},
		},
	})
}

func TestAffinityCanaryBehavior(t *testing.T) {
	mainAff := &config.Affinity{CookieName: "route", Mode: config.AffinityBalanced, CookiePath: "/info"}
	canaryBackend := func(a *config.Affinity) config.Backend {
		b := be("default", "canary", "80", ep("10.0.0.9", 8080))
		b.Affinity = a
		return b
	}
	main := be("default", "web", "80", ep("10.0.0.1", 8080))
	main.Affinity = mainAff
	stickyMain := mainIngress(nginx("affinity", "cookie"), nginx("session-cookie-name", "route"))
	runBuildCases(t, map[string]buildCase{
		"sticky (default): the canary backend takes the main's affinity": {
			objs:     objs(canaryServices(), one(stickyMain, canaryIngress("canary", 1, []string{"canary-weight", "50"}))),
			backends: []config.Backend{canaryBackend(mainAff), main},
		},
		"legacy: it does not": {
			objs: objs(canaryServices(), one(stickyMain,
				canaryIngress("canary", 1, []string{"canary-weight", "50", "affinity-canary-behavior", "legacy"}))),
			backends: []config.Backend{canaryBackend(nil), main},
		},
		"legacy with the canary's own affinity": {
			objs: objs(canaryServices(), one(stickyMain,
				canaryIngress("canary", 1, []string{"canary-weight", "50", "affinity-canary-behavior", "legacy", "affinity", "cookie"}))),
			backends: []config.Backend{canaryBackend(&config.Affinity{CookieName: config.DefaultCookieName, Mode: config.AffinityBalanced, CookiePath: "/"}), main},
		},
		"no affinity on the main: nothing to take": {
			objs:     objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-weight", "50"}))),
			backends: []config.Backend{canaryBackend(nil), be("default", "web", "80", ep("10.0.0.1", 8080))},
		},
	})
}
