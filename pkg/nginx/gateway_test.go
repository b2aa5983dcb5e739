package nginx

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// onPort returns a client that sends every request to 127.0.0.1:port
// whatever the URL's host, which stays the Host header and the SNI name.
func onPort(port int) *http.Client { return sniClient(port, "", false) }

// checkOn fails unless GET url on port answers status from backend ("" for
// none).
func checkOn(t *testing.T, port int, url string, status int, backend string) {
	t.Helper()
	r, err := echo.Get(t.Context(), onPort(port), url)
	if err != nil || r.Status != status || r.Reply.Backend != backend {
		t.Fatalf("GET %s on port %d = %d from %q (%v), want %d from %q", url, port, r.Status, r.Reply.Backend, err, status, backend)
	}
}

// gatewayServer is a Server of Gateway listener port port: host's "/" to
// backend.
func gatewayServer(port int, host, backend string) config.Server {
	return config.Server{Hostname: host, Port: port, Locations: []config.Location{
		{Path: "/", PathType: config.PathPrefix, Backend: backend, Ingress: "gw/" + backend, Kind: "HTTPRoute"}}}
}

// TestGatewayListeners: nginx listens on each Gateway listener port and
// looks the request's host up in that port's table only: requests on port
// A never reach Gateway B's routes nor the Ingresses', two default servers
// of two ports stay apart, a listener port without routes answers 404; a
// route added to a port reloads nothing, a new listener port reloads once.
func TestGatewayListeners(t *testing.T) {
	ing, gwA, gwA2, gwB, gwD := startEcho(t, "ing"), startEcho(t, "gw-a"), startEcho(t, "gw-a2"), startEcho(t, "gw-b"), startEcho(t, "gw-d")
	ports := freePorts(t, 4)
	a, b, c, d := ports[0], ports[1], ports[2], ports[3]
	cfg := configOf("gw-1", []config.Server{serverOf("a.example.com", prefixLoc("/", "ing"))},
		backendOf("ing", ing), backendOf("gw-a", gwA), backendOf("gw-a2", gwA2), backendOf("gw-b", gwB), backendOf("gw-d", gwD))
	cfg.Servers = append(cfg.Servers, gatewayServer(a, "_", "gw-a"), gatewayServer(a, "a.example.com", "gw-a2"), gatewayServer(b, "_", "gw-b"))
	cfg.Listeners = []config.Listener{{Port: a}, {Port: b}, {Port: c}}
	h := startNginx(t, cfg, nil)
	own := h.opts.HTTPPort
	for _, tc := range []struct {
		name         string
		port         int
		url, backend string
		status       int
	}{
		{"Ingress host on nginx's port", own, "http://a.example.com/", "ing", 200},
		{"unknown host on nginx's port: the built-in 404", own, "http://other.example.com/", "", 404},
		{"Gateway A's host on A", a, "http://a.example.com/x", "gw-a2", 200},
		{"Gateway A's default server on A", a, "http://other.example.com/", "gw-a", 200},
		{"A's host on B: B's default server", b, "http://a.example.com/", "gw-b", 200},
		{"a listener port without routes: 404", c, "http://a.example.com/", "", 404},
	} {
		t.Run(tc.name, func(t *testing.T) { checkOn(t, tc.port, tc.url, tc.status, tc.backend) })
	}
	// The live table names the route's object with its kind (syncer routes).
	if host, err := h.lua.GetHost(t.Context(), config.ServerKey(a, "a.example.com")); err != nil || len(host.Routes) == 0 ||
		host.Routes[0].Kind != "HTTPRoute" || host.Routes[0].Ingress != "gw/gw-a2" {
		t.Fatalf("live routes of %s: %+v, %v; want HTTPRoute gw/gw-a2", config.ServerKey(a, "a.example.com"), host, err)
	}

	workers := workerPIDs(t, h.proc.Pid())
	next := *cfg
	next.Servers = append(slices0(cfg.Servers), gatewayServer(b, "b.example.com", "gw-a"))
	next.Checksum = "gw-2"
	if reloaded, err := applyDiff(t.Context(), h.app, &next); err != nil || reloaded {
		t.Fatalf("a route added to a listener port: reloaded %v, %v", reloaded, err)
	}
	checkNotReloaded(t, h, workers)
	checkOn(t, b, "http://b.example.com/", 200, "gw-a")
	checkOn(t, a, "http://b.example.com/", 200, "gw-a") // A's default server

	third := next
	third.Servers = append(slices0(next.Servers), gatewayServer(d, "_", "gw-d"))
	third.Listeners = []config.Listener{{Port: a}, {Port: b}, {Port: c}, {Port: d}}
	third.Checksum = "gw-3"
	if reloaded, err := applyDiff(t.Context(), h.app, &third); err != nil || !reloaded {
		t.Fatalf("a new listener port: reloaded %v, %v", reloaded, err)
	}
	checkOn(t, d, "http://a.example.com/", 200, "gw-d")
	checkOn(t, a, "http://a.example.com/", 200, "gw-a2")
}

