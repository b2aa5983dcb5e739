package config

// NginxSettings are the keys of the controller ConfigMap that are nginx
// directives of nginx.conf (a change of any of them is a reload), parsed
// and validated: lists are held in a canonical form that the renderer
// checks and writes again. DefaultGlobal sets ingress-nginx v1.15's
// defaults. The zero value stands for those defaults too (pkg/nginx renders
// it so), for Globals written by hand.
type NginxSettings struct {
	UseGzip       bool `json:"useGzip,omitempty"`
	GzipLevel     int  `json:"gzipLevel"`
	GzipMinLength int  `json:"gzipMinLength"`
	// GzipTypes: lower-case MIME types separated by one space, or "*".
	GzipTypes string `json:"gzipTypes"`
	// GzipDisable: "msie6" or a regular expression on User-Agent (see
	// parseGzipDisable) whose requests get no gzip.
	GzipDisable string `json:"gzipDisable,omitempty"`

	// SSLProtocols: TLSv1 to TLSv1.3, ascending, separated by one space.
	SSLProtocols string `json:"sslProtocols"`
	// SSLCiphers: an OpenSSL cipher list, elements separated by ':'.
	SSLCiphers          string `json:"sslCiphers"`
	SSLSessionCache     bool   `json:"sslSessionCache"`
	SSLSessionCacheSize Size   `json:"sslSessionCacheSize"`
	SSLSessionTimeout   int    `json:"sslSessionTimeout"` // seconds
	SSLSessionTickets   bool   `json:"sslSessionTickets,omitempty"`

	KeepAlive                 int `json:"keepAlive"` // seconds, 0 = no keep-alive
	KeepAliveRequests         int `json:"keepAliveRequests"`
	UpstreamKeepaliveTimeout  int `json:"upstreamKeepaliveTimeout"` // seconds
	UpstreamKeepaliveRequests int `json:"upstreamKeepaliveRequests"`

	ClientHeaderTimeout    int  `json:"clientHeaderTimeout"` // seconds
	ClientBodyTimeout      int  `json:"clientBodyTimeout"`   // seconds
	ClientHeaderBufferSize Size `json:"clientHeaderBufferSize"`
	// LargeClientHeaderBuffers and LargeClientHeaderBufferSize are the
	// two halves of large-client-header-buffers ("4 8k").
	LargeClientHeaderBuffers    int  `json:"largeClientHeaderBuffers"`
	LargeClientHeaderBufferSize Size `json:"largeClientHeaderBufferSize"`

	ProxyBuffering  bool `json:"proxyBuffering,omitempty"`
	ProxyBufferSize Size `json:"proxyBufferSize"`
	// ProxyBuffersNumber buffers of ProxyBufferSize (proxy-buffers-number,
	// default 4); ProxyBusyBuffersSize, ClientBodyBufferSize: "" is nginx's
	// default. ProxyNextUpstreamTimeout in seconds, 0 none;
	// GRPCBufferSizeKB 0 is nginx's default.
	ProxyBuffersNumber       int  `json:"proxyBuffersNumber"`
	ProxyBusyBuffersSize     Size `json:"proxyBusyBuffersSize,omitempty"`
	ClientBodyBufferSize     Size `json:"clientBodyBufferSize,omitempty"`
	ProxyNextUpstreamTimeout int  `json:"proxyNextUpstreamTimeout,omitempty"`
	// ProxyStreamTimeout (seconds, proxy-stream-timeout, default 600) and
	// ProxyStreamResponses (proxy-stream-responses, default 1, UDP) are
	// the stream proxy's proxy_timeout and proxy_responses.
	ProxyStreamTimeout   int `json:"proxyStreamTimeout"`
	ProxyStreamResponses int `json:"proxyStreamResponses"`
	// ProxyProtocolHeaderTimeout (seconds, proxy-protocol-header-timeout,
	// default 5) bounds the wait for the PROXY header on the stream
	// listeners that decode one (proxy_protocol_timeout).
	ProxyProtocolHeaderTimeout int `json:"proxyProtocolHeaderTimeout"`
	GRPCBufferSizeKB           int `json:"grpcBufferSizeKB,omitempty"`
	// UpstreamKeepaliveTime: seconds a kept-alive upstream connection
	// serves requests (upstream-keepalive-time, default 1h).
	UpstreamKeepaliveTime int `json:"upstreamKeepaliveTime"`
	// AllowBackendServerHeader passes the backend's Server header;
	// HideHeaders (header names of letters, digits, '-' and '_', lower
	// case, joined by commas) are removed from backend responses.
	AllowBackendServerHeader bool   `json:"allowBackendServerHeader,omitempty"`
	HideHeaders              string `json:"hideHeaders,omitempty"`
	// RelativeRedirects: Location headers nginx sends keep a relative URL
	// (absolute_redirect off).
	RelativeRedirects bool `json:"relativeRedirects,omitempty"`

	UseHTTP2                  bool `json:"useHTTP2"`
	HTTP2MaxConcurrentStreams int  `json:"http2MaxConcurrentStreams"`

	// LogFormatUpstream is a validated access log format (see
	// parseLogFormat); "" is ingress-sync's built-in format.
	LogFormatUpstream   string `json:"logFormatUpstream,omitempty"`
	LogFormatEscapeJSON bool   `json:"logFormatEscapeJSON,omitempty"`
	// LogFormatEscapeNone writes variables unescaped (over escape-json).
	LogFormatEscapeNone bool `json:"logFormatEscapeNone,omitempty"`
	ServerTokens        bool `json:"serverTokens,omitempty"`

	// DisableAccessLog turns the access log off (disable-access-log);
	// AccessLogPath is where it goes (access-log-path, see
	// parseAccessLogPath): "" is nginx's stdout, which the syncer passes on.
	DisableAccessLog bool   `json:"disableAccessLog,omitempty"`
	AccessLogPath    string `json:"accessLogPath,omitempty"`
	// LogFormatStream is log-format-stream, validated against the stream
	// module's variables (see parseStreamLogFormat); "" is ingress-nginx's
	// default format. StreamAccessLogPath is stream-access-log-path, as
	// AccessLogPath. Both only matter with TCP or UDP services or SSL
	// passthrough.
	LogFormatStream     string `json:"logFormatStream,omitempty"`
	StreamAccessLogPath string `json:"streamAccessLogPath,omitempty"`

	// GenerateRequestID: X-Request-ID sent upstream is the client's, or a
	// new one when it sends none (generate-request-id, default true; false:
	// only the client's). ProxyAddOriginalURIHeader sends X-Original-URI.
	GenerateRequestID         bool `json:"generateRequestID"`
	ProxyAddOriginalURIHeader bool `json:"proxyAddOriginalURIHeader,omitempty"`
	// HTTPRedirectCode answers the HTTPS and from-to-www redirects
	// (http-redirect-code: 301, 302, 307 or 308).
	HTTPRedirectCode int `json:"httpRedirectCode"`
	// ErrorLogLevel, WorkerProcesses ("auto" or a number),
	// MaxWorkerConnections and WorkerShutdownTimeout (seconds) override
	// the syncer's flags when set; zero values leave them.
	ErrorLogLevel         string `json:"errorLogLevel,omitempty"`
	WorkerProcesses       string `json:"workerProcesses,omitempty"`
	MaxWorkerConnections  int    `json:"maxWorkerConnections,omitempty"`
	WorkerShutdownTimeout int    `json:"workerShutdownTimeout,omitempty"`

	// HSTS sends Strict-Transport-Security on HTTPS responses.
	HSTS                  bool `json:"hsts"`
	HSTSMaxAge            int  `json:"hstsMaxAge"` // seconds
	HSTSIncludeSubdomains bool `json:"hstsIncludeSubdomains"`
	HSTSPreload           bool `json:"hstsPreload,omitempty"`

	// The client address (see pkg/nginx's realip settings). ProxyRealIPCIDR
	// is canonical CIDRs joined by commas; "" trusts no proxy (unlike
	// ingress-nginx's 0.0.0.0/0).
	// ForwardedForHeader "" is X-Forwarded-For.
	UseProxyProtocol        bool   `json:"useProxyProtocol,omitempty"`
	EnableRealIP            bool   `json:"enableRealIP,omitempty"`
	ComputeFullForwardedFor bool   `json:"computeFullForwardedFor,omitempty"`
	ForwardedForHeader      string `json:"forwardedForHeader,omitempty"`
	ProxyRealIPCIDR         string `json:"proxyRealIPCIDR,omitempty"`

	// Brotli is enable-brotli and its keys, GeoIP2 use-geoip2 and its
	// key: nginx modules that nginx.conf loads only while they are on.
	// Both are zero unless the ConfigMap sets one of their keys, so that
	// the checksums and encodings of Configurations without them stay as
	// they were.
	Brotli BrotliSettings `json:"brotli,omitzero"`
	GeoIP2 GeoIP2Settings `json:"geoip2,omitzero"`
	// Tuning holds the keys of nginx's core, event, header, TLS and log
	// directives (tuning.go); zero unless the ConfigMap sets one.
	Tuning TuningSettings `json:"tuning,omitzero"`
}

