package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// settingsConfig is a Configuration serving host a.test from one echo
// backend, with the ConfigMap defaults and mutate applied to its Nginx
// settings.
func settingsConfig(t *testing.T, mutate func(*config.NginxSettings)) *config.Configuration {
	t.Helper()
	e := startEcho(t, "web")
	cfg := configOf("settings", []config.Server{serverOf("a.test", prefixLoc("/", "web"))}, backendOf("web", e))
	cfg.Global.Nginx = config.DefaultGlobal().Nginx
	if mutate != nil {
		mutate(&cfg.Global.Nginx)
	}
	return cfg
}

// rawGet sends GET url (Host a.test, unless a "Host" pair says another)
// with the header pairs and returns the
// response headers and the raw, undecoded body length.
func rawGet(t *testing.T, h *harness, url string, header ...string) (http.Header, int) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "a.test"
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var n int
	buf := make([]byte, 4096)
	for {
		m, err := resp.Body.Read(buf)
		n += m
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d", url, resp.StatusCode)
	}
	return resp.Header, n
}

func TestSettingsGzip(t *testing.T) {
	pad := strings.Repeat("x", 2000)
	tests := map[string]struct {
		mutate  func(*config.NginxSettings)
		pad     bool
		gzipped bool
	}{
		"off by default": {pad: true},
		"on, a default type above the minimum length": {mutate: func(n *config.NginxSettings) { n.UseGzip = true }, pad: true, gzipped: true},
		"on, below the minimum length":                {mutate: func(n *config.NginxSettings) { n.UseGzip, n.GzipMinLength = true, 1500 }},
		"on, a type not listed":                       {mutate: func(n *config.NginxSettings) { n.UseGzip, n.GzipTypes = true, "text/css" }, pad: true},
		"on, every type":                              {mutate: func(n *config.NginxSettings) { n.UseGzip, n.GzipTypes, n.GzipLevel = true, "*", 9 }, pad: true, gzipped: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, tc.mutate), nil)
			header := []string{"Accept-Encoding", "gzip"}
			if tc.pad {
				header = append(header, "X-Pad", pad)
			}
			got, n := rawGet(t, h, "http://a.test/", header...)
			if enc := got.Get("Content-Encoding"); (enc == "gzip") != tc.gzipped {
				t.Fatalf("Content-Encoding %q (body %d bytes), want gzip=%v", enc, n, tc.gzipped)
			}
			if tc.gzipped && (n >= len(pad) || got.Get("Vary") != "Accept-Encoding") {
				t.Errorf("gzipped body of %d bytes, Vary %q", n, got.Get("Vary"))
			}
		})
	}
}

