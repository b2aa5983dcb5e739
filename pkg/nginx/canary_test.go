package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"
)

// Canary routes through a real nginx (lua/canary.lua), from the facts of
// ingress-nginx's test/e2e/annotations/canary.go: the header, then the
// cookie, then the weight decide, per request.

// canaryLoc is a Prefix route to "main" with canary c to "canary".
func canaryLoc(path string, c config.Canary) config.Location {
	l := prefixLoc(path, "main")
	c.Backend, c.Ingress = "canary", "default/canary"
	if c.WeightTotal == 0 {
		c.WeightTotal = 100
	}
	l.Canary = &c
	return l
}

// canaryConfig serves c.test with locs (by default, a route per canary
// rule) to the echo backends "main" and "canary".
func canaryConfig(sum string, backends []config.Backend, locs ...config.Location) *config.Configuration {
	if len(locs) == 0 {
		locs = []config.Location{
			canaryLoc("/header", config.Canary{Header: "X-Canary"}),
			canaryLoc("/underscore", config.Canary{Header: "X_Canary"}),
			canaryLoc("/value", config.Canary{Header: "CanaryByHeader", HeaderValue: "DoCanary"}),
			canaryLoc("/pattern", config.Canary{Header: "CanaryByHeader", HeaderPattern: "^Do[A-Z][a-z]+y$"}),
			canaryLoc("/cookie", config.Canary{Cookie: "Canary-By-Cookie"}),
			canaryLoc("/weight0", config.Canary{Weight: 0}),
			canaryLoc("/weight100", config.Canary{Weight: 100}),
			canaryLoc("/weight-total", config.Canary{Weight: 1000, WeightTotal: 1000}),
			canaryLoc("/half", config.Canary{Weight: 50}),
			canaryLoc("/half-of-200", config.Canary{Weight: 100, WeightTotal: 200}),
			canaryLoc("/all", config.Canary{Header: "X-Canary", Cookie: "c", Weight: 100}),
			canaryLoc("/value-cookie", config.Canary{Header: "CanaryByHeader", HeaderValue: "DoCanary", Cookie: "CanaryByCookie"}),
			prefixLoc("/plain", "main"),
		}
	}
	return configOf(sum, []config.Server{serverOf("c.test", locs...)}, backends...)
}

func TestCanaryRules(t *testing.T) {
	h := startNginx(t, canaryConfig("canary-1", echoBackends(t, "canary", "main")), nil)
	tests := []struct {
		name, path string
		header     []string
		want       string
	}{
		{"header always", "/header", []string{"X-Canary", "always"}, "canary"},
		{"header never", "/header", []string{"X-Canary", "never"}, "main"},
		{"header of another value", "/header", []string{"X-Canary", "badheadervalue"}, "main"},
		{"header name in any case", "/header", []string{"x-CANARY", "always"}, "canary"},
		{"no header", "/header", nil, "main"},
		{"header value ALWAYS is not always", "/header", []string{"X-Canary", "ALWAYS"}, "main"},
		{"underscore in the name matches a dash", "/underscore", []string{"X-Canary", "always"}, "canary"},
		{"header value", "/value", []string{"CanaryByHeader", "DoCanary"}, "canary"},
		{"header value: always is just another value", "/value", []string{"CanaryByHeader", "always"}, "main"},
		{"header value: never", "/value", []string{"CanaryByHeader", "never"}, "main"},
		{"header value: another value", "/value", []string{"CanaryByHeader", "otherheadervalue"}, "main"},
		{"header pattern matches", "/pattern", []string{"CanaryByHeader", "DoCanary"}, "canary"},
		{"header pattern is case sensitive", "/pattern", []string{"CanaryByHeader", "Docanary"}, "main"},
		{"header pattern: always is just another value", "/pattern", []string{"CanaryByHeader", "always"}, "main"},
		{"cookie always", "/cookie", []string{"Cookie", "a=1; Canary-By-Cookie=always"}, "canary"},
		{"cookie never", "/cookie", []string{"Cookie", "Canary-By-Cookie=never"}, "main"},
		{"cookie of another value", "/cookie", []string{"Cookie", "Canary-By-Cookie=badcookievalue"}, "main"},
		{"no cookie", "/cookie", nil, "main"},
		{"header never wins over cookie always", "/all", []string{"X-Canary", "never", "Cookie", "c=always"}, "main"},
		{"header always wins over cookie never", "/all", []string{"X-Canary", "always", "Cookie", "c=never"}, "canary"},
		{"another header value goes on to the cookie", "/all", []string{"X-Canary", "other", "Cookie", "c=never"}, "main"},
		{"cookie never wins over weight 100", "/all", []string{"Cookie", "c=never"}, "main"},
		{"another cookie value goes on to the weight", "/all", []string{"Cookie", "c=maybe"}, "canary"},
		{"another header value, cookie always", "/value-cookie", []string{"CanaryByHeader", "otherheadervalue", "Cookie", "CanaryByCookie=always"}, "canary"},
		{"a route without canary", "/plain", []string{"X-Canary", "always"}, "main"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			routeCheck{url: "http://c.test" + tc.path + "/x", status: 200, backend: tc.want, path: tc.path + "/x"}.verify(t, h, tc.header...)
		})
	}
}

