package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// Per-route settings through a real nginx: backend protocol, timeouts,
// body size, allowlist and the HTTPS redirect.

// What a reflector backend saw, in the headers of its echo.Reply.
const (
	seenProto = "X-Seen-Proto"
	seenTLS   = "X-Seen-Tls"
	seenBody  = "X-Seen-Body"
)

// reflectorReply writes an echo.Reply for r that also says what only a
// backend of its own sees: the protocol, TLS and the size of the body,
// which it reads whole.
func reflectorReply(name string, w http.ResponseWriter, r *http.Request) echo.Reply {
	n, _ := io.Copy(io.Discard, r.Body)
	hd := r.Header.Clone()
	hd.Set(seenProto, r.Proto)
	hd.Set(seenTLS, strconv.FormatBool(r.TLS != nil))
	hd.Set(seenBody, strconv.FormatInt(n, 10))
	w.Header().Set("X-Echo-Backend", name)
	return echo.Reply{Backend: name, Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.RawQuery, Headers: hd}
}

// reflector is an HTTP backend answering with reflectorReply.
func reflector(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply := reflectorReply(name, w, r)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
	})
}

// grpcFrame is one length-prefixed gRPC message.
func grpcFrame(msg []byte) []byte {
	out := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

// grpcReflector answers a gRPC call with one message, the JSON of its
// reflectorReply, and grpc-status 0 in the trailers.
func grpcReflector(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply := reflectorReply(name, w, r)
		w.Header().Del("X-Echo-Backend") // the reply travels in a gRPC message
		msg, _ := json.Marshal(reply)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		_, _ = w.Write(grpcFrame(msg))
		w.Header().Set("Grpc-Status", "0")
	})
}

// startH2C starts a cleartext HTTP/2-only (prior knowledge) backend.
func startH2C(t testing.TB, h http.Handler) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("h2c backend: %v", err)
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

// startHTTPTest starts h on 127.0.0.1, over TLS when secure (HTTP/2 too
// when h2), and returns its port.
func startHTTPTest(t testing.TB, h http.Handler, secure, h2 bool) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = h2
	if secure {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// backendAt is a Backend whose endpoints are ports of 127.0.0.1.
func backendAt(name string, ports ...int) config.Backend {
	b := config.Backend{Name: name, Namespace: "default", Service: name, Port: "80", LoadBalance: "round_robin"}
	for _, p := range ports {
		b.Endpoints = append(b.Endpoints, config.Endpoint{Address: "127.0.0.1", Port: int32(p)})
	}
	return b
}

func settingsLoc(path, backend string, st config.LocationSettings) config.Location {
	return config.Location{Path: path, PathType: config.PathPrefix, Backend: backend, Ingress: "default/test", Settings: st}
}

// h2Client speaks HTTP/2 over TLS to nginx's HTTPS port, whatever the URL.
func (h *harness) h2Client() *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: 5 * time.Second}
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", itoa(h.opts.HTTPSPort)))
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // routing test, certificates are checked in cert_test.go
		Protocols:       new(http.Protocols),
	}
	tr.Protocols.SetHTTP2(true)
	t := h.t
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// grpcCall sends one gRPC message to url over HTTP/2 and returns the
// status, the reply the backend put in its message and the grpc-status
// trailer.
func grpcCall(c *http.Client, url string) (int, echo.Reply, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(grpcFrame([]byte("hello"))))
	if err != nil {
		return 0, echo.Reply{}, "", err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := c.Do(req)
	if err != nil {
		return 0, echo.Reply{}, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, echo.Reply{}, "", err
	}
	var reply echo.Reply
	if len(body) < 5 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		return resp.StatusCode, reply, resp.Trailer.Get("Grpc-Status"), fmt.Errorf("not one gRPC message: %q", body)
	}
	err = json.Unmarshal(body[5:], &reply)
	return resp.StatusCode, reply, resp.Trailer.Get("Grpc-Status"), err
}