// BrotliSettings are enable-brotli, brotli-level, brotli-min-length and
// brotli-types. A ConfigMap that sets any of them sets the others to
// ingress-nginx's defaults (DefaultBrotli); the zero value is brotli off.
type BrotliSettings struct {
	Enable    bool `json:"enable,omitempty"`
	Level     int  `json:"level"`     // brotli_comp_level, 0 to 11
	MinLength int  `json:"minLength"` // bytes
	// Types: lower-case MIME types separated by one space, or "*".
	Types string `json:"types"`
}

// DefaultBrotli returns ingress-nginx v1.15's brotli defaults (off).
func DefaultBrotli() BrotliSettings {
	return BrotliSettings{Level: 4, MinLength: 20, Types: "application/xml+rss " + defaultGzipTypes}
}

// GeoIP2Settings are use-geoip2 and geoip2-autoreload-in-minutes: the
// $geoip2_* variables of the MaxMind databases the syncer finds in its
// GeoIP directory (pkg/nginx). The zero value is GeoIP2 off.
type GeoIP2Settings struct {
	Enable bool `json:"enable,omitempty"`
	// AutoReloadMinutes: how often nginx checks the database files for a
	// change; 0 never.
	AutoReloadMinutes int `json:"autoReloadMinutes,omitempty"`
}

