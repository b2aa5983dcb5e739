package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// Tests of router.lua through a real nginx: route changes without reloads,
// requests while routes change, lookup rules and the route table endpoint.

// routeCheck is one request and what it must get.
type routeCheck struct {
	url     string
	status  int
	backend string // the echo backend that answers; "" for nginx's own answer
	path    string // the path and query the backend saw, when not ""
}

// verify sends the request (with header pairs) and reports a wrong answer.
func (c routeCheck) verify(t *testing.T, h *harness, header ...string) {
	t.Helper()
	r := h.mustGet(c.url, header...)
	if r.Status != c.status || r.Reply.Backend != c.backend {
		t.Errorf("GET %s %v = %d from %q, want %d from %q", c.url, header, r.Status, r.Reply.Backend, c.status, c.backend)
		return
	}
	if c.path != "" && r.Reply.URI() != c.path {
		t.Errorf("GET %s: backend saw %q, want %q", c.url, r.Reply.URI(), c.path)
	}
	if c.status == 404 && r.Header.Get("Location") != "" {
		t.Errorf("GET %s: 404 with Location %q", c.url, r.Header.Get("Location"))
	}
}

// namedCheck is a routeCheck of a table test.
type namedCheck struct {
	name string
	routeCheck
}

// runChecks verifies each check in a subtest of its name.
func runChecks(t *testing.T, h *harness, checks []namedCheck) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.verify(t, h) })
	}
}

// echoBackends starts an echo backend per name and returns a Backend of
// that name for each.
func echoBackends(t *testing.T, names ...string) []config.Backend {
	out := make([]config.Backend, len(names))
	for i, n := range names {
		out[i] = backendOf(n, startEcho(t, n))
	}
	return out
}

func regexLoc(path, backend, rewrite string) config.Location {
	return config.Location{Path: path, PathType: config.PathRegex, Backend: backend, Ingress: "default/test",
		Settings: config.LocationSettings{RewriteTarget: rewrite}}
}

// sortedWorkers returns the sorted worker pids of h's nginx master.
func sortedWorkers(t testing.TB, h *harness) []int {
	t.Helper()
	pids := workerPIDs(t, h.proc.Pid())
	slices.Sort(pids)
	return pids
}

// applyWithoutReload applies cfg and fails unless it went through the Lua
// endpoints only: no reload reported, and the same nginx master and
// workers as before.
func applyWithoutReload(t testing.TB, h *harness, cfg *config.Configuration) config.Change {
	t.Helper()
	master, workers := h.proc.Pid(), sortedWorkers(t, h)
	ch := config.Diff(h.app.Running(), cfg)
	reloaded, err := h.app.Apply(context.Background(), cfg, ch)
	if err != nil {
		t.Fatalf("apply %s: %v", cfg.Checksum, err)
	}
	if reloaded || !h.app.LastReload().Skipped {
		t.Fatalf("apply %s reloaded nginx (reasons %v)", cfg.Checksum, ch.ReloadReasons)
	}
	if h.proc.Pid() != master || !slices.Equal(sortedWorkers(t, h), workers) {
		t.Fatalf("apply %s: nginx processes changed: master %d → %d, workers %v → %v",
			cfg.Checksum, master, h.proc.Pid(), workers, sortedWorkers(t, h))
	}
	return ch
}