func TestBackendProtocols(t *testing.T) {
	cfg := configOf("proto-1", []config.Server{serverOf("p.test",
		settingsLoc("/plain", "plain", config.LocationSettings{}),
		settingsLoc("/secure", "secure", config.LocationSettings{BackendProtocol: "HTTPS"}),
		settingsLoc("/grpc.Echo", "grpc", config.LocationSettings{BackendProtocol: "GRPC"}),
		settingsLoc("/grpcs.Echo", "grpcs", config.LocationSettings{BackendProtocol: "GRPCS"}),
	)},
		backendAt("plain", startHTTPTest(t, reflector("plain"), false, false)),
		backendAt("secure", startHTTPTest(t, reflector("secure"), true, false)),
		backendAt("grpc", startH2C(t, grpcReflector("grpc"))),
		backendAt("grpcs", startHTTPTest(t, grpcReflector("grpcs"), true, true)),
	)
	h := startNginx(t, cfg, nil)
	tests := []struct {
		name, url, backend, proto, tls string
	}{
		{"HTTP", "http://p.test/plain/x?q=1", "plain", "HTTP/1.1", "false"},
		{"HTTPS", "http://p.test/secure/x?q=1", "secure", "HTTP/1.1", "true"},
		{"HTTPS from an HTTPS client", "https://p.test/secure/y", "secure", "HTTP/1.1", "true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url)
			hd := r.Reply.Headers
			if r.Status != 200 || r.Reply.Backend != tc.backend || hd.Get(seenProto) != tc.proto || hd.Get(seenTLS) != tc.tls {
				t.Fatalf("GET %s = %d from %q (%s, TLS %s), want 200 from %q (%s, TLS %s)", tc.url, r.Status,
					r.Reply.Backend, hd.Get(seenProto), hd.Get(seenTLS), tc.backend, tc.proto, tc.tls)
			}
			if want := strings.TrimPrefix(strings.TrimPrefix(tc.url, "http://p.test"), "https://p.test"); r.Reply.URI() != want {
				t.Errorf("backend saw %q, want %q", r.Reply.URI(), want)
			}
		})
	}
	grpcTests := []struct {
		name, path, backend, tls string
	}{
		{"GRPC", "/grpc.Echo/Say", "grpc", "false"},
		{"GRPCS", "/grpcs.Echo/Say", "grpcs", "true"},
	}
	c := h.h2Client()
	for _, tc := range grpcTests {
		t.Run(tc.name, func(t *testing.T) {
			status, reply, grpcStatus, err := grpcCall(c, "https://p.test"+tc.path)
			if err != nil {
				t.Fatalf("gRPC call %s: %d, %v", tc.path, status, err)
			}
			hd := reply.Headers
			if status != 200 || grpcStatus != "0" || reply.Backend != tc.backend || reply.Path != tc.path {
				t.Errorf("gRPC %s = %d, grpc-status %q, from %q at %q; want 200, 0, from %q", tc.path, status, grpcStatus,
					reply.Backend, reply.Path, tc.backend)
			}
			if hd.Get(seenProto) != "HTTP/2.0" || hd.Get(seenTLS) != tc.tls || hd.Get(seenBody) != itoa(len(grpcFrame([]byte("hello")))) {
				t.Errorf("backend saw %s, TLS %s, %s body bytes; want HTTP/2.0, TLS %s, the whole message",
					hd.Get(seenProto), hd.Get(seenTLS), hd.Get(seenBody), tc.tls)
			}
		})
	}
}

// TestPerRouteReadTimeout: a route's proxy-read-timeout, not the global
// one, bounds the wait for a slow backend.
func TestPerRouteReadTimeout(t *testing.T) {
	slow := startEcho(t, "slow")
	slow.SetDelay(3 * time.Second)
	cfg := configOf("timeout-1", []config.Server{serverOf("slow.test",
		settingsLoc("/short", "slow", config.LocationSettings{ProxyReadTimeout: 1}),
		settingsLoc("/global", "slow", config.LocationSettings{}),
	)}, backendOf("slow", slow))
	h := startNginx(t, cfg, nil)
	tests := []struct {
		name, url string
		status    int
	}{
		{"route timeout shorter than the backend", "http://slow.test/short", 504},
		{"global timeout longer than the backend", "http://slow.test/global", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if r := h.mustGet(tc.url); r.Status != tc.status {
				t.Errorf("GET %s = %d, want %d", tc.url, r.Status, tc.status)
			}
		})
	}
}

// postBody sends size bytes to url, with a Content-Length or chunked, and
// returns the status and the reply.
func (h *harness) postBody(url string, size int, chunked bool) (echo.Response, error) {
	var body io.Reader = strings.NewReader(strings.Repeat("x", size))
	if chunked {
		body = struct{ io.Reader }{body} // unknown length: Transfer-Encoding: chunked
	}
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		return echo.Response{}, err
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return echo.Response{}, err
	}
	defer resp.Body.Close()
	r := echo.Response{Status: resp.StatusCode, Header: resp.Header}
	if resp.Header.Get("X-Echo-Backend") != "" {
		err = json.NewDecoder(resp.Body).Decode(&r.Reply)
	}
	return r, err
}

