package nginx

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// Tests of the Gateway API filters of routes (lua/filters.lua) through a
// real nginx: header modifiers, redirects, rewrites.

// withFilters returns l with filters f.
func withFilters(l config.Location, f config.Filters) config.Location {
	l.Filters = &f
	return l
}

func redirectLoc(path string, pathType config.PathType, r config.RouteRedirect) config.Location {
	return withFilters(config.Location{Path: path, PathType: pathType, Ingress: "default/test"}, config.Filters{Redirect: &r})
}

func TestRouteFilters(t *testing.T) {
	var codes []config.Location
	for _, c := range []int{301, 302, 303, 307, 308} {
		codes = append(codes, redirectLoc(fmt.Sprintf("/code/%d", c), config.PathExact, config.RouteRedirect{Code: c}))
	}
	locs := append(codes,
		withFilters(prefixLoc("/prefix/one", "a"), config.Filters{RewritePath: &config.PathModifier{Type: config.PathModifierPrefix, Value: "/one"}}),
		withFilters(exactLoc("/fullrw", "a"), config.Filters{RewriteHost: "backend.test", RewritePath: &config.PathModifier{Type: config.PathModifierFull, Value: "/one"}}),
		redirectLoc("/port80", config.PathPrefix, config.RouteRedirect{Scheme: "http", Port: 80, Code: 302}),
		redirectLoc("/listener", config.PathPrefix, config.RouteRedirect{Port: 8080, Code: 302}),
		redirectLoc("/redir", config.PathPrefix, config.RouteRedirect{Scheme: "https", Hostname: "example.org", Port: 8443,
			Path: &config.PathModifier{Type: config.PathModifierPrefix, Value: "/new"}, Code: 301}),
		redirectLoc("/full", config.PathPrefix, config.RouteRedirect{Path: &config.PathModifier{Type: config.PathModifierFull, Value: "/elsewhere"}, Code: 302}),
		withFilters(prefixLoc("/strip", "a"), config.Filters{RewritePath: &config.PathModifier{Type: config.PathModifierPrefix, Value: "/"}}),
		withFilters(prefixLoc("/resp", "a"), config.Filters{ResponseHeaders: &config.HeaderFilter{
			Set: []config.Header{{Name: "X-Resp", Value: "set"}}, Add: []config.Header{{Name: "X-Echo-Backend", Value: "more"}}, Remove: []string{"Content-Type"}}}),
		withFilters(prefixLoc("/set", "a"), config.Filters{RequestHeaders: &config.HeaderFilter{
			Set: []config.Header{{Name: "X-Set", Value: "new"}}, Add: []config.Header{{Name: "X-Add", Value: "added"}}, Remove: []string{"X-Gone"}}}),
	)
	cfg := configOf("filters-1", []config.Server{serverOf("f.test", locs...)}, echoBackends(t, "a")...)
	cfg.Global.AllowedResponseHeaders = "x-resp" // nginx.conf runs the response header filter
	h := startNginx(t, cfg, nil)

	t.Run("request headers: set, add, remove", func(t *testing.T) {
		r := h.mustGet("http://f.test/set", "x-set", "old", "X-Add", "old", "X-Gone", "1", "X-Kept", "1")
		hd := r.Reply.Headers
		if r.Status != 200 || !slices.Equal(hd.Values("X-Set"), []string{"new"}) || !slices.Equal(hd.Values("X-Add"), []string{"old", "added"}) ||
			hd.Get("X-Gone") != "" || hd.Get("X-Kept") != "1" {
			t.Errorf("status %d, backend saw headers %v", r.Status, hd)
		}
		if r := h.mustGet("http://f.test/set"); r.Reply.Headers.Get("X-Add") != "added" {
			t.Errorf("add without a value before: %v", r.Reply.Headers)
		}
	})
	t.Run("response headers: set, add, remove", func(t *testing.T) {
		r, _ := send(t, h, "GET", "http://f.test/resp", nil)
		if r.StatusCode != 200 || r.Header.Get("X-Resp") != "set" || !slices.Equal(r.Header.Values("X-Echo-Backend"), []string{"a", "more"}) ||
			r.Header.Get("Content-Type") != "" {
			t.Errorf("status %d, headers %v", r.StatusCode, r.Header)
		}
	})
	redirects := []struct {
		name, url string
		code      int
		location  string
	}{
		{"301", "http://f.test/code/301", 301, "http://f.test/code/301"},
		{"302", "http://f.test/code/302", 302, "http://f.test/code/302"},
		{"303", "http://f.test/code/303", 303, "http://f.test/code/303"},
		{"307", "http://f.test/code/307", 307, "http://f.test/code/307"},
		{"308", "http://f.test/code/308", 308, "http://f.test/code/308"},
		{"scheme, host, port and prefix replaced, query kept", "http://f.test/redir/x?q=1", 301, "https://example.org:8443/new/x?q=1"},
		{"the prefix alone", "http://f.test/redir", 301, "https://example.org:8443/new"},
		{"the well-known port of the scheme left out", "http://f.test/port80/y", 302, "http://f.test/port80/y"},
		{"full path replaced", "http://f.test/full/y", 302, "http://f.test/elsewhere"},
		{"a port not well-known for the request's scheme", "http://f.test/listener", 302, "http://f.test:8080/listener"},
		{"the request's port never kept", "http://f.test:8000/code/302?a=b", 302, "http://f.test/code/302?a=b"},
	}
	for _, tc := range redirects {
		t.Run("redirect "+tc.name, func(t *testing.T) {
			r, _ := send(t, h, "GET", tc.url, nil)
			if r.StatusCode != tc.code || r.Header.Get("Location") != tc.location {
				t.Errorf("GET %s = %d Location %q, want %d %q", tc.url, r.StatusCode, r.Header.Get("Location"), tc.code, tc.location)
			}
		})
	}
	rewrites := []struct {
		name, url, path, host string
	}{
		{"prefix replaced", "http://f.test/prefix/one/two", "/one/two", "f.test"},
		{"prefix replaced by /", "http://f.test/strip/three", "/three", "f.test"},
		{"the prefix alone replaced by /", "http://f.test/strip", "/", "f.test"},
		{"query kept", "http://f.test/strip/x?q=1", "/x?q=1", "f.test"},
		{"full path and host", "http://f.test/fullrw", "/one", "backend.test"},
	}
	for _, tc := range rewrites {
		t.Run("rewrite "+tc.name, func(t *testing.T) {
			r := h.mustGet(tc.url)
			if r.Status != 200 || r.Reply.URI() != tc.path || r.Reply.Host != tc.host {
				t.Errorf("GET %s = %d, backend saw %q on host %q, want %q on %q", tc.url, r.Status, r.Reply.URI(), r.Reply.Host, tc.path, tc.host)
			}
		})
	}
}

