package config

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Balancing defaults.
const (
	LoadBalanceRoundRobin = "round_robin"
	LoadBalanceEWMA       = "ewma"
	DefaultCookieName     = "INGRESSCOOKIE"
)

// MaxSizeBytes bounds sizes (1 TiB): larger limits mean "no limit" in
// practice, and every byte count stays exact in JSON.
const MaxSizeBytes = 1 << 40

// Bytes returns the size in bytes, and false when s is not an nginx size
// (digits with an optional k, m or g unit) of at most MaxSizeBytes.
func (s Size) Bytes() (int64, bool) {
	digits, unit := string(s), int64(1)
	if n := len(digits); n > 0 {
		switch digits[n-1] {
		case 'k', 'K':
			digits, unit = digits[:n-1], 1<<10
		case 'm', 'M':
			digits, unit = digits[:n-1], 1<<20
		case 'g', 'G':
			digits, unit = digits[:n-1], 1<<30
		}
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 13 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > MaxSizeBytes/unit {
		return 0, false
	}
	return n * unit, true
}

// BlockRules are the ConfigMap's block-cidrs, block-user-agents and
// block-referers: a request from a client in CIDRs, or whose User-Agent or
// Referer matches one, answers 403, before any route. An entry is an exact value (compared ignoring case, as
// nginx's map) or, after "~" (case-sensitive) or "~*" (ignoring case), a
// regular expression (checked as regex paths are: RE2 syntax with the same
// meaning in nginx's PCRE), unanchored.
type BlockRules struct {
	CIDRs      []string `json:"cidrs,omitempty"`
	UserAgents []string `json:"userAgents,omitempty"`
	Referers   []string `json:"referers,omitempty"`
}

// Affinity modes and the cookie's SameSite values.
const (
	AffinityBalanced   = "balanced"
	AffinityPersistent = "persistent"
)

// ClientAuth is the client certificate verification of a Server: lua/
// certificate.lua asks for and verifies a client certificate during the
// handshake of its SNI name, and lua/clientauth.lua enforces the outcome
// per request and passes it upstream.
type ClientAuth struct {
	// Ingress is the "namespace/name" that set it, Secret the CA Secret.
	Ingress string `json:"ingress"`
	Secret  string `json:"secret,omitempty"`
	// CA holds the trusted certificates, PEM (validated by ParseClientCA).
	CA string `json:"ca,omitempty"`
	// Revoked are the serial numbers (upper-case hex, as nginx's
	// $ssl_client_serial) that the Secret's ca.crl revokes, sorted.
	Revoked []string `json:"revoked,omitempty"`
	// Verify is on, off, optional or optional_no_ca; Depth 1 to 100.
	Verify string `json:"verify,omitempty"`
	Depth  int    `json:"depth,omitempty"`
	// ErrorPage answers a failed verification instead of 400: a path is
	// served from the host's routes (nginx's error_page = internal
	// redirect), anything else is a 302 to it.
	ErrorPage string `json:"errorPage,omitempty"`
	// PassCertificate sends the PEM certificate, URL-escaped, as
	// ssl-client-cert.
	PassCertificate bool `json:"passCertificate,omitempty"`
	// MatchCN is a regular expression the subject DN must match (403).
	MatchCN string `json:"matchCN,omitempty"`
}

// ExternalAuth is the external auth of a location. URL, Signin and CacheKey
// are templates: literal text and the variables authVariable accepts, which
// lua/extauth.lua expands per request.
type ExternalAuth struct {
	URL string `json:"url"`
	// Host is the auth URL's host name, the auth request's Host header.
	Host   string `json:"host,omitempty"`
	Method string `json:"method,omitempty"`
	// Signin is where a 401 redirects (302), redirect parameter included.
	Signin          string   `json:"signin,omitempty"`
	ResponseHeaders []string `json:"responseHeaders,omitempty"`
	RequestRedirect string   `json:"requestRedirect,omitempty"`
	CacheKey        string   `json:"cacheKey,omitempty"`
	// CacheDurations say how long an answer is cached, by status code.
	CacheDurations  []AuthCacheDuration `json:"cacheDurations,omitempty"`
	ProxySetHeaders []Header            `json:"proxySetHeaders,omitempty"`
	AlwaysSetCookie bool                `json:"alwaysSetCookie,omitempty"`
	// SatisfyAny is satisfy=any: a client the allow-list admits needs no
	// auth request.
	SatisfyAny bool `json:"satisfyAny,omitempty"`
	// Unavailable answers 503: the annotations could not be applied.
	Unavailable bool `json:"unavailable,omitempty"`
}

// AuthCacheDuration caches the answers with one of Codes (none: 200, 301
// and 302, as nginx's proxy_cache_valid) for Millis milliseconds.
type AuthCacheDuration struct {
	Codes  []int `json:"codes,omitempty"`
	Millis int64 `json:"ms"`
}

// GlobalAuth holds the ConfigMap's global-auth-* keys, validated (see
// globalAuthKeys): the external auth of every location whose Ingress has
// no auth-url and does not set enable-global-auth to false (routes only,
// no reload).
type GlobalAuth struct {
	URL                 string `json:"url,omitempty"`
	Method              string `json:"method,omitempty"`
	Signin              string `json:"signin,omitempty"`
	SigninRedirectParam string `json:"signinRedirectParam,omitempty"`
	ResponseHeaders     string `json:"responseHeaders,omitempty"`
	RequestRedirect     string `json:"requestRedirect,omitempty"`
	CacheKey            string `json:"cacheKey,omitempty"`
	CacheDuration       string `json:"cacheDuration,omitempty"`
	AlwaysSetCookie     string `json:"alwaysSetCookie,omitempty"`
	// NoAuthLocations is no-auth-locations when set (NoAuthLocationsSet):
	// paths joined by commas (canonical, see parseLocationList); the locations whose path starts with one
	// get no external auth (default /.well-known/acme-challenge).
	NoAuthLocations    string `json:"noAuthLocations,omitempty"`
	NoAuthLocationsSet bool   `json:"noAuthLocationsSet,omitempty"`
}

// RateLimit is a route's rate and connection limits (limit-* annotations),
// counted per client address ($remote_addr) and Ingress in each nginx
// instance, as ingress-nginx's zones per Ingress and replica. See
// lua/limit.lua.
type RateLimit struct {
	// RPS and RPM are limit-rps and limit-rpm (0: none); each has a burst
	// of its rate times BurstMultiplier, without delay (nodelay). Both may
	// be set: a request must pass both.
	RPS             int `json:"rps,omitempty"`
	RPM             int `json:"rpm,omitempty"`
	BurstMultiplier int `json:"burstMultiplier,omitempty"`
	// Connections is limit-connections: requests in progress per client.
	Connections int `json:"connections,omitempty"`
	// Rate and RateAfter are limit-rate and limit-rate-after in bytes
	// (the annotations are in kilobytes): the response's transfer rate
	// to the client after its first RateAfter bytes.
	Rate      int64 `json:"rate,omitempty"`
	RateAfter int64 `json:"rateAfter,omitempty"`
	// Allowlist is limit-allowlist (or limit-whitelist): client CIDRs the
	// request and connection limits skip.
	Allowlist []string `json:"allowlist,omitempty"`
	// ReqStatus and ConnStatus answer requests beyond the request and
	// connection limits: the ConfigMap's limit-req-status-code and
	// limit-conn-status-code (0: 503).
	ReqStatus  int `json:"reqStatus,omitempty"`
	ConnStatus int `json:"connStatus,omitempty"`
	// Invalid: a limit annotation could not be parsed; the route answers
	// 503 (fail closed), never unlimited.
	Invalid bool `json:"invalid,omitempty"`
}

// ProxySettings are the proxy annotations of a location that the data plane
// applies per request (see docs/dataplane.md, "Per-route settings"). Zero
// values mean the default: the ConfigMap's proxy-buffering, request
// buffering on, HTTP/1.1, the syncer's --max-tries, no rewriting of
// Location and Set-Cookie headers, access log on.
type ProxySettings struct {
	// Buffering and RequestBuffering are "on" or "off"; HTTPVersion is
	// "1.0" or "1.1".
	Buffering        string `json:"buffering,omitempty"`
	RequestBuffering string `json:"requestBuffering,omitempty"`
	HTTPVersion      string `json:"httpVersion,omitempty"`
	// NextUpstreamTries bounds the attempts of a request over the
	// backend's endpoints, 1 (no retry, proxy-next-upstream: off) to
	// MaxNextUpstreamTries.
	NextUpstreamTries int `json:"nextUpstreamTries,omitempty"`
	// RedirectFrom and RedirectTo rewrite the prefix of the Location and
	// Refresh headers of responses (proxy_redirect).
	RedirectFrom string `json:"redirectFrom,omitempty"`
	RedirectTo   string `json:"redirectTo,omitempty"`
	// CookieDomain* and CookiePath* rewrite the domain and path attributes
	// of Set-Cookie headers (proxy_cookie_domain, proxy_cookie_path).
	CookieDomainFrom string `json:"cookieDomainFrom,omitempty"`
	CookieDomainTo   string `json:"cookieDomainTo,omitempty"`
	CookiePathFrom   string `json:"cookiePathFrom,omitempty"`
	CookiePathTo     string `json:"cookiePathTo,omitempty"`
	// NoAccessLog is enable-access-log=false.
	NoAccessLog bool `json:"noAccessLog,omitempty"`
}

// CustomErrors are a location's error pages (custom-http-errors, the
// ConfigMap's custom-http-errors, default-backend,
// disable-proxy-intercept-errors), as ingress-nginx serves them: a response
// with one of Codes, from the backend or from nginx, is replaced by
// Backend's answer to a request for "/" carrying X-Code, X-Format,
// X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name,
// X-Service-Port and X-Request-ID.
type CustomErrors struct {
	// Codes are 400 to 599, sorted; empty with Fallback only.
	Codes []int `json:"codes,omitempty"`
	// Backend answers the error pages: the default-backend annotation's
	// Service, else the Configuration's DefaultBackend; "" answers 404 (the
	// built-in default backend).
	Backend string `json:"backend,omitempty"`
	// Fallback (the default-backend annotation) also sends the requests to
	// Backend, with X-Code 503, while the location's backend has no
	// endpoints.
	Fallback bool `json:"fallback,omitempty"`
	// NoIntercept is disable-proxy-intercept-errors: the backend's own
	// error responses pass; only nginx's (502, 504, 413...) are replaced.
	NoIntercept bool `json:"noIntercept,omitempty"`
	// Global is set when Codes are the ConfigMap's custom-http-errors:
	// nginx.conf then holds error_page for exactly these codes, and the
	// backend's other errors pass (see lua/proxy.lua).
	Global bool `json:"global,omitempty"`
	// Service and ServicePort are the location's backend, for
	// X-Service-Name and X-Service-Port.
	Service     string `json:"service,omitempty"`
	ServicePort string `json:"servicePort,omitempty"`
}

// UpstreamTLS is a backend TLS profile: what nginx's proxy_ssl_* and
// grpc_ssl_* directives that take no variables say, plus the CA and client
// certificate files. Name is "t" and 16 hex digits of its content's hash.
type UpstreamTLS struct {
	Name string `json:"name"`
	// CA is the PEM of the trusted certificates (re-encoded); nil: none.
	CA []byte `json:"ca,omitempty"`
	// SystemCA trusts the system's CA certificates instead (a
	// BackendTLSPolicy's wellKnownCACertificates System: the bundle of the
	// nginx image, pkg/nginx's Options.SystemCAFile).
	SystemCA bool `json:"systemCA,omitempty"`
	// Cert and Key are the PEM client certificate chain and key
	// (re-encoded); nil: none.
	Cert []byte `json:"cert,omitempty"`
	Key  []byte `json:"key,omitempty"`
	// Verify is proxy-ssl-verify on (only with a CA).
	Verify      bool `json:"verify,omitempty"`
	VerifyDepth int  `json:"verifyDepth"`
	// Protocols are "TLSv1.2", "TLSv1.3" or both, sorted, by spaces.
	Protocols string `json:"protocols"`
	// Ciphers is a validated OpenSSL cipher list.
	Ciphers    string `json:"ciphers"`
	ServerName bool   `json:"serverName,omitempty"`
	// PeerName is, with Verify or ServerName, the proxy-ssl-name of the
	// profile's routes ("": the default): each name verified or sent as SNI
	// is a profile of its own, so that a kept-alive connection opened (and
	// verified) for one name, to a backend that may route by SNI, is never
	// reused for another. nginx.conf does not hold it: the route's name
	// reaches proxy_ssl_name through a variable.
	PeerName string `json:"peerName,omitempty"`
}

// ProxySSL is a location's backend TLS: its profile and proxy-ssl-name.
// Unavailable makes the location answer 503 (fail closed).
type ProxySSL struct {
	Profile     string `json:"profile,omitempty"`
	Name        string `json:"name,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
}

// ProfileName names an UpstreamTLS by the hash of its content.
func (p *UpstreamTLS) ProfileName() string {
	h := sha256.New()
	for _, b := range [][]byte{p.CA, p.Cert, p.Key, []byte(p.Protocols), []byte(p.Ciphers), []byte(p.PeerName)} {
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	fmt.Fprintf(h, "%t:%d:%t", p.Verify, p.VerifyDepth, p.ServerName)
	if p.SystemCA {
		fmt.Fprint(h, ":system")
	}
	return "t" + hex.EncodeToString(h.Sum(nil))[:16]
}

// upstreamTLSEqual reports whether two sorted profile lists are the same
// (by Name, a hash of the content).
func upstreamTLSEqual(a, b []UpstreamTLS) bool {
	return slices.EqualFunc(a, b, func(x, y UpstreamTLS) bool { return x.Name == y.Name })
}

// The ingress-nginx defaults of the redirect and CORS annotations.
const (
	DefaultPermanentRedirectCode = 301
	DefaultTemporalRedirectCode  = 302
	DefaultCORSMethods           = "GET, PUT, POST, DELETE, PATCH, OPTIONS"
	DefaultCORSHeaders           = "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"
	DefaultCORSMaxAge            = 1728000
)

// Redirect answers a location's requests with a redirect instead of
// proxying them (permanent-redirect, temporal-redirect).
type Redirect struct {
	URL  string `json:"url"`
	Code int    `json:"code"`
}

// CORS is what enable-cors and the cors-* annotations say.
type CORS struct {
	// Origins are the allowed origins ("scheme://host[:port]", the host
	// possibly starting with "*." for one label, or "null"); nil allows any
	// origin and answers "*".
	Origins     []string `json:"origins,omitempty"`
	Methods     string   `json:"methods"`
	Headers     string   `json:"headers"`
	Expose      string   `json:"expose,omitempty"`
	Credentials bool     `json:"credentials"`
	MaxAge      int      `json:"maxAge"`
}

// Header is one header name and value, validated: the name an RFC 7230
// token, the value printable ASCII (no CR, LF or other control character).
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Problem kinds that are not Kubernetes kinds.
const (
	// ProblemKindOptions marks a Problem with the controller flags.
	ProblemKindOptions = "Options"
)

// CompareHostnames orders the default server first, then by name.
func CompareHostnames(a, b string) int {
	if a == DefaultServerName || b == DefaultServerName {
		return boolRank(a != DefaultServerName) - boolRank(b != DefaultServerName)
	}
	return cmp.Compare(a, b)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RedirectsToHTTPS reports whether requests for l over plain HTTP are
// redirected to HTTPS: l.Settings.SSLRedirect when set, else s.SSLRedirect.
func (s *Server) RedirectsToHTTPS(l *Location) bool {
	if l.Settings.SSLRedirect != nil {
		return *l.Settings.SSLRedirect
	}
	return s.SSLRedirect
}

// FallbackCertificateName is the Name Build gives Options.FallbackCertificate
// (whatever its own Name). Every syncer and replay generates its own, so the
// content of the certificate of this name is left out of the checksum.
const FallbackCertificateName = "_fallback"
