package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// Session affinity and consistent hashing through a real nginx, from the
// facts of ingress-nginx v1.15's e2e tests (annotations/affinity.go,
// affinitymode.go, upstreamhashby.go) and its balancer (sticky*.lua,
// chash*.lua): the cookie's attributes and value, stickiness, balanced and
// persistent modes when endpoints change (without reload),
// change-on-failure, hashing by any variable, subsets, and canaries.

// TestAffinityCookieAttributes: the Set-Cookie each annotation gives, as
// ingress-nginx writes it.
func TestAffinityCookieAttributes(t *testing.T) {
	services := map[string][]*echo.Server{}
	var ings []*networkingv1.Ingress
	add := func(name, path string, kv ...string) {
		services[name] = echoes(t, name+"-a", name+"-b")
		opts := []fixtures.IngressOption{ann("affinity", "cookie"), fixtures.Rule(name+".test", fixtures.Prefix(path, name, 80))}
		for i := 0; i+1 < len(kv); i += 2 {
			opts = append(opts, ann(kv[i], kv[i+1]))
		}
		ings = append(ings, fixtures.Ingress("default", name, opts...))
	}
	add("plain", "/")
	add("named", "/something", "session-cookie-name", "SERVERID")
	add("twopaths", "/something", "session-cookie-name", "SERVERID")
	ings[len(ings)-1].Spec.Rules[0].HTTP.Paths = append(ings[len(ings)-1].Spec.Rules[0].HTTP.Paths, fixtures.Prefix("/somewhereelse", "twopaths", 80))
	add("expires", "/", "session-cookie-name", "ExpiresCookie", "session-cookie-expires", "172800", "session-cookie-max-age", "259200")
	add("domain", "/", "session-cookie-domain", "foo.bar")
	add("path", "/foo", "session-cookie-path", "/foo/bar")
	add("secure", "/", "session-cookie-secure", "true")
	add("insecure", "/", "session-cookie-secure", "false")
	add("lax", "/", "session-cookie-samesite", "lax")
	add("conditional", "/", "session-cookie-samesite", "None", "session-cookie-conditional-samesite-none", "true")
	h := startNginx(t, buildServices(t, services, ings...), nil)

	type want struct {
		name, path, domain, sameSite string
		maxAge                       int
		secure, expires              bool
	}
	cases := map[string]struct {
		url    string
		header []string
		want   want
	}{
		"defaults: INGRESSCOOKIE, the location's path": {url: "http://plain.test/", want: want{name: "INGRESSCOOKIE", path: "/"}},
		"session-cookie-name, Prefix path":             {url: "http://named.test/something", want: want{name: "SERVERID", path: "/something"}},
		"two paths of one Ingress: their common path":  {url: "http://twopaths.test/somewhereelse", want: want{name: "SERVERID", path: "/"}},
		"expires and max-age":                          {url: "http://expires.test/", want: want{name: "ExpiresCookie", path: "/", maxAge: 259200, expires: true}},
		"domain":                                       {url: "http://domain.test/", want: want{name: "INGRESSCOOKIE", path: "/", domain: "foo.bar"}},
		"session-cookie-path":                          {url: "http://path.test/foo/bar", want: want{name: "INGRESSCOOKIE", path: "/foo/bar"}},
		"secure on http":                               {url: "http://secure.test/", want: want{name: "INGRESSCOOKIE", path: "/", secure: true}},
		"secure false on http":                         {url: "http://insecure.test/", want: want{name: "INGRESSCOOKIE", path: "/"}},
		"secure false on https: Secure":                {url: "https://insecure.test/", want: want{name: "INGRESSCOOKIE", path: "/", secure: true}},
		"samesite lax is written Lax":                  {url: "http://lax.test/", want: want{name: "INGRESSCOOKIE", path: "/", sameSite: "Lax"}},
		"conditional None, a browser that takes it": {url: "http://conditional.test/", header: []string{"User-Agent", "Mozilla/5.0 Chrome/120.0"},
			want: want{name: "INGRESSCOOKIE", path: "/", sameSite: "None"}},
		"conditional None, Chrome 51: left out": {url: "http://conditional.test/", header: []string{"User-Agent", "Mozilla/5.0 Chrome/51.0.2704.103"},
			want: want{name: "INGRESSCOOKIE", path: "/"}},
	}
	sameSites := map[string]http.SameSite{"": 0, "Lax": http.SameSiteLaxMode, "None": http.SameSiteNoneMode}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := h.mustGet(tc.url, tc.header...)
			if r.Status != 200 {
				t.Fatalf("status %d", r.Status)
			}
			ck := setCookie(t, r, tc.want.name)
			if ck == nil {
				t.Fatalf("no Set-Cookie %s: %q", tc.want.name, r.Header.Values("Set-Cookie"))
			}
			raw := r.Header.Get("Set-Cookie")
			host := strings.TrimSuffix(strings.Split(tc.url, "/")[2], ".test")
			key, bk, ok := strings.Cut(ck.Value, "|")
			if !ok || key == "" || bk != backendKey("default-"+host+"-80") {
				t.Errorf("value %q, want <key>|%s", ck.Value, backendKey("default-"+host+"-80"))
			}
			w := tc.want
			if ck.Path != w.path || ck.Domain != w.domain || ck.MaxAge != w.maxAge || ck.Secure != w.secure || !ck.HttpOnly ||
				ck.SameSite != sameSites[w.sameSite] {
				t.Errorf("Set-Cookie %q: want %+v", raw, w)
			}
			if w.expires {
				// nginx's cookie_time, as ingress-nginx's e2e test expects.
				exp, err := time.Parse("Mon, 02-Jan-06 15:04:05 MST", ck.RawExpires)
				if left := time.Until(exp); err != nil || left < 47*time.Hour || left > 49*time.Hour {
					t.Errorf("Expires %q is not about 48h away (%v)", ck.RawExpires, err)
				}
			} else if strings.Contains(raw, "Expires=") {
				t.Errorf("Expires in %q", raw)
			}
			if !cookieOrder.MatchString(raw) {
				t.Errorf("attributes of %q are not in ingress-nginx's order", raw)
			}
		})
	}
	t.Run("a cookie that names an endpoint gets no new one", func(t *testing.T) {
		first := setCookie(t, h.mustGet("http://named.test/something"), "SERVERID")
		r := h.mustGet("http://named.test/something", "Cookie", "SERVERID="+first.Value)
		if r.Status != 200 || len(r.Header.Values("Set-Cookie")) != 0 {
			t.Fatalf("status %d, Set-Cookie %q", r.Status, r.Header.Values("Set-Cookie"))
		}
	})
}

