package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

const seenChunked = "X-Seen-Chunked"

// proxyReflector answers as reflector, adds whether the request body came
// chunked, and sends the request's X-Send-Location and X-Send-Cookie as its
// Location and Set-Cookie. A request with X-Signal signals started before
// its body is read.
func proxyReflector(name string, started chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Signal") != "" {
			started <- struct{}{}
		}
		chunked := strconv.FormatBool(len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked")
		reply := reflectorReply(name, w, r)
		reply.Headers.Set(seenChunked, chunked)
		if l := r.Header.Get("X-Send-Location"); l != "" {
			w.Header().Set("Location", l)
		}
		if c := r.Header.Get("X-Send-Cookie"); c != "" {
			w.Header().Set("Set-Cookie", c)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
	})
}

// deadPort is a port of 127.0.0.1 that refuses connections: one of
// freeport's, which nothing else binds (a port released by a listener of
// this test could be taken by another process's server).
func deadPort(t testing.TB) int {
	return freePorts(t, 1)[0]
}

// send makes a request to nginx and decodes the reply.
func send(t *testing.T, h *harness, method, url string, body io.Reader, header ...string) (*http.Response, echo.Reply) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var reply echo.Reply
	_ = json.Unmarshal(data, &reply)
	return resp, reply
}

func proxyLoc(path, backend string, p *config.ProxySettings) config.Location {
	return settingsLoc(path, backend, config.LocationSettings{Proxy: p})
}

