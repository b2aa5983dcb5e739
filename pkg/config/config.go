package config

import (
	"slices"
	"strings"
)

// PathType is the Ingress v1 path type after normalisation.
// ImplementationSpecific is built as Prefix.
type PathType string

// The path types a Location may have.
const (
	PathExact  PathType = "Exact"
	PathPrefix PathType = "Prefix"
	// PathRegex is an ImplementationSpecific path of an Ingress with
	// use-regex=true or a rewrite-target: a case-insensitive regular
	// expression anchored at the start of the path, as ingress-nginx's
	// `location ~* "^<path>"`.
	PathRegex PathType = "Regex"
)

// Configuration is everything nginx serves, built by Build. Every slice is
// sorted (see the field comments) so that equal inputs give equal values and
// equal checksums.
type Configuration struct {
	// Global settings from the controller ConfigMap.
	Global Global `json:"global"`
	// Servers, sorted by Port, then by Hostname (CompareServers). The
	// default server (Hostname "_") of nginx's own ports is always present
	// and first; a Gateway listener's port has one when a route without a
	// hostname is attached to it.
	Servers []Server `json:"servers"`
	// Listeners are the ports nginx listens on for Gateway listeners, each
	// validated (ValidListenerPort), sorted by Port: nginx.conf holds them
	// (a new port reloads); the Servers of a port are its route table.
	Listeners []Listener `json:"listeners,omitempty"`
	// Backends, sorted by Name.
	Backends BackendList `json:"backends"`
	// Certificates, sorted by Name.
	Certificates []Certificate `json:"certificates"`
	// UpstreamTLS are the backend TLS profiles the locations use (see
	// annotations_proxyssl.go), sorted by Name: nginx.conf holds them, a
	// new one reloads.
	UpstreamTLS []UpstreamTLS `json:"upstreamTLS,omitempty"`
	// L4 are the TCP and UDP services of the ConfigMaps named by
	// Options.TCPServicesConfigMap and UDPServicesConfigMap (see
	// streams.go), sorted by Protocol then Port. nginx.conf holds their
	// listeners (a new port reloads); their endpoints never reach it.
	L4 []L4Service `json:"l4,omitempty"`
	// Passthrough are the hosts whose TLS connections go to their
	// backend unterminated (the ssl-passthrough annotation, with
	// Options.EnableSSLPassthrough), sorted by Hostname. They never
	// reach nginx.conf.
	Passthrough []PassthroughHost `json:"passthrough,omitempty"`
	// Streams are the TCP, UDP and TLS passthrough routes of Gateway
	// listeners (TCPRoute, UDPRoute, TLSRoute), sorted by Protocol, Port
	// and Hostname (CompareStreams). nginx.conf holds one stream server per
	// protocol and port (a new port reloads); hostnames and endpoints never
	// reach it.
	Streams []Stream `json:"streams,omitempty"`
	// DefaultCertificate is the Name of the certificate served for unknown
	// SNI names: --default-ssl-certificate, or the generated self-signed one.
	DefaultCertificate string `json:"defaultCertificate"`
	// DefaultBackend is the Name of the backend that answers requests no rule
	// matches; "" means the controller's built-in 404.
	DefaultBackend string `json:"defaultBackend,omitempty"`
	// Problems lists what was left out and why (invalid Ingresses, conflicts,
	// rejected annotations). Not part of the checksum: nginx does not see it.
	Problems []Problem `json:"problems,omitempty"`
	// Checksum is the canonical checksum of everything above except Problems.
	Checksum string `json:"checksum"`
	// gen and patch are set by Incremental (see patchHint): Diff uses
	// them to compare only what a patch changed.
	gen   *generation
	patch *patchHint
}

