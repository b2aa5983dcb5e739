package intent

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// Limits of annotation values.
const (
	maxCookieMaxAge = 10 * 365 * 24 * 3600 // ten years
	MaxSourceRanges = 1000
	MaxValueLen     = 4096
)

// quoteValue quotes an annotation value for a Problem, shortened.
func Quote(v string) string {
	const max = 64
	if len(v) > max {
		v = v[:max] + "..."
	}
	return strconv.Quote(v)
}

// CompactStrings removes adjacent duplicates of a sorted slice in place.
func CompactStrings(s []string) []string {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

const DefaultNoAuthLocations = "/.well-known/acme-challenge"

// ParseAuthCacheDurations parses auth-cache-duration: items separated by
// commas, each status codes (100 to 599) and then one nginx time ("200
// 202 10m", "5m", "500ms"), at most a year; empty is the default "200 202
// 401 5m".
func ParseAuthCacheDurations(v string) ([]config.AuthCacheDuration, error) {
	var out []config.AuthCacheDuration
	for _, item := range strings.Split(v, ",") {
		f := strings.Fields(item)
		if len(f) == 0 {
			continue
		}
		if len(out) >= MaxAuthHeaders || len(f) > 32 {
			return nil, errors.New("too many items")
		}
		d := config.AuthCacheDuration{}
		for _, code := range f[:len(f)-1] {
			c, err := ParseIntRange(code, 100, 599)
			if err != nil || len(code) != 3 {
				return nil, fmt.Errorf("%q: status codes (100 to 599) come before one time", item)
			}
			d.Codes = append(d.Codes, c)
		}
		ms, err := parseAuthTime(f[len(f)-1])
		if err != nil {
			return nil, fmt.Errorf("%q: %w", item, err)
		}
		d.Millis = ms
		out = append(out, d)
	}
	if out == nil {
		return ParseAuthCacheDurations(defaultAuthDuration)
	}
	return out, nil
}

// SigninWithRedirect adds param (default rd) with the original URL to the
// signin URL unless its query has it, as ingress-nginx's buildAuthSignURL.
func SigninWithRedirect(signin, param string) string {
	if param == "" {
		param = defaultAuthRdParam
	}
	const original = "$pass_access_scheme://$http_host$escaped_request_uri"
	_, query, found := strings.Cut(signin, "?")
	if !found || query == "" {
		return strings.TrimSuffix(signin, "?") + "?" + param + "=" + original
	}
	for _, kv := range strings.Split(query, "&") {
		if k, v, _ := strings.Cut(kv, "="); k == param && v != "" {
			return signin
		}
	}
	return signin + "&" + param + "=" + original
}

// ParseHTTPErrors parses custom-http-errors: comma-separated status codes
// 400 to 599 (spaces allowed), returned sorted and unique; "" is none.
func ParseHTTPErrors(v string) ([]int, error) {
	var codes []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := ParseIntRange(f, 400, 599)
		if err != nil || len(f) != 3 || n == 499 {
			return nil, fmt.Errorf("%s is not a status code from 400 to 599 (but 499, which nginx never sends)", Quote(f))
		}
		codes = append(codes, n)
	}
	if len(codes) > maxErrorCodes {
		return nil, fmt.Errorf("more than %d codes", maxErrorCodes)
	}
	slices.Sort(codes)
	return slices.Compact(codes), nil
}

func JoinCodes(codes []int) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// Limits of header ConfigMaps.
const (
	MaxHeaders        = 100
	MaxHeaderValueLen = 4096
	MaxAliases        = 100
)

// ValidHeaderName reports whether n is an RFC 7230 token.
func ValidHeaderName(n string) bool {
	if n == "" || len(n) > 256 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !IsAlnum(c) && strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return false
		}
	}
	return true
}

// CheckHeaderValue accepts printable ASCII and tabs, not empty (as
// ingress-nginx), at most maxHeaderValueLen bytes.
func CheckHeaderValue(v string) error {
	if v == "" {
		return errors.New("the value is empty")
	}
	if len(v) > MaxHeaderValueLen {
		return fmt.Errorf("the value is longer than %d bytes", MaxHeaderValueLen)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return errors.New("the value holds a control or non-ASCII character")
		}
	}
	return nil
}

func IsAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// IsDNSLabel reports whether s is an RFC 1123 label: lower-case letters,
// digits and inner '-', at most 63 characters.
func IsDNSLabel(s string) bool {
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

// IsDNSSubdomain reports whether s is an RFC 1123 subdomain: dot-separated
// labels, at most 253 characters.
func IsDNSSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for s != "" {
		label, rest, _ := strings.Cut(s, ".")
		if !IsDNSLabel(label) {
			return false
		}
		if rest == "" && len(label) < len(s) {
			return false // trailing dot
		}
		s = rest
	}
	return true
}

// ValidHost checks an Ingress rule or TLS host: an exact DNS name, or "*."
// followed by one, as Kubernetes validates them.
func ValidHost(h string) error {
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		h = rest
	}
	if !IsDNSSubdomain(h) {
		return errInvalidHost
	}
	return nil
}

// path validation errors.
var (
	ErrPathRelative = errors.New("must be an absolute path starting with /")
	ErrPathChars    = errors.New("may only contain letters, digits and -._~/%!&()*+,=:@")
	errPathSegments = errors.New("must not contain //, /./ or /../ or end in /. or /..")
	errPathLong     = errors.New("is longer than 1024 characters")
)

// PathChar is the allow-list of characters in Ingress paths and cookie
// paths: RFC 3986 pchar without "$", ";", "'" (they mean something to nginx
// or to its configuration parser).
func PathChar(c byte) bool {
	if IsAlnum(c) {
		return true
	}
	switch c {
	case '-', '.', '_', '~', '/', '%', '!', '&', '(', ')', '*', '+', ',', '=', ':', '@':
		return true
	}
	return false
}

// ValidatePath checks an absolute URL path against the allow-list.
func ValidatePath(p string) error {
	if err := checkAbsolute(p); err != nil {
		return err
	}
	for i := 0; i < len(p); i++ {
		if !PathChar(p[i]) {
			return ErrPathChars
		}
	}
	if strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
		strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
		return errPathSegments
	}
	return nil
}

// ValidateRegexPath checks a regex path: absolute, at most 1024 printable
// ASCII characters, valid RE2 syntax (what Kubernetes and ingress-nginx
// document), and inside the part of it that nginx's PCRE, matching bytes,
// accepts with the same meaning: no group flags but (?: and (?i), no
// Unicode classes or code points above 0xff, at most maxRegexNesting nested
// groups, and no repeated empty-width assertion ("nothing to repeat").
func ValidateRegexPath(p string) error {
	if err := checkAbsolute(p); err != nil {
		return err
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] > '~' {
			return errRegexChars
		}
	}
	return ValidatePattern(p)
}