func TestRouteChangesWithoutReload(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	backends := []config.Backend{backendOf("a", a), backendOf("b", b)}
	one := serverOf("one.test", prefixLoc("/", "a"))
	two := serverOf("two.test", prefixLoc("/", "b"))
	steps := []struct {
		name    string
		servers []config.Server
		checks  []routeCheck
	}{
		{"add a host", []config.Server{one, two}, []routeCheck{
			{"http://two.test/x", 200, "b", "/x"}, {"http://one.test/x", 200, "a", "/x"}}},
		{"add a prefix path", []config.Server{serverOf("one.test", prefixLoc("/extra", "b"), prefixLoc("/", "a")), two}, []routeCheck{
			{"http://one.test/extra/y", 200, "b", "/extra/y"}, {"http://one.test/extras", 200, "a", "/extras"}}},
		{"add an exact path", []config.Server{serverOf("one.test", exactLoc("/only", "b"), prefixLoc("/", "a")), two}, []routeCheck{
			{"http://one.test/only", 200, "b", "/only"}, {"http://one.test/extra/y", 200, "a", "/extra/y"},
			{"http://one.test/only/x", 200, "a", "/only/x"}}},
		{"remove the paths", []config.Server{one, two}, []routeCheck{{"http://one.test/only", 200, "a", "/only"}}},
		{"add an Ingress of several hosts", []config.Server{one, two,
			serverOf("three.test", prefixLoc("/", "b")), serverOf("*.four.test", prefixLoc("/", "b")), serverOf("five.test", exactLoc("/5", "a"))},
			[]routeCheck{{"http://three.test/", 200, "b", "/"}, {"http://x.four.test/y", 200, "b", "/y"},
				{"http://five.test/5", 200, "a", "/5"}, {"http://five.test/6", 404, "", ""}}},
		{"remove that Ingress", []config.Server{one, two}, []routeCheck{
			{"http://three.test/", 404, "", ""}, {"http://x.four.test/y", 404, "", ""}, {"http://five.test/5", 404, "", ""},
			{"http://two.test/x", 200, "b", "/x"}}},
		{"remove a host", []config.Server{one}, []routeCheck{{"http://two.test/x", 404, "", ""}, {"http://one.test/x", 200, "a", "/x"}}},
		{"remove every host", nil, []routeCheck{{"http://one.test/x", 404, "", ""}}},
		{"add a host back", []config.Server{two}, []routeCheck{{"http://two.test/x", 200, "b", "/x"}, {"http://one.test/x", 404, "", ""}}},
	}
	h := startNginx(t, configOf("zero-0", []config.Server{one}, backends...), nil)
	routeCheck{"http://one.test/x", 200, "a", "/x"}.verify(t, h)
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ch := applyWithoutReload(t, h, configOf(fmt.Sprintf("zero-%d", i+1), st.servers, backends...))
			if len(ch.ServersUpserted)+len(ch.ServersRemoved) == 0 {
				t.Errorf("no server changed: %+v", ch)
			}
			for _, c := range st.checks {
				c.verify(t, h)
			}
		})
	}
}

// hammer sends GET requests from several goroutines, until finish or the
// end of the test, at most hammerRequests requests and hammerTime, and
// counts the answers that are not among the allowed ones of their URL:
// "200 a" (status and echo backend) or "404" (nginx's own answer).
type hammer struct {
	allowed map[string][]string
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	total   atomic.Int64
	mu      sync.Mutex
	nbad    int
	bad     []string
}

const (
	hammerRequests = 200_000
	hammerTime     = 40 * time.Second
)

func startHammer(t testing.TB, h *harness, workers int, allowed map[string][]string) *hammer {
	hm := &hammer{allowed: allowed, stop: make(chan struct{})}
	t.Cleanup(hm.halt)
	urls := slices.Sorted(maps.Keys(allowed))
	deadline := time.Now().Add(hammerTime)
	for w := range workers {
		hm.wg.Add(1)
		go func() {
			defer hm.wg.Done()
			c := h.newHTTPClient()
			for i := w; ; i++ {
				select {
				case <-hm.stop:
					return
				default:
				}
				if hm.total.Add(1) > hammerRequests || time.Now().After(deadline) {
					return
				}
				url := urls[i%len(urls)]
				r, err := echo.Get(context.Background(), c, url)
				if msg := hm.judge(url, r, err); msg != "" {
					hm.record(url + ": " + msg)
				}
			}
		}()
	}
	return hm
}

