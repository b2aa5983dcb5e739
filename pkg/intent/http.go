package intent

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Bounds of the affinity annotations.
const (
	// maxCookieSeconds bounds session-cookie-max-age and -expires.
	MaxCookieSeconds = 1<<31 - 1
	// defaultSubsetSize is upstream-hash-by-subset-size's default;
	// maxSubsetSize bounds it (the balancer builds that many entries per
	// subset).
	DefaultSubsetSize = 3
	MaxSubsetSize     = 1000
	MaxHashByLen      = 256
	MaxCookieDomain   = 253
)

func ValidRealm(v string) bool {
	if len(v) > 256 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" -._~/", c) >= 0) {
			return false
		}
	}
	return true
}

// authVariables are the nginx variables auth-url, auth-signin and
// auth-cache-key may hold (lua/extauth.lua has the same list); http_*,
// cookie_* and arg_* are accepted too.
var authVariables = map[string]bool{
	"host": true, "http_host": true, "best_http_host": true, "request_uri": true, "escaped_request_uri": true,
	"uri": true, "args": true, "is_args": true, "query_string": true, "scheme": true, "pass_access_scheme": true,
	"server_port": true, "pass_server_port": true, "request_method": true, "remote_addr": true, "remote_user": true,
	"server_name": true, "request_id": true,
}

// AuthVariable reports whether $name may appear in an auth template.
func AuthVariable(name string) bool {
	if authVariables[name] {
		return true
	}
	for _, p := range []string{"http_", "cookie_", "arg_"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" {
			for i := 0; i < len(rest); i++ {
				if c := rest[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || p != "http_" && (c >= 'A' && c <= 'Z' || c == '-')) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// urlChar: the characters of auth URLs besides variables (ingress-nginx's
// URL validator, '%' and '+' added, ' ' removed).
func urlChar(c byte) bool {
	return IsAlnum(c) || strings.IndexByte("-._~/:,?&=%+", c) >= 0
}

// CacheKeyChar: ingress-nginx's NGINXVariable validator (letters, digits,
// '-', '_'), with ':' '/' '.' and ',' for readable keys.
func CacheKeyChar(c byte) bool { return IsAlnum(c) || strings.IndexByte("-_:/.,", c) >= 0 }

// ParseAuthTemplate checks a template: characters that literal accepts
// and variables $name or ${name} that authVariable accepts.
func ParseAuthTemplate(v string, literal func(byte) bool) error {
	if v == "" || len(v) > MaxAuthURLLen {
		return fmt.Errorf("must be 1 to %d characters", MaxAuthURLLen)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '$' {
			if !literal(c) {
				return fmt.Errorf("contains %q", c)
			}
			continue
		}
		name, n := TemplateVar(v[i+1:])
		if name == "" {
			return errors.New("'$' must start a variable $name or ${name}")
		}
		if !AuthVariable(name) {
			return fmt.Errorf("variable $%s is not one ingress-sync expands (host, request_uri, escaped_request_uri, ...)", name)
		}
		i += n
	}
	return nil
}

// TemplateVar returns the variable name at the start of s (after '$') and
// the bytes it takes, "" when there is none.
func TemplateVar(s string) (string, int) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 2 || !varName(s[1:end]) {
			return "", 0
		}
		return s[1:end], end + 1
	}
	n := 0
	for n < len(s) && (IsAlnum(s[n]) || s[n] == '_') {
		n++
	}
	return s[:n], n
}

func varName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !IsAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return s != ""
}

// ParseAuthURL checks an auth-url and returns its host name (without
// port), the Host header of the auth request.
func ParseAuthURL(v string) (string, error) {
	return parseURLTemplate(v, "/?")
}