// Global holds the cluster-wide settings that end up in nginx.conf.
type Global struct {
	SSLRedirect          bool  `json:"sslRedirect"`
	ProxyConnectTimeout  int   `json:"proxyConnectTimeout"` // seconds
	ProxyReadTimeout     int   `json:"proxyReadTimeout"`    // seconds
	ProxySendTimeout     int   `json:"proxySendTimeout"`    // seconds
	ProxyBodySize        Size  `json:"proxyBodySize"`
	UpstreamKeepalive    int   `json:"upstreamKeepalive"`
	UseForwardedHeaders  bool  `json:"useForwardedHeaders"`
	AllowSnippets        bool  `json:"allowSnippets"`
	ServerNamesHashMaxKB int64 `json:"serverNamesHashMaxKB,omitempty"`
	// ForceSSLRedirect is the ConfigMap's force-ssl-redirect: the default
	// of the annotation (routes only, no reload).
	ForceSSLRedirect bool `json:"forceSSLRedirect,omitempty"`
	// ProxySetHeaders and AddHeaders are the "namespace/name" of the
	// ConfigMaps of request headers for every backend and response headers
	// for every response; AllowedResponseHeaders is
	// global-allowed-response-headers, lower-cased, sorted, joined by ",";
	// ServiceUpstream is the default of the service-upstream annotation.
	// Routes only: they never reload nginx (see annotations_upstream.go).
	ProxySetHeaders        string `json:"proxySetHeaders,omitempty"`
	AddHeaders             string `json:"addHeaders,omitempty"`
	AllowedResponseHeaders string `json:"allowedResponseHeaders,omitempty"`
	ServiceUpstream        bool   `json:"serviceUpstream,omitempty"`
	// CustomHTTPErrors is the ConfigMap's custom-http-errors: codes 400 to
	// 599, sorted, joined by ","; the locations take it, and nginx.conf
	// holds error_page for these codes (a change reloads).
	CustomHTTPErrors string `json:"customHTTPErrors,omitempty"`
	// Proxy holds the ConfigMap's proxy-request-buffering,
	// proxy-http-version, proxy-next-upstream(-tries), proxy-redirect-from
	// and -to, proxy-cookie-domain and -path: the defaults of the routes
	// whose Ingress does not set them (routes only, no reload); a value
	// equal to ingress-nginx's default is not kept.
	Proxy ProxySettings `json:"proxy,omitzero"`
	// LoadBalance is the ConfigMap's load-balance: the balancer of backends
	// whose Ingresses set no balancing annotation ("" is round_robin;
	// backends only, no reload).
	LoadBalance string `json:"loadBalance,omitempty"`
	// AllowSourceRange is the ConfigMap's whitelist-source-range: canonical
	// CIDRs joined by commas, the allow-list of routes whose Ingress sets
	// none (a route default, no reload).
	AllowSourceRange string `json:"allowSourceRange,omitempty"`
	// DenySourceRange is its denylist-source-range, the same way.
	DenySourceRange string `json:"denySourceRange,omitempty"`
	// LimitReqStatusCode and LimitConnStatusCode answer requests beyond
	// a rate or connection limit (0: 503; routes only, no reload).
	LimitReqStatusCode  int `json:"limitReqStatusCode,omitempty"`
	LimitConnStatusCode int `json:"limitConnStatusCode,omitempty"`
	// LimitRate and LimitRateAfter are limit-rate and limit-rate-after in
	// bytes (the keys are in kilobytes, as the annotations): the defaults
	// of the routes whose Ingress sets none (no reload).
	LimitRate      int64 `json:"limitRate,omitempty"`
	LimitRateAfter int64 `json:"limitRateAfter,omitempty"`
	// NoTLSRedirectLocations is no-tls-redirect-locations, canonical
	// (paths joined by commas): the locations whose path starts with one
	// are never redirected to HTTPS (route values, no reload).
	NoTLSRedirectLocations string `json:"noTLSRedirectLocations,omitempty"`
	// BlockUserAgents and BlockReferers are block-user-agents and
	// block-referers, canonical (see parseBlockList): every Server's Block.
	BlockUserAgents string `json:"blockUserAgents,omitempty"`
	BlockReferers   string `json:"blockReferers,omitempty"`
	// BlockCIDRs is block-cidrs: canonical CIDRs joined by commas.
	BlockCIDRs string `json:"blockCIDRs,omitempty"`
	// Auth holds the global-auth-* keys (route defaults, no reload).
	Auth GlobalAuth `json:"auth,omitzero"`
	// ProxySSLLocationOnly is proxy-ssl-location-only: a location takes
	// only its own Ingress's backend TLS, not its host's (routes only).
	ProxySSLLocationOnly bool `json:"proxySSLLocationOnly,omitempty"`
	// ModSecurity holds the ModSecurity keys (route defaults).
	ModSecurity GlobalModSecurity `json:"modSecurity,omitzero"`
	// Nginx holds the other keys that are nginx directives (global.go).
	Nginx NginxSettings `json:"nginx"`
	// OpenTelemetry holds the tracing keys (tracing.go; routes and the
	// syncer's exporter, no reload).
	OpenTelemetry OpenTelemetry `json:"openTelemetry,omitzero"`
}