// TestProxySettings: request buffering, HTTP version, tries, Location and
// Set-Cookie rewrites, AUTO_HTTP and the access log, per route, through the
// fixed locations and without a reload when they change.
func TestProxySettings(t *testing.T) {
	started := make(chan struct{}, 1)
	plain := startHTTPTest(t, proxyReflector("plain", started), false, false)
	secure := startHTTPTest(t, proxyReflector("secure", nil), true, false)
	servers := func(v string) []config.Server {
		return []config.Server{serverOf("px.test",
			proxyLoc("/default", "plain", nil),
			proxyLoc("/stream", "plain", &config.ProxySettings{RequestBuffering: "off"}),
			proxyLoc("/old", "plain", &config.ProxySettings{HTTPVersion: "1.0", Buffering: "on"}),
			proxyLoc("/one-try", "flaky", &config.ProxySettings{NextUpstreamTries: 1}),
			settingsLoc("/tries", "flaky", config.LocationSettings{}),
			proxyLoc("/rewrite", "plain", &config.ProxySettings{RedirectFrom: "http://internal.test/", RedirectTo: "https://" + v + "/",
				CookieDomainFrom: "internal.test", CookieDomainTo: v, CookiePathFrom: "/in/", CookiePathTo: "/"}),
			proxyLoc("/quiet", "plain", &config.ProxySettings{NoAccessLog: true}),
			settingsLoc("/auto", "auto", config.LocationSettings{BackendProtocol: "AUTO_HTTP"}),
			settingsLoc("/auto-secure", "auto-secure", config.LocationSettings{BackendProtocol: "AUTO_HTTP"}),
		)}
	}
	backends := []config.Backend{backendAt("plain", plain), backendAt("flaky", deadPort(t), plain),
		backendAt("auto", plain), backendAt("auto-secure", secure)}
	h := startNginx(t, configOf("px-1", servers("www.test"), backends...), nil)
	body := func() io.Reader { return io.MultiReader(strings.NewReader("hello")) } // no length: chunked

	t.Run("request buffering on: Content-Length to the backend", func(t *testing.T) {
		_, r := send(t, h, "POST", "http://px.test/default", body())
		if r.Headers.Get(seenChunked) != "false" || r.Headers.Get("Content-Length") != "5" {
			t.Fatalf("backend saw chunked=%s Content-Length %q", r.Headers.Get(seenChunked), r.Headers.Get("Content-Length"))
		}
	})
	t.Run("request buffering off: the body streams chunked", func(t *testing.T) {
		// The second half is sent once the backend has the request: nginx
		// passed it on before the body ended.
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write([]byte("hel"))
			select {
			case <-started:
				_, _ = pw.Write([]byte("lo"))
				_ = pw.Close()
			case <-time.After(testWait):
				_ = pw.CloseWithError(errors.New("the backend never got the request"))
			}
		}()
		_, r := send(t, h, "POST", "http://px.test/stream", pr, "X-Signal", "1")
		if r.Headers.Get(seenChunked) != "true" || r.Headers.Get(seenBody) != "5" {
			t.Fatalf("backend saw chunked=%s, %s bytes", r.Headers.Get(seenChunked), r.Headers.Get(seenBody))
		}
	})
	t.Run("HTTP/1.0 to the backend", func(t *testing.T) {
		_, r := send(t, h, "GET", "http://px.test/old", nil)
		if got := r.Headers.Get(seenProto); got != "HTTP/1.0" {
			t.Fatalf("backend saw %q", got)
		}
		if _, d := send(t, h, "GET", "http://px.test/default", nil); d.Headers.Get(seenProto) != "HTTP/1.1" {
			t.Fatalf("default route: backend saw %q", d.Headers.Get(seenProto))
		}
	})
	t.Run("next upstream tries", func(t *testing.T) {
		failed := 0
		for i := 0; i < 4; i++ {
			if resp, _ := send(t, h, "GET", "http://px.test/tries", nil); resp.StatusCode != 200 {
				t.Fatalf("default tries: %d", resp.StatusCode)
			}
			if resp, _ := send(t, h, "GET", "http://px.test/one-try", nil); resp.StatusCode == 502 {
				failed++
			}
		}
		if failed == 0 {
			t.Fatal("one try: the dead endpoint never answered 502")
		}
	})
	t.Run("Location and Set-Cookie rewrites", func(t *testing.T) {
		resp, _ := send(t, h, "GET", "http://px.test/rewrite", nil, "X-Send-Location", "http://internal.test/a?b=1",
			"X-Send-Cookie", "s=1; Domain=internal.test; Path=/in/x")
		if got := resp.Header.Get("Location"); got != "https://www.test/a?b=1" {
			t.Errorf("Location %q", got)
		}
		if got := resp.Header.Get("Set-Cookie"); got != "s=1; Domain=www.test; Path=/x" {
			t.Errorf("Set-Cookie %q", got)
		}
		resp, _ = send(t, h, "GET", "http://px.test/default", nil, "X-Send-Location", "http://internal.test/a",
			"X-Send-Cookie", "s=1; Domain=internal.test; Path=/in/x")
		if resp.Header.Get("Location") != "http://internal.test/a" || resp.Header.Get("Set-Cookie") != "s=1; Domain=internal.test; Path=/in/x" {
			t.Errorf("route without rewrites: Location %q, Set-Cookie %q", resp.Header.Get("Location"), resp.Header.Get("Set-Cookie"))
		}
	})
	t.Run("AUTO_HTTP takes the request's scheme", func(t *testing.T) {
		if _, r := send(t, h, "GET", "http://px.test/auto", nil); r.Headers.Get(seenTLS) != "false" {
			t.Errorf("HTTP: backend TLS %q", r.Headers.Get(seenTLS))
		}
		if _, r := send(t, h, "GET", "https://px.test/auto-secure", nil); r.Headers.Get(seenTLS) != "true" || r.Backend != "secure" {
			t.Errorf("HTTPS: backend %q TLS %q", r.Backend, r.Headers.Get(seenTLS))
		}
	})
	t.Run("access log off per route", func(t *testing.T) {
		send(t, h, "GET", "http://px.test/quiet?mark=quiet", nil)
		send(t, h, "GET", "http://px.test/default?mark=loud", nil)
		log := filepath.Join(h.opts.Dir, "logs", "access.log")
		waitFor(t, "the access log line", func() bool {
			data, _ := os.ReadFile(log)
			return bytes.Contains(data, []byte("mark=loud"))
		})
		if data, _ := os.ReadFile(log); bytes.Contains(data, []byte("mark=quiet")) {
			t.Error("the quiet route was logged")
		}
	})
	t.Run("changes apply without reload", func(t *testing.T) {
		workers := sortedWorkers(t, h)
		applyWithoutReload(t, h, configOf("px-2", servers("new.test"), backends...))
		checkNotReloaded(t, h, workers)
		resp, _ := send(t, h, "GET", "http://px.test/rewrite", nil, "X-Send-Location", "http://internal.test/z")
		if got := resp.Header.Get("Location"); got != "https://new.test/z" {
			t.Errorf("Location %q after the change", got)
		}
	})
}

