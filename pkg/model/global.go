package model

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

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

// Limits of ConfigMap values.
const (
	maxKeepalive      = 100000
	maxGlobalSeconds  = 7 * 24 * 3600
	maxGlobalCount    = 1 << 30
	maxListItems      = 256
	minSharedZoneSize = 32 << 10 // nginx: 8 pages
	// maxProxyTimeout bounds the ConfigMap's proxy timeouts (whole seconds,
	// as ingress-nginx takes them): a day, what the balancer accepts.
	maxProxyTimeout = 86400
)

// global reads the controller ConfigMap e over the defaults. A key with
// an invalid value keeps the last valid value the Store saw for it (see
// configMapEntry), else its default, and yields a reason; unknown keys are
// reported as unsupported. e may be nil (no ConfigMap).
func (e *configMapEntry) global() (Global, []string) {
	if e == nil {
		return parseGlobal(nil)
	}
	return parseGlobalKeeping(e.obj, e.good)
}

// parseGlobal reads cm over the defaults, without history: an invalid
// value keeps the default.
func parseGlobal(cm *corev1.ConfigMap) (Global, []string) { return parseGlobalKeeping(cm, nil) }

// parseGlobalKeeping reads cm over the defaults; good holds the values kept
// for keys whose value is invalid (absent: the default is kept).
func parseGlobalKeeping(cm *corev1.ConfigMap, good map[string]string) (Global, []string) {
	g := DefaultGlobal()
	if cm == nil || len(cm.Data) == 0 {
		return g, nil
	}
	data := cm.Data
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []string
	for _, k := range keys {
		v := data[k]
		err := g.setChecked(k, v)
		if err == nil {
			continue
		}
		kept := "default kept"
		if prev, ok := good[k]; ok && g.setChecked(k, prev) == nil {
			kept = "previous value " + quoteValue(prev) + " kept"
		}
		problems = append(problems, fmt.Sprintf("key %s=%s: %v; %s", k, quoteValue(v), err, kept))
	}
	return g, problems
}

// validGlobalValue reports whether v is a valid value of the ConfigMap key
// k (whatever the other keys say).
func validGlobalValue(k, v string) bool {
	g := DefaultGlobal()
	return g.setChecked(k, v) == nil
}

// setChecked sets one ConfigMap key in g; g is unchanged on error.
func (g *Global) setChecked(k, v string) error {
	if ok, err := g.setGlobalAuth(k, v); ok { // allow-lists
		return err
	}
	set, ok := globalKeys[k]
	if !ok {
		return errUnsupported
	}
	// Log formats have a validator of their own, which takes '$', braces
	// and double quotes (JSON formats).
	if k != "log-format-upstream" && k != "log-format-stream" && !allowListKey(k) {
		if err := checkForbidden(v, false); err != nil {
			return err
		}
	}
	return set(g, v)
}

// setter parses a value and stores it in g, leaving g as it was on error.
type setter func(g *Global, v string) error

// field makes the setter of the field that f points to from parse.
func field[T any](f func(*Global) *T, parse func(string) (T, error)) setter {
	return func(g *Global, v string) error {
		x, err := parse(v)
		if err == nil {
			*f(g) = x
		}
		return err
	}
}

func boolField(f func(*Global) *bool) setter { return field(f, parseBool) }

func intField(f func(*Global) *int, lo, hi int) setter {
	return field(f, func(v string) (int, error) { return parseIntRange(v, lo, hi) })
}

func sizeField(f func(*Global) *Size, min int64) setter {
	return field(f, func(v string) (Size, error) { return parseSizeAtLeast(v, min) })
}

