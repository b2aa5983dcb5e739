package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
)

// Host is one entry of router.lua's route table: the routes of one
// config.Server. It is the wire format of POST /configuration/routes.
type Host struct {
	// Name is the Server's config.ServerKey: its Hostname (exact,
	// "*.example.com" or "_") on nginx's own ports, "<port>:<Hostname>"
	// on a Gateway listener's port (router.lua looks it up in the table
	// of the request's port).
	Name   string  `json:"name"`
	Routes []Route `json:"routes,omitempty"`
	// Unavailable makes the host answer 503: its routes were refused.
	Unavailable bool `json:"unavailable,omitempty"`
	// AppRoot redirects requests for "/" there with a 302.
	AppRoot string `json:"appRoot,omitempty"`
	// RedirectTo redirects every request to the same URI on that host
	// (from-to-www-redirect); such a host has no routes.
	RedirectTo string `json:"redirectTo,omitempty"`
	// RequestHeaders are set on every request to a backend and
	// ResponseHeaders on every response (proxy-set-headers, add-headers).
	RequestHeaders  map[string]string `json:"requestHeaders,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	// TLS is set for a host with a TLS section: its HTTPS answers carry
	// Strict-Transport-Security (when the ConfigMap's hsts is on).
	TLS bool `json:"tls,omitempty"`
	// Block holds block-user-agents and block-referers (403).
	Block *config.BlockRules `json:"block,omitempty"`
	// ClientAuth is the host's client certificate verification
	// (lua/clientauth.lua).
	ClientAuth *config.ClientAuth `json:"clientAuth,omitempty"`
	// Listeners are the hostnames of the Gateway listeners of the host's
	// port when it has several (config.Server.Listeners): router.lua
	// isolates them and answers 421 to misdirected requests.
	Listeners []string `json:"listeners,omitempty"`
	// Digest is a hash of everything above, kept by the Lua side and
	// returned by GET, so that a whole-state push sends again only the
	// hosts that differ from what nginx holds (see delta.against).
	Digest string `json:"digest,omitempty"`
}

// Route is one Location of a Server, with its settings resolved against
// the Server (the redirect) and converted to what Lua applies. Zero values
// mean "as nginx.conf says" (timeouts, protocol) or "off".
type Route struct {
	Path string `json:"path"`
	// Type is "exact", "prefix" or "regex".
	Type    string `json:"type"`
	Backend string `json:"backend,omitempty"`
	Ingress string `json:"ingress,omitempty"`
	// Kind is the kind of the object Ingress names when not an Ingress
	// (config.Location.Kind): for inspection only.
	Kind string `json:"kind,omitempty"`
	// Redirect sends plain HTTP requests to HTTPS with a 308.
	Redirect bool `json:"redirect,omitempty"`
	// Protocol is "http" (when empty), "https", "grpc", "grpcs" or
	// "auto_http" (the request's scheme).
	Protocol       string `json:"protocol,omitempty"`
	ConnectTimeout int    `json:"connectTimeout,omitempty"`
	SendTimeout    int    `json:"sendTimeout,omitempty"`
	ReadTimeout    int    `json:"readTimeout,omitempty"`
	// BodySize is the request body limit in bytes (0: none); nil takes
	// the global proxy-body-size.
	BodySize *int64   `json:"bodySize,omitempty"`
	Rewrite  string   `json:"rewrite,omitempty"`
	Allow    []string `json:"allow,omitempty"`
	// Deny are CIDRs whose clients get 403 (before Allow);
	// SourceRangeInvalid answers 503: the lists could not be applied.
	Deny               []string `json:"deny,omitempty"`
	SourceRangeInvalid bool     `json:"sourceRangeInvalid,omitempty"`
	// PreserveTrailingSlash and UsePortInRedirects shape the HTTPS
	// redirect's Location.
	PreserveTrailingSlash bool `json:"preserveTrailingSlash,omitempty"`
	UsePortInRedirects    bool `json:"usePortInRedirects,omitempty"`
	// ForwardedPrefix is sent as X-Forwarded-Prefix with a rewrite.
	ForwardedPrefix string `json:"forwardedPrefix,omitempty"`
	// RedirectURL answers every request with RedirectCode and this URL.
	RedirectURL  string `json:"redirectURL,omitempty"`
	RedirectCode int    `json:"redirectCode,omitempty"`
	CORS         *CORS  `json:"cors,omitempty"`
	// Canary is the alternative backend chosen per request (lua/canary.lua).
	Canary *config.Canary `json:"canary,omitempty"`
	// UpstreamVhost and Connection are the Host and Connection headers
	// sent to the backend; ResponseHeaders (custom-headers) are set on the
	// route's responses, over the host's.
	UpstreamVhost   string            `json:"upstreamVhost,omitempty"`
	Connection      string            `json:"connection,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	// Proxy holds the proxy behaviour settings (lua/proxy.lua).
	Proxy *config.ProxySettings `json:"proxy,omitempty"`
	// Errors are the route's error pages (lua/proxy.lua).
	Errors *config.CustomErrors `json:"errors,omitempty"`
	// Auth is the route's basic auth (lua/auth.lua).
	Auth *config.BasicAuth `json:"auth,omitempty"`
	// Limit holds the rate and connection limits (lua/limit.lua).
	Limit *config.RateLimit `json:"limit,omitempty"`
	// ExtAuth is the route's external auth (lua/extauth.lua).
	ExtAuth *config.ExternalAuth `json:"extAuth,omitempty"`
	// UpstreamTLS is the backend TLS profile and proxy-ssl-name (the
	// profile's fixed locations, see proxyssl.go); unavailable answers 503.
	UpstreamTLS *config.ProxySSL `json:"upstreamTLS,omitempty"`
	// ClientAuthUnavailable answers 503: the Ingress's auth-tls
	// annotations cannot be applied.
	ClientAuthUnavailable bool `json:"clientAuthUnavailable,omitempty"`
	// ModSecurity is the route's ModSecurity profile (lua/modsecurity.lua).
	ModSecurity *modSecRoute `json:"modsecurity,omitempty"`
	// CustomHeadersUnavailable answers 503: the Ingress's custom-headers
	// ConfigMap is missing or in another namespace.
	CustomHeadersUnavailable bool `json:"customHeadersUnavailable,omitempty"`
	// Match holds the conditions besides the path (lua/routes.lua's
	// compile_match): the routes of one path and type are candidates in
	// the order given.
	Match *config.Match `json:"match,omitempty"`
	// RequestHeaderFilter and ResponseHeaderFilter change the headers of
	// the request to the backend and of the response (lua/filters.lua,
	// lua/headers.lua); RouteRedirect answers with a redirect built from
	// the request; RewritePath changes the path sent to the backend. A
	// Gateway API URLRewrite's hostname is UpstreamVhost.
	RequestHeaderFilter  *HeaderFilter         `json:"requestHeaderFilter,omitempty"`
	ResponseHeaderFilter *HeaderFilter         `json:"responseHeaderFilter,omitempty"`
	RouteRedirect        *config.RouteRedirect `json:"routeRedirect,omitempty"`
	RewritePath          *config.PathModifier  `json:"rewritePath,omitempty"`
	// Backends share the route's requests at random by weight (Backend is
	// then ""); a backend "" answers its share 500.
	Backends []WeightedBackend `json:"backends,omitempty"`
	// RouteTimeouts are a Gateway API rule's timeouts: the shorter is the
	// connect, send and read timeout of the route's requests to backends.
	RouteTimeouts *config.Timeouts `json:"routeTimeouts,omitempty"`
	// RouteCORS is a Gateway API CORS filter (lua/cors.lua's
	// compile_route).
	RouteCORS *config.RouteCORS `json:"routeCORS,omitempty"`
	// Mirrors get a copy of the route's requests in the background
	// (lua/mirror.lua).
	Mirrors []config.Mirror `json:"mirrors,omitempty"`
	// Tracing is the route's OpenTelemetry tracing (lua/tracing.lua).
	Tracing *config.Tracing `json:"tracing,omitempty"`
}