// TestProxyAnnotationsFromIngresses: the proxy and error page annotations
// of Ingresses, through model.Build, into a real nginx.
func TestProxyAnnotationsFromIngresses(t *testing.T) {
	web, pages := startEcho(t, "web"), startEcho(t, "pages")
	cfg := buildIngresses(t, map[string]int{"web": web.Port(), "pages": pages.Port()},
		fixtures.Ingress("default", "old", ann("proxy-http-version", "1.0"), ann("proxy-request-buffering", "off"),
			ann("enable-access-log", "false"), fixtures.Rule("old.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "errs", ann("custom-http-errors", "404,503"), ann("default-backend", "pages"),
			fixtures.Rule("errs.test", fixtures.Prefix("/app", "web", 80))),
		fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte("part"))
		_ = pw.Close()
	}()
	if _, r := send(t, h, "POST", "http://old.test/x?mark=old", pr); r.Backend != "web" || r.Proto != "HTTP/1.0" {
		t.Errorf("proxy-http-version 1.0: %q saw %q", r.Backend, r.Proto)
	}
	if _, r := send(t, h, "GET", "http://plain.test/x?mark=plain", nil); r.Proto != "HTTP/1.1" || r.Chunked {
		t.Errorf("plain: backend saw %q, chunked %v", r.Proto, r.Chunked)
	}
	// The catch-all of errs.test (the default backend: none) answers 404,
	// which custom-http-errors sends to the default-backend Service.
	resp, r := send(t, h, "GET", "http://errs.test/nowhere", nil)
	if resp.StatusCode != 200 || r.Backend != "pages" || r.Headers.Get("X-Code") != "404" || r.Path != "/" {
		t.Errorf("unmatched path: %d from %q for %q, X-Code %q", resp.StatusCode, r.Backend, r.Path, r.Headers.Get("X-Code"))
	}
	log := filepath.Join(h.opts.Dir, "logs", "access.log")
	waitFor(t, "the access log line", func() bool {
		data, _ := os.ReadFile(log)
		return bytes.Contains(data, []byte("mark=plain"))
	})
	if data, _ := os.ReadFile(log); bytes.Contains(data, []byte("mark=old")) {
		t.Error("enable-access-log false was logged")
	}
}

// bigBackend answers size bytes and then reports on done whether it could
// write them all: with ?deadline its writes give up after half a second
// without progress (nginx reads nothing more: no buffering, and a client
// that does not read).
func bigBackend(done chan<- bool, size int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		rc := http.NewResponseController(w)
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n := 0; n < size; n += len(chunk) {
			if r.URL.Query().Has("deadline") {
				_ = rc.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
			}
			if _, err := w.Write(chunk[:min(len(chunk), size-n)]); err != nil {
				done <- false
				return
			}
		}
		done <- true
	})
}

// TestProxyBuffering: proxy-buffering per route, with the ConfigMap's
// proxy-buffering on. With buffering nginx takes the whole answer of the
// backend before the client reads any of it; without, the backend can
// write no more than the client reads (and the socket buffers hold).
func TestProxyBuffering(t *testing.T) {
	done := make(chan bool, 4)
	const size = 64 << 20
	port := startHTTPTest(t, bigBackend(done, size), false, false)
	cfg := configOf("buffering-1", []config.Server{serverOf("buf.test",
		proxyLoc("/off", "big", &config.ProxySettings{Buffering: "off"}),
		proxyLoc("/on", "big", nil), // the ConfigMap's: on
	)}, backendAt("big", port))
	cfg.Global.Nginx = config.DefaultGlobal().Nginx
	cfg.Global.Nginx.ProxyBuffering = true
	h := startNginx(t, cfg, nil)
	for _, tc := range []struct {
		url      string
		complete bool
	}{
		{"http://buf.test/on/x", true},
		{"http://buf.test/off/x?deadline", false},
	} {
		resp, err := h.http.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case complete := <-done:
			if complete != tc.complete {
				t.Errorf("GET %s: the backend wrote its whole answer: %v, want %v", tc.url, complete, tc.complete)
			}
		case <-time.After(testWait):
			t.Errorf("GET %s: the backend neither finished nor gave up", tc.url)
		}
		_ = resp.Body.Close()
	}
}
