package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"errors"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// rxLoc is a PathRegex location of Ingress ing to web80.
func RxLoc(path, ing string) config.Location { return loc(path, config.PathRegex, web80, ing) }

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
			objs: objs(webService(), one(ingress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("/api/v[0-9]+/", "web", 80), noPathType("/x.*", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				RxLoc("/api/v[0-9]+/", ing), RxLoc("/x.*", ing), rxCatchAll)},
		},
		"rewrite-target makes the host a regex host": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("rewrite-target", "/"),
				rule("a.example.com", implSpecific("/a(b|c)", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				rewrite(RxLoc("/a(b|c)", ing), "/"), rxCatchAll)},
		},
		"a rewrite-target equal to the path is no rewrite and no regex": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("rewrite-target", "/a"),
				rule("a.example.com", implSpecific("/a", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/a", config.PathPrefix, web80, ing), catchAll(""))},
		},
		"empty implementation specific path with use-regex is the regex /": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", RxLoc("/", ing), rxCatchAll)},
		},
		"prefix and exact paths of a regex Ingress are their text as regexes": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", prefix("/p.q/", "web", 80), exact("/e.*", "web", 80), prefix("/p(q", "web", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", RxLoc("/p.q/", ing), RxLoc("/e.*", ing), rxCatchAll)},
			problems: []string{`Ingress default/ing: host a.example.com path "/p(q": is not a valid regular expression: error parsing regexp: missing closing ): ` + "`/p(q`" + ` (every path of this host is a regular expression, as one of its Ingresses sets use-regex or rewrite-target); path left out`},
		},
		"use-regex false keeps implementation specific as prefix": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("use-regex", "false"),
				rule("a.example.com", implSpecific("/x/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/x", config.PathPrefix, web80, ing), catchAll(""))},
		},
		"use-regex maybe is a problem; paths stay prefix": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("use-regex", "maybe"),
				rule("a.example.com", implSpecific("/x", "web", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), srv("a.example.com", loc("/x", config.PathPrefix, web80, ing), catchAll(""))},
			problems: []string{`Ingress default/ing: annotation nginx.ingress.kubernetes.io/use-regex="maybe": must be true or false; ignored`},
		},
		"the ingress-nginx capture pattern makes its whole host regex; other hosts are unaffected": {
			objs: objs(webService(), one(
				ingress("default", "ing", nginx("rewrite-target", "/$1"),
					rule("a.example.com", implSpecific("/api/(.*)", "web", 80))),
				ingress("default", "plain", created(1), rule("a.example.com", implSpecific("/static/", "web", 80))),
				ingress("default", "other", created(2), rule("b.example.com", implSpecific("/api/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")),
				srv("a.example.com", rewrite(RxLoc("/api/(.*)", ing), "/$1"), RxLoc("/static/", "default/plain"), rxCatchAll),
				srv("b.example.com", loc("/api", config.PathPrefix, web80, "default/other"), catchAll(""))},
		},
		"a plain prefix on a regex host is its text with a slash, and its text unless an exact path has it": {
			objs: objs(webService(), one(
				ingress("default", "ing", nginx("use-regex", "true"), rule("a.example.com", implSpecific("/r.*", "web", 80))),
				ingress("default", "lit", created(1), rule("a.example.com", prefix("/a", "web", 80), prefix("/b", "web", 80), exact("/b", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", RxLoc("/r.*", ing),
				RxLoc("/b/", "default/lit"), RxLoc("/a/", "default/lit"), RxLoc("/b", "default/lit"), RxLoc("/a", "default/lit"), rxCatchAll)},
		},
		"invalid regexes are left out, the rest is served": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("/a(b", "web", 80), implSpecific("/(?P<x>a)", "web", 80),
					implSpecific("/a b", "web", 80), implSpecific("/ü", "web", 80), implSpecific("/a\x01", "web", 80),
					implSpecific("/"+strings.Repeat("a", 1024), "web", 80), implSpecific("rel", "web", 80),
					implSpecific("/ok(.*)", "web", 80), prefix("/p", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", RxLoc("/ok(.*)", ing), RxLoc("/p", ing), rxCatchAll)},
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
				ingress("default", "ing", nginx("use-regex", "true"), rule("a.example.com", implSpecific("/a", "web", 80))),
				ingress("default", "lit", created(1), rule("a.example.com", prefix("/a", "web", 80), exact("/a", "web", 80))),
				ingress("default", "new", created(2), nginx("use-regex", "true"), rule("a.example.com", implSpecific("/a", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				RxLoc("/a/", "default/lit"), RxLoc("/a", ing), RxLoc("/a", "default/lit"), rxCatchAll)},
			problems: []string{`Ingress default/new: host a.example.com path /a (Regex): conflicts with Ingress default/ing, which is older and is used`},
		},
		"regex locations are ordered as ingress-nginx orders them: longest first, then reverse byte order": {
			objs: objs(webService(), one(ingress("default", "ing", nginx("use-regex", "true"),
				rule("a.example.com", implSpecific("/a", "web", 80), prefix("/ab", "web", 80), implSpecific("/abc.*", "web", 80),
					exact("/abcd", "web", 80), implSpecific("/b[0-9]", "web", 80), implSpecific("/a[0-9]", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				RxLoc("/b[0-9]", ing), RxLoc("/a[0-9]", ing), RxLoc("/abc.*", ing), RxLoc("/abcd", ing),
				RxLoc("/ab", ing), RxLoc("/a", ing), rxCatchAll)},
		},
	})
}

func TestValidateRegexPath(t *testing.T) {
	tests := map[string]struct {
		path string
		want error // nil: accepted; errTestCompile: any compile error
	}{
		"root":                           {"/", nil},
		"capture":                        {"/api/(.*)", nil},
		"non-capturing group":            {"/(?:a|b)/c", nil},
		"case flag":                      {"/(?i)x", nil},
		"escaped group opener":           {`/a\(?P`, nil},
		"three backslashes escape":       {`/a\\\(?P`, nil},
		"quantifiers and classes":        {`/v[0-9]{1,3}\.\d+$`, nil},
		"nginx and lua characters":       {`/a;b{1}"'$`, nil},
		"longest allowed":                {"/" + strings.Repeat("a", 1023), nil},
		"empty":                          {"", ErrPathRelative},
		"relative":                       {"a/(.*)", ErrPathRelative},
		"anchor first":                   {"^/a", ErrPathRelative},
		"too long":                       {"/" + strings.Repeat("a", 1024), errPathLong},
		"too long and invalid":           {"/(" + strings.Repeat("a", 1024), errPathLong},
		"space":                          {"/a b", errRegexChars},
		"tab":                            {"/a\tb", errRegexChars},
		"newline":                        {"/a\n", errRegexChars},
		"nul":                            {"/a\x00", errRegexChars},
		"delete":                         {"/a\x7f", errRegexChars},
		"utf-8":                          {"/ä", errRegexChars},
		"invalid utf-8":                  {"/\xff", errRegexChars},
		"named group":                    {"/(?P<x>a)", errRegexGroup},
		"short named group":              {"/(?<x>a)", errRegexGroup},
		"dot-all flag":                   {"/(?s).", errRegexGroup},
		"flag group":                     {"/(?i:a)", errRegexGroup},
		"ungreedy flag":                  {"/(?U)a*", errRegexGroup},
		"lookahead":                      {"/(?=a)", errRegexGroup},
		"escaped backslash, named group": {`/a\\(?P<x>a)`, errRegexGroup},
		"second group is checked":        {"/(?:a)(?s)", errRegexGroup},
		"unbalanced":                     {"/a(b", errTestCompile},
		"unbalanced close":               {"/a)b", errTestCompile},
		"backreference":                  {`/(a)\1`, errTestCompile},
		"trailing backslash":             {`/a\`, errTestCompile},
		"nested repetition":              {"/a**", errTestCompile},
		"repeat count over 1000":         {"/a{1001}", errTestCompile},
		"bad class":                      {"/[z-a]", errTestCompile},
		// What nginx's PCRE, matching bytes, refuses or reads otherwise.
		"hex escape of a byte":       {`/\x{ff}\x41`, nil},
		"hex escape above a byte":    {`/\x{100}`, errRegexEscape},
		"hex escape in a class":      {`/[\x{0}-\x{10FFFF}]`, errRegexEscape},
		"unicode class":              {`/\pL`, errRegexEscape},
		"negated unicode class":      {`/\P{Greek}`, errRegexEscape},
		"escaped backslash, then pL": {`/\\pL`, nil},
		"nesting at the limit":       {"/" + strings.Repeat("(", maxRegexNesting) + "a" + strings.Repeat(")", maxRegexNesting), nil},
		"nesting over the limit":     {"/" + strings.Repeat("(", maxRegexNesting+1) + "a" + strings.Repeat(")", maxRegexNesting+1), errRegexNested},
		"counted repeats in bounds":  {"/[a-z]{1000}[0-9]{1000}", nil},
		"counted repeats too large":  {"/" + strings.Repeat("(?:abcdefghij){1000}", 7), errRegexLarge},
		"nested repeats too large":   {"/((abcdefghij){30}){30}", errRegexLarge},
		"repeated end anchor":        {"/a$+", errRegexRepeat},
		"repeated word boundary":     {`/\b*a`, errRegexRepeat},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateRegexPath(tc.path)
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("%q: %v", tc.path, err)
			case tc.want == errTestCompile:
				if err == nil || !strings.Contains(err.Error(), "is not a valid regular expression") {
					t.Errorf("%q: got %v, want a compile error", tc.path, err)
				}
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("%q: got %v, want %v", tc.path, err, tc.want)
			}
		})
	}
}

// errTestCompile stands for any regexp compile error in test tables.
var errTestCompile = errors.New("invalid regular expression")