func (hm *hammer) judge(url string, r echo.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	got := itoa(r.Status)
	if r.Reply.Backend != "" {
		got += " " + r.Reply.Backend
	}
	if !slices.Contains(hm.allowed[url], got) {
		return fmt.Sprintf("got %q, want one of %q", got, hm.allowed[url])
	}
	return ""
}

func (hm *hammer) record(msg string) {
	hm.mu.Lock()
	defer hm.mu.Unlock()
	hm.nbad++
	if len(hm.bad) < 10 {
		hm.bad = append(hm.bad, msg)
	}
}

// progress waits until the hammer sent n more requests, so that each
// change overlaps requests.
func (hm *hammer) progress(t testing.TB, n int64) {
	t.Helper()
	from := hm.total.Load()
	waitFor(t, "requests in flight", func() bool { return hm.total.Load() >= from+n })
}

func (hm *hammer) halt() {
	hm.once.Do(func() { close(hm.stop) })
	hm.wg.Wait()
}

// finish stops the hammer and fails t on any wrong answer.
func (hm *hammer) finish(t testing.TB) {
	t.Helper()
	hm.halt()
	if hm.nbad > 0 {
		t.Errorf("%d of %d answers wrong, first ones:\n%s", hm.nbad, hm.total.Load(), strings.Join(hm.bad, "\n"))
	}
	t.Logf("%d requests", hm.total.Load())
}

// swapServers is step i of TestRequestsDuringRouteSwap: paths of swap.test
// move between backends a and b (and between path types), extra.test comes
// and goes, steady.test stays.
func swapServers(i int) []config.Server {
	from, to := "a", "b"
	if i%2 == 1 {
		from, to = to, from
	}
	r := regexLoc("/r/.*", from, "")
	if i%2 == 1 {
		r = prefixLoc("/r", from)
	}
	out := []config.Server{
		serverOf("steady.test", prefixLoc("/", "a")),
		serverOf("swap.test", exactLoc("/e", to), prefixLoc("/p", from), r),
	}
	if i%2 == 1 {
		out = append(out, serverOf("extra.test", prefixLoc("/", "b")))
	}
	if i%3 == 0 {
		out = append(out, serverOf(fmt.Sprintf("h%d.test", i), prefixLoc("/", "a")))
	}
	return out
}

func TestRequestsDuringRouteSwap(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	backends := []config.Backend{backendOf("a", a), backendOf("b", b)}
	h := startNginx(t, configOf("swap-0", swapServers(0), backends...), nil)
	either := []string{"200 a", "200 b"}
	hm := startHammer(t, h, 4, map[string][]string{
		"http://swap.test/p/x": either,
		"http://swap.test/e":   either,
		"http://swap.test/r/x": either,
		"http://steady.test/":  {"200 a"},
		"http://extra.test/":   {"200 b", "404"},
	})
	for i := 1; i <= 40; i++ {
		applyWithoutReload(t, h, configOf(fmt.Sprintf("swap-%d", i), swapServers(i), backends...))
		hm.progress(t, 20)
	}
	hm.finish(t)
}

// TestRouteAndBackendInOneApply: a host whose backend is new in the same
// Apply never answers 503 (its route arrives after its backend), and a host
// removed with its backend answers from the old route or the default
// server, never 503.
func TestRouteAndBackendInOneApply(t *testing.T) {
	a, f := startEcho(t, "a"), startEcho(t, "fresh")
	keep := serverOf("keep.test", prefixLoc("/", "a"))
	base := func(i int) *config.Configuration {
		return configOf(fmt.Sprintf("order-%d", i), []config.Server{keep}, backendOf("a", a))
	}
	h := startNginx(t, base(0), nil)
	hm := startHammer(t, h, 4, map[string][]string{
		"http://new.test/x": {"200 fresh", "404"},
		"http://new.test/":  {"200 fresh", "404"},
		"http://keep.test/": {"200 a"},
	})
	for i := 1; i <= 30; i++ {
		with := configOf(fmt.Sprintf("order-%d-new", i), []config.Server{keep, serverOf("new.test", prefixLoc("/", "fresh"))},
			backendOf("a", a), backendOf("fresh", f))
		ch := applyWithoutReload(t, h, with)
		if len(ch.BackendsUpserted) != 1 || len(ch.ServersUpserted) != 1 {
			t.Fatalf("round %d: change %+v, want one new backend and one new server", i, ch)
		}
		hm.progress(t, 20)
		ch = applyWithoutReload(t, h, base(i))
		if len(ch.BackendsRemoved) != 1 || len(ch.ServersRemoved) != 1 {
			t.Fatalf("round %d: change %+v, want one backend and one server removed", i, ch)
		}
		hm.progress(t, 20)
	}
	hm.finish(t)
}

