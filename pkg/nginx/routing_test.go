package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRouting(t *testing.T) {
	app := startEcho(t, "app")
	api := startEcho(t, "api")
	exact := startEcho(t, "exact")
	wild := startEcho(t, "wild")
	def := startEcho(t, "default")
	cfg := configOf("routing-1", []config.Server{
		serverOf("*.wild.test", prefixLoc("/", "wild")),
		serverOf("foo.test",
			exactLoc("/api", "exact"),
			prefixLoc("/api", "api"),
			prefixLoc("/app/", "app"),
			exactLoc("/exact", "exact"),
		),
	}, backendOf("app", app), backendOf("api", api), backendOf("exact", exact), backendOf("wild", wild), backendOf("default", def))
	h := startNginx(t, cfg, nil)

	withDefault := withDefaultBackend(cfg, "default", "routing-2")

	tests := []struct {
		name    string
		url     string
		status  int
		backend string
		path    string
	}{
		{"exact path", "http://foo.test/exact", 200, "exact", "/exact"},
		{"exact path does not match below", "http://foo.test/exact/x", 404, "", ""},
		{"exact wins over prefix for the same path", "http://foo.test/api", 200, "exact", "/api"},
		{"prefix matches below", "http://foo.test/api/v1/users", 200, "api", "/api/v1/users"},
		{"prefix with trailing slash", "http://foo.test/api/", 200, "api", "/api/"},
		{"prefix is element-wise", "http://foo.test/apix", 404, "", ""},
		{"prefix declared with a trailing slash matches without", "http://foo.test/app", 200, "app", "/app"},
		{"prefix declared with a trailing slash matches below", "http://foo.test/app/x?q=1", 200, "app", "/app/x?q=1"},
		{"unmatched path of a known host", "http://foo.test/other", 404, "", ""},
		{"wildcard host, one label", "http://a.wild.test/x", 200, "wild", "/x"},
		{"wildcard host, upper case", "http://B.WILD.TEST/x", 200, "wild", "/x"},
		{"wildcard host does not match two labels", "http://a.b.wild.test/x", 404, "", ""},
		{"wildcard host does not match the apex", "http://wild.test/x", 404, "", ""},
		{"unknown host goes to the default server", "http://nobody.test/", 404, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url)
			if r.Status != tc.status || r.Reply.Backend != tc.backend {
				t.Fatalf("GET %s = %d from %q, want %d from %q", tc.url, r.Status, r.Reply.Backend, tc.status, tc.backend)
			}
			if tc.path != "" && r.Reply.URI() != tc.path {
				t.Errorf("backend saw path %q, want %q", r.Reply.URI(), tc.path)
			}
		})
	}

	t.Run("proxy headers", func(t *testing.T) {
		r := h.mustGet("http://foo.test/api/h", "X-Forwarded-For", "6.6.6.6", "Connection", "keep-alive")
		hd := r.Reply.Headers
		want := map[string]string{
			"X-Real-Ip":          "127.0.0.1",
			"X-Forwarded-For":    "127.0.0.1", // untrusted client value replaced
			"X-Forwarded-Proto":  "http",
			"X-Forwarded-Host":   "foo.test",
			"X-Forwarded-Port":   itoa(h.opts.HTTPPort),
			"X-Forwarded-Scheme": "http",
		}
		for k, v := range want {
			if got := hd.Get(k); got != v {
				t.Errorf("header %s = %q, want %q", k, got, v)
			}
		}
		if r.Reply.Host != "foo.test" {
			t.Errorf("Host = %q, want foo.test", r.Reply.Host)
		}
		if hd.Get("Connection") != "" {
			t.Errorf("Connection header %q reached the backend (upstream keepalive needs it empty)", hd.Get("Connection"))
		}
	})

	t.Run("status server", func(t *testing.T) {
		status := "http://127.0.0.1:" + itoa(h.opts.StatusPort)
		for path, want := range map[string]string{"/healthz": "ok", "/nginx_status": "Active connections"} {
			resp, err := http.Get(status + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
				t.Errorf("GET %s = %d %q, want %q", path, resp.StatusCode, body, want)
			}
		}
	})

	t.Run("configured default backend", func(t *testing.T) {
		workers := workerPIDs(t, h.proc.Pid())
		if err := h.reload(t.Context(), withDefault); err != nil {
			t.Fatal(err)
		}
		checkNotReloaded(t, h, workers) // a default backend is routes, not nginx.conf
		for _, url := range []string{"http://nobody.test/x", "http://foo.test/other", "http://a.b.wild.test/"} {
			if r := h.mustGet(url); r.Status != 200 || r.Reply.Backend != "default" {
				t.Errorf("GET %s = %d from %q, want the default backend", url, r.Status, r.Reply.Backend)
			}
		}
		if r := h.mustGet("http://foo.test/exact"); r.Reply.Backend != "exact" {
			t.Errorf("GET /exact answered by %q after adding a default backend", r.Reply.Backend)
		}
	})
}

