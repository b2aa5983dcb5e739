package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Bounds of the ConfigMap settings the renderer accepts (pkg/model applies
// the same or narrower ones).
const (
	maxSettingSeconds = 7 * 24 * 3600
	maxSettingCount   = 1 << 30
)

// gzipDisableRe is what a gzip_disable value may hold (pkg/model checks
// it is a regular expression).
var gzipDisableRe = regexp.MustCompile(`^[A-Za-z0-9 .*+?()\[\]|^/_:-]{1,256}$`)

// setNginx validates the ConfigMap's nginx directives (config.NginxSettings)
// and renders them. The worker settings override the options when set.
func (v *view) setNginx(n *config.NginxSettings) error {
	if err := v.setWorkers(n); err != nil {
		return err
	}
	var d directives
	v.Brotli = d.brotli(n)
	d.gzip(n)
	d.client(n)
	d.ssl(n)
	d.add("proxy_buffering %s", onOff(n.ProxyBuffering))
	d.buffers(n)
	d.proxy(n)
	d.add("http2_max_concurrent_streams %s", d.count("http2 max concurrent streams", n.HTTP2MaxConcurrentStreams, 1))
	d.add("server_tokens %s", onOff(n.ServerTokens))
	v.GenerateRequestID, v.OriginalURIHeader = n.GenerateRequestID, n.ProxyAddOriginalURIHeader
	switch v.HTTPRedirectCode = n.HTTPRedirectCode; v.HTTPRedirectCode {
	case 0:
		v.HTTPRedirectCode = 308
	case 301, 302, 307, 308:
	default:
		d.fail(invalid("http redirect code", strconv.Itoa(n.HTTPRedirectCode)))
	}
	if n.HSTS {
		v.HSTS = d.hsts(n)
	}
	v.HTTPDirectives = d.list
	var u directives
	u.add("keepalive_timeout %s", u.seconds("upstream keepalive timeout", n.UpstreamKeepaliveTimeout, 1))
	u.add("keepalive_requests %s", u.count("upstream keepalive requests", n.UpstreamKeepaliveRequests, 1))
	if n.UpstreamKeepaliveTime != 0 {
		u.add("keepalive_time %s", u.seconds("upstream keepalive time", n.UpstreamKeepaliveTime, 1))
	}
	v.UpstreamDirectives = u.list
	escape := ""
	switch {
	case n.LogFormatEscapeNone: // wins, as ingress-nginx's template
		escape = "none"
	case n.LogFormatEscapeJSON:
		escape = "json"
	}
	format, err := logFormat(n.LogFormatUpstream, escape)
	if err != nil {
		return err
	}
	v.LogFormat = format
	if err := v.setAccessLog(n); err != nil {
		return err
	}
	if d.err != nil {
		return d.err
	}
	return u.err
}

// setWorkers applies worker-processes, max-worker-connections,
// worker-shutdown-timeout and error-log-level when the ConfigMap sets them.
func (v *view) setWorkers(n *config.NginxSettings) error {
	if p := n.WorkerProcesses; p != "" {
		if _, err := strconv.Atoi(p); p != "auto" && (err != nil || !allDigits(p) || len(p) > 4) {
			return invalid("worker processes", p)
		}
		v.WorkerProcesses = p
	}
	if c := n.MaxWorkerConnections; c != 0 {
		if c < 16 || c > 1<<20 {
			return invalid("max worker connections", strconv.Itoa(c))
		}
		v.WorkerConnections = c
	}
	if t := n.WorkerShutdownTimeout; t != 0 {
		if t < 1 || t > maxSettingSeconds {
			return invalid("worker shutdown timeout", strconv.Itoa(t))
		}
		v.WorkerShutdownTimeout = strconv.Itoa(t) + "s"
	}
	if l := n.ErrorLogLevel; l != "" {
		if !logLevelRe.MatchString(l) {
			return invalid("error log level", l)
		}
		v.ErrorLogLevel = l
	}
	return nil
}

// directives collects rendered directives and the first validation error.
type directives struct {
	list []string
	err  error
}

func (d *directives) add(format string, args ...any) {
	d.list = append(d.list, fmt.Sprintf(format, args...))
}

func (d *directives) fail(err error) string {
	if d.err == nil {
		d.err = err
	}
	return "invalid"
}

func (d *directives) size(what string, s config.Size) string {
	out, err := nginxSize(s)
	if err != nil || s == "0" {
		return d.fail(invalid(what, string(s)))
	}
	return out
}

func (d *directives) count(what string, n, min int) string {
	if n < min || n > maxSettingCount {
		return d.fail(invalid(what, strconv.Itoa(n)))
	}
	return strconv.Itoa(n)
}

func (d *directives) seconds(what string, n, min int) string {
	if n < min || n > maxSettingSeconds {
		return d.fail(invalid(what, strconv.Itoa(n)))
	}
	return strconv.Itoa(n) + "s"
}

func (d *directives) gzip(n *config.NginxSettings) {
	if !n.UseGzip {
		return
	}
	if n.GzipLevel < 1 || n.GzipLevel > 9 {
		d.fail(invalid("gzip level", strconv.Itoa(n.GzipLevel)))
	}
	types, err := mimeTypes("gzip types", n.GzipTypes)
	if err != nil {
		d.fail(err)
	}
	d.add("gzip on")
	d.add("gzip_comp_level %d", n.GzipLevel)
	if v := n.GzipDisable; v != "" {
		if !gzipDisableRe.MatchString(v) {
			d.fail(invalid("gzip disable", v))
		}
		d.add(`gzip_disable "%s"`, v)
	}
	d.add("gzip_http_version 1.1")
	d.add("gzip_min_length %s", d.count("gzip min length", n.GzipMinLength, 0))
	d.add("gzip_types %s", types)
	d.add("gzip_proxied any")
	d.add("gzip_vary on")
}

// brotli renders enable-brotli and its keys, and reports whether
// nginx.conf loads the brotli filter module. A client that accepts both
// gets brotli: the module's filter, loaded after nginx's own, runs before
// gzip, which leaves an encoded response alone. Brotli's responses carry
// Vary: Accept-Encoding (the module reads gzip_vary), with or without
// use-gzip.
func (d *directives) brotli(n *config.NginxSettings) bool {
	b := n.Brotli
	if !b.Enable {
		return false
	}
	if b.Level < 0 || b.Level > 11 {
		d.fail(invalid("brotli level", strconv.Itoa(b.Level)))
	}
	types, err := mimeTypes("brotli types", b.Types)
	if err != nil {
		d.fail(err)
	}
	d.add("brotli on")
	d.add("brotli_comp_level %d", b.Level)
	d.add("brotli_min_length %s", d.count("brotli min length", b.MinLength, 0))
	d.add("brotli_types %s", types)
	if !n.UseGzip { // the brotli filter sends Vary as gzip_vary says; gzip() sets it too
		d.add("gzip_vary on")
	}
	return true
}

// buffers renders the proxy and client body buffers. nginx refuses a
// proxy_busy_buffers_size below one buffer or not below all buffers but
// one: say so here, with the values.
func (d *directives) buffers(n *config.NginxSettings) {
	size := d.size("proxy buffer size", n.ProxyBufferSize)
	number := n.ProxyBuffersNumber
	if number == 0 {
		number = 4
	}
	d.add("proxy_buffer_size %s", size)
	d.add("proxy_buffers %s %s", d.count("proxy buffers number", number, 2), size)
	if b := n.ProxyBusyBuffersSize; b != "" {
		busy, _ := b.Bytes()
		one, _ := n.ProxyBufferSize.Bytes()
		if busy < one || busy > int64(number-1)*one {
			d.fail(fmt.Errorf("proxy-busy-buffers-size %s must be at least proxy-buffer-size (%s) and at most proxy-buffers-number-1 buffers", b, n.ProxyBufferSize))
		}
		d.add("proxy_busy_buffers_size %s", d.size("proxy busy buffers size", b))
	}
	if b := n.ClientBodyBufferSize; b != "" {
		d.add("client_body_buffer_size %s", d.size("client body buffer size", b))
	}
	if n.GRPCBufferSizeKB != 0 {
		d.add("grpc_buffer_size %sk", d.count("grpc buffer size", n.GRPCBufferSizeKB, 1))
	}
}

// proxy renders the ConfigMap's proxy directives of every backend.
func (d *directives) proxy(n *config.NginxSettings) {
	if n.ProxyNextUpstreamTimeout != 0 {
		t := d.seconds("proxy next upstream timeout", n.ProxyNextUpstreamTimeout, 1)
		d.add("proxy_next_upstream_timeout %s", t)
		d.add("grpc_next_upstream_timeout %s", t)
	}
	if n.AllowBackendServerHeader {
		d.add("proxy_pass_header Server")
	}
	if n.HideHeaders != "" {
		for _, h := range strings.Split(n.HideHeaders, ",") {
			if !headerNameRe.MatchString(h) {
				d.fail(invalid("hide headers", n.HideHeaders))
				break
			}
			d.add("proxy_hide_header %s", h)
		}
	}
	if n.RelativeRedirects {
		d.add("absolute_redirect off")
	}
}

func (d *directives) client(n *config.NginxSettings) {
	d.add("keepalive_timeout %s", d.seconds("keep-alive", n.KeepAlive, 0))
	d.add("keepalive_requests %s", d.count("keep-alive requests", n.KeepAliveRequests, 1))
	d.add("client_header_timeout %s", d.seconds("client header timeout", n.ClientHeaderTimeout, 1))
	d.add("client_body_timeout %s", d.seconds("client body timeout", n.ClientBodyTimeout, 1))
	d.add("client_header_buffer_size %s", d.size("client header buffer size", n.ClientHeaderBufferSize))
	if n.LargeClientHeaderBuffers < 1 || n.LargeClientHeaderBuffers > 1024 {
		d.fail(invalid("large client header buffers", strconv.Itoa(n.LargeClientHeaderBuffers)))
	}
	d.add("large_client_header_buffers %d %s", n.LargeClientHeaderBuffers,
		d.size("large client header buffer size", n.LargeClientHeaderBufferSize))
}

func (d *directives) ssl(n *config.NginxSettings) {
	protocols, err := sslProtocols(n.SSLProtocols)
	if err != nil {
		d.fail(err)
	}
	ciphers, err := cipherList(n.SSLCiphers)
	if err != nil {
		d.fail(err)
	}
	d.add("ssl_protocols %s", protocols)
	d.add("ssl_ciphers '%s'", ciphers)
	d.add("ssl_prefer_server_ciphers on")
	if n.SSLSessionCache {
		d.add("ssl_session_cache shared:SSL:%s", d.size("ssl session cache size", n.SSLSessionCacheSize))
		d.add("ssl_session_timeout %s", d.seconds("ssl session timeout", n.SSLSessionTimeout, 1))
	}
	d.add("ssl_session_tickets %s", onOff(n.SSLSessionTickets))
}

// hsts returns the quoted Strict-Transport-Security value.
func (d *directives) hsts(n *config.NginxSettings) string {
	v := "max-age=" + d.count("hsts max age", n.HSTSMaxAge, 0)
	if n.HSTSIncludeSubdomains {
		v += "; includeSubDomains"
	}
	if n.HSTSPreload {
		v += "; preload"
	}
	return `"` + v + `"`
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