// TestNoAutoRedirect: issue 11, "Why" point 3. An Exact "/foo/" does not
// make nginx answer GET /foo with a 301 to /foo/; Prefix paths match whole
// path elements.
func TestNoAutoRedirect(t *testing.T) {
	cfg := configOf("slash-1", []config.Server{serverOf("slash.test",
		exactLoc("/foo/", "a"), prefixLoc("/bar", "b"), prefixLoc("/dir/", "a"), exactLoc("/x/y/", "b"))},
		echoBackends(t, "a", "b")...)
	h := startNginx(t, cfg, nil)
	runChecks(t, h, []namedCheck{
		{"exact with slash, requested without", routeCheck{"http://slash.test/foo", 404, "", ""}},
		{"exact with slash", routeCheck{"http://slash.test/foo/", 200, "a", "/foo/"}},
		{"exact with slash, below", routeCheck{"http://slash.test/foo/x", 404, "", ""}},
		{"exact with slash, query", routeCheck{"http://slash.test/foo/?q=1", 200, "a", "/foo/?q=1"}},
		{"deep exact with slash, requested without", routeCheck{"http://slash.test/x/y", 404, "", ""}},
		{"prefix itself", routeCheck{"http://slash.test/bar", 200, "b", "/bar"}},
		{"prefix with slash", routeCheck{"http://slash.test/bar/", 200, "b", "/bar/"}},
		{"prefix below", routeCheck{"http://slash.test/bar/baz", 200, "b", "/bar/baz"}},
		{"prefix below with slash", routeCheck{"http://slash.test/bar/baz/", 200, "b", "/bar/baz/"}},
		{"prefix is element-wise", routeCheck{"http://slash.test/barbaz", 404, "", ""}},
		{"prefix declared with slash, requested without", routeCheck{"http://slash.test/dir", 200, "a", "/dir"}},
		{"prefix declared with slash", routeCheck{"http://slash.test/dir/", 200, "a", "/dir/"}},
		{"prefix declared with slash, below", routeCheck{"http://slash.test/dir/x", 200, "a", "/dir/x"}},
		{"prefix declared with slash is element-wise", routeCheck{"http://slash.test/dirx", 404, "", ""}},
	})
}

