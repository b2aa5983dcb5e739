package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// view is what the template sees: only validated, pre-rendered text.
type view struct {
	Checksum       string
	LuaChecksum    string
	LuaNoEndpoints string
	MaxTries       int

	ModulesDir, Dir, LuaDir, SystemLuaDir string
	User, Group                           string
	WorkerProcesses                       string
	WorkerShutdownTimeout                 string
	WorkerConnections                     int
	ErrorLogLevel                         string
	AccessLog                             bool
	BackendsDictSize                      string
	CertificatesDictSize                  string
	MaxDeltaSize                          string
	StatusPort                            int

	RoutesDictSize    string
	LimitsDictSize    string
	RegexCacheEntries int
	BodySizeCeiling   string
	HTTPSPort         int
	// BodySize is the global proxy-body-size in bytes, for router.lua.
	BodySize int64

	// AuthCacheDictSize, AuthTimeout, AuthConnectTimeout and Resolver:
	// the external auth location (extauth.go).
	AuthCacheDictSize, AuthTimeout, AuthConnectTimeout, Resolver string
	// MetricsDictSize and LuaMetrics: lua/metrics.lua (metrics.go);
	// LuaMetrics "nil" turns the traffic metrics off.
	MetricsDictSize, LuaMetrics string

	UseForwardedHeaders bool
	UpstreamKeepalive   int
	GlobalDirectives    []string
	// HTTPDirectives and UpstreamDirectives are the ConfigMap's other
	// nginx directives (config.NginxSettings), each validated, for the http
	// block and the balancer upstream.
	HTTPDirectives     []string
	UpstreamDirectives []string
	// Brotli loads the brotli filter module (enable-brotli).
	Brotli bool `json:",omitempty"`
	// GeoIP2Module loads the geoip2 module and GeoIP2 are its blocks
	// (use-geoip2); EmptyVariables are the $geoip2_* variables the log
	// format uses that no database defines (geoip2.go).
	GeoIP2Module   bool          `json:",omitempty"`
	GeoIP2         []geoIP2Block `json:",omitempty"`
	EmptyVariables []string      `json:",omitempty"`
	// Notes say what of the global settings could not be applied and why:
	// comments of nginx.conf, which the Applier logs.
	Notes []string `json:",omitempty"`
	// LogFormat is the escaped, quoted log_format of upstreaminfo.
	LogFormat string
	// AccessLogPath is where the access log goes (logs.go).
	AccessLogPath string
	// HSTS is the quoted Strict-Transport-Security value; "" sends none.
	HSTS string
	// ResponseHeaders runs lua/headers.lua's response header filter
	// (config.Global.ResponseHeaders), and with any Gateway listener port
	// (a Gateway route's ResponseHeaderModifier).
	ResponseHeaders bool
	// Listen holds the listen arguments of the one public server.
	Listen []string
	// GatewayPorts are the ports of the Gateway listeners
	// (config.Configuration.Listeners), also in Listen: router.lua and
	// certificate.lua look the hosts of a request on one up in its table.
	GatewayPorts []int `json:",omitempty"`
	// RealIP sets the client address ($remote_addr) from a trusted proxy;
	// nil leaves it the peer's. ForwardedFor is the client address
	// compute-full-forwarded-for appends to X-Forwarded-For ("": the
	// header sent is $remote_addr).
	RealIP       *realIP
	ForwardedFor string
	// OriginalForwardedFor is the variable of the forwarded-for header the
	// client sent (X-Original-Forwarded-For upstream, as ingress-nginx).
	OriginalForwardedFor string
	// GenerateRequestID and OriginalURIHeader: generate-request-id and
	// proxy-add-original-uri-header.
	GenerateRequestID, OriginalURIHeader bool
	// HTTPRedirectCode is http-redirect-code (lua/router.lua's settings).
	HTTPRedirectCode int

	// ProxyLocations are the fixed named locations of lua/proxy.lua;
	// LuaProxyBuffering is proxy_buffering, "on" or "off", quoted.
	ProxyLocations    []proxyLocation
	LuaProxyBuffering string
	// TLSUpstreams are the upstream blocks of the backend TLS profiles and
	// LuaTLSProfiles their names as a Lua set (see proxyssl.go).
	TLSUpstreams   []string
	LuaTLSProfiles string
	// LuaErrorSets are the error code sets' names by list, as a Lua
	// table (see errorsets.go).
	LuaErrorSets string
	// ModSecurity loads the ModSecurity module (some route runs it);
	// LuaModSecProfiles are the profiles' names as a Lua set (see
	// modsecurity.go).
	ModSecurity       bool   `json:",omitempty"`
	LuaModSecProfiles string `json:",omitempty"`

	// Stream is the stream block (stream.go); nil renders none. (Empty
	// fields stay out of the checksum, which stays that of the files
	// rendered before them.)
	Stream *streamView `json:",omitempty"`
	// InternalHTTPS is the HTTPS server's internal listener of SSL
	// passthrough: the public server again, with its own Listen and
	// ServerRealIP (nil: none); it is made of the fields above.
	InternalHTTPS *view   `json:"-"`
	ServerRealIP  *realIP `json:",omitempty"`

	// tuningView: the ConfigMap's core, event, header, TLS and log
	// directives (tuning.go).
	tuningView

	TestHTTPSnippet string
	TestInitLua     string
}

