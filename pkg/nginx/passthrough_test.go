package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// startTLSBackend starts a TLS server with its own certificate for host
// (from ca) that answers each connection with "<name>\n" once the
// handshake is done; it returns its endpoint and the certificate's serial.
func startTLSBackend(t testing.TB, ca *testCA, name, host string) (config.Endpoint, string) {
	t.Helper()
	c, serial := ca.issue(t, name, host)
	pair, err := tls.X509KeyPair(c.Cert, c.Key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(l4Wait))
				_, _ = conn.Write([]byte(name + "\n"))
			}()
		}
	}()
	return config.Endpoint{Address: "127.0.0.1", Port: int32(ln.Addr().(*net.TCPAddr).Port)}, serial
}

// passthroughCall makes a TLS connection with sni to the HTTPS port and
// returns the serial of the certificate presented and the first line
// received (a passthrough backend's name).
func (h *harness) passthroughCall(sni string) (serial, line string, err error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: l4Wait}, Config: &tls.Config{ServerName: sni, InsecureSkipVerify: true}} //nolint:gosec // the serial is checked
	conn, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(h.opts.HTTPSPort)))
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(l4Wait))
	serial = conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
	line, err = bufio.NewReader(conn).ReadString('\n')
	return serial, strings.TrimSpace(line), err
}

func TestSSLPassthrough(t *testing.T) {
	ca := newTestCA(t)
	web := startEcho(t, "web")
	ptEP, ptSerial := startTLSBackend(t, ca, "pt-backend", "pt.example.com")
	pt2EP, pt2Serial := startTLSBackend(t, ca, "pt2-backend", "pt2.example.com")
	webCert, webSerial := ca.issue(t, "default/web", "web.example.com")
	def, defSerial := ca.issue(t, "default/default", "default.test")
	cfg := configOf("pt-1", []config.Server{
		{Hostname: "web.example.com", TLS: true, SSLRedirect: true, Locations: []config.Location{prefixLoc("/", "web")}},
	}, backendOf("web", web))
	cfg.Certificates, cfg.DefaultCertificate = []config.Certificate{def, webCert}, def.Name
	cfg.Passthrough = []config.PassthroughHost{{Hostname: "pt.example.com", Ingress: "default/pt", Backend: "pt", Endpoints: []config.Endpoint{ptEP}}}
	h := startNginx(t, cfg, func(o *Options) { o.EnableSSLPassthrough = true })
	workers := workerPIDs(t, h.proc.Pid())

	t.Run("a passthrough host answers with its backend's certificate", func(t *testing.T) {
		serial, line, err := h.passthroughCall("pt.example.com")
		if err != nil || serial != ptSerial || line != "pt-backend" {
			t.Fatalf("serial %s, %q, %v; want %s from pt-backend", serial, line, err, ptSerial)
		}
	})
	t.Run("a TLS host answers with its Secret's certificate", func(t *testing.T) {
		if got, err := h.served(ca, "web.example.com", "web.example.com"); err != nil || got != webSerial {
			t.Fatalf("serial %s, %v; want %s", got, err, webSerial)
		}
	})
	for _, sni := range []string{"unknown.example.com", ""} {
		t.Run("SNI "+strconv.Quote(sni)+" reaches the HTTPS server", func(t *testing.T) {
			if got, err := h.served(ca, sni, "default.test"); err != nil || got != defSerial {
				t.Fatalf("serial %s, %v; want the default %s", got, err, defSerial)
			}
		})
	}
	t.Run("the client address and the public port reach the HTTP backend", func(t *testing.T) {
		r := h.mustGet("https://web.example.com/x")
		hd := r.Reply.Headers
		if r.Status != 200 || r.Reply.Backend != "web" || hd.Get("X-Real-IP") != "127.0.0.1" || hd.Get("X-Forwarded-For") != "127.0.0.1" ||
			hd.Get("X-Forwarded-Port") != itoa(h.opts.HTTPSPort) || hd.Get("X-Forwarded-Proto") != "https" {
			t.Fatalf("%d from %q: X-Real-IP %q, X-Forwarded-For %q, X-Forwarded-Port %q, X-Forwarded-Proto %q", r.Status, r.Reply.Backend,
				hd.Get("X-Real-IP"), hd.Get("X-Forwarded-For"), hd.Get("X-Forwarded-Port"), hd.Get("X-Forwarded-Proto"))
		}
		if r := h.mustGet("http://web.example.com/x"); r.Status != 308 {
			t.Fatalf("HTTP: %d, want the redirect", r.Status)
		}
	})
	t.Run("passthrough hosts added and removed without a reload", func(t *testing.T) {
		next := *h.app.Running()
		next.Checksum = "pt-2"
		next.Passthrough = []config.PassthroughHost{{Hostname: "pt2.example.com", Ingress: "default/pt2", Backend: "pt2", Endpoints: []config.Endpoint{pt2EP}}}
		if _, err := applyDiff(t.Context(), h.app, &next); err != nil {
			t.Fatal(err)
		}
		checkNotReloaded(t, h, workers)
		if serial, line, err := h.passthroughCall("pt2.example.com"); err != nil || serial != pt2Serial || line != "pt2-backend" {
			t.Fatalf("added host: serial %s, %q, %v; want %s from pt2-backend", serial, line, err, pt2Serial)
		}
		if got, err := h.served(ca, "pt.example.com", "default.test"); err != nil || got != defSerial {
			t.Fatalf("removed host: serial %s, %v; want the HTTPS server's default %s", got, err, defSerial)
		}
	})
}

// TestSSLPassthroughBehindProxyProtocol: with use-proxy-protocol, the
// public HTTPS listener decodes the load balancer's PROXY header and the
// HTTP backend sees the address it names; a passthrough host's backend
// still gets the bare TLS stream.
func TestSSLPassthroughBehindProxyProtocol(t *testing.T) {
	ca := newTestCA(t)
	web := startEcho(t, "web")
	ptEP, ptSerial := startTLSBackend(t, ca, "pt-backend", "pt.example.com")
	cfg := configOf("pp-1", []config.Server{
		{Hostname: "web.example.com", TLS: true, Locations: []config.Location{prefixLoc("/", "web")}},
	}, backendOf("web", web))
	cfg.Global.Nginx = config.DefaultGlobal().Nginx
	cfg.Global.Nginx.UseProxyProtocol = true
	cfg.Passthrough = []config.PassthroughHost{{Hostname: "pt.example.com", Endpoints: []config.Endpoint{ptEP}}}
	h := startNginx(t, cfg, func(o *Options) { o.EnableSSLPassthrough = true })

	dial := func(sni string) *tls.Conn {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", itoa(h.opts.HTTPSPort)), l4Wait)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(l4Wait))
		if _, err := io.WriteString(c, "PROXY TCP4 192.0.2.9 127.0.0.1 41000 443\r\n"); err != nil {
			t.Fatal(err)
		}
		return tls.Client(c, &tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // not about certificates
	}
	c := dial("web.example.com")
	if _, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHost: web.example.com\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply echo.Reply
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	if got := reply.Headers.Get("X-Real-IP"); resp.StatusCode != 200 || got != "192.0.2.9" {
		t.Fatalf("%d: X-Real-IP %q, want the PROXY header's 192.0.2.9", resp.StatusCode, got)
	}
	p := dial("pt.example.com")
	line, err := bufio.NewReader(p).ReadString('\n')
	if err != nil || line != "pt-backend\n" || p.ConnectionState().PeerCertificates[0].SerialNumber.String() != ptSerial {
		t.Fatalf("passthrough behind PROXY: %q, %v", line, err)
	}
}