// TestSettingsBrotli: enable-brotli and its keys, with Debian's brotli
// filter module (ingress-nginx's settings/brotli.go e2e test): a client
// that accepts br gets Content-Encoding br for a listed type above the
// minimum length, brotli over gzip when both are on, and gzip or nothing
// otherwise.
func TestSettingsBrotli(t *testing.T) {
	pad := strings.Repeat("x", 2000)
	on := func(more func(b *config.BrotliSettings)) func(*config.NginxSettings) {
		return func(n *config.NginxSettings) {
			n.Brotli = config.DefaultBrotli()
			n.Brotli.Enable = true
			if more != nil {
				more(&n.Brotli)
			}
		}
	}
	tests := map[string]struct {
		mutate   func(*config.NginxSettings)
		accept   string
		encoding string
		small    bool // no padding: a body under 1500 bytes with a Content-Length
	}{
		"off by default":               {accept: "br"},
		"on, a default type":           {mutate: on(nil), accept: "br", encoding: "br"},
		"on, every type, level 11":     {mutate: on(func(b *config.BrotliSettings) { b.Types, b.Level = "*", 11 }), accept: "gzip, br", encoding: "br"},
		"on, below the minimum length": {mutate: on(func(b *config.BrotliSettings) { b.MinLength = 1500 }), accept: "br", small: true},
		"on, a type not listed":        {mutate: on(func(b *config.BrotliSettings) { b.Types = "text/css" }), accept: "br"},
		"on, a client without br":      {mutate: on(nil), accept: "gzip"},
		"brotli and gzip, both accepted": {mutate: func(n *config.NginxSettings) { on(nil)(n); n.UseGzip = true },
			accept: "gzip, deflate, br", encoding: "br"},
		"brotli and gzip, gzip only accepted": {mutate: func(n *config.NginxSettings) { on(nil)(n); n.UseGzip = true },
			accept: "gzip", encoding: "gzip"},
	}
	t.Run("turned on and off by a reload", func(t *testing.T) {
		cfg := settingsConfig(t, nil)
		h := startNginx(t, cfg, nil)
		ctx := context.Background()
		for i, enable := range []bool{true, false} {
			next := *cfg
			next.Checksum = fmt.Sprint("brotli-", i)
			if enable {
				on(nil)(&next.Global.Nginx)
			}
			if reloaded, err := applyDiff(ctx, h.app, &next); err != nil || !reloaded {
				t.Fatalf("enable-brotli %v: reloaded %v, %v; want a reload", enable, reloaded, err)
			}
			got, _ := rawGet(t, h, "http://a.test/", "Accept-Encoding", "br", "X-Pad", pad)
			if enc := got.Get("Content-Encoding"); (enc == "br") != enable {
				t.Fatalf("enable-brotli %v: Content-Encoding %q", enable, enc)
			}
		}
	})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, tc.mutate), nil)
			header := []string{"Accept-Encoding", tc.accept}
			if !tc.small {
				header = append(header, "X-Pad", pad)
			}
			got, n := rawGet(t, h, "http://a.test/", header...)
			if enc := got.Get("Content-Encoding"); enc != tc.encoding {
				t.Fatalf("Content-Encoding %q (body %d bytes), want %q", enc, n, tc.encoding)
			}
			if tc.encoding != "" && (n >= len(pad) || !strings.Contains(got.Get("Vary"), "Accept-Encoding")) {
				t.Errorf("encoded body of %d bytes, Vary %q", n, got.Get("Vary"))
			}
		})
	}
}

func TestSettingsServerTokens(t *testing.T) {
	for _, tokens := range []bool{false, true} {
		t.Run("server-tokens="+strconv.FormatBool(tokens), func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, func(n *config.NginxSettings) { n.ServerTokens = tokens }), nil)
			got, _ := rawGet(t, h, "http://a.test/")
			server := got.Get("Server")
			if hasVersion := strings.HasPrefix(server, "nginx/"); hasVersion != tokens || !strings.HasPrefix(server, "nginx") {
				t.Errorf("Server %q, want a version: %v", server, tokens)
			}
		})
	}
}

func TestSettingsHSTS(t *testing.T) {
	tests := map[string]struct {
		mutate func(*config.NginxSettings)
		want   string
	}{
		"default":    {want: "max-age=31536000; includeSubDomains"},
		"off":        {mutate: func(n *config.NginxSettings) { n.HSTS = false }},
		"configured": {mutate: func(n *config.NginxSettings) { n.HSTSMaxAge, n.HSTSIncludeSubdomains, n.HSTSPreload = 600, false, true }, want: "max-age=600; preload"},
		"everything": {mutate: func(n *config.NginxSettings) { n.HSTSMaxAge, n.HSTSPreload = 0, true }, want: "max-age=0; includeSubDomains; preload"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := settingsConfig(t, tc.mutate)
			// a.test has a TLS section (the certificate does not matter
			// here); plain.test has none, as ingress-nginx, it gets no HSTS.
			i := slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Hostname == "a.test" })
			cfg.Servers[i].TLS = true
			cfg.Servers = append(cfg.Servers, serverOf("plain.test", prefixLoc("/", "web")))
			h := startNginx(t, cfg, nil)
			if got, _ := rawGet(t, h, "https://a.test:443/"); got.Get("Strict-Transport-Security") != tc.want {
				t.Errorf("HTTPS: Strict-Transport-Security %q, want %q", got.Get("Strict-Transport-Security"), tc.want)
			}
			if got, _ := rawGet(t, h, "http://a.test/x", "X-Forwarded-Proto", "https"); got.Values("Strict-Transport-Security") != nil {
				t.Errorf("HTTP: Strict-Transport-Security %q, want none", got.Values("Strict-Transport-Security"))
			}
			if got, _ := rawGet(t, h, "https://plain.test:443/", "Host", "plain.test"); got.Values("Strict-Transport-Security") != nil {
				v := got.Values("Strict-Transport-Security")
				t.Errorf("HTTPS to a host without TLS: Strict-Transport-Security %q, want none", v)
			}
		})
	}
}

