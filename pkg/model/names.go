package model

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
)

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// isDNSLabel reports whether s is an RFC 1123 label: lower-case letters,
// digits and inner '-', at most 63 characters.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !isLowerAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is an RFC 1123 subdomain: dot-separated
// labels, at most 253 characters.
func isDNSSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for s != "" {
		label, rest, _ := strings.Cut(s, ".")
		if !isDNSLabel(label) {
			return false
		}
		if rest == "" && len(label) < len(s) {
			return false // trailing dot
		}
		s = rest
	}
	return true
}

var errInvalidHost = errors.New("is not a valid DNS name or wildcard (*.example.com)")

// validHost checks an Ingress rule or TLS host: an exact DNS name, or "*."
// followed by one, as Kubernetes validates them.
func validHost(h string) error {
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		h = rest
	}
	if !isDNSSubdomain(h) {
		return errInvalidHost
	}
	return nil
}

// path validation errors.
var (
	errPathRelative = errors.New("must be an absolute path starting with /")
	errPathChars    = errors.New("may only contain letters, digits and -._~/%!&()*+,=:@")
	errPathSegments = errors.New("must not contain //, /./ or /../ or end in /. or /..")
	errPathLong     = errors.New("is longer than 1024 characters")
)

// pathChar is the allow-list of characters in Ingress paths and cookie
// paths: RFC 3986 pchar without "$", ";", "'" (they mean something to nginx
// or to its configuration parser).
func pathChar(c byte) bool {
	if isAlnum(c) {
		return true
	}
	switch c {
	case '-', '.', '_', '~', '/', '%', '!', '&', '(', ')', '*', '+', ',', '=', ':', '@':
		return true
	}
	return false
}

// checkAbsolute checks that p is an absolute path of at most 1024 bytes.
func checkAbsolute(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return errPathRelative
	case len(p) > 1024:
		return errPathLong
	}
	return nil
}

// validatePath checks an absolute URL path against the allow-list.
func validatePath(p string) error {
	if err := checkAbsolute(p); err != nil {
		return err
	}
	for i := 0; i < len(p); i++ {
		if !pathChar(p[i]) {
			return errPathChars
		}
	}
	if strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
		strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
		return errPathSegments
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

// validateRegexPath checks a regex path: absolute, at most 1024 printable
// ASCII characters, valid RE2 syntax (what Kubernetes and ingress-nginx
// document), and inside the part of it that nginx's PCRE, matching bytes,
// accepts with the same meaning: no group flags but (?: and (?i), no
// Unicode classes or code points above 0xff, at most maxRegexNesting nested
// groups, and no repeated empty-width assertion ("nothing to repeat").
func validateRegexPath(p string) error {
	if err := checkAbsolute(p); err != nil {
		return err
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] > '~' {
			return errRegexChars
		}
	}
	return validatePattern(p)
}

// validatePattern checks that p is RE2 syntax inside the part nginx's PCRE
// accepts with the same meaning (see validateRegexPath).
func validatePattern(p string) error {
	if err := checkRegexText(p); err != nil {
		return err
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return fmt.Errorf("is not a valid regular expression: %w", err)
	}
	if repeatsEmptyWidth(re) {
		return errRegexRepeat
	}
	if regexSize(re) > maxRegexSize {
		return errRegexLarge
	}
	return nil
}

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

// normalizePrefix removes the trailing slash of a Prefix path: Ingress v1
// ignores it, so "/foo/" and "/foo" are the same rule. "/" stays "/".
func normalizePrefix(p string) string {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return p[:len(p)-1]
	}
	return p
}