// TestWeightedBackends: a route's weighted backends share its requests at
// random by weight; the share of a backend "" answers 500.
func TestWeightedBackends(t *testing.T) {
	weighted := func(path string, bs ...config.WeightedBackend) config.Location {
		return config.Location{Path: path, PathType: config.PathPrefix, Ingress: "default/test", Backends: bs}
	}
	cfg := configOf("weighted-1", []config.Server{serverOf("w.test",
		weighted("/three", config.WeightedBackend{Backend: "a", Weight: 1}, config.WeightedBackend{Backend: "b", Weight: 2},
			config.WeightedBackend{Backend: "", Weight: 1}),
		weighted("/none", config.WeightedBackend{Weight: 1}),
	)}, echoBackends(t, "a", "b")...)
	h := startNginx(t, cfg, nil)
	const n = 400
	got := map[string]int{}
	for range n {
		r, reply := send(t, h, "GET", "http://w.test/three", nil)
		got[fmt.Sprintf("%d %s", r.StatusCode, reply.Backend)]++
	}
	// Expected 100, 200 and 100: each far from 0 and from all.
	for k, lo := range map[string]int{"200 a": n / 10, "200 b": n / 4, "500 ": n / 10} {
		if got[k] < lo {
			t.Errorf("%d requests: %v, want at least %d of %q", n, got, lo, k)
		}
	}
	if len(got) != 3 {
		t.Errorf("answers %v, want 200 from a or b and 500", got)
	}
	if r, _ := send(t, h, "GET", "http://w.test/none", nil); r.StatusCode != 500 {
		t.Errorf("a route whose only backend cannot be served answers %d, want 500", r.StatusCode)
	}
}

// TestRouteTimeouts: a Gateway API rule's timeouts bound the requests to
// its backend (504 past them); the shorter of request and backendRequest
// counts.
func TestRouteTimeouts(t *testing.T) {
	slow := startEcho(t, "slow")
	slow.SetDelay(time.Second)
	timed := func(path string, to config.Timeouts) config.Location {
		l := prefixLoc(path, "slow")
		l.Timeouts = &to
		return l
	}
	cfg := configOf("timeouts-1", []config.Server{serverOf("t.test",
		timed("/short", config.Timeouts{RequestMillis: 60000, BackendRequestMillis: 200}),
		timed("/long", config.Timeouts{RequestMillis: 30000}),
		timed("/backend", config.Timeouts{BackendRequestMillis: 200}), // backendRequest alone
		timed("/request", config.Timeouts{RequestMillis: 200}),
		prefixLoc("/none", "slow"),
	)}, backendOf("slow", slow))
	h := startNginx(t, cfg, nil)
	for _, tc := range []struct {
		path   string
		status int
	}{{"/short", 504}, {"/long", 200}, {"/none", 200}, {"/backend", 504}, {"/request", 504}} {
		t.Run(tc.path, func(t *testing.T) {
			if r, _ := send(t, h, "GET", "http://t.test"+tc.path, nil); r.StatusCode != tc.status {
				t.Errorf("GET %s from a backend answering after 1s = %d, want %d", tc.path, r.StatusCode, tc.status)
			}
		})
	}
}