// Size is a validated nginx size such as "1m", "512k" or "0".
type Size string

// Listener is a port nginx listens on for the listeners of a Gateway (the
// targetPort its Service gives a listener port), plain HTTP or with TLS.
type Listener struct {
	Port int  `json:"port"`
	TLS  bool `json:"tls,omitempty"`
	// H2C, on a port without TLS, serves HTTP/2 with prior knowledge
	// (h2c, what gRPC clients speak) instead of HTTP/1.1: nginx 1.22
	// serves one or the other on a plain port, not both.
	H2C bool `json:"h2c,omitempty"`
	// Gateway is the "namespace/name" of the Gateway, for Problems and
	// inspection: nginx.conf holds Port, TLS and H2C only
	// (SameListenPorts).
	Gateway string `json:"gateway"`
}

// SameListenPorts reports whether a and b make nginx listen alike: the
// same Ports with the same TLS and H2C, whatever their Gateways.
func SameListenPorts(a, b []Listener) bool {
	return slices.EqualFunc(a, b, func(x, y Listener) bool { return x.Port == y.Port && x.TLS == y.TLS && x.H2C == y.H2C })
}

// Server is one virtual host.
type Server struct {
	// Hostname is an exact DNS name, a wildcard "*.example.com" or "_" for
	// the default server. On nginx's own ports a wildcard matches exactly
	// one label (ingress-nginx's server_name); on a Gateway listener's port
	// (Port not 0) any number of labels, as Gateway API's hostnames, the
	// longest wildcard first.
	Hostname string `json:"hostname"`
	// Port is the nginx port of a Gateway listener (one of Listeners) the
	// Server is served on, 0 for nginx's own HTTP and HTTPS ports (the
	// Ingresses'). Servers of different ports never share a request:
	// ServerKey names a Server.
	Port int `json:"port,omitempty"`
	// TLS is true when an Ingress lists this host in spec.tls.
	TLS bool `json:"tls"`
	// SSLRedirect redirects plain HTTP to HTTPS (TLS hosts only).
	SSLRedirect bool `json:"sslRedirect"`
	// AppRoot redirects requests for "/" there (302), before any route.
	AppRoot string `json:"appRoot,omitempty"`
	// RedirectTo makes this a from-to-www-redirect server: every request
	// is redirected to the same URI on host RedirectTo; it has no
	// Locations.
	RedirectTo string `json:"redirectTo,omitempty"`
	// Locations, sorted: longer paths first, then by path, Exact before
	// Regex before Prefix for the same path, then the candidates of one
	// path in the order of CompareMatches.
	Locations []Location `json:"locations"`
	// RequestHeaders are set on every request to a backend and
	// ResponseHeaders on every response (the ConfigMap's proxy-set-headers
	// and add-headers), sorted by name.
	RequestHeaders  []Header `json:"requestHeaders,omitempty"`
	ResponseHeaders []Header `json:"responseHeaders,omitempty"`
	// Block is the ConfigMap's block-user-agents and block-referers (the
	// same for every Server); nil when none.
	Block *BlockRules `json:"block,omitempty"`
	// ClientAuth is the host's client certificate verification (auth-tls-*);
	// nil when none.
	ClientAuth *ClientAuth `json:"clientAuth,omitempty"`
	// Listeners are the hostnames of the Gateway listeners of Port when it
	// has several ("_" for one without a hostname), sorted; nil otherwise.
	// A request is served by the most specific listener its host matches
	// (an exact name, then the longest wildcard, then "_"): only a Server
	// of that listener serves it (listener isolation), and over TLS a
	// request whose SNI name selects another listener is misdirected (421).
	Listeners []string `json:"listeners,omitempty"`
}