// TestAffinityCookiePathWithRegex: with use-regex and no
// session-cookie-path the cookie's Path is the regex as written (and the
// Ingress gets ingress-nginx's warning); session-cookie-path replaces it.
func TestAffinityCookiePathWithRegex(t *testing.T) {
	services := map[string][]*echo.Server{"rx": echoes(t, "rx"), "rxp": echoes(t, "rxp")}
	cfg := buildServicesWithProblems(t, services,
		fixtures.Ingress("default", "rx", ann("affinity", "cookie"), ann("use-regex", "true"),
			fixtures.Rule("rx.test", implPath("/foo/.*", "rx"))),
		fixtures.Ingress("default", "rxp", ann("affinity", "cookie"), ann("use-regex", "true"), ann("session-cookie-path", "/foo/bar"),
			fixtures.Rule("rxp.test", implPath("/foo/.*", "rxp"))))
	if len(cfg.Problems) != 1 || !strings.Contains(cfg.Problems[0].Reason, "session-cookie-path should be set when use-regex is true") {
		t.Fatalf("problems %+v, want ingress-nginx's warning for Ingress rx", cfg.Problems)
	}
	h := startNginx(t, cfg, nil)
	for host, want := range map[string]string{"rx.test": "/foo/.*", "rxp.test": "/foo/bar"} {
		r := h.mustGet("http://" + host + "/foo/bar")
		if ck := setCookie(t, r, config.DefaultCookieName); r.Status != 200 || ck == nil || ck.Path != want {
			t.Errorf("%s: status %d, Set-Cookie %q, want Path=%s", host, r.Status, r.Header.Values("Set-Cookie"), want)
		}
	}
}