// canonical writes the modules' settings for the checksum, only when set
// (see NginxSettings.Brotli).
func (n *NginxSettings) canonicalModules(w *canonicalWriter) {
	if b := n.Brotli; b != (BrotliSettings{}) {
		w.str("brotli")
		w.bool(b.Enable)
		w.int(int64(b.Level))
		w.int(int64(b.MinLength))
		w.str(b.Types)
	}
	if g := n.GeoIP2; g != (GeoIP2Settings{}) {
		w.str("geoip2")
		w.bool(g.Enable)
		w.int(int64(g.AutoReloadMinutes))
	}
	n.Tuning.canonical(w)
}

// Defaults of ingress-nginx v1.15 (internal/ingress/controller/config).
const (
	defaultGzipTypes = "application/atom+xml application/javascript application/x-javascript application/json " +
		"application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json " +
		"application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript " +
		"text/plain text/x-component"
	defaultSSLCiphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:" +
		"ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:" +
		"DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256"
)

// DefaultGlobal returns the settings used when the controller ConfigMap is
// absent or does not set a key; the values are those of ingress-nginx.
func DefaultGlobal() Global {
	return Global{
		SSLRedirect:         true,
		ProxyConnectTimeout: 5,
		ProxyReadTimeout:    60,
		ProxySendTimeout:    60,
		ProxyBodySize:       "1m",
		UpstreamKeepalive:   320,
		Nginx: NginxSettings{
			GzipLevel: 1, GzipMinLength: 256, GzipTypes: defaultGzipTypes,
			SSLProtocols: "TLSv1.2 TLSv1.3", SSLCiphers: defaultSSLCiphers,
			SSLSessionCache: true, SSLSessionCacheSize: "10m", SSLSessionTimeout: 600,
			ProxyStreamTimeout: 600, ProxyStreamResponses: 1, ProxyProtocolHeaderTimeout: 5,
			KeepAlive: 75, KeepAliveRequests: 1000, UpstreamKeepaliveTimeout: 60, UpstreamKeepaliveRequests: 10000,
			ClientHeaderTimeout: 60, ClientBodyTimeout: 60, ClientHeaderBufferSize: "1k",
			LargeClientHeaderBuffers: 4, LargeClientHeaderBufferSize: "8k",
			ProxyBufferSize: "4k", UseHTTP2: true, HTTP2MaxConcurrentStreams: 128,
			HSTS: true, HSTSMaxAge: 31536000, HSTSIncludeSubdomains: true, GenerateRequestID: true,
			HTTPRedirectCode: 308, ProxyBuffersNumber: 4, UpstreamKeepaliveTime: 3600,
		},
		NoTLSRedirectLocations: defaultNoTLSRedirectLocations,
	}
}