// handshake connects to the HTTPS port with TLS versions [min, max] and
// ALPN protocols, and returns the connection state.
func handshake(h *harness, min, max uint16, alpn ...string) (tls.ConnectionState, error) {
	cfg := &tls.Config{ServerName: "a.test", InsecureSkipVerify: true, MinVersion: min, MaxVersion: max, NextProtos: alpn} //nolint:gosec // protocol test
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	conn, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(h.opts.HTTPSPort)))
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState(), nil
}

func TestSettingsSSLProtocols(t *testing.T) {
	h := startNginx(t, settingsConfig(t, func(n *config.NginxSettings) { n.SSLProtocols = "TLSv1.3" }), nil)
	h.allowLuaErrors = true // nginx logs the refused handshake
	if _, err := handshake(h, tls.VersionTLS12, tls.VersionTLS12); err == nil {
		t.Error("TLS 1.2 handshake succeeded with ssl-protocols TLSv1.3")
	}
	if st, err := handshake(h, tls.VersionTLS13, tls.VersionTLS13); err != nil || st.Version != tls.VersionTLS13 {
		t.Errorf("TLS 1.3 handshake: %v (version %x)", err, st.Version)
	}
}

func TestSettingsHTTP2(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run("use-http2="+strconv.FormatBool(on), func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, func(n *config.NginxSettings) { n.UseHTTP2 = on }), nil)
			st, err := handshake(h, tls.VersionTLS12, tls.VersionTLS13, "h2", "http/1.1")
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "h2", false: "http/1.1"}[on]; st.NegotiatedProtocol != want {
				t.Errorf("ALPN %q, want %q", st.NegotiatedProtocol, want)
			}
		})
	}
}

// TestSettingsLogFormatVariables starts nginx (nginx -t first) with a log
// format that uses every variable pkg/model allows, so that none of them
// can fail a reload.
func TestSettingsLogFormatVariables(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"time": "${time_iso8601}", "q": "`)
	for _, v := range ingress.LogFormatVariables() {
		b.WriteString(" $" + v)
	}
	b.WriteString(` $http_x_a $sent_http_x_b $upstream_http_x_c $cookie_d $arg_e $upstream_cookie_f"}`)
	h := startNginx(t, settingsConfig(t, func(n *config.NginxSettings) {
		n.LogFormatUpstream, n.LogFormatEscapeJSON = b.String(), true
	}), nil)
	rawGet(t, h, "http://a.test/")
}