// Location is one path of a server.
type Location struct {
	Path     string   `json:"path"`
	PathType PathType `json:"pathType"`
	// Backend is the Name of the Backend; "" answers 404.
	Backend string `json:"backend"`
	// Ingress is the "namespace/name" of the Ingress that defined this path;
	// "" for the generated catch-all. Of another kind's object (an
	// HTTPRoute) when Kind says so.
	Ingress string `json:"ingress,omitempty"`
	// Kind is the kind of the object Ingress names when it is not an
	// Ingress ("HTTPRoute"); "" for an Ingress.
	Kind string `json:"kind,omitempty"`
	// Settings from annotations, validated.
	Settings LocationSettings `json:"settings"`
	// Canary is the alternative backend a canary Ingress adds to this
	// path; nil when none.
	Canary *Canary `json:"canary,omitempty"`
	// Match holds the conditions besides the path a request must meet to
	// take this Location; nil for none (see Match).
	Match *Match `json:"match,omitempty"`
	// Filters are what a Gateway API rule does besides routing; nil for
	// none (see Filters).
	Filters *Filters `json:"filters,omitempty"`
	// Backends, when set, share the Location's requests at random by
	// weight (Gateway API backendRefs); Backend is then "".
	Backends []WeightedBackend `json:"backends,omitempty"`
	// Timeouts are a Gateway API rule's timeouts; nil for none.
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	// Mirrors get a copy of the Location's requests (see Mirror), in the
	// order given; nil for none.
	Mirrors []Mirror `json:"mirrors,omitempty"`
}

// WeightedBackend is one backend of a Location's Backends: Weight (at
// least 1) of every total of the weights of requests go to Backend, the
// Name of a Backend, at random; "" answers them 500 (a reference that
// cannot be served).
type WeightedBackend struct {
	Backend string `json:"backend"`
	Weight  int    `json:"weight"`
	// RequestHeaders change the requests sent to this backend only (a
	// Gateway API backendRef's RequestHeaderModifier), after the
	// Location's Filters; nil for none.
	RequestHeaders *HeaderFilter `json:"requestHeaders,omitempty"`
}

// Canary is the alternative backend of a Location, from the canary
// Ingress (nginx.ingress.kubernetes.io/canary: "true") of the same host
// and path. The router chooses per request, in this order: the header
// (HeaderValue exactly, else HeaderPattern, else "always" and "never"),
// then the cookie ("always", "never"), then Weight out of WeightTotal.
type Canary struct {
	// Backend is the Name of the canary's Backend.
	Backend string `json:"backend"`
	// Ingress is the "namespace/name" of the canary Ingress.
	Ingress string `json:"ingress"`
	// Weight of WeightTotal requests go to Backend at random:
	// 0 <= Weight <= WeightTotal, WeightTotal >= 100.
	Weight      int `json:"weight,omitempty"`
	WeightTotal int `json:"weightTotal"`
	// Header is a request header name (letters, digits, '-', '_').
	Header string `json:"header,omitempty"`
	// HeaderValue is matched exactly; HeaderPattern (when HeaderValue is
	// empty) is a regular expression, case-sensitive and unanchored.
	HeaderValue   string `json:"headerValue,omitempty"`
	HeaderPattern string `json:"headerPattern,omitempty"`
	// Cookie is a cookie name (token characters).
	Cookie string `json:"cookie,omitempty"`
}