// newView validates g against o and builds the template input. Nothing of
// an Ingress reaches it: only the global settings and the options.
func newView(o *Options, g *config.Global, listeners []l4Listener, gateway []config.Listener, tls []config.UpstreamTLS, sets []errorSet, modsec []modSecProfile) (*view, error) {
	v := &view{
		MaxTries:              o.MaxTries,
		ModulesDir:            o.ModulesDir,
		Dir:                   o.Dir,
		LuaDir:                o.LuaDir,
		SystemLuaDir:          o.SystemLuaDir,
		User:                  o.User,
		Group:                 o.Group,
		WorkerProcesses:       "auto",
		WorkerShutdownTimeout: strconv.Itoa(int(o.WorkerShutdownTimeout.Seconds())) + "s",
		WorkerConnections:     o.WorkerConnections,
		ErrorLogLevel:         o.ErrorLogLevel,
		AccessLog:             !o.DisableAccessLog,
		StatusPort:            o.StatusPort,
		HTTPSPort:             o.HTTPSPort,
		RegexCacheEntries:     o.RegexCacheEntries,
		TestHTTPSnippet:       o.testHTTPSnippet,
		TestInitLua:           o.testInitLua,
	}
	if o.WorkerProcesses > 0 {
		v.WorkerProcesses = strconv.Itoa(o.WorkerProcesses)
	}
	// Options were validated by Complete; sizes cannot fail here.
	v.BackendsDictSize, _ = nginxSize(o.BackendsDictSize)
	v.CertificatesDictSize, _ = nginxSize(o.CertificatesDictSize)
	v.MaxDeltaSize, _ = nginxSize(o.MaxDeltaSize)
	v.RoutesDictSize, _ = nginxSize(o.RoutesDictSize)
	v.LimitsDictSize, _ = nginxSize(o.LimitsDictSize)
	v.setExtAuth(o)
	v.setMetrics(&o.Metrics)
	v.BodySizeCeiling, _ = nginxSize(o.BodySizeCeiling)
	v.LuaNoEndpoints = luaString("unix:" + o.noEndpointsSocket())
	if err := v.setGlobal(*g); err != nil {
		return nil, fmt.Errorf("global: %w", err)
	}
	n := g.Nginx
	if n == (config.NginxSettings{}) {
		n = config.DefaultGlobal().Nginx
	}
	if err := v.setNginx(&n); err != nil {
		return nil, fmt.Errorf("global: %w", err)
	}
	if err := v.setTuning(&n); err != nil {
		return nil, fmt.Errorf("global: %w", err)
	}
	if err := v.setGeoIP2(o, &n); err != nil {
		return nil, fmt.Errorf("global: %w", err)
	}
	v.Listen = listenLines(o, n.UseHTTP2, n.UseProxyProtocol)
	v.reusePort()
	if err := v.setRealIP(g.UseForwardedHeaders, &n); err != nil {
		return nil, fmt.Errorf("global: %w", err)
	}
	codes, err := errorCodes(g.CustomHTTPErrors)
	if err != nil {
		return nil, fmt.Errorf("global: %w", err)
	}
	v.ProxyLocations, v.LuaProxyBuffering = proxyLocations(codes), luaString(onOff(n.ProxyBuffering))
	if err := v.setUpstreamTLS(o, tls); err != nil {
		return nil, fmt.Errorf("backend TLS: %w", err)
	}
	if err := v.setErrorSets(sets); err != nil {
		return nil, fmt.Errorf("custom-http-errors: %w", err)
	}
	if err := v.setModSecurity(o, modsec); err != nil {
		return nil, fmt.Errorf("modsecurity: %w", err)
	}
	// Last: the internal HTTPS server is a copy of the public one.
	if err := v.setStream(o, g, &n, listeners); err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	// After the copy: a Gateway listener's port is the public server's
	// alone, and terminates TLS itself with SSL passthrough too (the
	// stream block reads the SNI name of nginx's own HTTPS port only).
	if err := v.setGatewayListeners(o, gateway, n.UseHTTP2); err != nil {
		return nil, fmt.Errorf("gateway listeners: %w", err)
	}
	sum, err := viewChecksum(v)
	if err != nil {
		return nil, err
	}
	v.Checksum, v.LuaChecksum = sum, luaString(sum)
	return v, nil
}