// ValidatePattern checks that p is RE2 syntax inside the part nginx's PCRE
// accepts with the same meaning (see validateRegexPath).
func ValidatePattern(p string) error {
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

// Key identifies a namespaced object.
type Key struct {
	Namespace, Name string
}

func (k Key) String() string { return k.Namespace + "/" + k.Name }

// parseObjectKey parses "namespace/name" with DNS-shaped parts.
func ParseKey(s string) (Key, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || !IsDNSLabel(ns) || !IsDNSSubdomain(name) {
		return Key{}, fmt.Errorf("%q is not namespace/name", s)
	}
	return Key{ns, name}, nil
}

// Verify modes of auth-tls-verify-client.
const (
	VerifyOn           = "on"
	VerifyOff          = "off"
	VerifyOptional     = "optional"
	VerifyOptionalNoCA = "optional_no_ca"
)

const (
	DefaultProxySSLProtocols = "TLSv1.2"
	DefaultProxySSLCiphers   = "DEFAULT"
	defaultProxySSLName      = "upstream_balancer"
	MaxProxySSLVerifyDepth   = 100
)

// ParseIntRange parses a plain decimal integer in [lo, hi].
func ParseIntRange(v string, lo, hi int) (int, error) {
	if !AllDigits(v) || len(v) > 10 {
		return 0, errors.New("must be a whole number")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("must be between %d and %d", lo, hi)
	}
	return n, nil
}

func Printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// CheckHash accepts the hash formats lua/auth.lua verifies: $apr1$ and $1$
// (MD5), $2a$/$2b$/$2y$ (bcrypt), $5$ and $6$ (SHA-crypt), {SHA}, {SSHA}
// and traditional DES crypt.
func CheckHash(h string) error {
	switch {
	case strings.HasPrefix(h, "$apr1$"), strings.HasPrefix(h, "$1$"):
		salt, sum, ok := strings.Cut(h[strings.IndexByte(h[1:], '$')+2:], "$")
		if ok && len(salt) >= 1 && len(salt) <= 8 && isCrypt64(salt) && len(sum) == 22 && isCrypt64(sum) {
			return nil
		}
	case strings.HasPrefix(h, "$2a$"), strings.HasPrefix(h, "$2b$"), strings.HasPrefix(h, "$2y$"):
		if len(h) == 60 && h[6] == '$' && h[4] >= '0' && h[4] <= '3' && h[5] >= '0' && h[5] <= '9' &&
			(h[4]-'0')*10+h[5]-'0' >= 4 && (h[4]-'0')*10+h[5]-'0' <= 31 && isCrypt64(h[7:]) {
			return nil
		}
	case strings.HasPrefix(h, "$5$"), strings.HasPrefix(h, "$6$"):
		if shaCrypt(h) {
			return nil
		}
	case strings.HasPrefix(h, "{SHA}"):
		if b, err := base64.StdEncoding.DecodeString(h[5:]); err == nil && len(b) == 20 {
			return nil
		}
	case strings.HasPrefix(h, "{SSHA}"):
		if b, err := base64.StdEncoding.DecodeString(h[6:]); err == nil && len(b) > 20 && len(b) <= 20+64 {
			return nil
		}
	case len(h) == 13 && isCrypt64(h):
		return nil
	}
	return errors.New("has a password hash of an unknown or malformed format (apr1, bcrypt, SHA1, MD5, SHA-256/512 or DES crypt)")
}

func IsHexMD5(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Limits of external auth values.
const (
	MaxAuthURLLen       = 2048
	MaxAuthHeaders      = 64
	MaxAuthCacheMillis  = 366 * 24 * 3600 * 1000
	defaultAuthDuration = "200 202 401 5m"
	defaultAuthRdParam  = "rd"
)

func parseAuthTime(t string) (int64, error) {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	unit, ok := authTimeUnits[t[i:]]
	if i == 0 || i > 9 || !ok {
		return 0, errors.New("must end with an nginx time such as 500ms, 30s, 5m, 1h, 1d")
	}
	n, _ := strconv.ParseInt(t[:i], 10, 64)
	if ms := n * unit; ms > 0 && ms <= MaxAuthCacheMillis {
		return ms, nil
	}
	return 0, errors.New("the time must be above 0 and at most 366 days")
}

// maxErrorCodes bounds a custom-http-errors list (400 to 599).
const maxErrorCodes = 200

// Limits of a CA Secret.
const (
	MaxClientCABytes = 64 << 10
	MaxClientCAs     = 100
	MaxRevoked       = 10000
	MaxVerifyDepth   = 100
	MaxErrorPageLen  = 2048
	MaxMatchCNLen    = 1024
)

func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isCrypt64(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(crypt64, s[i]) < 0 {
			return false
		}
	}
	return true
}

// shaCrypt checks $5$[rounds=N$]salt$sum and $6$...
func shaCrypt(h string) bool {
	want := 43
	if h[1] == '6' {
		want = 86
	}
	rest := h[3:]
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		n, after, found := strings.Cut(r, "$")
		if !found || !AllDigits(n) || len(n) > 9 {
			return false
		}
		rest = after
	}
	salt, sum, ok := strings.Cut(rest, "$")
	return ok && len(salt) <= 16 && isCrypt64(salt) && len(sum) == want && isCrypt64(sum)
}

// authTimeUnits are nginx's time units in milliseconds.
var authTimeUnits = map[string]int64{"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": 86400000,
	"w": 7 * 86400000, "M": 30 * 86400000, "y": 365 * 86400000}

// crypt64 is the alphabet of crypt hashes.
const crypt64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RefKey is the key of the object ref ("name" or "namespace/name") names
// for an Ingress of namespace; ok is false when ref is "" or names another
// namespace.
func RefKey(namespace, ref string) (Key, bool) {
	ns, name, found := strings.Cut(ref, "/")
	if !found {
		return Key{namespace, ref}, ref != ""
	}
	return Key{ns, name}, ns == namespace
}

// UniqueKeys sorts keys by namespace and name and drops the repeated ones,
// in place.
func UniqueKeys(keys []Key) []Key {
	if len(keys) < 2 {
		return keys
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Namespace < keys[j].Namespace || keys[i].Namespace == keys[j].Namespace && keys[i].Name < keys[j].Name
	})
	out := keys[:1]
	for _, k := range keys[1:] {
		if k != out[len(out)-1] {
			out = append(out, k)
		}
	}
	return out
}
