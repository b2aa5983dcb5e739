package nginx

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// settingsConfig is a Configuration serving host a.test from one echo
// backend, with the ConfigMap defaults and mutate applied to its Nginx
// settings.
func settingsConfig(t *testing.T, mutate func(*model.NginxSettings)) *model.Configuration {
	t.Helper()
	e := startEcho(t, "web")
	cfg := configOf("settings", []model.Server{serverOf("a.test", prefixLoc("/", "web"))}, backendOf("web", e))
	cfg.Global.Nginx = model.DefaultGlobal().Nginx
	if mutate != nil {
		mutate(&cfg.Global.Nginx)
	}
	return cfg
}

// rawGet sends GET url (Host a.test) with the header pairs and returns the
// response headers and the raw, undecoded body length.
func rawGet(t *testing.T, h *harness, url string, header ...string) (http.Header, int) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "a.test"
	for i := 0; i+1 < len(header); i += 2 {
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
		mutate  func(*model.NginxSettings)
		pad     bool
		gzipped bool
	}{
		"off by default": {pad: true},
		"on, a default type above the minimum length": {mutate: func(n *model.NginxSettings) { n.UseGzip = true }, pad: true, gzipped: true},
		"on, below the minimum length":                {mutate: func(n *model.NginxSettings) { n.UseGzip, n.GzipMinLength = true, 1500 }},
		"on, a type not listed":                       {mutate: func(n *model.NginxSettings) { n.UseGzip, n.GzipTypes = true, "text/css" }, pad: true},
		"on, every type":                              {mutate: func(n *model.NginxSettings) { n.UseGzip, n.GzipTypes, n.GzipLevel = true, "*", 9 }, pad: true, gzipped: true},
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

func TestSettingsServerTokens(t *testing.T) {
	for _, tokens := range []bool{false, true} {
		t.Run("server-tokens="+strconv.FormatBool(tokens), func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, func(n *model.NginxSettings) { n.ServerTokens = tokens }), nil)
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
		mutate func(*model.NginxSettings)
		want   string
	}{
		"default":    {want: "max-age=31536000; includeSubDomains"},
		"off":        {mutate: func(n *model.NginxSettings) { n.HSTS = false }},
		"configured": {mutate: func(n *model.NginxSettings) { n.HSTSMaxAge, n.HSTSIncludeSubdomains, n.HSTSPreload = 600, false, true }, want: "max-age=600; preload"},
		"everything": {mutate: func(n *model.NginxSettings) { n.HSTSMaxAge, n.HSTSPreload = 0, true }, want: "max-age=0; includeSubDomains; preload"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := startNginx(t, settingsConfig(t, tc.mutate), nil)
			if got, _ := rawGet(t, h, "https://a.test:443/"); got.Get("Strict-Transport-Security") != tc.want {
				t.Errorf("HTTPS: Strict-Transport-Security %q, want %q", got.Get("Strict-Transport-Security"), tc.want)
			}
			if got, _ := rawGet(t, h, "http://a.test/"); got.Values("Strict-Transport-Security") != nil {
				t.Errorf("HTTP: Strict-Transport-Security %q, want none", got.Values("Strict-Transport-Security"))
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
	h := startNginx(t, settingsConfig(t, func(n *model.NginxSettings) { n.SSLProtocols = "TLSv1.3" }), nil)
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
			h := startNginx(t, settingsConfig(t, func(n *model.NginxSettings) { n.UseHTTP2 = on }), nil)
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
	for _, v := range model.LogFormatVariables() {
		b.WriteString(" $" + v)
	}
	b.WriteString(` $http_x_a $sent_http_x_b $upstream_http_x_c $cookie_d $arg_e $upstream_cookie_f"}`)
	h := startNginx(t, settingsConfig(t, func(n *model.NginxSettings) {
		n.LogFormatUpstream, n.LogFormatEscapeJSON = b.String(), true
	}), nil)
	rawGet(t, h, "http://a.test/")
}