// PortVar is the variable $pass_server_port defaults to: the port of the
// listener, or the public HTTPS port on the internal HTTPS listener.
func (v *view) PortVar() string {
	if v.InternalHTTPS != nil {
		return "$ingress_server_port"
	}
	return "$server_port"
}

// viewChecksum identifies the rendered nginx.conf: a hash of everything the
// template sees. The reload is confirmed by a worker that reports it.
func viewChecksum(v *view) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("checksum of nginx.conf: %w", err)
	}
	sum := sha256.Sum256(data)
	return "conf-" + hex.EncodeToString(sum[:12]), nil
}

func (v *view) setGlobal(g config.Global) error {
	v.UseForwardedHeaders = g.UseForwardedHeaders
	v.ResponseHeaders = g.ResponseHeaders()
	if g.UpstreamKeepalive < 0 || g.UpstreamKeepalive > 100000 {
		return invalid("upstream keepalive", strconv.Itoa(g.UpstreamKeepalive))
	}
	v.UpstreamKeepalive = g.UpstreamKeepalive
	// The proxy timeouts and body size of nginx.conf are ingress-nginx's
	// defaults, whatever the ConfigMap says: model.Build puts other values
	// into the routes, so that changing them reloads nothing.
	d := config.DefaultGlobal()
	g.ProxyConnectTimeout, g.ProxyReadTimeout, g.ProxySendTimeout, g.ProxyBodySize = d.ProxyConnectTimeout, d.ProxyReadTimeout, d.ProxySendTimeout, d.ProxyBodySize
	timeouts, err := timeoutDirectives([]string{"proxy", "grpc"}, g.ProxyConnectTimeout, g.ProxyReadTimeout, g.ProxySendTimeout)
	if err != nil {
		return err
	}
	v.GlobalDirectives = timeouts
	if g.ProxyBodySize != "" {
		n, ok := g.ProxyBodySize.Bytes()
		if !ok {
			return invalid("proxy body size", string(g.ProxyBodySize))
		}
		v.BodySize = n
	}
	return nil
}

// timeoutDirectives renders the non-zero timeouts for each module prefix.
func timeoutDirectives(prefixes []string, connect, read, send int) ([]string, error) {
	var out []string
	for _, t := range []struct {
		name string
		v    int
	}{{"connect", connect}, {"read", read}, {"send", send}} {
		if t.v == 0 {
			continue
		}
		s, err := seconds(t.v)
		if err != nil {
			return nil, fmt.Errorf("%s timeout: %w", t.name, err)
		}
		for _, p := range prefixes {
			out = append(out, p+"_"+t.name+"_timeout "+s)
		}
	}
	return out, nil
}