// TestSettingsReloadMatchesRender: for ConfigMap changes built by
// model.Build, Diff reloads exactly when the rendered nginx.conf differs
// (what the Applier reloads on), and every value the model accepts
// renders.
func TestSettingsReloadMatchesRender(t *testing.T) {
	changes := [][]string{
		{"use-gzip", "true"}, {"use-gzip", "true", "gzip-level", "9", "gzip-types", "*", "gzip-min-length", "0"},
		{"ssl-protocols", "TLSv1 TLSv1.1 TLSv1.2 TLSv1.3"}, {"ssl-ciphers", "HIGH:!aNULL:@SECLEVEL=0"},
		{"ssl-session-cache", "false"}, {"ssl-session-cache-size", "1g"}, {"ssl-session-cache-size", "2g"}, {"ssl-session-timeout", "7d"},
		{"ssl-session-tickets", "true"}, {"keep-alive", "0"}, {"keep-alive-requests", "1073741824"},
		{"upstream-keepalive-timeout", "604800"}, {"upstream-keepalive-requests", "1"}, {"upstream-keepalive-connections", "0"},
		{"client-header-timeout", "1"}, {"client-body-timeout", "604800"}, {"client-header-buffer-size", "1"},
		{"large-client-header-buffers", "1024 1k"}, {"proxy-buffering", "on"}, {"proxy-buffer-size", "1"},
		{"proxy-read-timeout", "86400"}, {"proxy-body-size", "0"}, {"use-http2", "false"},
		{"http2-max-concurrent-streams", "1073741824"}, {"log-format-upstream", `{"a": "${status}"}`},
		{"log-format-escape-json", "true"}, {"error-log-level", "emerg"}, {"server-tokens", "true"},
		{"worker-processes", "1024"}, {"max-worker-connections", "16"}, {"worker-shutdown-timeout", "1s"},
		{"hsts", "false"}, {"hsts-max-age", "0"}, {"hsts-include-subdomains", "false"}, {"hsts-preload", "true"},
		{"ssl-redirect", "false"}, {"force-ssl-redirect", "true"}, {"allow-snippet-annotations", "true"},
		{"gzip-level", "0"}, {"enable-opentelemetry", "true"},
		{"enable-brotli", "true"}, {"enable-brotli", "true", "brotli-level", "0", "brotli-min-length", "0", "brotli-types", "*"},
		{"brotli-level", "11"}, {"brotli-types", "text/css"}, {"enable-brotli", "false"},
		{"use-geoip2", "true"}, {"use-geoip2", "true", "geoip2-autoreload-in-minutes", "60"}, {"geoip2-autoreload-in-minutes", "60"},
		{"log-format-upstream", "$remote_addr $geoip2_city $geoip2_asn"},
	}
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts := model.Options{ControllerClass: "k8s.io/ingress-sync", ConfigMap: "ingress/cfg"}
	base := model.Build(model.NewStore(ingress.NewSource()), opts)
	baseConf, err := r.Render(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range changes {
		t.Run(strings.Join(kv, "="), func(t *testing.T) {
			s := model.NewStore(ingress.NewSource())
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "cfg"}, Data: map[string]string{}}
			for i := 0; i+1 < len(kv); i += 2 {
				cm.Data[kv[i]] = kv[i+1]
			}
			if _, err := s.Apply(events.Event{Op: events.OpCreate, Kind: events.KindConfigMap, Object: cm}); err != nil {
				t.Fatal(err)
			}
			next := model.Build(s, opts)
			conf, err := r.Render(next)
			if err != nil {
				t.Fatalf("a value the model accepts does not render: %v", err)
			}
			if reload, differs := config.Diff(base, next).Reload, !bytes.Equal(conf, baseConf); reload != differs {
				t.Errorf("Diff reloads %v, nginx.conf differs %v", reload, differs)
			}
		})
	}
}

// TestSettingsEveryKeyPassesNginxTest starts nginx (nginx -t first) with
// every ConfigMap key set away from its default, through model.Build.
func TestSettingsEveryKeyPassesNginxTest(t *testing.T) {
	data := map[string]string{
		"use-gzip": "true", "gzip-disable": `MSIE [1-6][.]`, "gzip-level": "6", "gzip-types": "text/css, application/json", "gzip-min-length": "10",
		"ssl-protocols": "TLSv1.2", "ssl-ciphers": "ECDHE+AESGCM:!aNULL", "ssl-session-cache": "true",
		"ssl-session-cache-size": "1m", "ssl-session-timeout": "1h", "ssl-session-tickets": "true",
		"keep-alive": "30", "keep-alive-requests": "50", "upstream-keepalive-connections": "8",
		"upstream-keepalive-timeout": "20", "upstream-keepalive-requests": "100", "client-header-timeout": "20",
		"client-body-timeout": "20", "client-header-buffer-size": "2k", "large-client-header-buffers": "8 16k",
		"proxy-buffering": "on", "proxy-buffer-size": "8k", "proxy-connect-timeout": "3", "proxy-read-timeout": "7200",
		"proxy-send-timeout": "7200", "proxy-body-size": "10m", "use-http2": "false", "http2-max-concurrent-streams": "64",
		"log-format-upstream":    `{"status": $status, "backend": "$proxy_upstream_name", "id": "$req_id"}`,
		"log-format-escape-json": "true", "log-format-escape-none": "true", "error-log-level": "warn", "server-tokens": "true", "worker-processes": "2",
		"max-worker-connections": "1024", "worker-shutdown-timeout": "10s", "hsts-max-age": "100",
		"hsts-include-subdomains": "false", "hsts-preload": "true", "force-ssl-redirect": "false",
		"proxy-buffers-number": "8", "proxy-busy-buffers-size": "16k", "client-body-buffer-size": "16k",
		"proxy-next-upstream-timeout": "5", "grpc-buffer-size-kb": "8", "upstream-keepalive-time": "30m",
		"allow-backend-server-header": "true", "hide-headers": "X-Powered-By, x-debug", "relative-redirects": "true",
		"http-redirect-code": "301", "generate-request-id": "false", "proxy-add-original-uri-header": "true",
		"enable-brotli": "true", "brotli-level": "11", "brotli-min-length": "100", "brotli-types": "text/css, application/json",
		"use-geoip2": "true", "geoip2-autoreload-in-minutes": "60",
	}
	s := model.NewStore(ingress.NewSource())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "cfg"}, Data: data}
	if _, err := s.Apply(events.Event{Op: events.OpCreate, Kind: events.KindConfigMap, Object: cm}); err != nil {
		t.Fatal(err)
	}
	built := model.Build(s, model.Options{ControllerClass: "k8s.io/ingress-sync", ConfigMap: "ingress/cfg"})
	for _, p := range built.Problems {
		t.Errorf("problem: %s", p.Reason)
	}
	cfg := settingsConfig(t, nil)
	cfg.Global = built.Global
	cfg.Servers[slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Hostname == "a.test" })].TLS = true
	h := startNginx(t, cfg, nil)
	got, _ := rawGet(t, h, "https://a.test:443/")
	if v := got.Get("Strict-Transport-Security"); v != "max-age=100; preload" {
		t.Errorf("Strict-Transport-Security %q", v)
	}
}