// cookieOrder is the order of lua-resty-cookie's attributes, which
// ingress-nginx uses.
var cookieOrder = regexp.MustCompile(`^[^=;]+=[^;]+(; Expires=[^;]+)?(; Max-Age=\d+)?(; Domain=[^;]+)?; Path=[^;]+(; Secure)?; HttpOnly(; SameSite=(None|Lax|Strict))?$`)

// stickyBackend is a backend of eps with affinity in mode.
func stickyBackend(name, mode string, eps ...*echo.Server) config.Backend {
	b := backendOf(name, eps...)
	b.Affinity = &config.Affinity{CookieName: "route", Mode: mode}
	return b
}

// sessions makes n clients that each send one request without a cookie
// and keep the cookie they get; it returns the clients and the endpoint
// each was sent to.
func sessions(t *testing.T, h *harness, url string, n int) ([]*http.Client, []string) {
	t.Helper()
	clients, pinned := make([]*http.Client, n), make([]string, n)
	for i := range n {
		clients[i] = h.client(t)
		r, err := echo.Get(context.Background(), clients[i], url)
		if err != nil || r.Status != 200 || setCookie(t, r, "route") == nil {
			t.Fatalf("client %d: %d, %v, Set-Cookie %q", i, r.Status, err, r.Header.Values("Set-Cookie"))
		}
		pinned[i] = r.Reply.Backend
	}
	return clients, pinned
}

// revisit sends one request per client and returns where each went and
// how many got a new cookie.
func revisit(t *testing.T, url string, clients []*http.Client) ([]string, int) {
	t.Helper()
	got, renewed := make([]string, len(clients)), 0
	for i, c := range clients {
		r, err := echo.Get(context.Background(), c, url)
		if err != nil || r.Status != 200 {
			t.Fatalf("client %d: %d, %v", i, r.Status, err)
		}
		got[i] = r.Reply.Backend
		if len(r.Header.Values("Set-Cookie")) > 0 {
			renewed++
		}
	}
	return got, renewed
}

// TestAffinityModesWhenEndpointsChange: balanced moves some sessions to
// new endpoints (without a new cookie), persistent none; when an endpoint
// goes, its sessions move, persistent ones with a new cookie. No reload.
func TestAffinityModesWhenEndpointsChange(t *testing.T) {
	eps := echoes(t, "a", "b", "c", "d", "e")
	const clients = 40
	for _, mode := range []string{config.AffinityBalanced, config.AffinityPersistent} {
		t.Run(mode, func(t *testing.T) {
			b := stickyBackend("sticky-"+mode, mode, eps[:2]...)
			h := startNginx(t, balancerConfig(b), nil)
			workers := workerPIDs(t, h.proc.Pid())
			cs, pinned := sessions(t, h, "http://lb.test/", clients)
			if again, renewed := revisit(t, "http://lb.test/", cs); renewed > 0 || strings.Join(again, ",") != strings.Join(pinned, ",") {
				t.Fatalf("sessions moved without a change (%d new cookies): %v, then %v", renewed, pinned, again)
			}

			b.Endpoints = append(b.Endpoints, endpointOf(eps[2]), endpointOf(eps[3]), endpointOf(eps[4]))
			if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{b}}); err != nil {
				t.Fatal(err)
			}
			after, renewed := revisit(t, "http://lb.test/", cs)
			moved := 0
			for i := range after {
				if after[i] != pinned[i] {
					moved++
				}
			}
			if renewed > 0 {
				t.Errorf("%d clients got a new cookie after a scale-up", renewed)
			}
			// Balanced: each key is rehashed onto 5 endpoints, 3/5 of the
			// sessions move on average (24 of 40).
			if mode == config.AffinityBalanced && (moved < clients/5 || moved > clients*9/10) {
				t.Errorf("balanced: %d of %d sessions moved after 2 -> 5 endpoints, want about 3/5", moved, clients)
			}
			if mode == config.AffinityPersistent && moved > 0 {
				t.Errorf("persistent: %d of %d sessions moved after a scale-up", moved, clients)
			}

			// Endpoint "a" goes: its sessions move; the others stay.
			b.Endpoints = b.Endpoints[1:]
			if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{b}}); err != nil {
				t.Fatal(err)
			}
			final, renewed := revisit(t, "http://lb.test/", cs)
			onA := 0
			for i := range final {
				switch {
				case final[i] == "a":
					t.Errorf("client %d still on the removed endpoint", i)
				case after[i] == "a":
					onA++
				case final[i] != after[i]:
					t.Errorf("client %d moved from %s to %s, which stayed", i, after[i], final[i])
				}
			}
			if mode == config.AffinityPersistent && renewed != onA {
				t.Errorf("persistent: %d new cookies for the %d sessions of the removed endpoint", renewed, onA)
			}
			if mode == config.AffinityBalanced && renewed != 0 {
				t.Errorf("balanced: %d new cookies after a scale-down", renewed)
			}
			checkNotReloaded(t, h, workers)
		})
	}
}