// LocationSettings are the per-location settings parsed from
// nginx.ingress.kubernetes.io/* annotations. Zero values mean "use Global".
type LocationSettings struct {
	ProxyConnectTimeout int      `json:"proxyConnectTimeout,omitempty"`
	ProxyReadTimeout    int      `json:"proxyReadTimeout,omitempty"`
	ProxySendTimeout    int      `json:"proxySendTimeout,omitempty"`
	ProxyBodySize       Size     `json:"proxyBodySize,omitempty"`
	BackendProtocol     string   `json:"backendProtocol,omitempty"` // HTTP (default), HTTPS, GRPC, GRPCS, AUTO_HTTP
	RewriteTarget       string   `json:"rewriteTarget,omitempty"`
	AllowSourceRange    []string `json:"allowSourceRange,omitempty"` // validated CIDRs
	// DenySourceRange are validated CIDRs whose clients get 403, before
	// AllowSourceRange is consulted. SourceRangeInvalid: an allow- or
	// deny-list annotation cannot be applied, the route answers 503.
	DenySourceRange    []string `json:"denySourceRange,omitempty"`
	SourceRangeInvalid bool     `json:"sourceRangeInvalid,omitempty"`
	// SSLRedirect overrides Global.SSLRedirect when non-nil.
	SSLRedirect *bool `json:"sslRedirect,omitempty"`
	// PreserveTrailingSlash keeps a trailing slash in HTTPS redirects;
	// UsePortInRedirects puts the HTTPS port in them.
	PreserveTrailingSlash bool `json:"preserveTrailingSlash,omitempty"`
	UsePortInRedirects    bool `json:"usePortInRedirects,omitempty"`
	// XForwardedPrefix is sent as X-Forwarded-Prefix when the path is
	// rewritten.
	XForwardedPrefix string `json:"xForwardedPrefix,omitempty"`
	// Redirect answers with a redirect instead of proxying.
	Redirect *Redirect `json:"redirect,omitempty"`
	// CORS adds the CORS headers and answers preflight requests.
	CORS *CORS `json:"cors,omitempty"`
	// UpstreamVhost is the Host header sent to the backend; "" sends the
	// request's. ConnectionHeader is the Connection header sent ("close" or
	// "keep-alive"); "" sends nginx.conf's.
	UpstreamVhost    string `json:"upstreamVhost,omitempty"`
	ConnectionHeader string `json:"connectionHeader,omitempty"`
	// ResponseHeaders are custom-headers: set on every response, after
	// (and over) the Server's ResponseHeaders, sorted by name.
	ResponseHeaders []Header `json:"responseHeaders,omitempty"`
	// Proxy holds the proxy behaviour annotations; nil when none is set.
	Proxy *ProxySettings `json:"proxy,omitempty"`
	// Errors holds the error pages; nil when none.
	Errors *CustomErrors `json:"errors,omitempty"`
	// RateLimit holds the rate and connection limits; nil when none.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// BasicAuth protects the location with HTTP basic or digest auth; nil
	// when off.
	BasicAuth *BasicAuth `json:"basicAuth,omitempty"`
	// ExternalAuth protects the location with an auth request (auth-url,
	// global-auth-url); nil when off.
	ExternalAuth *ExternalAuth `json:"externalAuth,omitempty"`
	// ProxySSL is the backend TLS profile of the location; nil when none.
	ProxySSL *ProxySSL `json:"proxySSL,omitempty"`
	// ClientAuthUnavailable: the Ingress's auth-tls annotations cannot be
	// applied, the route answers 503 (see Server.ClientAuth).
	ClientAuthUnavailable bool `json:"clientAuthUnavailable,omitempty"`
	// ModSecurity is the location's web application firewall; nil when
	// off.
	ModSecurity *ModSecurity `json:"modSecurity,omitempty"`
	// Tracing is the location's OpenTelemetry tracing; nil when off.
	Tracing *Tracing `json:"tracing,omitempty"`
	// CustomHeadersUnavailable: the ConfigMap of the Ingress's
	// custom-headers is missing or in another namespace, the route answers
	// 503, as ingress-nginx's.
	CustomHeadersUnavailable bool `json:"customHeadersUnavailable,omitempty"`
}