// TestSettingsCipherNamesKnownToOpenSSL: every name pkg/model takes as
// adding ciphers matches at least one cipher of this machine's OpenSSL, so
// that a list it accepts cannot fail nginx -t for want of a cipher.
func TestSettingsCipherNamesKnownToOpenSSL(t *testing.T) {
	bin, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	for _, name := range config.SSLCipherNames() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, bin, "ciphers", name).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("openssl ciphers %s: %v: %s", name, err, out)
		}
	}
}

// TestSettingsRequestHeaders: the headers every request to a backend gets,
// as ingress-nginx's: X-Request-ID (the client's, else a new one unless
// generate-request-id is false), X-Scheme, X-Original-Forwarded-For (what
// the client sent) and, with proxy-add-original-uri-header, X-Original-URI.
func TestSettingsRequestHeaders(t *testing.T) {
	for _, tc := range []struct {
		name        string
		generate    bool
		originalURI bool
	}{
		{"defaults", true, false},
		{"generate-request-id false, proxy-add-original-uri-header true", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, func(n *config.NginxSettings) {
				n.GenerateRequestID, n.ProxyAddOriginalURIHeader = tc.generate, tc.originalURI
			}), nil)
			r := h.mustGet("http://a.test/p?q=1", "X-Request-ID", "from-client", "X-Forwarded-For", "192.0.2.7")
			seen := r.Reply.Headers
			if got := seen.Get("X-Request-ID"); got != "from-client" {
				t.Errorf("X-Request-ID %q, want the client's", got)
			}
			if got := seen.Get("X-Scheme"); got != "http" {
				t.Errorf("X-Scheme %q, want http", got)
			}
			if got := seen.Get("X-Original-Forwarded-For"); got != "192.0.2.7" {
				t.Errorf("X-Original-Forwarded-For %q, want the client's X-Forwarded-For", got)
			}
			if got, want := seen.Get("X-Original-URI"), map[bool]string{true: "/p?q=1"}[tc.originalURI]; got != want {
				t.Errorf("X-Original-URI %q, want %q", got, want)
			}
			id := h.mustGet("http://a.test/").Reply.Headers.Get("X-Request-ID")
			if tc.generate != (len(id) == 32) {
				t.Errorf("without the client's: X-Request-ID %q, want a new one: %v", id, tc.generate)
			}
		})
	}
}

// TestSettingsResponseHeaders: hide-headers removes backend response
// headers; allow-backend-server-header passes the backend's Server header
// instead of nginx's.
func TestSettingsResponseHeaders(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run("allow-backend-server-header="+strconv.FormatBool(allow), func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, func(n *config.NginxSettings) {
				n.AllowBackendServerHeader, n.HideHeaders = allow, "x-echo-backend"
			}), nil)
			got, _ := rawGet(t, h, "http://a.test/")
			if v := got.Get("X-Echo-Backend"); v != "" {
				t.Errorf("X-Echo-Backend %q, want it hidden", v)
			}
			if server := got.Get("Server"); (server == "echo") != allow || !allow && !strings.HasPrefix(server, "nginx") {
				t.Errorf("Server %q with allow-backend-server-header=%v", server, allow)
			}
		})
	}
}