// TestAffinityChangeOnFailure: a cookie naming a dead endpoint keeps the
// request there (502) unless session-cookie-change-on-failure, which moves
// it to a live endpoint with a new cookie.
func TestAffinityChangeOnFailure(t *testing.T) {
	alive := startEcho(t, "alive")
	dead := freePorts(t, 1)[0] // nothing listens there
	deadKey := md5hex("cof" + "127.0.0.1:" + itoa(dead))
	for _, change := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[change], func(t *testing.T) {
			b := stickyBackend("cof", config.AffinityPersistent, alive)
			b.Endpoints = append(b.Endpoints, config.Endpoint{Address: "127.0.0.1", Port: int32(dead)})
			b.Affinity.ChangeOnFailure = change
			h := startNginx(t, balancerConfig(b), nil)
			h.allowLuaErrors = true // nginx logs the refused connections
			r := h.mustGet("http://lb.test/", "Cookie", "route="+deadKey+"|"+backendKey("cof"))
			ck := setCookie(t, r, "route")
			if !change {
				if r.Status != http.StatusBadGateway || ck != nil {
					t.Fatalf("status %d from %q, Set-Cookie %v: want 502 from the cookie's endpoint", r.Status, r.Reply.Backend, ck)
				}
				return
			}
			want := persistentKey("cof", alive) + "|" + backendKey("cof")
			if r.Status != 200 || r.Reply.Backend != "alive" || ck == nil || ck.Value != want {
				t.Fatalf("status %d from %q, Set-Cookie %v: want 200 from alive and route=%s", r.Status, r.Reply.Backend, ck, want)
			}
		})
	}
}

// TestAffinityStickyThroughBuild: an Ingress with affinity keeps each
// client on one of 3 endpoints over many requests, and spreads clients.
func TestAffinityStickyThroughBuild(t *testing.T) {
	eps := echoes(t, "a", "b", "c")
	h := startNginx(t, buildServices(t, map[string][]*echo.Server{"web": eps},
		fixtures.Ingress("default", "web", ann("affinity", "cookie"), ann("session-cookie-name", "route"),
			fixtures.Rule("lb.test", fixtures.Prefix("/", "web", 80)))), nil)
	cs, pinned := sessions(t, h, "http://lb.test/", 30)
	for range 5 {
		got, renewed := revisit(t, "http://lb.test/", cs)
		if renewed > 0 || strings.Join(got, ",") != strings.Join(pinned, ",") {
			t.Fatalf("sessions moved (%d new cookies): %v, then %v", renewed, pinned, got)
		}
	}
	spread := map[string]int{}
	for _, p := range pinned {
		spread[p]++
	}
	if len(spread) < 2 {
		t.Errorf("30 new sessions all went to one endpoint: %v", spread)
	}
}