// countCanary sends n requests to url and returns how many the canary
// answered; every answer must be a 200 of main or canary.
func countCanary(t *testing.T, h *harness, url string, n int) int {
	t.Helper()
	got := 0
	for range n {
		r := h.mustGet(url)
		switch {
		case r.Status != 200 || r.Reply.Backend != "main" && r.Reply.Backend != "canary":
			t.Fatalf("GET %s = %d from %q", url, r.Status, r.Reply.Backend)
		case r.Reply.Backend == "canary":
			got++
		}
	}
	return got
}

// Weights over a bounded number of requests: 0 and the total are exact; a
// half is within 6 standard deviations of the binomial (200 ± 60 of 400:
// a false failure about once in 10^9 runs).
func TestCanaryWeights(t *testing.T) {
	h := startNginx(t, canaryConfig("canary-w", echoBackends(t, "canary", "main")), nil)
	const n = 400
	tests := []struct {
		path   string
		lo, hi int
	}{
		{"/weight0", 0, 0},
		{"/weight100", n, n},
		{"/weight-total", n, n},
		{"/half", n/2 - 60, n/2 + 60},
		{"/half-of-200", n/2 - 60, n/2 + 60},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := countCanary(t, h, "http://c.test"+tc.path, n); got < tc.lo || got > tc.hi {
				t.Errorf("%d of %d requests went to the canary, want %d to %d", got, n, tc.lo, tc.hi)
			}
		})
	}
}

// Adding, changing and removing a canary are route pushes: nginx is not
// reloaded and the next request follows the new rule.
func TestCanaryChangesWithoutReload(t *testing.T) {
	backends := echoBackends(t, "canary", "main")
	h := startNginx(t, canaryConfig("canary-r1", backends, prefixLoc("/app", "main")), nil)
	steps := []struct {
		name string
		loc  config.Location
		want string
	}{
		{"canary added", canaryLoc("/app", config.Canary{Weight: 100}), "canary"},
		{"weight to 0", canaryLoc("/app", config.Canary{Weight: 0}), "main"},
		{"by cookie", canaryLoc("/app", config.Canary{Cookie: "c"}), "canary"},
		{"canary removed", prefixLoc("/app", "main"), "main"},
	}
	for i, st := range steps {
		applyWithoutReload(t, h, canaryConfig("canary-r"+itoa(i+2), backends, st.loc))
		routeCheck{url: "http://c.test/app", status: 200, backend: st.want}.verify(t, h, "Cookie", "c=always")
		if t.Failed() {
			t.Fatalf("step %q", st.name)
		}
	}
}

// A canary the data plane cannot take (Build never emits one) makes the
// configuration endpoint refuse its host, which answers 503; other hosts
// are served.
func TestCanaryRefused(t *testing.T) {
	bad := []config.Canary{
		{Weight: 101, WeightTotal: 100},
		{Header: "X Canary"},
		{Header: "X", HeaderPattern: "(a"},
		{Cookie: "a=b"},
	}
	servers := []config.Server{serverOf("good.test", canaryLoc("/", config.Canary{Weight: 100}))}
	for i, c := range bad {
		servers = append(servers, serverOf("bad"+itoa(i)+".test", canaryLoc("/", c)))
	}
	noBackend := canaryLoc("/", config.Canary{})
	noBackend.Canary.Backend = ""
	servers = append(servers, serverOf("bad-backend.test", noBackend))
	h := startNginx(t, configOf("canary-bad", servers, echoBackends(t, "canary", "main")...), nil)
	h.allowLuaErrors = true
	checkServed(t, h, "http://good.test/", 200, "canary")
	for _, s := range servers[1:] {
		checkServed(t, h, "http://"+s.Hostname+"/", 503, "")
	}
}
