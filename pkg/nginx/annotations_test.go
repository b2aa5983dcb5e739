package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"net/http"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// buildIngresses builds, with model.Build, the Configuration of ings and
// a Service with one endpoint per echo backend (named as the backend).
func buildIngresses(t *testing.T, backends map[string]int, ings ...*networkingv1.Ingress) *config.Configuration {
	t.Helper()
	return buildWithSecrets(t, backends, nil, nil, ings...) // no Problem
}

// ann is an ingress-nginx annotation.
func ann(name, v string) fixtures.IngressOption {
	return fixtures.Annotation(ingress.AnnotationPrefix+name, v)
}

func implPath(path, svc string) networkingv1.HTTPIngressPath {
	return fixtures.Path(networkingv1.PathTypeImplementationSpecific, path, svc, 80)
}

// TestRewriteAnnotations: rewrite-target, use-regex and x-forwarded-prefix
// as ingress-nginx's e2e tests (annotations/rewrite.go,
// xforwardedprefix.go) describe them.
func TestRewriteAnnotations(t *testing.T) {
	api, web := startEcho(t, "api"), startEcho(t, "web")
	cfg := buildIngresses(t, map[string]int{"api": api.Port(), "web": web.Port()},
		fixtures.Ingress("default", "api", ann("rewrite-target", "/$2"), ann("x-forwarded-prefix", "/api"),
			fixtures.Rule("rw.test", implPath("/api(/|$)(.*)", "api"))),
		// Another Ingress of the same host: its paths become regexes too.
		fixtures.Ingress("default", "site", fixtures.Created(fixtures.Epoch.Add(1)),
			fixtures.Rule("rw.test", fixtures.Prefix("/static", "web", 80), fixtures.Exact("/exact", "web", 80))),
		fixtures.Ingress("default", "slash", ann("rewrite-target", "/"), fixtures.Rule("slash.test", fixtures.Prefix("/foo", "api", 80))),
		fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/foo", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	tests := []struct {
		name, url, backend, uri, prefix string
	}{
		{"capture of the rest", "http://rw.test/api/users/7?x=1", "api", "/users/7?x=1", "/api"},
		{"empty capture", "http://rw.test/api", "api", "/", "/api"},
		{"case-insensitive", "http://rw.test/API/x", "api", "/x", "/api"},
		{"literal prefix of a regex host matches by text", "http://rw.test/static/a.css", "web", "/static/a.css", ""},
		{"literal prefix of a regex host is a text prefix", "http://rw.test/staticfoo", "web", "/staticfoo", ""},
		{"exact path of a regex host matches as a prefix", "http://rw.test/exact/more", "web", "/exact/more", ""},
		{"rewrite-target / replaces the whole path", "http://slash.test/foo/bar?q=1", "api", "/?q=1", ""},
		{"a host without regex keeps element-wise prefixes", "http://plain.test/foo/x", "web", "/foo/x", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url)
			if r.Status != 200 || r.Reply.Backend != tc.backend || r.Reply.URI() != tc.uri {
				t.Fatalf("GET %s = %d from %q, path %q; want 200 from %q, %q", tc.url, r.Status, r.Reply.Backend, r.Reply.URI(), tc.backend, tc.uri)
			}
			if got := r.Reply.Headers.Get("X-Forwarded-Prefix"); got != tc.prefix {
				t.Errorf("X-Forwarded-Prefix %q, want %q", got, tc.prefix)
			}
		})
	}
	checkServed(t, h, "http://plain.test/foobar", 404, "")
}