// globalKeys are the ConfigMap keys we read. It is never modified.
var globalKeys = map[string]setter{
	"ssl-redirect":                   boolField(func(g *Global) *bool { return &g.SSLRedirect }),
	"force-ssl-redirect":             boolField(func(g *Global) *bool { return &g.ForceSSLRedirect }),
	"use-forwarded-headers":          boolField(func(g *Global) *bool { return &g.UseForwardedHeaders }),
	"allow-snippet-annotations":      boolField(func(g *Global) *bool { return &g.AllowSnippets }),
	"proxy-connect-timeout":          intField(func(g *Global) *int { return &g.ProxyConnectTimeout }, 1, maxProxyTimeout),
	"proxy-read-timeout":             intField(func(g *Global) *int { return &g.ProxyReadTimeout }, 1, maxProxyTimeout),
	"proxy-send-timeout":             intField(func(g *Global) *int { return &g.ProxySendTimeout }, 1, maxProxyTimeout),
	"proxy-body-size":                field(func(g *Global) *Size { return &g.ProxyBodySize }, parseSize),
	"upstream-keepalive-connections": intField(func(g *Global) *int { return &g.UpstreamKeepalive }, 0, maxKeepalive),

	"use-gzip":        boolField(func(g *Global) *bool { return &g.Nginx.UseGzip }),
	"gzip-level":      intField(func(g *Global) *int { return &g.Nginx.GzipLevel }, 1, 9),
	"gzip-min-length": intField(func(g *Global) *int { return &g.Nginx.GzipMinLength }, 0, maxGlobalCount),
	"gzip-types":      field(func(g *Global) *string { return &g.Nginx.GzipTypes }, parseGzipTypes),
	"gzip-disable":    field(func(g *Global) *string { return &g.Nginx.GzipDisable }, parseGzipDisable),

	"ssl-protocols":          field(func(g *Global) *string { return &g.Nginx.SSLProtocols }, parseSSLProtocols),
	"ssl-ciphers":            field(func(g *Global) *string { return &g.Nginx.SSLCiphers }, parseSSLCiphers),
	"ssl-session-cache":      boolField(func(g *Global) *bool { return &g.Nginx.SSLSessionCache }),
	"ssl-session-cache-size": field(func(g *Global) *Size { return &g.Nginx.SSLSessionCacheSize }, parseSharedZoneSize),
	"ssl-session-timeout":    field(func(g *Global) *int { return &g.Nginx.SSLSessionTimeout }, parseDuration),
	"ssl-session-tickets":    boolField(func(g *Global) *bool { return &g.Nginx.SSLSessionTickets }),

	"keep-alive":                  intField(func(g *Global) *int { return &g.Nginx.KeepAlive }, 0, maxGlobalSeconds),
	"keep-alive-requests":         intField(func(g *Global) *int { return &g.Nginx.KeepAliveRequests }, 1, maxGlobalCount),
	"upstream-keepalive-timeout":  intField(func(g *Global) *int { return &g.Nginx.UpstreamKeepaliveTimeout }, 1, maxGlobalSeconds),
	"upstream-keepalive-requests": intField(func(g *Global) *int { return &g.Nginx.UpstreamKeepaliveRequests }, 1, maxGlobalCount),

	"client-header-timeout":       intField(func(g *Global) *int { return &g.Nginx.ClientHeaderTimeout }, 1, maxGlobalSeconds),
	"client-body-timeout":         intField(func(g *Global) *int { return &g.Nginx.ClientBodyTimeout }, 1, maxGlobalSeconds),
	"client-header-buffer-size":   sizeField(func(g *Global) *Size { return &g.Nginx.ClientHeaderBufferSize }, 1),
	"large-client-header-buffers": setLargeClientHeaderBuffers,

	"proxy-buffering":               field(func(g *Global) *bool { return &g.Nginx.ProxyBuffering }, parseOnOff),
	"proxy-buffer-size":             sizeField(func(g *Global) *Size { return &g.Nginx.ProxyBufferSize }, 1),
	"proxy-buffers-number":          intField(func(g *Global) *int { return &g.Nginx.ProxyBuffersNumber }, 2, 1024),
	"proxy-busy-buffers-size":       sizeField(func(g *Global) *Size { return &g.Nginx.ProxyBusyBuffersSize }, 1),
	"client-body-buffer-size":       sizeField(func(g *Global) *Size { return &g.Nginx.ClientBodyBufferSize }, 1),
	"proxy-stream-timeout":          field(func(g *Global) *int { return &g.Nginx.ProxyStreamTimeout }, parseDuration),
	"proxy-protocol-header-timeout": field(func(g *Global) *int { return &g.Nginx.ProxyProtocolHeaderTimeout }, parseDuration),
	"proxy-stream-responses":        intField(func(g *Global) *int { return &g.Nginx.ProxyStreamResponses }, 0, maxGlobalCount),
	"proxy-next-upstream-timeout":   intField(func(g *Global) *int { return &g.Nginx.ProxyNextUpstreamTimeout }, 0, maxGlobalSeconds),
	"grpc-buffer-size-kb":           intField(func(g *Global) *int { return &g.Nginx.GRPCBufferSizeKB }, 0, 1<<20),
	"upstream-keepalive-time":       field(func(g *Global) *int { return &g.Nginx.UpstreamKeepaliveTime }, parseDuration),
	"allow-backend-server-header":   boolField(func(g *Global) *bool { return &g.Nginx.AllowBackendServerHeader }),
	"hide-headers":                  field(func(g *Global) *string { return &g.Nginx.HideHeaders }, parseHideHeaders),
	"relative-redirects":            boolField(func(g *Global) *bool { return &g.Nginx.RelativeRedirects }),

	"use-http2":                    boolField(func(g *Global) *bool { return &g.Nginx.UseHTTP2 }),
	"http2-max-concurrent-streams": intField(func(g *Global) *int { return &g.Nginx.HTTP2MaxConcurrentStreams }, 1, maxGlobalCount),

	"log-format-upstream":    field(func(g *Global) *string { return &g.Nginx.LogFormatUpstream }, parseLogFormat),
	"log-format-escape-json": boolField(func(g *Global) *bool { return &g.Nginx.LogFormatEscapeJSON }),
	"log-format-escape-none": boolField(func(g *Global) *bool { return &g.Nginx.LogFormatEscapeNone }),
	"error-log-level":        field(func(g *Global) *string { return &g.Nginx.ErrorLogLevel }, parseLogLevel),
	"disable-access-log":     boolField(func(g *Global) *bool { return &g.Nginx.DisableAccessLog }),
	"access-log-path":        field(func(g *Global) *string { return &g.Nginx.AccessLogPath }, parseAccessLogPath),
	"log-format-stream":      field(func(g *Global) *string { return &g.Nginx.LogFormatStream }, parseStreamLogFormat),
	"stream-access-log-path": field(func(g *Global) *string { return &g.Nginx.StreamAccessLogPath }, parseAccessLogPath),

	"server-tokens":                 boolField(func(g *Global) *bool { return &g.Nginx.ServerTokens }),
	"generate-request-id":           boolField(func(g *Global) *bool { return &g.Nginx.GenerateRequestID }),
	"http-redirect-code":            field(func(g *Global) *int { return &g.Nginx.HTTPRedirectCode }, parseRedirectCode),
	"no-tls-redirect-locations":     field(func(g *Global) *string { return &g.NoTLSRedirectLocations }, parseLocationList),
	"proxy-add-original-uri-header": boolField(func(g *Global) *bool { return &g.Nginx.ProxyAddOriginalURIHeader }),
	"worker-processes":              field(func(g *Global) *string { return &g.Nginx.WorkerProcesses }, parseWorkerProcesses),
	"max-worker-connections":        field(func(g *Global) *int { return &g.Nginx.MaxWorkerConnections }, parseWorkerConnections),
	"worker-shutdown-timeout":       field(func(g *Global) *int { return &g.Nginx.WorkerShutdownTimeout }, parseDuration),

	"proxy-set-headers":               field(func(g *Global) *string { return &g.ProxySetHeaders }, parseConfigMapRef),
	"add-headers":                     field(func(g *Global) *string { return &g.AddHeaders }, parseConfigMapRef),
	"global-allowed-response-headers": field(func(g *Global) *string { return &g.AllowedResponseHeaders }, parseAllowedHeaders),
	"service-upstream":                boolField(func(g *Global) *bool { return &g.ServiceUpstream }),
	"proxy-ssl-location-only":         boolField(func(g *Global) *bool { return &g.ProxySSLLocationOnly }),
	"load-balance":                    field(func(g *Global) *string { return &g.LoadBalance }, parseLoadBalance),
	"proxy-request-buffering":         proxyField("proxy-request-buffering"),
	"proxy-http-version":              proxyField("proxy-http-version"),
	"proxy-next-upstream":             proxyField("proxy-next-upstream"),
	"proxy-next-upstream-tries":       proxyField("proxy-next-upstream-tries"),
	"proxy-redirect-from":             proxyField("proxy-redirect-from"),
	"proxy-redirect-to":               proxyField("proxy-redirect-to"),
	"proxy-cookie-domain":             proxyField("proxy-cookie-domain"),
	"proxy-cookie-path":               proxyField("proxy-cookie-path"),
	"custom-http-errors":              field(func(g *Global) *string { return &g.CustomHTTPErrors }, parseHTTPErrorsList),
	"limit-req-status-code":           field(func(g *Global) *int { return &g.LimitReqStatusCode }, parseLimitStatus),
	"limit-conn-status-code":          field(func(g *Global) *int { return &g.LimitConnStatusCode }, parseLimitStatus),
	"limit-rate":                      field(func(g *Global) *int64 { return &g.LimitRate }, parseLimitKB),
	"limit-rate-after":                field(func(g *Global) *int64 { return &g.LimitRateAfter }, parseLimitKB),

	"hsts":                    boolField(func(g *Global) *bool { return &g.Nginx.HSTS }),
	"hsts-max-age":            intField(func(g *Global) *int { return &g.Nginx.HSTSMaxAge }, 0, maxGlobalCount),
	"hsts-include-subdomains": boolField(func(g *Global) *bool { return &g.Nginx.HSTSIncludeSubdomains }),
	"hsts-preload":            boolField(func(g *Global) *bool { return &g.Nginx.HSTSPreload }),

	"use-proxy-protocol":         boolField(func(g *Global) *bool { return &g.Nginx.UseProxyProtocol }),
	"enable-real-ip":             boolField(func(g *Global) *bool { return &g.Nginx.EnableRealIP }),
	"compute-full-forwarded-for": boolField(func(g *Global) *bool { return &g.Nginx.ComputeFullForwardedFor }),
	"forwarded-for-header":       field(func(g *Global) *string { return &g.Nginx.ForwardedForHeader }, parseHeaderName),
	"proxy-real-ip-cidr":         field(func(g *Global) *string { return &g.Nginx.ProxyRealIPCIDR }, parseCIDRList),
	"block-cidrs":                field(func(g *Global) *string { return &g.BlockCIDRs }, parseCIDRList),
	"whitelist-source-range":     field(func(g *Global) *string { return &g.AllowSourceRange }, parseSourceRangeDefault),
	"denylist-source-range":      field(func(g *Global) *string { return &g.DenySourceRange }, parseSourceRangeDefault),
	"block-user-agents":          field(func(g *Global) *string { return &g.BlockUserAgents }, parseBlockList),
	"block-referers":             field(func(g *Global) *string { return &g.BlockReferers }, parseBlockList),
}

