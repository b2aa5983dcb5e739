package intent

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

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

func TestUniqueKeys(t *testing.T) {
	got := UniqueKeys([]Key{{"b", "x"}, {"a", "x"}, {"b", "x"}, {"a", "y"}, {"a", "x"}})
	want := []Key{{"a", "x"}, {"a", "y"}, {"b", "x"}}
	if !slices.Equal(got, want) {
		t.Fatalf("UniqueKeys = %v, want %v", got, want)
	}
}