func TestRegexRoutes(t *testing.T) {
	backends := echoBackends(t, "api", "img1", "img2", "exact", "prefix", "caps")
	cfg := configOf("regex-1", []config.Server{serverOf("re.test",
		exactLoc("/api/exact", "exact"),
		regexLoc("/api/(.*)", "api", "/$1"),
		regexLoc("/img/[0-9]+", "img1", ""),
		regexLoc("/img/", "img2", ""),
		regexLoc("/caps/(\\w+)/(\\d+)", "caps", "/$2/$1$3"),
		prefixLoc("/api/prefix", "prefix"),
		prefixLoc("/plain", "prefix"),
	)}, backends...)
	h := startNginx(t, cfg, nil)
	runChecks(t, h, []namedCheck{
		{"rewrite with capture and query", routeCheck{"http://re.test/api/users?x=1", 200, "api", "/users?x=1"}},
		{"rewrite of an empty capture", routeCheck{"http://re.test/api/", 200, "api", "/"}},
		{"case insensitive", routeCheck{"http://re.test/API/Users", 200, "api", "/Users"}},
		{"anchored at the start", routeCheck{"http://re.test/v1/api/x", 404, "", ""}},
		{"not a full match: the rest of the path is free", routeCheck{"http://re.test/img/12/x", 200, "img1", "/img/12/x"}},
		{"first match in order", routeCheck{"http://re.test/img/12", 200, "img1", "/img/12"}},
		{"later regex when the first does not match", routeCheck{"http://re.test/img/x", 200, "img2", "/img/x"}},
		{"exact beats regex", routeCheck{"http://re.test/api/exact", 200, "exact", "/api/exact"}},
		{"regex beats a longer prefix", routeCheck{"http://re.test/api/prefix/x", 200, "api", "/prefix/x"}},
		{"prefix when no regex matches", routeCheck{"http://re.test/plain/x", 200, "prefix", "/plain/x"}},
		{"several captures, missing one is empty", routeCheck{"http://re.test/caps/abc/42", 200, "caps", "/42/abc"}},
		{"regex matches the decoded path", routeCheck{"http://re.test/%61pi/v", 200, "api", "/v"}},
	})
}

// TestRegexRewriteOfEncodedBytes: a capture holds the decoded path, which
// may contain bytes that are not allowed raw in a URI (a space, "?", "%",
// "#"); the rewritten path reaches the backend escaped again, as the
// same path (a "?" stays in the path, it does not start a query).
func TestRegexRewriteOfEncodedBytes(t *testing.T) {
	cfg := configOf("regex-enc", []config.Server{serverOf("enc.test", regexLoc("/api/(.*)", "api", "/$1"))},
		backendOf("api", startEcho(t, "api")))
	h := startNginx(t, cfg, nil)
	tests := []struct {
		path, want string
	}{
		{"/api/a%20b", "/a b"},
		{"/api/a%0Ab", "/a"}, // "." does not match a newline (PCRE, RE2 and ingress-nginx alike)
		{"/api/%3Fq", "/?q"},
		{"/api/%25", "/%"},
		{"/api/%23x", "/#x"},
		{"/api/%C3%A9", "/\u00e9"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			r := h.mustGet("http://enc.test" + tc.path)
			if r.Status != 200 || r.Reply.Backend != "api" || r.Reply.Path != tc.want || r.Reply.Query != "" {
				t.Errorf("GET %s = %d from %q, path %q, query %q; want 200 from api, path %q", tc.path, r.Status,
					r.Reply.Backend, r.Reply.Path, r.Reply.Query, tc.want)
			}
		})
	}
	t.Run("NUL byte", func(t *testing.T) {
		// nginx refuses a decoded NUL itself, before any routing.
		if r := h.mustGet("http://enc.test/api/%00"); r.Status != 400 {
			t.Errorf("GET /api/%%00 = %d, want nginx's 400", r.Status)
		}
	})
}

func TestHostLookup(t *testing.T) {
	backends := echoBackends(t, "exact", "wild", "xexact", "catchall")
	cfg := configOf("hosts-1", []config.Server{
		serverOf("exact.test", prefixLoc("/", "exact")),
		serverOf("*.wild.test", prefixLoc("/", "wild")),
		serverOf("x.wild.test", prefixLoc("/", "xexact")),
	}, backends...)
	cfg.Servers[0].Locations = []config.Location{prefixLoc("/", "catchall")} // the "_" server
	h := startNginx(t, cfg, nil)
	tests := []struct {
		name, url, host, backend string
	}{
		{"exact", "http://exact.test/", "", "exact"},
		{"upper-case Host", "http://exact.test/", "EXACT.Test", "exact"},
		{"Host with port", "http://exact.test/", "exact.test:8080", "exact"},
		{"upper-case Host with port", "http://exact.test/", "Exact.TEST:1", "exact"},
		{"Host with a trailing dot", "http://exact.test/", "exact.test.", "exact"},
		{"one-label wildcard", "http://a.wild.test/", "", "wild"},
		{"wildcard, upper case and port", "http://a.wild.test/", "A.WILD.test:80", "wild"},
		{"exact beats wildcard", "http://x.wild.test/", "", "xexact"},
		{"wildcard matches one label only", "http://a.b.wild.test/", "", "catchall"},
		{"wildcard does not match the apex", "http://wild.test/", "", "catchall"},
		{"unknown host to the catch-all", "http://nobody.test/", "", "catchall"},
		{"IP address as Host", "http://exact.test/", "127.0.0.1", "catchall"},
		{"empty label", "http://exact.test/", ".wild.test", "catchall"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var header []string
			if tc.host != "" {
				header = []string{"Host", tc.host}
			}
			routeCheck{tc.url, 200, tc.backend, ""}.verify(t, h, header...)
		})
	}
}