// listenLines returns the listen arguments of the public server, with
// HTTP/2 on the HTTPS listener when http2 is set.
func listenLines(o *Options, http2, proxyProtocol bool) []string {
	ssl := " ssl default_server"
	if http2 {
		ssl = " ssl http2 default_server"
	}
	plain := " default_server"
	if proxyProtocol {
		plain, ssl = " proxy_protocol"+plain, " proxy_protocol"+ssl
	}
	var out []string
	https := listenAddrs(o, o.HTTPSPort)
	for i, a := range listenAddrs(o, o.HTTPPort) {
		out = append(out, a+plain, https[i]+ssl)
	}
	return out
}

// setGatewayListeners adds a listen of each Gateway listener port to the
// public server, with ssl for an HTTPS one and http2 for an h2c one
// (config.Listener.H2C), after checking it again
// (config.ValidListenerPort: not one of nginx's own ports), in order.
func (v *view) setGatewayListeners(o *Options, ls []config.Listener, http2 bool) error {
	own := []int{o.HTTPPort, o.HTTPSPort, o.StatusPort}
	for i, l := range ls {
		if err := config.ValidListenerPort(l.Port, own); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidValue, err)
		}
		if i > 0 && l.Port <= ls[i-1].Port {
			return invalid("gateway listener ports (not sorted and unique)", strconv.Itoa(l.Port))
		}
		opts := ""
		switch {
		case l.TLS && http2:
			opts = " ssl http2"
		case l.TLS:
			opts = " ssl"
		case l.H2C: // h2c only: nginx 1.22 serves no HTTP/1.1 beside it
			opts = " http2"
		}
		for _, a := range listenAddrs(o, l.Port) {
			v.Listen = append(v.Listen, a+opts)
		}
		v.GatewayPorts = append(v.GatewayPorts, l.Port)
	}
	// Gateway routes may modify response headers (ResponseHeaderModifier):
	// with a Gateway port, the response header filter runs (a new port
	// reloads anyway).
	v.ResponseHeaders = v.ResponseHeaders || len(ls) > 0
	return nil
}

