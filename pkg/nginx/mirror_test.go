package nginx

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// mirrored is one copy a sink received.
type mirrored struct {
	Method, URI, Host, Body string
	Header                  http.Header
}

// sink records the copies it receives and answers 204; a holding sink
// accepts connections and answers nothing until the test ends (a mirror
// that hangs).
type sink struct {
	port int
	got  chan mirrored
	n    atomic.Int64
}

// startSink serves a sink on a free port of 127.0.0.1 until the test ends.
func startSink(t *testing.T, hold bool) *sink {
	t.Helper()
	s := &sink{port: freePorts(t, 1)[0], got: make(chan mirrored, 1024)}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var conns sync.WaitGroup
	t.Cleanup(func() { close(release); l.Close(); conns.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				if hold {
					<-release
					return
				}
				s.serve(c)
			})
		}
	}()
	return s
}

func (s *sink) serve(c net.Conn) {
	r, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.n.Add(1)
	s.got <- mirrored{Method: r.Method, URI: r.RequestURI, Host: r.Host, Body: string(body), Header: r.Header}
	_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
}

// next returns the next copy the sink receives.
func (s *sink) next(t *testing.T) mirrored {
	t.Helper()
	var m mirrored
	waitFor(t, "a mirrored request", func() bool {
		select {
		case m = <-s.got:
			return true
		default:
			return false
		}
	})
	return m
}

func mirrorLoc(path, backend string, ms ...config.Mirror) config.Location {
	l := prefixLoc(path, backend)
	l.Mirrors = ms
	return l
}

func sinkBackend(name string, s *sink) config.Backend {
	b := config.Backend{Name: name, Namespace: "default", Service: name, Port: "80", LoadBalance: "round_robin"}
	b.Endpoints = []config.Endpoint{{Address: "127.0.0.1", Port: int32(s.port)}}
	return b
}

func post(t *testing.T, h *harness, url, body string, header ...string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestMirrorCopiesRequests: a URL mirror and a backend mirror each get a
// copy of the request: its method, URI (the URL's template expanded, or the
// request's own), the Host (mirror-host, the URL's host, the request's for
// a backend), its headers, and its body only when asked; the request gets
// its own backend's answer.
func TestMirrorCopiesRequests(t *testing.T) {
	main, url, backend, bare := startEcho(t, "main"), startSink(t, false), startSink(t, false), startSink(t, false)
	cfg := configOf("mirror-1", []config.Server{serverOf("mirror.test",
		mirrorLoc("/", "main",
			config.Mirror{URL: "http://127.0.0.1:" + itoa(url.port) + "/copy$request_uri", Host: "shadow.test", Body: true, Numerator: 1, Denominator: 1},
			config.Mirror{Backend: "shadow", Numerator: 100, Denominator: 100}),
		mirrorLoc("/bare", "main", config.Mirror{URL: "http://127.0.0.1:" + itoa(bare.port), Body: true, Numerator: 1, Denominator: 1}),
	)}, backendOf("main", main), sinkBackend("shadow", backend))
	h := startNginx(t, cfg, nil)

	if code := post(t, h, "http://mirror.test/a/b?x=1", "hello", "X-Test", "one"); code != 200 {
		t.Fatalf("POST = %d, want 200 from the route's backend", code)
	}
	for _, tc := range []struct {
		name                  string
		s                     *sink
		uri, host, body, xlen string
	}{
		{"url mirror: template, mirror host, body", url, "/copy/a/b?x=1", "shadow.test", "hello", "5"},
		{"backend mirror: request URI and host, no body", backend, "/a/b?x=1", "mirror.test", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.s.next(t)
			if m.Method != "POST" || m.URI != tc.uri || m.Host != tc.host || m.Body != tc.body ||
				m.Header.Get("X-Test") != "one" || m.Header.Get("Content-Length") != tc.xlen || m.Header.Get("X-Forwarded-For") != "127.0.0.1" {
				t.Fatalf("copy %+v, want POST %s Host %s body %q Content-Length %q with X-Test and X-Forwarded-For", m, tc.uri, tc.host, tc.body, tc.xlen)
			}
		})
	}
	t.Run("url without path: the request's URI, the URL's host", func(t *testing.T) {
		if code := post(t, h, "http://mirror.test/bare/x?y=2", "body"); code != 200 {
			t.Fatalf("POST = %d", code)
		}
		m := bare.next(t)
		if m.URI != "/bare/x?y=2" || m.Host != "127.0.0.1:"+itoa(bare.port) || m.Body != "body" {
			t.Fatalf("copy %+v", m)
		}
	})
}

// TestMirrorNeverHoldsTheRequest: with one mirror that accepts and never
// answers and one where nothing listens, every request is answered by its
// backend on the same keep-alive connection while the copies hang or fail;
// the failures are counted.
func TestMirrorNeverHoldsTheRequest(t *testing.T) {
	main, hang := startEcho(t, "main"), startSink(t, true)
	dead := freePorts(t, 1)[0]
	cfg := configOf("mirror-hold", []config.Server{serverOf("mirror.test",
		mirrorLoc("/", "main",
			config.Mirror{URL: "http://127.0.0.1:" + itoa(hang.port) + "$request_uri", Body: true, Numerator: 1, Denominator: 1},
			config.Mirror{URL: "http://127.0.0.1:" + itoa(dead) + "$request_uri", Numerator: 1, Denominator: 1}),
	)}, backendOf("main", main))
	h := startNginx(t, cfg, nil)
	for i := range 20 {
		if code := post(t, h, "http://mirror.test/r/"+itoa(i), "payload"); code != 200 {
			t.Fatalf("request %d = %d, want 200", i, code)
		}
	}
	if main.Requests() != 20 {
		t.Fatalf("backend answered %d requests, want 20", main.Requests())
	}
	waitFor(t, "the failed copies counted", func() bool {
		tr, err := h.lua.GetTraffic(context.Background())
		return err == nil && tr.Mirrors.Failed >= 20
	})
}

// TestMirrorFraction: a mirror of 1 in 4 requests gets about a quarter of
// them (a bounded sample, a wide tolerance: 400 requests, expected 100,
// accepted 40 to 160, about seven standard deviations each way), one of
// every request gets each, and one of 0 none.
func TestMirrorFraction(t *testing.T) {
	main, quarter, all, none := startEcho(t, "main"), startSink(t, false), startSink(t, false), startSink(t, false)
	cfg := configOf("mirror-fraction", []config.Server{serverOf("mirror.test",
		mirrorLoc("/", "main",
			config.Mirror{Backend: "quarter", Numerator: 25, Denominator: 100},
			config.Mirror{Backend: "all", Numerator: 1, Denominator: 1},
			config.Mirror{Backend: "none", Numerator: 0, Denominator: 100}),
	)}, backendOf("main", main), sinkBackend("quarter", quarter), sinkBackend("all", all), sinkBackend("none", none))
	h := startNginx(t, cfg, nil)
	const n = 400
	for i := range n {
		if r := h.mustGet("http://mirror.test/f/" + itoa(i)); r.Status != 200 {
			t.Fatalf("request %d = %d", i, r.Status)
		}
	}
	waitFor(t, "every copy answered", func() bool {
		tr, err := h.lua.GetTraffic(context.Background())
		return err == nil && all.n.Load() == n && tr.Mirrors.Sent == float64(n+quarter.n.Load())
	})
	if got := quarter.n.Load(); got < 40 || got > 160 {
		t.Errorf("the 25%% mirror got %d of %d requests, want 40 to 160", got, n)
	}
	if got := none.n.Load(); got != 0 {
		t.Errorf("the 0%% mirror got %d requests", got)
	}
}