// ParseMirrorURL checks a mirror-target and returns its host name
// (without port), the Host header of the copies unless mirror-host says
// otherwise. Its host and port are fixed; its path and query are a
// template as an auth-url's, which may also start right after the host
// with $request_uri or $uri (both start with "/"):
// "https://m.example.com$request_uri".
func ParseMirrorURL(v string) (string, error) {
	host, err := parseURLTemplate(v, "/?$")
	if err != nil {
		return "", err
	}
	_, rest, _ := strings.Cut(v, "://")
	if i := strings.IndexAny(rest, "/?$"); i >= 0 && rest[i] == '$' {
		if name, _ := TemplateVar(rest[i+1:]); name != "request_uri" && name != "uri" {
			return "", errors.New("a variable right after the host must be $request_uri or $uri")
		}
	}
	return host, nil
}

// parseURLTemplate checks an http(s) URL whose authority ends at the
// first of stops and returns its host name.
func parseURLTemplate(v, stops string) (string, error) {
	rest, ok := strings.CutPrefix(v, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(v, "https://"); !ok {
			return "", errors.New("must be an http:// or https:// URL")
		}
	}
	end := strings.IndexAny(rest, stops)
	if end < 0 {
		end = len(rest)
	}
	host, err := parseAuthority(rest[:end])
	if err != nil {
		return "", err
	}
	if end < len(rest) {
		if err := ParseAuthTemplate(rest[end:], urlChar); err != nil {
			return "", err
		}
	}
	return host, nil
}

// parseAuthority checks host[:port] (a DNS name, IPv4 or [IPv6]).
func parseAuthority(a string) (string, error) {
	host, port := a, ""
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 || !isIPv6Literal(a[1:end]) {
			return "", errors.New("has an invalid IPv6 address")
		}
		host, port = a[:end+1], a[end+1:]
	} else if i := strings.LastIndexByte(a, ':'); i >= 0 {
		host, port = a[:i], a[i:]
	}
	if port != "" {
		p, err := ParseIntRange(strings.TrimPrefix(port, ":"), 1, 65535)
		if err != nil || !strings.HasPrefix(port, ":") {
			return "", errors.New("has an invalid port")
		}
		_ = p
	}
	if !strings.HasPrefix(host, "[") && (host == "" || len(host) > 253 || !validHostLabels(host)) {
		return "", errors.New("must have a host name or address (no variables, no user info)")
	}
	return host, nil
}

func isIPv6Literal(s string) bool {
	if s == "" || len(s) > 45 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.') {
			return false
		}
	}
	return strings.Contains(s, ":")
}

// validHostLabels: labels of letters, digits and inner '-', separated by
// single dots.
func validHostLabels(h string) bool {
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if !IsAlnum(l[i]) && l[i] != '-' {
				return false
			}
		}
	}
	return true
}

// ParseAuthSignin checks auth-signin: an http(s) URL, an absolute path, or
// a template starting with a variable ($scheme://$host/...).
func ParseAuthSignin(v string) error {
	if !(strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") || strings.HasPrefix(v, "$")) {
		return errors.New("must be an http:// or https:// URL or an absolute path")
	}
	return ParseAuthTemplate(v, urlChar)
}

var AuthMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}

// ParseAuthHeaderList parses header names separated by commas, as
// ingress-nginx's auth-response-headers ([A-Za-z0-9_-] each, empty items
// skipped); nil for an empty list.
func ParseAuthHeaderList(v string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(v, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		for i := 0; i < len(h); i++ {
			if !IsAlnum(h[i]) && h[i] != '-' && h[i] != '_' {
				return nil, fmt.Errorf("header %q may only hold letters, digits, '-' and '_'", h)
			}
		}
		if len(h) > 256 || len(out) >= MaxAuthHeaders {
			return nil, fmt.Errorf("at most %d headers of 256 characters", MaxAuthHeaders)
		}
		out = append(out, h)
	}
	return out, nil
}

// ParseRequestRedirect accepts ingress-nginx's URL characters (no
// variables): the literal X-Auth-Request-Redirect.
func ParseRequestRedirect(v string) (string, error) {
	if v == "" || len(v) > MaxAuthURLLen {
		return "", fmt.Errorf("must be 1 to %d characters", MaxAuthURLLen)
	}
	for i := 0; i < len(v); i++ {
		if !urlChar(v[i]) {
			return "", fmt.Errorf("contains %q", v[i])
		}
	}
	return v, nil
}