func TestPerRouteBodySize(t *testing.T) {
	cfg := configOf("body-1", []config.Server{serverOf("body.test",
		settingsLoc("/small", "sink", config.LocationSettings{ProxyBodySize: "1k"}),
		settingsLoc("/big", "sink", config.LocationSettings{ProxyBodySize: "4m"}),
		settingsLoc("/unlimited", "sink", config.LocationSettings{ProxyBodySize: "0"}),
		settingsLoc("/global", "sink", config.LocationSettings{}),
	)}, backendAt("sink", startHTTPTest(t, reflector("sink"), false, false)))
	h := startNginx(t, cfg, nil) // Global.ProxyBodySize is 1m
	const kib, mib = 1 << 10, 1 << 20
	tests := []struct {
		name    string
		path    string
		size    int
		chunked bool
		status  int
	}{
		{"under the route limit", "/small", 512, false, 200},
		{"under the route limit, chunked", "/small", 512, true, 200},
		{"at the route limit", "/small", kib, false, 200},
		{"over the route limit", "/small", 2 * kib, false, 413},
		{"over the route limit, chunked", "/small", 2 * kib, true, 413},
		{"route limit above the global one", "/big", 3 * mib, false, 200},
		{"route limit above the global one, chunked", "/big", 3 * mib, true, 200},
		{"over a route limit above the global one, chunked", "/big", 5 * mib, true, 413},
		{"no limit", "/unlimited", 3 * mib, false, 200},
		{"no limit, chunked", "/unlimited", 3 * mib, true, 200},
		{"global limit", "/global", 512 * kib, false, 200},
		{"over the global limit", "/global", 2 * mib, false, 413},
		{"over the global limit, chunked", "/global", 2 * mib, true, 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := h.postBody("http://body.test"+tc.path, tc.size, tc.chunked)
			if err != nil {
				t.Fatalf("POST %d bytes to %s: %v", tc.size, tc.path, err)
			}
			if r.Status != tc.status {
				t.Fatalf("POST %d bytes to %s (chunked %v) = %d, want %d", tc.size, tc.path, tc.chunked, r.Status, tc.status)
			}
			if got := r.Reply.Headers.Get(seenBody); tc.status == 200 && got != itoa(tc.size) {
				t.Errorf("backend got %s bytes, want %d", got, tc.size)
			}
		})
	}
}

func TestAllowlistAndForcedRedirect(t *testing.T) {
	yes := true
	cfg := configOf("access-1", []config.Server{serverOf("f.test",
		settingsLoc("/allowed", "a", config.LocationSettings{AllowSourceRange: []string{"127.0.0.1/32"}}),
		settingsLoc("/denied", "a", config.LocationSettings{AllowSourceRange: []string{"10.0.0.0/8"}}),
		settingsLoc("/mixed", "a", config.LocationSettings{AllowSourceRange: []string{"10.0.0.0/8", "127.0.0.0/8"}}),
		settingsLoc("/v6", "a", config.LocationSettings{AllowSourceRange: []string{"::/0"}}),
		settingsLoc("/forced", "a", config.LocationSettings{SSLRedirect: &yes}),
		settingsLoc("/forced-denied", "a", config.LocationSettings{SSLRedirect: &yes, AllowSourceRange: []string{"10.0.0.0/8"}}),
		settingsLoc("/plain", "a", config.LocationSettings{}),
		settingsLoc("/slash", "a", config.LocationSettings{SSLRedirect: &yes, PreserveTrailingSlash: true}),
		settingsLoc("/port", "a", config.LocationSettings{SSLRedirect: &yes, UsePortInRedirects: true}),
	)}, backendOf("a", startEcho(t, "a")))
	h := startNginx(t, cfg, nil) // f.test has no TLS: only SSLRedirect overrides redirect
	// As ingress-nginx: no port unless use-port-in-redirects (nginx listens
	// on another port than the load balancer in front of it), and no
	// trailing slash unless preserve-trailing-slash.
	https := "https://f.test"
	tests := []struct {
		name, url, host string
		status          int
		location        string
	}{
		{"allowed address", "http://f.test/allowed/x", "", 200, ""},
		{"denied address", "http://f.test/denied/x", "", 403, ""},
		{"denied over HTTPS too", "https://f.test/denied/x", "", 403, ""},
		{"one of several ranges", "http://f.test/mixed", "", 200, ""},
		{"IPv6 range only", "http://f.test/v6", "", 403, ""},
		{"forced redirect", "http://f.test/forced/x?q=1&r=2", "", 308, https + "/forced/x?q=1&r=2"},
		{"forced redirect drops the request's port", "http://f.test/forced/x?q=1", "f.test:8080", 308, https + "/forced/x?q=1"},
		{"forced redirect keeps the raw path", "http://f.test/forced/a%20b", "", 308, https + "/forced/a%20b"},
		{"forced route over HTTPS", "https://f.test/forced/x", "", 200, ""},
		{"redirect before the allowlist", "http://f.test/forced-denied", "", 308, https + "/forced-denied"},
		{"allowlist after the redirect", "https://f.test/forced-denied", "", 403, ""},
		{"no redirect on a host without TLS", "http://f.test/plain", "", 200, ""},
		{"trailing slash dropped", "http://f.test/forced/", "", 308, https + "/forced"},
		{"trailing slash of the query kept", "http://f.test/forced/?a=/", "", 308, https + "/forced/?a="},
		{"preserve-trailing-slash", "http://f.test/slash/", "", 308, https + "/slash/"},
		{"use-port-in-redirects", "http://f.test/port/x", "", 308, https + ":" + itoa(h.opts.HTTPSPort) + "/port/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var header []string
			if tc.host != "" {
				header = []string{"Host", tc.host}
			}
			r := h.mustGet(tc.url, header...)
			if r.Status != tc.status || r.Header.Get("Location") != tc.location {
				t.Fatalf("GET %s = %d, Location %q; want %d, %q", tc.url, r.Status, r.Header.Get("Location"), tc.status, tc.location)
			}
			if tc.status == 200 && r.Reply.Backend != "a" {
				t.Errorf("answered by %q, want a", r.Reply.Backend)
			}
		})
	}
}