// LuaGatewayPorts is GatewayPorts as a Lua list.
func (v *view) LuaGatewayPorts() string {
	parts := make([]string, len(v.GatewayPorts))
	for i, p := range v.GatewayPorts {
		parts[i] = strconv.Itoa(p)
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// listenAddrs returns the listen addresses of port: on ListenAddress, or
// on every IPv4 address and, with IPv6, every IPv6 address.
func listenAddrs(o *Options, port int) []string {
	p := strconv.Itoa(port)
	switch {
	case o.ListenAddress != "":
		return []string{net.JoinHostPort(o.ListenAddress, p)}
	case o.IPv6:
		return []string{p, "[::]:" + p}
	default:
		return []string{p}
	}
}

// proxyLocation is one fixed named location of the public server; Lua is
// the code of its rewrite_by_lua_block.
type proxyLocation struct {
	Name       string
	Lua        string
	Access     string `json:",omitempty"` // access_by_lua (the ModSecurity locations)
	Directives []string
}

// proxyLocations is the fixed set of named locations router.lua sends
// requests to with ngx.exec (lua/proxy.lua location_of builds the same
// names). The directives that take no variables but matter per route are
// its dimensions: protocol (http, https), response buffering, request
// buffering, HTTP version and the interception of the backend's errors
// (none "_i0", all "_i1", or those of the ConfigMap's custom-http-errors,
// global, "_i2"), 48 locations that all send nginx's errors to
// @custom_error, and the 6 of gRPC (protocol and interception only); plus
// @https, @grpc and @grpcs with nginx.conf's defaults, and @custom_error.
// An HTTP route at the defaults stays in location /.
// Buffer sizes are not dimensions: they are the ConfigMap's only (see
// docs/dataplane.md).
func proxyLocations(global string) []proxyLocation {
	out := []proxyLocation{
		{Name: "@https", Directives: []string{"proxy_pass https://upstream_balancer"}},
		{Name: "@grpc", Directives: []string{"grpc_pass grpc://upstream_balancer"}},
		{Name: "@grpcs", Directives: []string{"grpc_pass grpcs://upstream_balancer"}},
		{Name: "@custom_error", Lua: `require("phases").error_page_rewrite()`, Directives: []string{"proxy_pass http://upstream_balancer"}},
	}
	flag := map[bool]string{true: "1", false: "0"}
	all := "error_page " + errorPageCodes() + " = @custom_error"
	if global == "" {
		global = errorPageCodes()
	}
	intercepts := []struct {
		name, on, pages string
	}{
		{"0", "off", all},
		{"1", "on", all},
		{"2", "on", "error_page " + global + " = @custom_error"},
	}
	for _, scheme := range []string{"grpc", "grpcs"} {
		for _, i := range intercepts {
			out = append(out, proxyLocation{Name: "@" + scheme + "_i" + i.name, Directives: []string{
				"grpc_intercept_errors " + i.on, i.pages, "grpc_pass " + scheme + "://upstream_balancer",
			}})
		}
	}
	for _, scheme := range []string{"http", "https"} {
		for _, buffering := range []bool{true, false} {
			for _, request := range []bool{true, false} {
				for _, version := range []string{"1.0", "1.1"} {
					for _, i := range intercepts {
						out = append(out, proxyLocation{
							Name: "@" + scheme + "_b" + flag[buffering] + "_r" + flag[request] + "_v" +
								strings.ReplaceAll(version, ".", "") + "_i" + i.name,
							Directives: []string{
								"proxy_buffering " + onOff(buffering),
								"proxy_request_buffering " + onOff(request),
								"proxy_http_version " + version,
								"proxy_intercept_errors " + i.on,
								i.pages,
								"proxy_pass " + scheme + "://upstream_balancer",
							},
						})
					}
				}
			}
		}
	}
	return out
}

// errorCodes validates the ConfigMap's custom-http-errors ("404,503") and
// returns them separated by spaces, for error_page.
func errorCodes(list string) (string, error) {
	if list == "" {
		return "", nil
	}
	codes := strings.Split(list, ",")
	for _, c := range codes {
		n, err := strconv.Atoi(c)
		if err != nil || len(c) != 3 || n < 400 || n > 599 || n == 499 {
			return "", invalid("custom-http-errors", list)
		}
	}
	return strings.Join(codes, " "), nil
}

// errorPageCodes are the codes custom-http-errors may list, 400 to 599
// but 499 (the client closed the connection: nothing to answer, and nginx's
// error_page refuses it).
func errorPageCodes() string {
	codes := make([]string, 0, 200)
	for c := 400; c <= 599; c++ {
		if c != 499 {
			codes = append(codes, strconv.Itoa(c))
		}
	}
	return strings.Join(codes, " ")
}

// realIP is the realip module's configuration: the header (or
// proxy_protocol) that holds the client address, and the proxies trusted
// to set it.
type realIP struct {
	Header string
	From   []string
}

// setRealIP sets RealIP and ForwardedFor. Trust is explicit:
// a forwarded header (use-forwarded-headers or enable-real-ip) sets the
// client address only when it comes from a proxy of proxy-real-ip-cidr,
// which is empty unless set (ingress-nginx trusts 0.0.0.0/0). With
// use-proxy-protocol the PROXY header's address is the client's (from
// proxy-real-ip-cidr, or from any peer when it is empty: every connection
// must start with the header), and a forwarded header is not read.
func (v *view) setRealIP(forwarded bool, n *config.NginxSettings) error {
	trusted, err := cidrList("proxy real ip cidr", n.ProxyRealIPCIDR)
	if err != nil {
		return err
	}
	header := n.ForwardedForHeader
	if header == "" {
		header = "X-Forwarded-For"
	}
	if !headerNameRe.MatchString(header) {
		return invalid("forwarded for header", header)
	}
	v.OriginalForwardedFor = "$http_" + strings.ReplaceAll(strings.ToLower(header), "-", "_")
	switch {
	case n.UseProxyProtocol:
		if len(trusted) == 0 {
			trusted = []string{"0.0.0.0/0", "::/0"}
		}
		v.RealIP = &realIP{Header: "proxy_protocol", From: trusted}
	case (forwarded || n.EnableRealIP) && len(trusted) > 0:
		v.RealIP = &realIP{Header: header, From: trusted}
	}
	if forwarded && n.ComputeFullForwardedFor {
		v.ForwardedFor = "$realip_remote_addr"
		if n.UseProxyProtocol {
			v.ForwardedFor = "$proxy_protocol_addr"
		}
	}
	return nil
}