func parseBool(v string) (bool, error) {
	b, err := parseBoolPtr(v)
	if err != nil {
		return false, err
	}
	return *b, nil
}

// parseOnOff parses nginx's on and off (proxy-buffering), in any case.
func parseOnOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, errors.New("must be on or off")
}

// parseSizeAtLeast parses an nginx size of at least min bytes, written as
// nginx.conf takes it (at most 9 digits, no leading zero).
func parseSizeAtLeast(v string, min int64) (Size, error) {
	s, err := parseSize(v)
	if err != nil {
		return "", err
	}
	if digits := strings.TrimRight(v, "kKmMgG"); len(digits) > 9 || len(digits) > 1 && digits[0] == '0' {
		return "", errors.New("must be an nginx size of at most 9 digits without a leading zero, such as 8k")
	}
	if n, _ := s.Bytes(); n < min {
		return "", fmt.Errorf("must be at least %d bytes", min)
	}
	return s, nil
}

// parseSharedZoneSize parses the size of a shared memory zone: nginx -t
// maps it, so it is bounded (32k to 1g).
func parseSharedZoneSize(v string) (Size, error) {
	s, err := parseSizeAtLeast(v, minSharedZoneSize)
	if n, _ := s.Bytes(); err == nil && n > 1<<30 {
		err = errors.New("must be at most 1g")
	}
	if err != nil {
		return "", err
	}
	return s, nil
}