// Limits of the rate and connection limit annotations.
const (
	// DefaultBurstMultiplier is ingress-nginx's limit-burst-multiplier.
	DefaultBurstMultiplier = 5
	// DefaultLimitStatusCode is the answer to a request beyond a limit
	// (limit-req-status-code, limit-conn-status-code).
	DefaultLimitStatusCode = 503
	MaxLimitCount          = 1 << 20 // requests or connections
	MaxBurstMultiplier     = 1000
	MaxLimitRateKB         = 1 << 30 // limit-rate, limit-rate-after (KB)
)

var (
	// nextUpstreamRE is ingress-nginx's list of proxy-next-upstream
	// conditions.
	NextUpstreamRE = regexp.MustCompile(`^((error|timeout|invalid_header|http_500|http_502|http_503|http_504|http_403|http_404|http_429|non_idempotent|off)\s?)+$`)
	// proxyURLRE is ingress-nginx's URL character set (proxy-redirect-*).
	ProxyURLRE = regexp.MustCompile(`^[A-Za-z0-9\-._~/:,?&=]+$`)
	// cookieRewriteRE is "off" or two words of URL characters.
	CookieRewriteRE = regexp.MustCompile(`^(off|[A-Za-z0-9\-._~/:]+\s+[A-Za-z0-9\-._~/:]+)$`)
)

var (
	CORSOriginRE  = regexp.MustCompile(`^([a-z]+://(\*\.)?[A-Za-z0-9\-.]*(:[0-9]+)?|null)$`)
	CORSMethodsRE = regexp.MustCompile(`^([A-Za-z]+,?\s?)+$`)
	CORSHeadersRE = regexp.MustCompile(`^[A-Za-z0-9\-_, ]*$`)
	CORSExposeRE  = regexp.MustCompile(`^(([A-Za-z0-9\-_]+|\*),?\s?)+$`)
)

// ParseRedirectURL accepts an absolute http or https URL made of the
// characters ingress-nginx allows in redirect URLs (letters, digits and
// -._~/:,?&=).
func ParseRedirectURL(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !IsAlnum(c) && strings.IndexByte("-._~/:,?&=", c) < 0 {
			return "", fmt.Errorf("contains %q (allowed: letters, digits and -._~/:,?&=)", c)
		}
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("must be an absolute http or https URL")
	}
	return v, nil
}

// ParseUpstreamVhost accepts a host name or address, optionally with a
// port: letters, digits, '-' and '.', then ":" and 1 to 65535.
func ParseUpstreamVhost(v string) (string, error) {
	host, port, hasPort := strings.Cut(v, ":")
	if hasPort {
		if _, err := ParseIntRange(port, 1, 65535); err != nil {
			return "", errors.New("port must be 1 to 65535")
		}
	}
	if host == "" || len(host) > 253 || !IsAlnum(host[0]) || !IsAlnum(host[len(host)-1]) || strings.Contains(host, "..") {
		return "", errors.New("must be a host name, optionally with :port")
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !IsAlnum(c) && c != '-' && c != '.' {
			return "", errors.New("must be a host name of letters, digits, '-' and '.', optionally with :port")
		}
	}
	return v, nil
}

// Limits of canary annotation values.
const (
	DefaultCanaryWeightTotal = 100
	MaxCanaryWeight          = 1_000_000_000
	MaxCanaryHeaderLen       = 256
)

// Limits of ConfigMap values.
const (
	MaxKeepalive      = 100000
	MaxGlobalSeconds  = 7 * 24 * 3600
	MaxGlobalCount    = 1 << 30
	MaxListItems      = 256
	MinSharedZoneSize = 32 << 10 // nginx: 8 pages
	// maxProxyTimeout bounds the ConfigMap's proxy timeouts (whole seconds,
	// as ingress-nginx takes them): a day, what the balancer accepts.
	MaxProxyTimeout = 86400
)