// BasicAuth is the HTTP auth of a location (auth-type basic or digest):
// the realm and the users with their password hashes (validated by
// ParseHtpasswd or ParseHtdigest), sorted by name. Unavailable makes the
// location answer 503: its auth annotations could not be applied (fail
// closed).
type BasicAuth struct {
	Realm       string     `json:"realm"`
	Users       []AuthUser `json:"users,omitempty"`
	Unavailable bool       `json:"unavailable,omitempty"`
	// SatisfyAny is satisfy=any: a client the location's allow-list
	// admits needs no credentials.
	SatisfyAny bool `json:"satisfyAny,omitempty"`
	// Digest is auth-type digest: each user's Hash is the hex MD5 of
	// "user:realm:password" (htdigest's HA1) and the credentials come as
	// an RFC 2617 Digest Authorization header.
	Digest bool `json:"digest,omitempty"`
}

// AuthUser is one user of a BasicAuth and its password hash.
type AuthUser struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// Backend is a Service port and its ready endpoints. Everything in a Backend
// can change without a reload: it is sent to the Lua balancer.
type Backend struct {
	// Name is "<namespace>-<service>-<port>", where port is the Service port
	// name or number as the Ingress referenced it.
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	Port      string `json:"port"`
	// Endpoints, sorted by Address then Port. Only ready endpoints.
	Endpoints []Endpoint `json:"endpoints"`
	// LoadBalance is "round_robin" (default) or "ewma".
	LoadBalance string `json:"loadBalance"`
	// UpstreamHashBy is a validated nginx variable expression such as
	// "$request_uri" or "${cookie_id}-x"; when set the balancer uses
	// consistent hashing.
	UpstreamHashBy string `json:"upstreamHashBy,omitempty"`
	// UpstreamHashBySubsetSize, when not 0, hashes onto groups of that
	// many endpoints (upstream-hash-by-subset) and picks one of the group
	// at random.
	UpstreamHashBySubsetSize int `json:"upstreamHashBySubsetSize,omitempty"`
	// Affinity configures cookie sticky sessions; nil when off.
	Affinity *Affinity `json:"affinity,omitempty"`
	// Checksum is BackendChecksum of this Backend (everything above), set
	// by Build, so that unchanged backends are found without comparing
	// endpoints and are not resent.
	Checksum string `json:"checksum,omitempty"`
}

// Endpoint is one ready address of a Backend.
type Endpoint struct {
	Address string `json:"address"`
	Port    int32  `json:"port"`
}

// Affinity is cookie-based session affinity (see annotations_affinity.go).
// The cookie's value is "<key>|<backend key>"; the key is random (Mode
// balanced) or names the endpoint (persistent).
type Affinity struct {
	CookieName string `json:"cookieName"`
	// Mode is AffinityBalanced or AffinityPersistent.
	Mode string `json:"mode"`
	// CookiePath is the cookie's Path: session-cookie-path, else the path
	// of the Ingress's location(s) to the backend.
	CookiePath   string `json:"cookiePath,omitempty"`
	CookieDomain string `json:"cookieDomain,omitempty"`
	// CookieMaxAge and CookieExpires are seconds; 0 leaves the attribute
	// out.
	CookieMaxAge  int `json:"cookieMaxAge,omitempty"`
	CookieExpires int `json:"cookieExpires,omitempty"`
	// CookieSecure sends Secure on plain HTTP too (it is always sent on
	// HTTPS).
	CookieSecure bool `json:"cookieSecure,omitempty"`
	// CookieSameSite is "", "None", "Lax" or "Strict";
	// ConditionalSameSiteNone leaves SameSite=None out for browsers that
	// reject it.
	CookieSameSite          string `json:"cookieSameSite,omitempty"`
	ConditionalSameSiteNone bool   `json:"conditionalSameSiteNone,omitempty"`
	// ChangeOnFailure moves the client and its cookie to another endpoint
	// when its endpoint fails; otherwise retries stay on it.
	ChangeOnFailure bool `json:"changeOnFailure,omitempty"`
}

