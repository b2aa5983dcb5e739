package nginx

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// Tests of listener isolation and misdirected requests on a Gateway port
// with several listeners (config.Server.Listeners, lua/router.lua), and of
// the request header filters of weighted backends.

// sniClient returns a client that sends every request to 127.0.0.1:port
// whatever the URL's host (the Host header), over TLS with SNI name sni
// ("": the URL's host); over HTTP/2 when h2.
func sniClient(port int, sni string, h2 bool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		},
		ForceAttemptHTTP2: h2,
		TLSClientConfig:   &tls.Config{ServerName: sni, InsecureSkipVerify: true}, //nolint:gosec // routing; certificates are checked with servedOn
	}}
}

// withListeners returns srv on a port whose listeners are ls.
func withListeners(srv config.Server, ls ...string) config.Server {
	srv.Listeners = ls
	return srv
}

// TestGatewayListenerIsolation: on a Gateway port with several listeners
// a request is served by the Servers of the listener its host selects only
// (the most specific listener hostname it matches), never by a wildcard
// of a less specific listener; over TLS (HTTP/1.1 and HTTP/2) a request
// whose SNI name selects another listener than its Host header gets 421,
// as the suite's GatewayHTTPListenerIsolation and
// HTTPRouteHTTPSListenerDetectMisdirectedRequests ask.
func TestGatewayListenerIsolation(t *testing.T) {
	ca := newTestCA(t)
	ports := freePorts(t, 2)
	plain, secure := ports[0], ports[1]
	// plain: listeners "_", "*.example.com" and "abc.example.com", whose
	// routes are on "_" and "*.example.com" only.
	pl := []string{"*.example.com", "_", "abc.example.com"}
	// secure: the suite's four HTTPS listeners, each with its route.
	sl := []string{"*.wildcard.org", "_", "fourth-example.wildcard.org", "second-example.org"}
	cfg := configOf("iso-1", nil, echoBackends(t, "any", "wild", "v1", "v2", "v3", "v4")...)
	for _, s := range []config.Server{
		withListeners(gatewayServer(plain, "_", "any"), pl...),
		withListeners(gatewayServer(plain, "*.example.com", "wild"), pl...),
		withListeners(gatewayServer(secure, "example.org", "v1"), sl...),
		withListeners(gatewayServer(secure, "second-example.org", "v2"), sl...),
		withListeners(gatewayServer(secure, "*.wildcard.org", "v3"), sl...),
		withListeners(gatewayServer(secure, "fourth-example.wildcard.org", "v4"), sl...),
	} {
		s.TLS = s.Port == secure
		cfg.Servers = append(cfg.Servers, s)
	}
	cert, _ := ca.issue(t, "gw/all", "example.org", "*.example.org", "*.wildcard.org")
	cert.Hosts = []string{config.ServerKey(secure, config.DefaultServerName)}
	cfg.Certificates = []config.Certificate{cert}
	cfg.Listeners = []config.Listener{{Port: plain}, {Port: secure, TLS: true}}
	startNginx(t, cfg, nil)

	t.Run("isolation", func(t *testing.T) {
		for _, tc := range []struct {
			host, backend string
			status        int
		}{
			{"bar.com", "any", 200},
			{"bar.example.com", "wild", 200},
			{"x.y.example.com", "wild", 200},
			{"abc.example.com", "", 404}, // its listener has no route: not the wildcard's
		} {
			t.Run(tc.host, func(t *testing.T) { checkOn(t, plain, "http://"+tc.host+"/", tc.status, tc.backend) })
		}
	})
	cases := []struct {
		sni, host, backend string
		status             int
	}{
		{"example.org", "example.org", "v1", 200},
		{"example.org", "second-example.org", "", 421},
		{"example.org", "unknown-example.org", "", 404},
		{"second-example.org", "second-example.org", "v2", 200},
		{"second-example.org", "example.org", "", 421},
		{"second-example.org", "unknown-example.org", "", 421},
		{"third-example.wildcard.org", "third-example.wildcard.org", "v3", 200},
		{"third-example.wildcard.org", "fifth-example.wildcard.org", "v3", 200},
		{"third-example.wildcard.org", "fourth-example.wildcard.org", "", 421},
		{"third-example.wildcard.org", "second-example.org", "", 421},
		{"third-example.wildcard.org", "unknown-example.org", "", 421},
		{"fourth-example.wildcard.org", "fourth-example.wildcard.org", "v4", 200},
		{"fourth-example.wildcard.org", "fifth-example.wildcard.org", "", 421},
		{"unknown-example.org", "example.org", "v1", 200},
		{"unknown-example.org", "unknown-example.org", "", 404},
		{"UNKNOWN-example.org", "second-example.org", "", 421},
	}
	for _, h2 := range []bool{false, true} {
		t.Run("misdirected, HTTP/2 "+strconv.FormatBool(h2), func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.sni+" "+tc.host, func(t *testing.T) {
					r, err := echo.Get(t.Context(), sniClient(secure, tc.sni, h2), "https://"+tc.host+"/detect")
					if err != nil || r.Status != tc.status || r.Reply.Backend != tc.backend {
						t.Fatalf("SNI %s Host %s: %d from %q (%v), want %d from %q", tc.sni, tc.host, r.Status, r.Reply.Backend, err, tc.status, tc.backend)
					}
					if h2 && r.TLS != nil && r.TLS.NegotiatedProtocol != "h2" {
						t.Fatalf("negotiated %q, want h2", r.TLS.NegotiatedProtocol)
					}
				})
			}
		})
	}
}

