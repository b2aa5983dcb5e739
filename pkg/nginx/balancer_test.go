package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

func echoes(t *testing.T, names ...string) []*echo.Server {
	out := make([]*echo.Server, len(names))
	for i, n := range names {
		out[i] = startEcho(t, n)
	}
	return out
}

func balancerConfig(b config.Backend) *config.Configuration {
	return configOf("balancer-"+b.Name, []config.Server{serverOf("lb.test", prefixLoc("/", b.Name))}, b)
}

func TestRoundRobinSpreadsEvenly(t *testing.T) {
	eps := echoes(t, "a", "b", "c")
	h := startNginx(t, balancerConfig(backendOf("rr", eps...)), nil)
	const n = 300
	// Fresh connections, so that both workers take part; each worker is
	// exact round robin, so each endpoint is within one per worker of n/3.
	h.http.Transport.(*http.Transport).DisableKeepAlives = true
	seen := answeredBy(t, h, "http://lb.test/", n)
	slack := h.opts.WorkerProcesses
	for _, e := range eps {
		if got := seen[e.Name]; got < n/3-slack || got > n/3+slack {
			t.Errorf("endpoint %s answered %d of %d requests, want %d±%d (all: %v)", e.Name, got, n, n/3, slack, seen)
		}
	}
}

func TestStickyCookieKeepsClientOnOneEndpoint(t *testing.T) {
	eps := echoes(t, "a", "b", "c")
	b := backendOf("sticky", eps...)
	b.Affinity = &config.Affinity{CookieName: "route", Mode: config.AffinityBalanced, CookieMaxAge: 3600}
	h := startNginx(t, balancerConfig(b), nil)

	first := h.mustGet("http://lb.test/")
	cookie := first.Header.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, "route=") || !strings.Contains(cookie, "Path=/") ||
		!strings.Contains(cookie, "Max-Age=3600") || !strings.Contains(cookie, "HttpOnly") {
		t.Fatalf("Set-Cookie = %q", cookie)
	}
	for i := range 3 {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		c := h.newHTTPClient()
		c.Jar = jar
		c.Transport.(*http.Transport).DisableKeepAlives = true // both workers
		var pinned string
		for j := range 30 {
			r, err := echo.Get(context.Background(), c, "http://lb.test/x")
			if err != nil || r.Status != 200 {
				t.Fatalf("client %d request %d: %d, %v", i, j, r.Status, err)
			}
			if j == 0 {
				pinned = r.Reply.Backend
			} else if r.Reply.Backend != pinned {
				t.Fatalf("client %d moved from %s to %s at request %d", i, pinned, r.Reply.Backend, j)
			}
			if j > 0 && r.Header.Get("Set-Cookie") != "" {
				t.Errorf("client %d got a new cookie at request %d", i, j)
			}
		}
	}
	t.Run("balanced: any key is hashed onto an endpoint, without a new cookie", func(t *testing.T) {
		r := h.mustGet("http://lb.test/", "Cookie", "route=0123456789abcdef0123456789abcdef")
		if r.Status != 200 || r.Header.Get("Set-Cookie") != "" {
			t.Fatalf("status %d, Set-Cookie %q", r.Status, r.Header.Get("Set-Cookie"))
		}
	})
	t.Run("persistent: an unknown key gets an endpoint and a new cookie", func(t *testing.T) {
		p := backendOf("persistent", eps...)
		p.Affinity = &config.Affinity{CookieName: "route", Mode: config.AffinityPersistent}
		if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{p},
			ServersUpserted: []config.Server{serverOf("p.test", prefixLoc("/", "persistent"))}}); err != nil {
			t.Fatal(err)
		}
		r := h.mustGet("http://p.test/", "Cookie", "route=0123456789abcdef0123456789abcdef")
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Set-Cookie"), "route=") {
			t.Fatalf("status %d, Set-Cookie %q", r.Status, r.Header.Get("Set-Cookie"))
		}
	})
}

func TestConsistentHashingIsStable(t *testing.T) {
	eps := echoes(t, "a", "b", "c", "d", "e")
	b := backendOf("chash", eps...)
	b.UpstreamHashBy = "$request_uri"
	h := startNginx(t, balancerConfig(b), nil)
	h.http.Transport.(*http.Transport).DisableKeepAlives = true // both workers

	const keys = 200
	owner := func() map[string]string {
		m := map[string]string{}
		for i := range keys {
			url := "http://lb.test/k/" + itoa(i)
			r := h.mustGet(url)
			if r.Status != 200 {
				t.Fatalf("GET %s = %d", url, r.Status)
			}
			m[url] = r.Reply.Backend
		}
		return m
	}
	before := owner()
	again := owner()
	perEndpoint := map[string]int{}
	for k, v := range before {
		perEndpoint[v]++
		if again[k] != v {
			t.Fatalf("key %s moved from %s to %s without a change", k, v, again[k])
		}
	}
	for _, e := range eps {
		if perEndpoint[e.Name] < keys/len(eps)/3 {
			t.Errorf("endpoint %s owns %d of %d keys: ring badly spread %v", e.Name, perEndpoint[e.Name], keys, perEndpoint)
		}
	}

	// Remove "c": only its keys move.
	b.Endpoints = []config.Endpoint{endpointOf(eps[0]), endpointOf(eps[1]), endpointOf(eps[3]), endpointOf(eps[4])}
	if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{b}}); err != nil {
		t.Fatal(err)
	}
	after := owner()
	moved := 0
	for k, v := range before {
		switch {
		case v == "c" && after[k] == "c":
			t.Errorf("key %s still on the removed endpoint", k)
		case v == "c":
			moved++
		case after[k] != v:
			t.Errorf("key %s moved from %s to %s though %s was not removed", k, v, after[k], v)
		}
	}
	t.Logf("%d of %d keys moved with the removed endpoint", moved, keys)
}

func TestEWMAAvoidsSlowEndpoint(t *testing.T) {
	eps := echoes(t, "fast1", "fast2", "slow")
	eps[2].SetDelay(40 * time.Millisecond)
	b := backendOf("ewma", eps...)
	b.LoadBalance = "ewma"
	h := startNginx(t, balancerConfig(b), nil)
	h.http.Transport.(*http.Transport).DisableKeepAlives = true // both workers

	const n = 200
	seen := answeredBy(t, h, "http://lb.test/", n)
	// Each worker tries the slow endpoint until it has a sample, then avoids
	// it (its score decays over 10 s, longer than this test).
	if seen["slow"] > 10 {
		t.Errorf("slow endpoint answered %d of %d requests: %v", seen["slow"], n, seen)
	}
	if seen["fast1"] < n/5 || seen["fast2"] < n/5 {
		t.Errorf("fast endpoints not both used: %v", seen)
	}
}

func TestRetryOnDeadEndpoint(t *testing.T) {
	eps := echoes(t, "alive")
	dead := freePorts(t, 1)[0] // nothing listens there
	b := backendOf("retry", eps...)
	b.Endpoints = append(b.Endpoints, config.Endpoint{Address: "127.0.0.1", Port: int32(dead)})
	h := startNginx(t, balancerConfig(b), nil)
	h.allowLuaErrors = true // nginx logs the refused connections
	for i := range 20 {
		if r := h.mustGet("http://lb.test/"); r.Status != 200 || r.Reply.Backend != "alive" {
			t.Fatalf("request %d: %d from %q, want a retry on the live endpoint", i, r.Status, r.Reply.Backend)
		}
	}
}