// hostsByName indexes hosts, for comparisons that ignore the order.
func hostsByName(hosts []Host) map[string]Host {
	out := map[string]Host{}
	for _, h := range hosts {
		out[h.Name] = h
	}
	return out
}

// checkRouteTable fails t unless the route table nginx holds is cfg's.
func checkRouteTable(t testing.TB, h *harness, cfg *config.Configuration) {
	t.Helper()
	got, err := h.lua.GetRoutes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got.Checksum != cfg.Checksum {
		t.Errorf("routes checksum %q, want %q", got.Checksum, cfg.Checksum)
	}
	want, have := hostsByName(hostsOf(cfg.Servers)), hostsByName(got.Hosts)
	names := slices.Sorted(maps.Keys(want))
	for name := range have {
		if _, ok := want[name]; !ok {
			names = append(names, name)
		}
	}
	bad := 0
	for _, name := range names {
		if w, ok := want[name]; !reflect.DeepEqual(have[name], w) || !ok {
			if bad++; bad <= 5 {
				t.Errorf("route table host %q:\nhave %+v\nwant %+v", name, have[name], w)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d hosts of %d differ", bad, len(names))
	}
}

func TestRouteTableInspection(t *testing.T) {
	a := startEcho(t, "a")
	yes := true
	full := config.Location{Path: "/full", PathType: config.PathPrefix, Backend: "a", Ingress: "ns/full", Settings: config.LocationSettings{
		ProxyConnectTimeout: 2, ProxyReadTimeout: 3, ProxySendTimeout: 4, ProxyBodySize: "0", BackendProtocol: "HTTPS",
		AllowSourceRange: []string{"10.0.0.0/8", "127.0.0.1/32"}, SSLRedirect: &yes, PreserveTrailingSlash: true,
		UsePortInRedirects: true, Redirect: &config.Redirect{URL: "https://x.test/y?a=b", Code: 307},
		CORS: &config.CORS{Origins: []string{"https://*.a.test"}, Methods: "GET", Headers: "X-A", Expose: "*", Credentials: true, MaxAge: 5},
	}}
	cfg := configOf("inspect-1", []config.Server{
		serverOf("a.test", full, exactLoc("/e", "a"), regexLoc("/r/(.*)", "a", "/$1"), prefixLoc("/", "a")),
		serverOf("*.w.test", prefixLoc("/", "a")),
	}, backendOf("a", a))
	h := startNginx(t, cfg, nil)
	ctx := t.Context()
	checkRouteTable(t, h, cfg)

	got, err := h.lua.GetHost(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if want := hostsOf(cfg.Servers[1:2])[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("GetHost(a.test) = %+v, want %+v", got, want)
	}
	if w, err := h.lua.GetHost(ctx, "*.w.test"); err != nil || w.Name != "*.w.test" || len(w.Routes) != 1 {
		t.Errorf("GetHost(*.w.test) = %+v, %v", w, err)
	}
	for _, name := range []string{"nobody.test", "A.TEST", "x.w.test", ""} {
		if _, err := h.lua.GetHost(ctx, name); !errorsIs(err, ErrNotFound) {
			t.Errorf("GetHost(%q) err = %v, want ErrNotFound", name, err)
		}
	}

	next := configOf("inspect-2", []config.Server{serverOf("b.test", prefixLoc("/b", "a"))}, backendOf("a", a))
	applyWithoutReload(t, h, next)
	checkRouteTable(t, h, next)
	if _, err := h.lua.GetHost(ctx, "a.test"); !errorsIs(err, ErrNotFound) {
		t.Errorf("GetHost of a removed host: err = %v, want ErrNotFound", err)
	}
}

// TestRoutesRestoredAfterRestart: routes pushed after the start (hosts
// added and removed by Apply) are what a new nginx master serves after the
// old one was killed. process_test.go covers the backends.
func TestRoutesRestoredAfterRestart(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	backends := []config.Backend{backendOf("a", a), backendOf("b", b)}
	h := startNginx(t, configOf("restore-1", []config.Server{serverOf("old.test", prefixLoc("/", "a"))}, backends...), nil)
	next := configOf("restore-2", []config.Server{
		serverOf("new.test", exactLoc("/e", "b"), regexLoc("/r/(.*)", "a", "/$1"), prefixLoc("/", "b")),
		serverOf("*.wild.test", prefixLoc("/", "a")),
	}, backends...)
	applyWithoutReload(t, h, next)
	checks := []routeCheck{
		{"http://new.test/e", 200, "b", "/e"},
		{"http://new.test/r/x?q=1", 200, "a", "/x?q=1"},
		{"http://new.test/other", 200, "b", "/other"},
		{"http://a.wild.test/y", 200, "a", "/y"},
		{"http://old.test/", 404, "", ""},
	}
	for _, c := range checks {
		c.verify(t, h)
	}

	master := h.proc.Pid()
	if err := syscall.Kill(master, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new nginx master", func() bool { p := h.proc.Pid(); return p != 0 && p != master })
	waitFor(t, "routes restored", func() bool {
		v, err := h.lua.GetVersion(t.Context())
		return err == nil && v.Configuration == next.Checksum
	})
	checkRouteTable(t, h, next)
	for _, c := range checks {
		c.verify(t, h)
	}
}

// writingRequests returns the "Writing" count of nginx's stub_status: the
// requests whose headers nginx has read, and so routed (the stub_status
// request itself is one).
func writingRequests(t testing.TB, h *harness) int {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://127.0.0.1:" + itoa(h.opts.StatusPort) + "/nginx_status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	_, rest, _ := strings.Cut(string(body), "Writing: ")
	n, err := strconv.Atoi(strings.Fields(rest + " x")[0])
	if err != nil {
		t.Fatalf("stub_status %q: %v", body, err)
	}
	return n
}

// TestRouteRemovedDuringUpload: a request routed before its host and
// backend were removed (here one whose body is still arriving: nginx reads
// it between routing and the balancer) is still answered by the old
// route, not with a 503.
func TestRouteRemovedDuringUpload(t *testing.T) {
	f := startEcho(t, "fresh")
	with := configOf("upload-1", []config.Server{serverOf("up.test", prefixLoc("/", "fresh"))}, backendOf("fresh", f))
	h := startNginx(t, with, nil)
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", itoa(h.opts.HTTPPort)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(testWait))
	if _, err := io.WriteString(conn, "POST /up HTTP/1.1\r\nHost: up.test\r\nContent-Length: 10\r\n\r\n12345"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upload to be routed", func() bool { return writingRequests(t, h) >= 2 })
	applyWithoutReload(t, h, configOf("upload-2", nil))
	if _, err := io.WriteString(conn, "67890"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Echo-Backend") != "fresh" {
		t.Errorf("upload routed before the removal = %d from %q, want 200 from fresh (the old route)",
			resp.StatusCode, resp.Header.Get("X-Echo-Backend"))
	}
	routeCheck{"http://up.test/", 404, "", ""}.verify(t, h)
}