// TestWeightedBackendFilters: each weighted backend's request header
// filter changes the requests sent to it alone, after the route's own
// filter; a single backend with a filter keeps it.
func TestWeightedBackendFilters(t *testing.T) {
	set := func(name, value string) *config.HeaderFilter {
		return &config.HeaderFilter{Set: []config.Header{{Name: name, Value: value}}}
	}
	two := prefixLoc("/two", "")
	two.Filters = &config.Filters{RequestHeaders: &config.HeaderFilter{Set: []config.Header{{Name: "X-Order", Value: "route"}}}}
	two.Backends = []config.WeightedBackend{
		{Backend: "a", Weight: 1, RequestHeaders: &config.HeaderFilter{Set: []config.Header{{Name: "Backend", Value: "a"}},
			Add: []config.Header{{Name: "X-Order", Value: "backend"}}}},
		{Backend: "b", Weight: 1, RequestHeaders: set("Backend", "b")},
	}
	one := prefixLoc("/one", "")
	one.Backends = []config.WeightedBackend{{Backend: "a", Weight: 1, RequestHeaders: &config.HeaderFilter{Remove: []string{"X-Gone"}}}}
	cfg := configOf("bf-1", []config.Server{serverOf("bf.test", two, one)}, echoBackends(t, "a", "b")...)
	h := startNginx(t, cfg, nil)

	seen := map[string]int{}
	for range 40 {
		r := h.mustGet("http://bf.test/two", "Backend", "client")
		b, hd := r.Reply.Backend, r.Reply.Headers
		if r.Status != 200 || hd.Get("Backend") != b {
			t.Fatalf("status %d from %q, Backend header %q", r.Status, b, hd.Get("Backend"))
		}
		want := []string{"route"}
		if b == "a" {
			want = []string{"route", "backend"}
		}
		if !slices.Equal(hd.Values("X-Order"), want) {
			t.Fatalf("backend %s got X-Order %q, want %q", b, hd.Values("X-Order"), want)
		}
		seen[b]++
	}
	if seen["a"] == 0 || seen["b"] == 0 {
		t.Errorf("40 requests reached %v, want both backends", seen)
	}
	r := h.mustGet("http://bf.test/one", "X-Gone", "1", "X-Kept", "1")
	if r.Status != 200 || r.Reply.Backend != "a" || r.Reply.Headers.Get("X-Gone") != "" || r.Reply.Headers.Get("X-Kept") != "1" {
		t.Errorf("one backend: %d from %q, headers %v", r.Status, r.Reply.Backend, r.Reply.Headers)
	}
}