// TestUpstreamHashBy: the key is the expression with its variables
// replaced, text kept (predicted with the balancer's ring); a key always
// goes to one endpoint, and keys spread.
func TestUpstreamHashBy(t *testing.T) {
	eps := echoes(t, "a", "b", "c", "d", "e")
	ids := make([]string, len(eps))
	byID := map[string]string{}
	for i, e := range eps {
		ids[i] = idOf(e)
		byID[ids[i]] = e.Name
	}
	r := newRing(ids...)
	cases := map[string]struct {
		hashBy string
		req    func(k string) (url string, header []string)
		key    func(k string) string
	}{
		"cookie": {"$cookie_JSESSIONID",
			func(k string) (string, []string) {
				return "http://lb.test/", []string{"Cookie", "a=1; JSESSIONID=" + k}
			},
			func(k string) string { return k }},
		"argument": {"$arg_x",
			func(k string) (string, []string) { return "http://lb.test/p?y=1&x=" + k, nil },
			func(k string) string { return k }},
		"header": {"$http_x_y",
			func(k string) (string, []string) { return "http://lb.test/", []string{"X-Y", k} },
			func(k string) string { return k }},
		"two variables": {"$request_uri$host",
			func(k string) (string, []string) { return "http://lb.test/k/" + k, nil },
			func(k string) string { return "/k/" + k + "lb.test" }},
		"text mixed in": {"${request_uri}-text-value",
			func(k string) (string, []string) { return "http://lb.test/k/" + k, nil },
			func(k string) string { return "/k/" + k + "-text-value" }},
		"no such cookie: the empty key": {"$cookie_missing",
			func(k string) (string, []string) { return "http://lb.test/k/" + k, nil },
			func(string) string { return "" }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := backendOf("hash", eps...)
			b.UpstreamHashBy = tc.hashBy
			h := startNginx(t, balancerConfig(b), nil)
			h.http.Transport.(*http.Transport).DisableKeepAlives = true // both workers
			spread := map[string]int{}
			for i := range 40 {
				k := "key-" + itoa(i)
				want := byID[r.owner(tc.key(k))]
				for j := range 3 {
					url, header := tc.req(k)
					resp := h.mustGet(url, header...)
					if resp.Status != 200 || resp.Reply.Backend != want {
						t.Fatalf("key %s request %d: %d from %q, want %s", k, j, resp.Status, resp.Reply.Backend, want)
					}
				}
				spread[want]++
			}
			if name != "no such cookie: the empty key" && len(spread) < 4 {
				t.Errorf("40 keys on %d endpoints only: %v", len(spread), spread)
			}
		})
	}
}

// TestUpstreamHashBySubset: a key maps to one subset of 3 endpoints (5
// endpoints: {a,b,c} and {d,e,a}, the last filled up from the first) and
// its requests are spread over that subset at random.
func TestUpstreamHashBySubset(t *testing.T) {
	eps := echoes(t, "a", "b", "c", "d", "e")
	cfg := buildServices(t, map[string][]*echo.Server{"web": eps},
		fixtures.Ingress("default", "web", ann("upstream-hash-by", "$arg_k"), ann("upstream-hash-by-subset", "true"),
			fixtures.Rule("lb.test", fixtures.Prefix("/", "web", 80))))
	if cfg.Backends.At(0).UpstreamHashBySubsetSize != 3 {
		t.Fatalf("backend %+v", cfg.Backends.At(0))
	}
	// The model sorts endpoints by address and port.
	byPort := map[int]string{}
	for _, e := range eps {
		byPort[e.Port()] = e.Name
	}
	var order []string
	for _, ep := range cfg.Backends.At(0).Endpoints {
		order = append(order, byPort[int(ep.Port)])
	}
	members := map[string][]string{"set1": order[:3], "set2": {order[3], order[4], order[0]}}
	r := newRing("set1", "set2")
	h := startNginx(t, cfg, nil)
	h.http.Transport.(*http.Transport).DisableKeepAlives = true
	subsetsSeen := map[string]bool{}
	for i := range 12 {
		k := "key-" + itoa(i)
		set := r.owner(k)
		subsetsSeen[set] = true
		seen := answeredBy(t, h, "http://lb.test/?k="+k, 30)
		for name := range seen {
			if !strings.Contains(strings.Join(members[set], ","), name) {
				t.Fatalf("key %s (%s = %v) answered by %s: %v", k, set, members[set], name, seen)
			}
		}
		// 30 requests at random over 3 endpoints: all on one has
		// probability 3^-29.
		if len(seen) < 2 {
			t.Errorf("key %s: 30 requests on one endpoint of its subset: %v", k, seen)
		}
	}
	if len(subsetsSeen) != 2 {
		t.Errorf("12 keys used subsets %v only", subsetsSeen)
	}
}