// setLargeClientHeaderBuffers parses "<number> <size>" ("4 8k").
func setLargeClientHeaderBuffers(g *Global, v string) error {
	f := strings.Fields(v)
	if len(f) != 2 {
		return errors.New(`must be a number and a size, such as "4 8k"`)
	}
	n, err := parseIntRange(f[0], 1, 1024)
	if err != nil {
		return fmt.Errorf("number of buffers %w", err)
	}
	s, err := parseSizeAtLeast(f[1], 1<<10)
	if err != nil {
		return fmt.Errorf("buffer size %w", err)
	}
	g.Nginx.LargeClientHeaderBuffers, g.Nginx.LargeClientHeaderBufferSize = n, s
	return nil
}

// durationUnits are the nginx time units we accept, in seconds.
var durationUnits = map[byte]int{'s': 1, 'm': 60, 'h': 3600, 'd': 86400}

// parseDuration parses an nginx time of whole seconds: a number of
// seconds ("600") or numbers with units d, h, m, s ("10m", "1h30m"), 1 s
// to 7 days.
func parseDuration(v string) (int, error) {
	if allDigits(v) {
		return parseIntRange(v, 1, maxGlobalSeconds)
	}
	total, i := 0, 0
	for i < len(v) {
		j := i
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		unit, ok := 0, false
		if j < len(v) {
			unit, ok = durationUnits[v[j]]
		}
		if j == i || j-i > 7 || !ok || strings.HasPrefix(v[j:], "ms") {
			return 0, errors.New("must be an nginx time in whole seconds, such as 600, 10m or 1h30m")
		}
		n, _ := strconv.Atoi(v[i:j])
		total += n * unit
		i = j + 1
	}
	if total < 1 || total > maxGlobalSeconds {
		return 0, fmt.Errorf("must be between 1s and %ds", maxGlobalSeconds)
	}
	return total, nil
}