// TestGatewayCertificates: on a Gateway HTTPS listener's port the
// certificate is that of the port's host ("<port>:<name>"), apart from the
// one of the same name on nginx's own HTTPS port or on another Gateway's;
// an unknown name gets the port's "_" certificate (a listener without
// hostname), else the default; with SSL passthrough too (the Gateway's port terminates TLS itself).
func TestGatewayCertificates(t *testing.T) {
	for _, passthrough := range []bool{false, true} {
		t.Run("passthrough="+strconv.FormatBool(passthrough), func(t *testing.T) { testGatewayCertificates(t, passthrough) })
	}
}

func testGatewayCertificates(t *testing.T, passthrough bool) {
	ca := newTestCA(t)
	web := startEcho(t, "web")
	ports := freePorts(t, 2)
	a, b := ports[0], ports[1]
	ingCert, ingSerial := ca.issue(t, "app/ing", "s.example.com")
	aCert, aSerial := ca.issue(t, "gw/a", "s.example.com")
	aCert.Hosts = []string{config.ServerKey(a, "s.example.com")}
	bCert, bSerial := ca.issue(t, "gw/b", "s.example.com")
	// B's listener has no hostname: its certificate is the port's default.
	bCert.Hosts = []string{config.ServerKey(b, "s.example.com"), config.ServerKey(b, config.DefaultServerName)}
	def, defSerial := ca.issue(t, "default/default", "default.test")
	cfg := configOf("gwtls-1", []config.Server{{Hostname: "s.example.com", TLS: true, Locations: []config.Location{prefixLoc("/", "web")}}},
		backendOf("web", web))
	srvA := gatewayServer(a, "s.example.com", "web")
	srvA.TLS = true
	cfg.Servers = append(cfg.Servers, srvA)
	cfg.Certificates = []config.Certificate{ingCert, def, aCert, bCert}
	cfg.DefaultCertificate = "default/default"
	cfg.Listeners = []config.Listener{{Port: a, TLS: true}, {Port: b, TLS: true}}
	h := startNginx(t, cfg, func(o *Options) { o.EnableSSLPassthrough = passthrough })
	for _, tc := range []struct {
		name, sni, verify, serial string
		port                      int
	}{
		{"nginx's own port", "s.example.com", "s.example.com", ingSerial, h.opts.HTTPSPort},
		{"Gateway A's port", "s.example.com", "s.example.com", aSerial, a},
		{"Gateway B's port", "s.example.com", "s.example.com", bSerial, b},
		{"an unknown name on A: the default", "x.example.com", "default.test", defSerial, a},
		{"an unknown name on B: the port's own default", "x.example.com", "s.example.com", bSerial, b},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.servedOn(ca, tc.port, tc.sni, tc.verify)
			if err != nil || got != tc.serial {
				t.Fatalf("port %d SNI %s: serial %s, %v; want %s", tc.port, tc.sni, got, err, tc.serial)
			}
		})
	}
	checkOn(t, a, "https://s.example.com/", 200, "web")
	checkOn(t, b, "https://s.example.com/", 404, "")
}

// slices0 is a copy of s with room for one more.
func slices0[T any](s []T) []T { return append(make([]T, 0, len(s)+1), s...) }

// TestGatewayWildcards: on a Gateway listener's port "*.example.com"
// matches any number of labels, the longest wildcard first, and never
// the apex; on nginx's own port a wildcard matches one label only; the
// certificate of a wildcard host is served the same way.
func TestGatewayWildcards(t *testing.T) {
	ca := newTestCA(t)
	outer, inner, ing := startEcho(t, "outer"), startEcho(t, "inner"), startEcho(t, "ing")
	p := freePorts(t, 1)[0]
	cfg := configOf("gwwild-1", []config.Server{serverOf("*.example.com", prefixLoc("/", "ing"))},
		backendOf("outer", outer), backendOf("inner", inner), backendOf("ing", ing))
	deep := gatewayServer(p, "*.example.com", "outer")
	deep.TLS = true
	cfg.Servers = append(cfg.Servers, deep, gatewayServer(p, "*.b.example.com", "inner"))
	cfg.Listeners = []config.Listener{{Port: p, TLS: true}}
	cert, serial := ca.issue(t, "gw/wild", "*.example.com")
	cert.Hosts = []string{config.ServerKey(p, "*.example.com")}
	cfg.Certificates = append(cfg.Certificates, cert)
	h := startNginx(t, cfg, nil)
	own := h.opts.HTTPPort
	for _, tc := range []struct {
		name         string
		port         int
		url, backend string
		status       int
	}{
		{"one label on the Gateway port", p, "https://a.example.com/", "outer", 200},
		{"three labels on the Gateway port", p, "https://x.y.z.example.com/", "outer", 200},
		{"the longest wildcard first", p, "https://x.y.b.example.com/", "inner", 200},
		{"the apex is not matched", p, "https://example.com/", "", 404},
		{"one label on nginx's port", own, "http://a.example.com/", "ing", 200},
		{"two labels on nginx's port: not matched", own, "http://x.a.example.com/", "", 404},
	} {
		t.Run(tc.name, func(t *testing.T) { checkOn(t, tc.port, tc.url, tc.status, tc.backend) })
	}
	// x509 lets "*.example.com" verify one label: the serial says which
	// certificate SNI x.y.z.example.com got.
	if got, err := h.servedOn(ca, p, "x.y.z.example.com", "a.example.com"); err != nil || got != serial {
		t.Fatalf("SNI x.y.z.example.com on port %d: serial %s, %v; want %s", p, got, err, serial)
	}
}
