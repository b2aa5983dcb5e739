package config

// Filters are what a Gateway API rule does to the requests and responses
// of its Locations besides routing them (HTTPRoute filters), validated.
type Filters struct {
	// RequestHeaders change the request sent to the backend and
	// ResponseHeaders the response sent to the client.
	RequestHeaders  *HeaderFilter `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderFilter `json:"responseHeaders,omitempty"`
	// Redirect answers every request with a redirect instead of proxying.
	Redirect *RouteRedirect `json:"redirect,omitempty"`
	// RewriteHost is the Host header sent to the backend; "" keeps the
	// request's. RewritePath changes the path sent to the backend.
	RewriteHost string        `json:"rewriteHost,omitempty"`
	RewritePath *PathModifier `json:"rewritePath,omitempty"`
	// CORS answers preflight requests and adds the CORS headers to the
	// responses of allowed origins.
	CORS *RouteCORS `json:"cors,omitempty"`
}

// RouteCORS is a Gateway API CORS filter, validated. AllowOrigins are
// "*" (any origin) or "scheme://host[:port]" whose host may start with
// "*" (any number of labels); AllowMethods, AllowHeaders and
// ExposeHeaders are tokens or "*", in the order given; MaxAge is seconds
// (0: no Access-Control-Max-Age).
type RouteCORS struct {
	AllowOrigins     []string `json:"allowOrigins,omitempty"`
	AllowMethods     []string `json:"allowMethods,omitempty"`
	AllowHeaders     []string `json:"allowHeaders,omitempty"`
	ExposeHeaders    []string `json:"exposeHeaders,omitempty"`
	AllowCredentials bool     `json:"allowCredentials,omitempty"`
	MaxAge           int      `json:"maxAge,omitempty"`
}

// HeaderFilter sets headers (replacing every value of the name), adds
// them (after the values the name has) and removes them, in that order.
// Names are RFC 7230 tokens, unique ignoring case within each list; Set
// and Add sorted by Name, Remove sorted.
type HeaderFilter struct {
	Set    []Header `json:"set,omitempty"`
	Add    []Header `json:"add,omitempty"`
	Remove []string `json:"remove,omitempty"`
}

// The types of a PathModifier.
const (
	// PathModifierFull replaces the whole path.
	PathModifierFull = "full"
	// PathModifierPrefix replaces the part of the path the Location's
	// Prefix path matched (whole path elements), keeping the rest.
	PathModifierPrefix = "prefix"
)

// PathModifier replaces a request's path: Type PathModifierFull or
// PathModifierPrefix (on Prefix Locations only), Value an absolute path.
type PathModifier struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// RouteRedirect is a redirect built from the request: Scheme ("http",
// "https"; "" keeps the request's), Hostname ("" keeps the request's host
// without its port), Port (0: none; pkg/gateway gives the listener's port
// to a redirect with neither a scheme nor a port; a port is left out of
// the Location when it is the well-known one of the redirect's scheme),
// Path (nil keeps the request's path), Code (301, 302, 303, 307 or 308).
// The query string is kept.
type RouteRedirect struct {
	Scheme   string        `json:"scheme,omitempty"`
	Hostname string        `json:"hostname,omitempty"`
	Port     int           `json:"port,omitempty"`
	Path     *PathModifier `json:"path,omitempty"`
	Code     int           `json:"code"`
}

// MaxTimeoutMillis is the longest timeout of a Timeouts: a day, the
// longest the data plane sets (a Gateway API zero duration, which asks for
// no timeout, is this).
const MaxTimeoutMillis = 86400 * 1000

// Timeouts are a Gateway API rule's timeouts, in milliseconds (1 to
// MaxTimeoutMillis; 0: not set): Request bounds the whole request,
// BackendRequest each request to a backend. The data plane applies the
// shorter as the connect, send and read timeouts of each request to the
// backend (nginx has no deadline for a whole request).
type Timeouts struct {
	RequestMillis        int `json:"requestMillis,omitempty"`
	BackendRequestMillis int `json:"backendRequestMillis,omitempty"`
}