// TestRedirectAnnotations: app-root, permanent-redirect, temporal-redirect
// and from-to-www-redirect (annotations/approot.go, redirect.go,
// fromtowwwredirect.go).
func TestRedirectAnnotations(t *testing.T) {
	web := startEcho(t, "web")
	cfg := buildIngresses(t, map[string]int{"web": web.Port()},
		fixtures.Ingress("default", "root", ann("app-root", "/app1"), fixtures.Rule("root.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "perm", ann("permanent-redirect", "https://new.example.org/x?a=b"),
			fixtures.Rule("perm.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "perm308", ann("permanent-redirect", "https://new.example.org"), ann("permanent-redirect-code", "308"),
			fixtures.Rule("perm308.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "temp", ann("temporal-redirect", "http://t.example.org/"), ann("temporal-redirect-code", "307"),
			fixtures.Rule("temp.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "www", ann("from-to-www-redirect", "true"), fixtures.Rule("www.site.test", fixtures.Prefix("/", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	port := itoa(h.opts.HTTPPort)
	tests := []struct {
		name, url string
		status    int
		location  string
	}{
		{"app-root redirects / (scheme and Host header of the request)", "http://root.test/", 302, "http://root.test/app1"},
		{"app-root leaves other paths", "http://root.test/other", 200, ""},
		{"permanent-redirect: 301 whatever the path", "http://perm.test/some/where", 301, "https://new.example.org/x?a=b"},
		{"permanent-redirect-code", "http://perm308.test/", 308, "https://new.example.org"},
		{"temporal-redirect-code", "http://temp.test/", 307, "http://t.example.org/"},
		{"from-to-www: the other name redirects, keeping the port", "http://site.test/a/b/?q=1", 308, "http://www.site.test:" + port + "/a/b/?q=1"},
		{"from-to-www: the trailing slash is dropped", "http://site.test/a/", 308, "http://www.site.test:" + port + "/a"},
		{"from-to-www: the host itself is served", "http://www.site.test/a", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url)
			if r.Status != tc.status || r.Header.Get("Location") != tc.location {
				t.Fatalf("GET %s = %d, Location %q; want %d, %q", tc.url, r.Status, r.Header.Get("Location"), tc.status, tc.location)
			}
		})
	}
}

// TestCORSAnnotations: enable-cors and cors-* (annotations/cors.go).
func TestCORSAnnotations(t *testing.T) {
	web := startEcho(t, "web")
	cfg := buildIngresses(t, map[string]int{"web": web.Port()},
		fixtures.Ingress("default", "any", ann("enable-cors", "true"), fixtures.Rule("any.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "list", ann("enable-cors", "true"),
			ann("cors-allow-origin", "https://origin.cors.test:8080, http://*.wild.test"),
			ann("cors-allow-methods", "GET, POST"), ann("cors-allow-headers", "X-A, X-B"),
			ann("cors-expose-headers", "X-Custom"), ann("cors-allow-credentials", "false"), ann("cors-max-age", "600"),
			fixtures.Rule("list.test", fixtures.Prefix("/", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	defaults := map[string]string{
		"Access-Control-Allow-Origin":      "*",
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Methods":     config.DefaultCORSMethods,
		"Access-Control-Allow-Headers":     config.DefaultCORSHeaders,
		"Access-Control-Expose-Headers":    "",
		"Access-Control-Max-Age":           "1728000",
	}
	listed := func(origin string) map[string]string {
		return map[string]string{
			"Access-Control-Allow-Origin": origin, "Access-Control-Allow-Credentials": "",
			"Access-Control-Allow-Methods": "GET, POST", "Access-Control-Allow-Headers": "X-A, X-B",
			"Access-Control-Expose-Headers": "X-Custom", "Access-Control-Max-Age": "600",
		}
	}
	none := map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": "", "Access-Control-Max-Age": ""}
	tests := []struct {
		name, method, url, origin string
		status                    int
		headers                   map[string]string
	}{
		{"any origin, without an Origin header", "GET", "http://any.test/", "", 200, defaults},
		{"any origin answers *", "GET", "http://any.test/", "https://x.test", 200, defaults},
		{"preflight answered by nginx", "OPTIONS", "http://any.test/x", "https://x.test", 204, defaults},
		{"listed origin with its port", "GET", "http://list.test/", "https://origin.cors.test:8080", 200, listed("https://origin.cors.test:8080")},
		{"listed origin without the port", "GET", "http://list.test/", "https://origin.cors.test", 200, none},
		{"wildcard origin, one label", "GET", "http://list.test/", "http://bar-foo.wild.test", 200, listed("http://bar-foo.wild.test")},
		{"wildcard origin, case-insensitive", "GET", "http://list.test/", "HTTP://A.Wild.Test", 200, listed("HTTP://A.Wild.Test")},
		{"wildcard origin, two labels", "GET", "http://list.test/", "http://a.b.wild.test", 200, none},
		{"origin with a suffix", "GET", "http://list.test/", "https://origin.cors.test:8080.evil.test", 200, none},
		{"unlisted origin", "GET", "http://list.test/", "https://evil.test", 200, none},
		{"preflight of an unlisted origin reaches the backend", "OPTIONS", "http://list.test/", "https://evil.test", 200, none},
		{"preflight of a listed origin", "OPTIONS", "http://list.test/", "https://origin.cors.test:8080", 204, listed("https://origin.cors.test:8080")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := h.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("%s %s = %d, want %d", tc.method, tc.url, resp.StatusCode, tc.status)
			}
			for k, want := range tc.headers {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			if tc.status == 204 && resp.Header.Get("X-Echo-Backend") != "" {
				t.Error("the preflight reached the backend")
			}
		})
	}
}

// TestRedirectCodeAndACME: http-redirect-code answers the HTTPS and
// from-to-www redirects; the paths of no-tls-redirect-locations (default
// /.well-known/acme-challenge, for HTTP-01 challenges) are served over HTTP
// even with force-ssl-redirect.
func TestRedirectCodeAndACME(t *testing.T) {
	web := startEcho(t, "web")
	cfg := buildIngresses(t, map[string]int{"web": web.Port()},
		fixtures.Ingress("default", "app", ann("force-ssl-redirect", "true"), fixtures.Rule("app.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "solver", ann("force-ssl-redirect", "true"),
			fixtures.Rule("app.test", fixtures.Prefix("/.well-known/acme-challenge/token1", "web", 80))),
		fixtures.Ingress("default", "www", ann("from-to-www-redirect", "true"), fixtures.Rule("www.site.test", fixtures.Prefix("/", "web", 80))),
	)
	cfg.Global.Nginx.HTTPRedirectCode = 301
	h := startNginx(t, cfg, nil)
	for _, tc := range []struct {
		url    string
		status int
	}{
		{"http://app.test/x", 301},
		{"http://site.test/x", 301},
		{"http://app.test/.well-known/acme-challenge/token1", 200},
	} {
		if r := h.mustGet(tc.url); r.Status != tc.status {
			t.Errorf("GET %s = %d (Location %q), want %d", tc.url, r.Status, r.Header.Get("Location"), tc.status)
		}
	}
}
