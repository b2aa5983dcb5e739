package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// rxLoc is a PathRegex location of Ingress ing to web80.
func rxLoc(path, ing string) config.Location { return loc(path, config.PathRegex, web80, ing) }

// untyped is an ImplementationSpecific path given without pathType.
func noPathType(path, svc string, port any) networkingv1.HTTPIngressPath {
	p := implSpecific(path, svc, port)
	p.PathType = nil
	return p
}

func TestBuildRegexPaths(t *testing.T) {
	const ing = "default/ing"
	rewrite := func(l config.Location, target string) config.Location {
		return withSettings(l, config.LocationSettings{RewriteTarget: target})
	}
	rxCatchAll := loc("/", config.PathRegex, "", "")
	runBuildCases(t, map[string]buildCase{
		"use-regex makes every path of the host a regex, unchanged": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("/api/v[0-9]+/", "web", 80), noPathType("/x.*", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				rxLoc("/api/v[0-9]+/", ing), rxLoc("/x.*", ing), rxCatchAll)},
		},
		"rewrite-target makes the host a regex host": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("rewrite-target", "/"),
				rule("a.example.com", implSpecific("/a(b|c)", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				rewrite(rxLoc("/a(b|c)", ing), "/"), rxCatchAll)},
		},
		"a rewrite-target equal to the path is no rewrite and no regex": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("rewrite-target", "/a"),
				rule("a.example.com", implSpecific("/a", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/a", config.PathPrefix, web80, ing), catchAll(""))},
		},
		"empty implementation specific path with use-regex is the regex /": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", rxLoc("/", ing), rxCatchAll)},
		},
		"prefix and exact paths of a regex Ingress are their text as regexes": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", prefix("/p.q/", "web", 80), exact("/e.*", "web", 80), prefix("/p(q", "web", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", rxLoc("/p.q/", ing), rxLoc("/e.*", ing), rxCatchAll)},
			problems: []string{`Ingress default/ing: host a.example.com path "/p(q": is not a valid regular expression: error parsing regexp: missing closing ): ` + "`/p(q`" + ` (every path of this host is a regular expression, as one of its Ingresses sets use-regex or rewrite-target); path left out`},
		},
		"use-regex false keeps implementation specific as prefix": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("use-regex", "false"),
				rule("a.example.com", implSpecific("/x/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/x", config.PathPrefix, web80, ing), catchAll(""))},
		},
		"use-regex maybe is a problem; paths stay prefix": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("use-regex", "maybe"),
				rule("a.example.com", implSpecific("/x", "web", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/x", config.PathPrefix, web80, ing), catchAll(""))},
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/use-regex="maybe": must be true or false; ignored`},
		},
		"the ingress-nginx capture pattern makes its whole host regex; other hosts are unaffected": {
			objs: objs(webService(), one(
				newIngress("default", "ing", nginx("rewrite-target", "/$1"),
					rule("a.example.com", implSpecific("/api/(.*)", "web", 80))),
				newIngress("default", "plain", created(1), rule("a.example.com", implSpecific("/static/", "web", 80))),
				newIngress("default", "other", created(2), rule("b.example.com", implSpecific("/api/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")),
				srv("a.example.com", rewrite(rxLoc("/api/(.*)", ing), "/$1"), rxLoc("/static/", "default/plain"), rxCatchAll),
				srv("b.example.com", loc("/api", config.PathPrefix, web80, "default/other"), catchAll(""))},
		},
		"a plain prefix on a regex host is its text with a slash, and its text unless an exact path has it": {
			objs: objs(webService(), one(
				newIngress("default", "ing", nginx("use-regex", "true"), rule("a.example.com", implSpecific("/r.*", "web", 80))),
				newIngress("default", "lit", created(1), rule("a.example.com", prefix("/a", "web", 80), prefix("/b", "web", 80), exact("/b", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", rxLoc("/r.*", ing),
				rxLoc("/b/", "default/lit"), rxLoc("/a/", "default/lit"), rxLoc("/b", "default/lit"), rxLoc("/a", "default/lit"), rxCatchAll)},
		},
		"invalid regexes are left out, the rest is served": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("/a(b", "web", 80), implSpecific("/(?P<x>a)", "web", 80),
					implSpecific("/a b", "web", 80), implSpecific("/ü", "web", 80), implSpecific("/a\x01", "web", 80),
					implSpecific("/"+strings.Repeat("a", 1024), "web", 80), implSpecific("rel", "web", 80),
					implSpecific("/ok(.*)", "web", 80), prefix("/p", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", rxLoc("/ok(.*)", ing), rxLoc("/p", ing), rxCatchAll)},
			problems: []string{
				`path "/(?P<x>a)": may only use (?: and (?i) group flags; path left out`,
				`path "/a b": may only contain printable ASCII`,
				`path "/a(b": is not a valid regular expression`,
				`path "/a\x01": may only contain printable ASCII`,
				`path "/` + strings.Repeat("a", 1024) + `": is longer than 1024 characters; path left out`,
				`path "/ü": may only contain printable ASCII`,
				`path "rel": must be an absolute path`,
			},
		},
		"regex, prefix and exact of one path do not conflict; two regexes do; ties keep the oldest first": {
			objs: objs(webService(), one(
				newIngress("default", "ing", nginx("use-regex", "true"), rule("a.example.com", implSpecific("/a", "web", 80))),
				newIngress("default", "lit", created(1), rule("a.example.com", prefix("/a", "web", 80), exact("/a", "web", 80))),
				newIngress("default", "new", created(2), nginx("use-regex", "true"), rule("a.example.com", implSpecific("/a", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				rxLoc("/a/", "default/lit"), rxLoc("/a", ing), rxLoc("/a", "default/lit"), rxCatchAll)},
			problems: []string{`Ingress default/new: host a.example.com path /a (Regex): conflicts with Ingress default/ing, which is older and is used`},
		},
		"regex locations are ordered as ingress-nginx orders them: longest first, then reverse byte order": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("/a", "web", 80), prefix("/ab", "web", 80), implSpecific("/abc.*", "web", 80),
					exact("/abcd", "web", 80), implSpecific("/b[0-9]", "web", 80), implSpecific("/a[0-9]", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				rxLoc("/b[0-9]", ing), rxLoc("/a[0-9]", ing), rxLoc("/abc.*", ing), rxLoc("/abcd", ing),
				rxLoc("/ab", ing), rxLoc("/a", ing), rxCatchAll)},
		},
	})
}
