package model

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// Header patterns take the checks of regex paths, and only valid syntax.
func TestValidateHeaderPattern(t *testing.T) {
	for name, tc := range map[string]struct {
		pattern string
		ok      bool
	}{
		"e2e pattern":         {"^Do[A-Z][a-z]+y$", true},
		"escapes":             {`^v\d+\.\d+$`, true},
		"alternation":         {"^(yes|true)$", true},
		"leading repeat":      {"*a", false},
		"unclosed class":      {"[][**da?$&*", false},
		"unicode class":       {`\p{Greek}`, false},
		"named group":         {"(?P<x>a)", false},
		"flags":               {"(?s).", false},
		"space":               {"a b", false},
		"repeated assertion":  {"$+", false},
		"empty":               {"", false},
		"too long":            {strings.Repeat("a", 1024), false},
		"longest":             {strings.Repeat("a", 1023), true},
		"case-insensitive on": {"(?i)yes", true},
	} {
		t.Run(name, func(t *testing.T) {
			if err := validateHeaderPattern(tc.pattern); (err == nil) != tc.ok {
				t.Errorf("validateHeaderPattern(%q) = %v, want ok %v", tc.pattern, err, tc.ok)
			}
		})
	}
}

// FuzzCanaryHeaderPattern checks validateHeaderPattern against an
// independent reading of what it accepts, as FuzzRegexPath does for regex
// paths: at most 1023 printable ASCII characters, compiling with Go's
// regexp, without named groups or the s and m flags.
func FuzzCanaryHeaderPattern(f *testing.F) {
	for _, seed := range []string{"^Do[A-Z][a-z]+y$", `^v\d+$`, "[][**da?$&*", "*a", "(?P<x>a)", "(?s).", "a b", "$+", `\pL`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if validateHeaderPattern(p) != nil {
			return
		}
		if p == "" || len(p) > 1023 || strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r > '~' }) {
			t.Fatalf("accepted %q", p)
		}
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatalf("accepted %q: %v", p, err)
		}
		if op := forbiddenOp(re); op != "" {
			t.Fatalf("accepted %q with %s", p, op)
		}
	})
}
