package model

import (
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzPath checks that an accepted Ingress path is absolute and holds only
// allowed characters.
func FuzzPath(f *testing.F) {
	for _, seed := range []string{"/", "/foo/", "foo", "/a b", "/x;}", "/$host", "/a//b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if intent.ValidatePath(p) != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, " ;{}$\"'`\\\n\r\t#?") || strings.Contains(p, "//") {
			t.Fatalf("accepted %q", p)
		}
	})
}

// FuzzBuildEmitsDataPlaneValues adds one hostile Ingress, newer than a good
// tenant's, to that tenant's objects: everything Build emits keeps the
// data plane contract (see dataPlaneViolations) and the good tenant's
// locations, backends and certificates stay as they were.
func FuzzBuildEmitsDataPlaneValues(f *testing.F) {
	seeds := []struct {
		host, path     string
		pathType       uint8
		annName, value string
		regex          bool
	}{
		{"a.example.com", "/", 1, "proxy-read-timeout", "60", false},
		{"a.example.com", "/api/v[0-9]+/(.*)", 2, "rewrite-target", "/$1", true},
		{"b.example.com", "/app", 1, "proxy-body-size", "99999999999", false},
		{"", "/(?P<x>a)", 2, "use-regex", "true", true},
		{"*.example.com", `/a\\(?P<x>a)`, 2, "allowlist-source-range", "::ffff:1.2.3.4/128", true},
		{"A.example.com", "/a b", 0, "backend-protocol", "grpcs", false},
		{"a.example.com", "/health", 0, "ssl-redirect", "false", false},
		{"ü.example.com", "/\x00", 3, "proxy-body-size", "1025g", false},
		{"a.example.com", "/" + strings.Repeat("a", 1024), 2, "use-regex", "maybe", true},
		{"*.*.example.com", "/shared", 4, "server-snippet", "return 200;", false},
		{"a.example.com", "/", 1, "canary-weight", "100", false},
		{"a.example.com", "/api/v[0-9]+/(.*)", 2, "canary-by-header-pattern", `^v\d+$`, true},
		{"", "/shared", 1, "canary-by-cookie", "Canary-By-Cookie", false},
		{"b.example.com", "/app", 0, "canary-by-header", "X-Canary", false},
		{"a.example.com", "/health", 0, "canary-weight-total", "99999999999", false},
		{"a.example.com", "/", 1, "canary", "true", false},
		{"c.example.com", "/x", 1, "canary-weight", "50", false},
		{"c.example.com", "/api/(.*)", 2, "canary-by-header-pattern", "^(a|b)$", true},
		{"c.example.com", "/", 0, "canary-by-header-value", "yes", false},
	}
	for _, s := range seeds {
		f.Add(s.host, s.path, s.pathType, s.annName, s.value, s.regex)
	}
	good := append(goodObjects(f), evilObjects(f)...)
	want := viewOf(Build(newTestStore(f, good...), testOptions()), goodNS)
	f.Fuzz(func(t *testing.T, host, path string, pathType uint8, annName, value string, regex bool) {
		p := httpPath(pathTypes[int(pathType)%len(pathTypes)], path, "web", "http")
		if p.PathType != nil && *p.PathType == "" {
			p.PathType = nil
		}
		opts := []ingOpt{created(1000), nginx(annName, value), rule(host, p, httpPath(networkingv1.PathTypeExact, path, "web", 80)),
			tlsFor("other", "fuzz."+host)}
		if regex {
			opts = append(opts, nginx("use-regex", "true"))
		}
		var hostile []runtime.Object
		if strings.HasPrefix(annName, "canary") {
			// A canary of a main Ingress of its own namespace (with another
			// backend), so that its values reach the data plane.
			opts = append(opts, nginx("canary", "true"), nginx("canary-by-header", "X-Canary"))
			main := httpPath(networkingv1.PathTypeExact, path, "web", "big")
			main.PathType = p.PathType
			hostile = append(hostile, newIngress(evilNS, "fuzz-main", created(999), nginx("use-regex", strconv.FormatBool(regex)),
				rule(host, main, httpPath(networkingv1.PathTypeExact, path, "web", "big"))))
		}
		checkHostile(t, good, want, append(hostile, newIngress(evilNS, "fuzz", opts...))...)
	})
}

// FuzzRegexPath checks validateRegexPath against an independent reading
// of what it accepts: absolute, at most 1024 printable ASCII characters,
// compiling with Go's regexp, and without named groups or the s and m
// flags (whose meaning differs or which Build does not allow).
func FuzzRegexPath(f *testing.F) {
	for _, seed := range []string{"/", "/api/(.*)", "/(?i)a", "/(?:a|b)", "/(?P<x>a)", `/a\\(?P<x>a)`, `/a\(?P`,
		"/(?s).", "/(?m)^a$", "/a(b", "/a b", "/ü", "/" + strings.Repeat("a", 1023)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if intent.ValidateRegexPath(p) != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || len(p) > 1024 || strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r > '~' }) {
			t.Fatalf("accepted %q", p)
		}
		checkSameInPCRE(t, p)
	})
}

// checkSameInPCRE fails t when the accepted regular expression p is not
// RE2 syntax or uses what nginx's PCRE reads otherwise (forbiddenOp).
func checkSameInPCRE(t *testing.T, p string) {
	t.Helper()
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		t.Fatalf("accepted %q: %v", p, err)
	}
	if op := forbiddenOp(re); op != "" {
		t.Fatalf("accepted %q with %s", p, op)
	}
}

// forbiddenOp names what a regex path must not use, or returns "".
func forbiddenOp(re *syntax.Regexp) string {
	switch {
	case re.Op == syntax.OpCapture && re.Name != "":
		return "a named group"
	case re.Op == syntax.OpAnyChar:
		return "the s flag"
	case re.Op == syntax.OpBeginLine || re.Op == syntax.OpEndLine:
		return "the m flag"
	}
	for _, sub := range re.Sub {
		if op := forbiddenOp(sub); op != "" {
			return op
		}
	}
	return ""
}