// TestAffinityCanaryBehavior: with affinity on the main Ingress, a client
// served by the canary stays there (sticky, the default), and a client
// with the main backend's cookie stays on the main one even when the
// canary header says always; with legacy, the canary sets no cookie.
func TestAffinityCanaryBehavior(t *testing.T) {
	mainEps, canaryEps := echoes(t, "main"), echoes(t, "canary")
	build := func(kv ...string) *config.Configuration {
		opts := []fixtures.IngressOption{fixtures.Created(fixtures.Epoch.Add(time.Second)), ann("canary", "true"),
			ann("canary-weight", "50"), ann("canary-by-header", "X-Canary"), fixtures.Rule("c.test", fixtures.Prefix("/", "canary", 80))}
		for i := 0; i+1 < len(kv); i += 2 {
			opts = append(opts, ann(kv[i], kv[i+1]))
		}
		return buildServices(t, map[string][]*echo.Server{"main": mainEps, "canary": canaryEps},
			fixtures.Ingress("default", "main", fixtures.Created(fixtures.Epoch), ann("affinity", "cookie"), ann("session-cookie-name", "route"),
				fixtures.Rule("c.test", fixtures.Prefix("/", "main", 80))),
			fixtures.Ingress("default", "canary", opts...))
	}
	const clients = 24
	t.Run("sticky", func(t *testing.T) {
		h := startNginx(t, build(), nil)
		cs, pinned := sessions(t, h, "http://c.test/", clients)
		spread := map[string]int{}
		for _, p := range pinned {
			spread[p]++
		}
		if spread["main"] == 0 || spread["canary"] == 0 {
			t.Fatalf("weight 50 sent %v of %d new clients", spread, clients)
		}
		for range 4 {
			if got, renewed := revisit(t, "http://c.test/", cs); renewed > 0 || strings.Join(got, ",") != strings.Join(pinned, ",") {
				t.Fatalf("clients moved between main and canary (%d new cookies): %v, then %v", renewed, pinned, got)
			}
		}
		mainCookie := setCookie(t, h.mustGet("http://c.test/", "X-Canary", "never"), "route")
		if mainCookie == nil {
			t.Fatal("no cookie from the main backend")
		}
		r := h.mustGet("http://c.test/", "X-Canary", "always", "Cookie", "route="+mainCookie.Value)
		if r.Reply.Backend != "main" {
			t.Errorf("a client with the main backend's cookie went to %s with X-Canary: always", r.Reply.Backend)
		}
	})
	t.Run("legacy", func(t *testing.T) {
		h := startNginx(t, build("affinity-canary-behavior", "legacy"), nil)
		for i := range clients {
			r := h.mustGet("http://c.test/")
			ck := setCookie(t, r, "route")
			if (r.Reply.Backend == "canary") != (ck == nil) {
				t.Fatalf("request %d: %s with Set-Cookie %v: only the main backend sets the cookie", i, r.Reply.Backend, ck)
			}
		}
	})
}