// TestRouteCORS: a Gateway API CORS filter answers preflights (204, with
// the headers only for an allowed origin) and adds the headers to the
// responses of allowed origins, echoing the Origin, and the requested
// method and headers where a list holds "*".
func TestRouteCORS(t *testing.T) {
	corsLoc := func(path string, c config.RouteCORS) config.Location {
		return withFilters(prefixLoc(path, "a"), config.Filters{CORS: &c})
	}
	cfg := configOf("cors-1", []config.Server{serverOf("c.test",
		corsLoc("/one", config.RouteCORS{AllowOrigins: []string{"https://www.foo.com", "https://*.bar.com"}, AllowMethods: []string{"GET", "OPTIONS"},
			AllowHeaders: []string{"x-header-1", "x-header-2"}, ExposeHeaders: []string{"x-header-3"}, AllowCredentials: true, MaxAge: 3600}),
		corsLoc("/any", config.RouteCORS{AllowOrigins: []string{"*"}, AllowMethods: []string{"*"}, AllowHeaders: []string{"*"}, AllowCredentials: true}),
	)}, echoBackends(t, "a")...)
	h := startNginx(t, cfg, nil)
	preflight := []string{"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "x-header-1"}
	tests := []struct {
		name, method, path string
		header             []string
		status             int
		want               map[string]string // "" for absent
	}{
		{"preflight, exact origin", "OPTIONS", "/one", append([]string{"Origin", "https://www.foo.com"}, preflight...), 204, map[string]string{
			"Access-Control-Allow-Origin": "https://www.foo.com", "Access-Control-Allow-Methods": "GET, OPTIONS",
			"Access-Control-Allow-Headers": "x-header-1, x-header-2", "Access-Control-Expose-Headers": "x-header-3",
			"Access-Control-Max-Age": "3600", "Access-Control-Allow-Credentials": "true"}},
		{"preflight, any number of labels for *", "OPTIONS", "/one", append([]string{"Origin", "https://a.www.bar.com"}, preflight...), 204,
			map[string]string{"Access-Control-Allow-Origin": "https://a.www.bar.com"}},
		{"preflight, origin not allowed", "OPTIONS", "/one", append([]string{"Origin", "https://foobar.com"}, preflight...), 204,
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""}},
		{"simple request, allowed", "GET", "/one", []string{"Origin", "https://www.foo.com"}, 200,
			map[string]string{"Access-Control-Allow-Origin": "https://www.foo.com", "X-Echo-Backend": "a"}},
		{"simple request, not allowed", "GET", "/one", []string{"Origin", "https://foobar.com"}, 200,
			map[string]string{"Access-Control-Allow-Origin": "", "X-Echo-Backend": "a"}},
		{"no Origin", "GET", "/one", nil, 200, map[string]string{"Access-Control-Allow-Origin": ""}},
		{"wildcards with credentials echo the request", "OPTIONS", "/any",
			[]string{"Origin", "http://x.test:8080", "Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "x-y"}, 204,
			map[string]string{"Access-Control-Allow-Origin": "http://x.test:8080", "Access-Control-Allow-Methods": "PUT", "Access-Control-Allow-Headers": "x-y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := send(t, h, tc.method, "http://c.test"+tc.path, nil, tc.header...)
			if r.StatusCode != tc.status {
				t.Errorf("status %d, want %d", r.StatusCode, tc.status)
			}
			for k, v := range tc.want {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestResponseFilterOnGatewayPort: with a Gateway listener port and no
// response header in the ConfigMap, nginx.conf runs the response header
// filter, so a Gateway route's ResponseHeaderModifier applies.
func TestResponseFilterOnGatewayPort(t *testing.T) {
	p := freePorts(t, 1)[0]
	loc := withFilters(prefixLoc("/", "a"), config.Filters{ResponseHeaders: &config.HeaderFilter{
		Set: []config.Header{{Name: "X-Resp", Value: "set"}}, Remove: []string{"Content-Type"}}})
	cfg := configOf("respgw-1", nil, echoBackends(t, "a")...)
	cfg.Servers = append(cfg.Servers, config.Server{Hostname: "r.test", Port: p, Locations: []config.Location{loc}})
	cfg.Listeners = []config.Listener{{Port: p}}
	startNginx(t, cfg, nil)
	resp, err := onPort(p).Get("http://r.test/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Resp") != "set" || resp.Header.Get("Content-Type") != "" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
}