// Rendered returns the part of g that nginx.conf holds: a change of it is
// a reload. The other fields act through the routes Build makes.
func (g Global) Rendered() Global {
	g.SSLRedirect, g.ForceSSLRedirect, g.AllowSnippets = false, false, false
	// Per-route defaults (Build puts them into the routes).
	g.ProxyConnectTimeout, g.ProxyReadTimeout, g.ProxySendTimeout, g.ProxyBodySize = 0, 0, 0, ""
	// Header ConfigMaps and service-upstream: routes and backends only,
	// but for whether nginx.conf runs the response header filter.
	filter := g.ResponseHeaders()
	g.ProxySetHeaders, g.AddHeaders, g.AllowedResponseHeaders, g.ServiceUpstream, g.LoadBalance = "", "", "", false, ""
	g.Proxy = ProxySettings{}
	g.AllowSourceRange, g.DenySourceRange = "", "" // route defaults
	g.LimitReqStatusCode, g.LimitConnStatusCode, g.LimitRate, g.LimitRateAfter = 0, 0, 0, 0
	g.NoTLSRedirectLocations = ""                                 // route values
	g.BlockUserAgents, g.BlockReferers, g.BlockCIDRs = "", "", "" // in every Server
	g.Auth = GlobalAuth{}                                         // route defaults
	g.ProxySSLLocationOnly = false                                // routes only
	g.ModSecurity = GlobalModSecurity{}                           // route defaults
	g.OpenTelemetry = OpenTelemetry{}                             // routes and the exporter
	if !g.Nginx.Brotli.Enable {                                   // nginx.conf holds them only when on
		g.Nginx.Brotli = BrotliSettings{}
	}
	if !g.Nginx.GeoIP2.Enable {
		g.Nginx.GeoIP2 = GeoIP2Settings{}
	}
	if filter {
		g.AddHeaders = "on"
	}
	return g
}

// ResponseHeaders reports whether any response may get headers from the
// cluster: add-headers is set, or global-allowed-response-headers lets
// custom-headers send some. nginx.conf runs lua/headers.lua's response
// header filter only then, so that otherwise no request pays for it;
// turning it on or off reloads nginx, nothing else of the header settings
// does.
func (g *Global) ResponseHeaders() bool { return g.AddHeaders != "" || g.AllowedResponseHeaders != "" }

// defaultNoTLSRedirectLocations is ingress-nginx's no-tls-redirect-locations:
// ACME HTTP-01 challenges are answered over HTTP.
const defaultNoTLSRedirectLocations = "/.well-known/acme-challenge"

// Access log destinations that are not files.
const (
	// AccessLogStdout is nginx's stdout, which the syncer passes on as its
	// own (the container convention); it is the default.
	AccessLogStdout = "/dev/stdout"
	// AccessLogStderr is nginx's stderr, which carries its error log.
	AccessLogStderr = "/dev/stderr"
)