// Certificate is a TLS certificate and key, and the hosts it serves.
// Certificates are sent to Lua and never written into nginx.conf.
type Certificate struct {
	// Name is "<namespace>/<secret>".
	Name string `json:"name"`
	// Hosts served by this certificate, sorted: SNI names on nginx's own
	// HTTPS port, ServerKeys ("<port>:<name>") on a Gateway HTTPS
	// listener's port.
	Hosts []string `json:"hosts"`
	// PEM-encoded chain and key.
	Cert []byte `json:"cert"`
	Key  []byte `json:"key"`
	// Checksum of Cert and Key, so that unchanged certificates are not resent.
	Checksum string `json:"checksum"`
}

// Problem says why an object, or part of it, was left out of the
// Configuration.
type Problem struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
}

// L4Protocol is the protocol of an L4Service.
type L4Protocol string

// L4Service is one entry of a TCP or UDP services ConfigMap: connections
// (or datagrams) to Port go to the ready endpoints of a Service port.
type L4Service struct {
	Protocol L4Protocol `json:"protocol"`
	// Port is the external port nginx listens on, 1 to 65535.
	Port int `json:"port"`
	// Namespace, Service and ServicePort name the backend as the
	// ConfigMap value does (ServicePort: a number or a port name).
	Namespace   string `json:"namespace"`
	Service     string `json:"service"`
	ServicePort string `json:"servicePort"`
	// DecodeProxy (the value's first PROXY, TCP only) makes the listener
	// expect a PROXY protocol header; EncodeProxy (the second) sends one
	// to the backend.
	DecodeProxy bool `json:"decodeProxy,omitempty"`
	EncodeProxy bool `json:"encodeProxy,omitempty"`
	// Endpoints are the ready endpoints of the Service port, sorted; empty
	// when it has none (the listener stays and closes connections).
	Endpoints []Endpoint `json:"endpoints"`
}

// PassthroughHost is a host of an Ingress with ssl-passthrough: TLS
// connections whose SNI name is Hostname go to Endpoints, the ready
// endpoints of the backend of the host's "/" path, without termination.
type PassthroughHost struct {
	Hostname string `json:"hostname"`
	// Ingress is "namespace/name" of the Ingress whose "/" path it is.
	Ingress string `json:"ingress"`
	// Backend is the Name of that path's Backend, for inspection.
	Backend   string     `json:"backend"`
	Endpoints []Endpoint `json:"endpoints"`
}

// The protocols of the TCP and UDP services ConfigMaps, and of Streams.
const (
	L4TCP L4Protocol = "TCP"
	L4UDP L4Protocol = "UDP"
	// L4TLS is TLS passthrough: a TCP listener that reads the SNI name of
	// each connection (Streams only) and forwards it unterminated.
	L4TLS L4Protocol = "TLS"
)

// Stream is a route of a Gateway's TCP, UDP or TLS listener: connections
// to Port (the nginx port of the listener) go to Backends by weight. On
// a TLS port, those whose SNI name Hostname matches (exact, or
// "*.example.com": any name of one or more labels more, the longest
// first; "" any name) do; on a TCP or UDP port there is one Stream, the
// oldest route's.
type Stream struct {
	Protocol L4Protocol `json:"protocol"`
	Port     int        `json:"port"`
	Hostname string     `json:"hostname,omitempty"`
	// Gateway is "namespace/name" of the listener's Gateway and Route
	// "Kind namespace/name" of the route, for Problems and inspection.
	Gateway  string          `json:"gateway"`
	Route    string          `json:"route"`
	Backends []StreamBackend `json:"backends"`
}

// StreamBackend is one backendRef of a Stream: Weight of every total of
// the weights of connections go to its Endpoints (the ready endpoints of
// the Service port), at random; a backend without endpoints (not found,
// not permitted, none ready) closes its share.
type StreamBackend struct {
	Namespace string     `json:"namespace"`
	Service   string     `json:"service"`
	Port      int32      `json:"port"`
	Weight    int        `json:"weight"`
	Endpoints []Endpoint `json:"endpoints"`
}

// CompareStreams orders Streams by Protocol, Port and Hostname.
func CompareStreams(a, b *Stream) int {
	if c := strings.Compare(string(a.Protocol), string(b.Protocol)); c != 0 {
		return c
	}
	if a.Port != b.Port {
		return a.Port - b.Port
	}
	return strings.Compare(a.Hostname, b.Hostname)
}
