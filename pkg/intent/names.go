package intent

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
)

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

var errInvalidHost = errors.New("is not a valid DNS name or wildcard (*.example.com)")

// checkAbsolute checks that p is an absolute path of at most 1024 bytes.
func checkAbsolute(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return ErrPathRelative
	case len(p) > 1024:
		return errPathLong
	}
	return nil
}

// Regex path errors.
var (
	errRegexChars  = errors.New("may only contain printable ASCII characters other than space")
	errRegexGroup  = errors.New("may only use (?: and (?i) group flags")
	errRegexEscape = errors.New(`may not use \p, \P or \x{...} above \x{ff} (nginx matches bytes)`)
	errRegexNested = fmt.Errorf("may nest at most %d groups", maxRegexNesting)
	errRegexRepeat = errors.New("repeats an empty-width assertion (^, $, \\b, \\A, ...), which nginx refuses")
)

// maxRegexNesting is below the nesting limit of nginx's PCRE (250).
const maxRegexNesting = 100

// maxRegexSize bounds regexSize well below what fits nginx's PCRE (its
// compiled patterns take at most 64 KiB; counted repeats are copied out).
const maxRegexSize = 4000

var errRegexLarge = errors.New("expands to too large a pattern (counted repeats)")

// regexSize estimates the compiled size of re: items, with counted
// repeats multiplied out.
func regexSize(re *syntax.Regexp) int {
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune)
	case syntax.OpRepeat:
		times := max(re.Max, re.Min, 1)
		return min(times*regexSize(re.Sub[0]), 1<<30)
	}
	for _, sub := range re.Sub {
		n = min(n+regexSize(sub), 1<<30)
	}
	return n
}

// checkRegexText walks the pattern's text: group flags, escapes and nesting.
func checkRegexText(p string) error {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) && (p[i+1] == 'p' || p[i+1] == 'P') {
				return errRegexEscape
			}
			if strings.HasPrefix(p[i+1:], "x{") && !smallHexEscape(p[i+3:]) {
				return errRegexEscape
			}
			i++
		case '(':
			if strings.HasPrefix(p[i:], "(?") && !strings.HasPrefix(p[i:], "(?:") && !strings.HasPrefix(p[i:], "(?i)") {
				return errRegexGroup
			}
			if depth++; depth > maxRegexNesting {
				return errRegexNested
			}
		case ')':
			depth--
		}
	}
	return nil
}

// smallHexEscape reports whether s starts with hex digits and "}" whose
// value is at most 0xff.
func smallHexEscape(s string) bool {
	end := strings.IndexByte(s, '}')
	if end < 1 || end > 8 {
		return false
	}
	n, err := strconv.ParseUint(s[:end], 16, 32)
	return err == nil && n <= 0xff
}

// repeatsEmptyWidth reports whether re repeats an assertion that matches
// no character.
func repeatsEmptyWidth(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		switch re.Sub[0].Op {
		case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
			syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpEmptyMatch:
			return true
		}
	}
	for _, sub := range re.Sub {
		if repeatsEmptyWidth(sub) {
			return true
		}
	}
	return false
}

// NormalizePrefix removes the trailing slash of a Prefix path: Ingress v1
// ignores it, so "/foo/" and "/foo" are the same rule. "/" stays "/".
func NormalizePrefix(p string) string {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return p[:len(p)-1]
	}
	return p
}