var logLevels = []string{"debug", "info", "notice", "warn", "error", "crit", "alert", "emerg"}

func parseLogLevel(v string) (string, error) {
	for _, l := range logLevels {
		if v == l {
			return v, nil
		}
	}
	return "", fmt.Errorf("must be one of %s", strings.Join(logLevels, ", "))
}

// parseWorkerConnections accepts 16 to 2^20, or 0 for the syncer's flag.
func parseWorkerConnections(v string) (int, error) {
	n, err := parseIntRange(v, 0, 1<<20)
	if err == nil && n > 0 && n < 16 {
		err = errors.New("must be 0 or between 16 and 1048576")
	}
	return n, err
}

// parseWorkerProcesses accepts "auto" or 1 to 1024.
func parseWorkerProcesses(v string) (string, error) {
	if v == "auto" {
		return v, nil
	}
	n, err := parseIntRange(v, 1, 1024)
	if err != nil {
		return "", fmt.Errorf(`must be "auto" or a number from 1 to 1024`)
	}
	return strconv.Itoa(n), nil
}

// rendered returns the part of g that nginx.conf holds: a change of it is
// a reload. The other fields act through the routes Build makes.
func (g Global) rendered() Global {
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

// canonical writes every field of g for the checksum.
func (g *Global) canonical(w *canonicalWriter) {
	w.bool(g.SSLRedirect)
	w.int(int64(g.ProxyConnectTimeout))
	w.int(int64(g.ProxyReadTimeout))
	w.int(int64(g.ProxySendTimeout))
	w.str(string(g.ProxyBodySize))
	w.int(int64(g.UpstreamKeepalive))
	w.bool(g.UseForwardedHeaders)
	w.bool(g.AllowSnippets)
	w.int(g.ServerNamesHashMaxKB)
	w.bool(g.ForceSSLRedirect)
	w.str(g.ProxySetHeaders)
	w.str(g.AddHeaders)
	w.str(g.AllowedResponseHeaders)
	w.bool(g.ServiceUpstream)
	w.str(g.CustomHTTPErrors)
	w.str(g.LoadBalance)
	w.int(int64(g.LimitReqStatusCode))
	w.int(int64(g.LimitConnStatusCode))
	w.int(g.LimitRate)
	w.int(g.LimitRateAfter)
	w.str(g.NoTLSRedirectLocations)
	w.proxySettings(&g.Proxy)
	w.str(g.AllowSourceRange)
	w.str(g.DenySourceRange)
	w.str(g.BlockUserAgents)
	w.str(g.BlockReferers)
	w.str(g.BlockCIDRs)
	g.Auth.canonical(w)
	w.bool(g.ProxySSLLocationOnly)
	n := &g.Nginx
	for _, b := range []bool{n.UseGzip, n.SSLSessionCache, n.SSLSessionTickets,
		n.ProxyBuffering, n.UseHTTP2, n.LogFormatEscapeJSON, n.LogFormatEscapeNone, n.ServerTokens, n.HSTS, n.HSTSIncludeSubdomains, n.HSTSPreload,
		n.UseProxyProtocol, n.EnableRealIP, n.ComputeFullForwardedFor, n.GenerateRequestID, n.ProxyAddOriginalURIHeader,
		n.AllowBackendServerHeader, n.RelativeRedirects} {
		w.bool(b)
	}
	for _, i := range []int{n.HTTPRedirectCode, n.ProxyBuffersNumber, n.ProxyNextUpstreamTimeout, n.GRPCBufferSizeKB, n.UpstreamKeepaliveTime, n.GzipLevel, n.GzipMinLength, n.SSLSessionTimeout, n.KeepAlive, n.KeepAliveRequests,
		n.UpstreamKeepaliveTimeout, n.UpstreamKeepaliveRequests, n.ClientHeaderTimeout, n.ClientBodyTimeout,
		n.LargeClientHeaderBuffers, n.HTTP2MaxConcurrentStreams, n.MaxWorkerConnections, n.WorkerShutdownTimeout, n.HSTSMaxAge} {
		w.int(int64(i))
	}
	for _, s := range []string{n.GzipDisable, string(n.ProxyBusyBuffersSize), string(n.ClientBodyBufferSize), n.HideHeaders, n.GzipTypes, n.SSLProtocols, n.SSLCiphers, string(n.SSLSessionCacheSize),
		string(n.ClientHeaderBufferSize), string(n.LargeClientHeaderBufferSize), string(n.ProxyBufferSize),
		n.LogFormatUpstream, n.ErrorLogLevel, n.WorkerProcesses, n.ForwardedForHeader, n.ProxyRealIPCIDR} {
		w.str(s)
	}
	// Only when set, so that the checksums of configurations without them
	// stay as they were.
	if n.ProxyStreamTimeout != 600 || n.ProxyStreamResponses != 1 || n.ProxyProtocolHeaderTimeout != 5 || n.LogFormatStream != "" || n.StreamAccessLogPath != "" {
		w.str("stream")
		w.int(int64(n.ProxyProtocolHeaderTimeout))
		w.int(int64(n.ProxyStreamTimeout))
		w.int(int64(n.ProxyStreamResponses))
		w.str(n.LogFormatStream)
		w.str(n.StreamAccessLogPath)
	}
	if n.DisableAccessLog || n.AccessLogPath != "" {
		w.str("access-log")
		w.bool(n.DisableAccessLog)
		w.str(n.AccessLogPath)
	}
}