func TestLocationSettings(t *testing.T) {
	app := startEcho(t, "app")
	no := false
	loc := func(path string, pt config.PathType, st config.LocationSettings) config.Location {
		return config.Location{Path: path, PathType: pt, Backend: "app", Settings: st}
	}
	cfg := configOf("settings-1", []config.Server{
		{Hostname: "s.test", TLS: true, SSLRedirect: true, Locations: []config.Location{
			loc("/allowed", config.PathPrefix, config.LocationSettings{AllowSourceRange: []string{"127.0.0.0/8"}}),
			loc("/denied", config.PathPrefix, config.LocationSettings{AllowSourceRange: []string{"10.0.0.0/8"}}),
			loc("/small", config.PathPrefix, config.LocationSettings{ProxyBodySize: "1k"}),
			loc("/plain", config.PathPrefix, config.LocationSettings{SSLRedirect: &no}),
			loc("/", config.PathPrefix, config.LocationSettings{}),
		}},
		// A regex host (use-regex or rewrite-target on one of its Ingresses):
		// rewrite-target replaces the whole path, as ingress-nginx's rewrite.
		{Hostname: "rw.test", Locations: []config.Location{
			loc("/rw(/|$)(.*)", config.PathRegex, config.LocationSettings{RewriteTarget: "/new/$2"}),
			loc("/exact-rw", config.PathRegex, config.LocationSettings{RewriteTarget: "/target"}),
			loc("/", config.PathRegex, config.LocationSettings{}),
		}},
	}, backendOf("app", app))
	h := startNginx(t, cfg, nil)

	tests := []struct {
		name   string
		url    string
		status int
		path   string
	}{
		{"rewrite with a capture of the rest", "http://rw.test/rw/a/b?x=1", 200, "/new/a/b?x=1"},
		{"rewrite of the path itself", "http://rw.test/rw", 200, "/new/"},
		{"rewrite replaces the whole path", "http://rw.test/exact-rw/more", 200, "/target"},
		{"regex paths match case-insensitively", "http://rw.test/RW/x", 200, "/new/x"},
		{"regex paths match from the start only", "http://rw.test/a/rw/x", 200, "/a/rw/x"},
		{"allowed source", "https://s.test/allowed/x", 200, "/allowed/x"},
		{"denied source", "https://s.test/denied/x", 403, ""},
		{"TLS host redirects plain HTTP", "http://s.test/x", 308, ""},
		{"per-location redirect off", "http://s.test/plain/x", 200, "/plain/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url)
			if r.Status != tc.status || r.Reply.URI() != tc.path {
				t.Fatalf("GET %s = %d, path %q; want %d, %q", tc.url, r.Status, r.Reply.URI(), tc.status, tc.path)
			}
		})
	}
	t.Run("body size limit", func(t *testing.T) {
		for size, want := range map[int]int{512: 200, 4096: 413} {
			req, err := http.NewRequest(http.MethodPost, "https://s.test/small", strings.NewReader(strings.Repeat("x", size)))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("POST of %d bytes = %d, want %d", size, resp.StatusCode, want)
			}
		}
	})
}