// DefaultStreamLogFormat is ingress-nginx's log-format-stream.
const DefaultStreamLogFormat = "[$remote_addr] [$time_local] $protocol $status $bytes_sent $bytes_received $session_time"

// GeoIP2Edition is a MaxMind database ingress-nginx reads with use-geoip2,
// by its file name, and the $geoip2_* variables it defines from it.
type GeoIP2Edition struct {
	File      string
	Variables []GeoIP2Variable
}

// GeoIP2Variable is a variable of an edition: its name (without $) and
// the path of the value in a record, as the geoip2 module takes it.
// Default is its value for an address without one ("": empty).
type GeoIP2Variable struct {
	Name, Path, Default string
}

// GeoIP2Editions returns the databases use-geoip2 reads and their
// variables, those of ingress-nginx v1.15; where two editions define a
// variable, the first found in this order defines it.
func GeoIP2Editions() []GeoIP2Edition {
	v := func(name, path string) GeoIP2Variable { return GeoIP2Variable{Name: "geoip2_" + name, Path: path} }
	zero := func(name, path string) GeoIP2Variable {
		return GeoIP2Variable{Name: "geoip2_" + name, Path: path, Default: "0"}
	}
	city := []GeoIP2Variable{
		v("city_country_code", "country iso_code"), v("city_country_name", "country names en"),
		v("city_country_geoname_id", "country geoname_id"), v("city", "city names en"),
		v("city_geoname_id", "city geoname_id"), v("postal_code", "postal code"), v("dma_code", "location metro_code"),
		v("latitude", "location latitude"), v("longitude", "location longitude"), v("time_zone", "location time_zone"),
		v("region_code", "subdivisions 0 iso_code"), v("region_name", "subdivisions 0 names en"),
		v("region_geoname_id", "subdivisions 0 geoname_id"), v("subregion_code", "subdivisions 1 iso_code"),
		v("subregion_name", "subdivisions 1 names en"), v("subregion_geoname_id", "subdivisions 1 geoname_id"),
		v("city_continent_code", "continent code"), v("city_continent_name", "continent names en"),
	}
	country := []GeoIP2Variable{
		v("country_code", "country iso_code"), v("country_name", "country names en"),
		v("country_geoname_id", "country geoname_id"), v("continent_code", "continent code"),
		v("continent_name", "continent names en"), v("continent_geoname_id", "continent geoname_id"),
	}
	asn := []GeoIP2Variable{v("asn", "autonomous_system_number"), v("org", "autonomous_system_organization")}
	return []GeoIP2Edition{
		{"GeoIP2-City.mmdb", city}, {"GeoLite2-City.mmdb", city},
		{"GeoIP2-Country.mmdb", country}, {"GeoLite2-Country.mmdb", country},
		{"GeoIP2-ASN.mmdb", asn}, {"GeoLite2-ASN.mmdb", asn},
		{"GeoIP2-ISP.mmdb", []GeoIP2Variable{v("isp", "isp"), v("isp_org", "organization"), zero("asn", "autonomous_system_number")}},
		{"GeoIP2-Connection-Type.mmdb", []GeoIP2Variable{v("connection_type", "connection_type")}},
		{"GeoIP2-Anonymous-IP.mmdb", []GeoIP2Variable{
			v("is_anon", "is_anonymous"), zero("is_anonymous", "is_anonymous"), zero("is_anonymous_vpn", "is_anonymous_vpn"),
			zero("is_hosting_provider", "is_hosting_provider"), zero("is_public_proxy", "is_public_proxy"),
			zero("is_tor_exit_node", "is_tor_exit_node"),
		}},
	}
}

// GeoIP2VariableNames returns the names of every $geoip2_* variable (a
// set): what log-format-upstream may use.
func GeoIP2VariableNames() map[string]bool {
	m := map[string]bool{}
	for _, e := range GeoIP2Editions() {
		for _, v := range e.Variables {
			m[v.Name] = true
		}
	}
	return m
}