// WeightedBackend is the wire form of a config.WeightedBackend: its
// request header filter as a HeaderFilter.
type WeightedBackend struct {
	Backend             string        `json:"backend"`
	Weight              int           `json:"weight"`
	RequestHeaderFilter *HeaderFilter `json:"requestHeaderFilter,omitempty"`
}

// weightedOf converts a Location's Backends; nil for none.
func weightedOf(bs []config.WeightedBackend) []WeightedBackend {
	if len(bs) == 0 {
		return nil
	}
	out := make([]WeightedBackend, len(bs))
	for i, b := range bs {
		out[i] = WeightedBackend{Backend: b.Backend, Weight: b.Weight, RequestHeaderFilter: headerFilterOf(b.RequestHeaders)}
	}
	return out
}

// HeaderFilter is the wire form of a config.HeaderFilter: the header
// lists as objects, as the other header lists.
type HeaderFilter struct {
	Set    map[string]string `json:"set,omitempty"`
	Add    map[string]string `json:"add,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// CORS is a route's CORS policy. OriginRegex matches the allowed Origin
// values (case-insensitive, whole value); empty allows any origin and
// answers "*".
type CORS struct {
	OriginRegex string `json:"originRegex,omitempty"`
	Methods     string `json:"methods"`
	Headers     string `json:"headers"`
	Expose      string `json:"expose,omitempty"`
	Credentials bool   `json:"credentials,omitempty"`
	MaxAge      int    `json:"maxAge"`
}

// HostOf converts a Server of a Configuration built by model.Build. Every
// value was validated there; HostOf only changes its form.
func HostOf(s *config.Server) Host {
	h := Host{Name: s.Key(), Routes: make([]Route, len(s.Locations)), AppRoot: s.AppRoot, RedirectTo: s.RedirectTo, TLS: s.TLS}
	for i := range s.Locations {
		h.Routes[i] = routeOf(s, &s.Locations[i])
	}
	h.RequestHeaders, h.ResponseHeaders = headerMap(s.RequestHeaders), headerMap(s.ResponseHeaders)
	h.Block = s.Block
	h.ClientAuth = s.ClientAuth
	h.Listeners = s.Listeners
	return h
}

func routeOf(s *config.Server, l *config.Location) Route {
	st := &l.Settings
	r := Route{
		Path:                  l.Path,
		Type:                  strings.ToLower(string(l.PathType)),
		Backend:               l.Backend,
		Ingress:               l.Ingress,
		Kind:                  l.Kind,
		Redirect:              s.RedirectsToHTTPS(l),
		Protocol:              strings.ToLower(st.BackendProtocol),
		ConnectTimeout:        st.ProxyConnectTimeout,
		SendTimeout:           st.ProxySendTimeout,
		ReadTimeout:           st.ProxyReadTimeout,
		Rewrite:               st.RewriteTarget,
		Allow:                 st.AllowSourceRange,
		ForwardedPrefix:       st.XForwardedPrefix,
		PreserveTrailingSlash: st.PreserveTrailingSlash,
		UsePortInRedirects:    st.UsePortInRedirects,
		CORS:                  corsOf(st.CORS),
		Canary:                l.Canary,
		Proxy:                 st.Proxy,
		Errors:                st.Errors,
		Auth:                  st.BasicAuth,
		Limit:                 st.RateLimit,
		UpstreamTLS:           st.ProxySSL,
		ModSecurity:           modSecRouteOf(st.ModSecurity),
		Match:                 l.Match,
		Backends:              weightedOf(l.Backends),
		RouteTimeouts:         l.Timeouts,
		Mirrors:               l.Mirrors,
	}
	r.Deny, r.SourceRangeInvalid = st.DenySourceRange, st.SourceRangeInvalid
	r.ExtAuth = st.ExternalAuth
	r.ClientAuthUnavailable, r.CustomHeadersUnavailable = st.ClientAuthUnavailable, st.CustomHeadersUnavailable
	r.Tracing = st.Tracing
	if st.Redirect != nil {
		r.RedirectURL, r.RedirectCode = st.Redirect.URL, st.Redirect.Code
	}
	r.UpstreamVhost, r.Connection, r.ResponseHeaders = st.UpstreamVhost, st.ConnectionHeader, headerMap(st.ResponseHeaders)
	if r.Protocol == "http" {
		r.Protocol = ""
	}
	if f := l.Filters; f != nil {
		r.RequestHeaderFilter, r.ResponseHeaderFilter = headerFilterOf(f.RequestHeaders), headerFilterOf(f.ResponseHeaders)
		r.RouteRedirect, r.RewritePath, r.RouteCORS = f.Redirect, f.RewritePath, f.CORS
		if f.RewriteHost != "" {
			r.UpstreamVhost = f.RewriteHost
		}
	}
	if st.ProxyBodySize != "" {
		if n, ok := st.ProxyBodySize.Bytes(); ok {
			r.BodySize = &n
		}
	}
	return r
}

// corsOf converts a CORS policy: the origins become one regex, each quoted
// but for a leading "*." that stands for one label, as ingress-nginx reads
// them.
func corsOf(c *config.CORS) *CORS {
	if c == nil {
		return nil
	}
	out := &CORS{Methods: c.Methods, Headers: c.Headers, Expose: c.Expose, Credentials: c.Credentials, MaxAge: c.MaxAge}
	if c.Origins == nil {
		return out
	}
	alts := make([]string, len(c.Origins))
	for i, o := range c.Origins {
		alts[i] = strings.Replace(regexp.QuoteMeta(o), `\*`, `[A-Za-z0-9\-]+`, 1)
	}
	out.OriginRegex = "^(?:" + strings.Join(alts, "|") + ")$"
	return out
}

// hostsOf converts Servers, with their digests.
func hostsOf(servers []config.Server) []Host {
	out := make([]Host, len(servers))
	for i := range servers {
		out[i] = HostOf(&servers[i])
		out[i].Digest = hostDigest(&out[i])
	}
	return out
}

// hostDigest is the Digest of h: the first 16 bytes of the SHA-256 of its
// wire form without a digest, "" when it cannot be encoded (the host is
// then always sent again).
func hostDigest(h *Host) string {
	c := *h
	c.Digest = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// headerMap is the wire form of a header list: an object, nil when empty.
func headerMap(hs []config.Header) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// headerFilterOf converts a header filter; nil for none.
func headerFilterOf(f *config.HeaderFilter) *HeaderFilter {
	if f == nil {
		return nil
	}
	return &HeaderFilter{Set: headerMap(f.Set), Add: headerMap(f.Add), Remove: f.Remove}
}

// modSecRoute is a route's ModSecurity on the wire: the profile's name
// (modsecurity.go), the variable whose value is the transaction id
// (without its '$'), and unavailable (answer 503).
type modSecRoute struct {
	Profile     string `json:"profile,omitempty"`
	TxID        string `json:"txid,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
}

// modSecRouteOf converts m; a value Validate refuses is unavailable (Lua
// reads nothing else of an unavailable route).
func modSecRouteOf(m *config.ModSecurity) *modSecRoute {
	if m == nil {
		return nil
	}
	return &modSecRoute{Profile: m.Profile(), TxID: strings.TrimPrefix(m.TransactionID, "$"),
		Unavailable: m.Unavailable || m.Validate() != nil}
}
