package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// loadLoop sends requests from several goroutines until stopped (bounded by
// count and time) and counts failures.
type loadLoop struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	total    atomic.Int64
	failures atomic.Int64
	mu       sync.Mutex
	errs     []string
}

func startLoad(h *harness, url string, workers int) *loadLoop {
	l := &loadLoop{stop: make(chan struct{})}
	const maxRequests, maxTime = 200_000, 60 * time.Second
	deadline := time.Now().Add(maxTime)
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			c := h.newHTTPClient()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				if l.total.Add(1) > maxRequests || time.Now().After(deadline) {
					return
				}
				r, err := echo.Get(context.Background(), c, url)
				if err != nil || r.Status != 200 {
					l.failures.Add(1)
					l.mu.Lock()
					if len(l.errs) < 5 {
						l.errs = append(l.errs, errString(r, err))
					}
					l.mu.Unlock()
				}
			}
		}()
	}
	return l
}

func errString(r echo.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return "status " + itoa(r.Status)
}

func (l *loadLoop) finish() (total, failures int64, errs []string) {
	close(l.stop)
	l.wg.Wait()
	return l.total.Load(), l.failures.Load(), l.errs
}

// answeredBy sends n sequential requests and returns the set of backends
// that answered, failing on any non-200 answer.
func answeredBy(t *testing.T, h *harness, url string, n int) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for range n {
		r := h.mustGet(url)
		if r.Status != 200 {
			t.Fatalf("GET %s = %d", url, r.Status)
		}
		seen[r.Reply.Backend]++
	}
	return seen
}

func TestEndpointChangeWithoutReload(t *testing.T) {
	a, b, c := startEcho(t, "a"), startEcho(t, "b"), startEcho(t, "c")
	cfg := configOf("dynamic-1", []config.Server{serverOf("dyn.test", prefixLoc("/", "svc"), prefixLoc("/later", "later"))},
		backendOf("svc", a))
	h := startNginx(t, cfg, nil)
	master := h.proc.Pid()
	workers := workerPIDs(t, master)

	load := startLoad(h, "http://dyn.test/load", 4)
	steps := [][]*echo.Server{{a, b}, {b}, {b, c}, {c}, {a, c}, {a}}
	for i, eps := range steps {
		if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{backendOf("svc", eps...)}}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		// Every request after the POST returned uses the new endpoints.
		want := map[string]bool{}
		for _, e := range eps {
			want[e.Name] = true
		}
		for name := range answeredBy(t, h, "http://dyn.test/check", 4*len(eps)) {
			if !want[name] {
				t.Fatalf("step %d: answered by %q after the update to %v", i, name, want)
			}
		}
		time.Sleep(20 * time.Millisecond) // let the load loop run across the change
	}
	total, failures, errs := load.finish()
	if failures > 0 {
		t.Errorf("%d of %d requests failed during endpoint changes: %v", failures, total, errs)
	}
	t.Logf("%d requests during %d endpoint changes", total, len(steps))

	if got := h.proc.Pid(); got != master {
		t.Errorf("nginx master changed: %d -> %d", master, got)
	}
	checkNotReloaded(t, h, workers)
	// The same nginx.conf runs; the routes carry the last update's checksum.
	v := h.mustVersion()
	if want := h.confChecksum(cfg); v.Checksum != want || v.Configuration != h.app.Running().Checksum {
		t.Errorf("version = %+v; want checksum %s and configuration %s", v, want, h.app.Running().Checksum)
	}

	t.Run("unknown backend answers 503, then works once posted", func(t *testing.T) {
		if r := h.mustGet("http://dyn.test/later/x"); r.Status != 503 {
			t.Fatalf("unknown backend: status %d, want 503", r.Status)
		}
		if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{backendOf("later", b)}}); err != nil {
			t.Fatal(err)
		}
		if r := h.mustGet("http://dyn.test/later/x"); r.Status != 200 || r.Reply.Backend != "b" {
			t.Fatalf("after posting the backend: %d from %q", r.Status, r.Reply.Backend)
		}
	})
	t.Run("backend without endpoints answers 503", func(t *testing.T) {
		if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{backendOf("later")}}); err != nil {
			t.Fatal(err)
		}
		if r := h.mustGet("http://dyn.test/later/x"); r.Status != 503 {
			t.Fatalf("status %d, want 503", r.Status)
		}
	})
	t.Run("removed backend answers 503", func(t *testing.T) {
		if err := h.update(t.Context(), config.Change{BackendsRemoved: []string{"later"}}); err != nil {
			t.Fatal(err)
		}
		if r := h.mustGet("http://dyn.test/later/x"); r.Status != 503 {
			t.Fatalf("status %d, want 503", r.Status)
		}
	})
	t.Run("GET backends returns what Lua holds", func(t *testing.T) {
		got, err := h.lua.GetBackends(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Backends) != 1 || got.Backends[0].Name != "svc" || !slices.Equal(got.Backends[0].Endpoints, []config.Endpoint{endpointOf(a)}) {
			t.Fatalf("backends = %+v", got.Backends)
		}
		if got.Version == 0 || got.Generation == 0 {
			t.Errorf("version %d, generation %d: want both set", got.Version, got.Generation)
		}
	})
}

func TestLuaEndpointRejectsBadDeltas(t *testing.T) {
	h := startNginx(t, configOf("bad-deltas", nil), nil)
	ctx := t.Context()
	tests := []struct {
		name string
		send func() error
	}{
		{"endpoint without port", func() error {
			_, err := h.lua.PostBackends(ctx, []config.Backend{{Name: "x", Endpoints: []config.Endpoint{{Address: "127.0.0.1"}}}}, nil, 1000)
			return err
		}},
		{"endpoint with a host name", func() error {
			_, err := h.lua.PostBackends(ctx, []config.Backend{{Name: "x", Endpoints: []config.Endpoint{{Address: "evil.example", Port: 80}}}}, nil, 1000)
			return err
		}},
		{"backend without name", func() error {
			_, err := h.lua.PostBackends(ctx, []config.Backend{{}}, nil, 1000)
			return err
		}},
		{"name with newline in removed", func() error {
			_, err := h.lua.PostBackends(ctx, nil, []string{"a\nb"}, 1000)
			return err
		}},
		{"certificate that is not PEM", func() error {
			_, err := h.lua.PostCertificates(ctx, []config.Certificate{{Name: "ns/c", Cert: []byte("x"), Key: []byte("y")}}, nil, "", 1000)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.send(); err == nil || !errorsIs(err, ErrLuaEndpoint) {
				t.Fatalf("err = %v, want ErrLuaEndpoint (400)", err)
			}
		})
	}
	t.Run("stale version", func(t *testing.T) {
		if _, err := h.lua.PostBackends(ctx, nil, []string{"gone"}, 2000); err != nil {
			t.Fatal(err)
		}
		_, err := h.lua.PostBackends(ctx, nil, []string{"gone"}, 1999)
		if cur, ok := isStale(err); !ok || cur != 2000 || !errorsIs(err, ErrStaleVersion) {
			t.Fatalf("err = %v, want ErrStaleVersion at 2000", err)
		}
	})
}

// TestManyDeltasAndLargeDelta posts more deltas than the change log keeps
// (workers that fall behind reload everything) and one large delta.
func TestManyDeltasAndLargeDelta(t *testing.T) {
	a := startEcho(t, "a")
	cfg := configOf("many-1", []config.Server{serverOf("many.test", exactLoc("/first", "b0"), exactLoc("/last", "b1099"))})
	h := startNginx(t, cfg, nil)
	ctx := t.Context()
	for i := range 1100 {
		if err := h.update(ctx, config.Change{BackendsUpserted: []config.Backend{backendOf("b"+itoa(i), a)}}); err != nil {
			t.Fatalf("delta %d: %v", i, err)
		}
	}
	var removed []string
	for i := 0; i < 1100; i += 2 {
		removed = append(removed, "b"+itoa(i))
	}
	if err := h.update(ctx, config.Change{BackendsRemoved: removed}); err != nil {
		t.Fatal(err)
	}
	if r := h.mustGet("http://many.test/last"); r.Status != 200 || r.Reply.Backend != "a" {
		t.Errorf("/last = %d from %q", r.Status, r.Reply.Backend)
	}
	if r := h.mustGet("http://many.test/first"); r.Status != 503 {
		t.Errorf("/first (removed backend) = %d, want 503", r.Status)
	}
	got, err := h.lua.GetBackends(ctx)
	if err != nil || len(got.Backends) != 550 {
		t.Fatalf("backends = %d, %v; want 550", len(got.Backends), err)
	}

	// One delta of 5000 backends with 4 endpoints each (about 1 MB).
	var big []config.Backend
	for i := range 5000 {
		b := backendOf("big"+itoa(i), a)
		for p := range 3 {
			b.Endpoints = append(b.Endpoints, config.Endpoint{Address: "10.0." + itoa(i%250) + "." + itoa(p+1), Port: 8080})
		}
		big = append(big, b)
	}
	big[4999].Endpoints = []config.Endpoint{endpointOf(a)}
	big[4999].Name = "b1099"
	if err := h.update(ctx, config.Change{BackendsUpserted: big}); err != nil {
		t.Fatal(err)
	}
	if r := h.mustGet("http://many.test/last"); r.Status != 200 || r.Reply.Backend != "a" {
		t.Errorf("/last after the large delta = %d from %q", r.Status, r.Reply.Backend)
	}
	got, err = h.lua.GetBackends(ctx)
	if err != nil || len(got.Backends) != 550+4999 {
		t.Fatalf("backends = %d, %v; want %d", len(got.Backends), err, 550+4999)
	}
}

// TestApplyPushesTheChangeItIsGiven: Apply never diffs Configurations. It
// pushes the Change its caller decided, even one that names less than
// differs (here one host of two), and only after a failure or a restart
// (Restore) does it send the whole running state, less what the Lua side
// holds.
func TestApplyPushesTheChangeItIsGiven(t *testing.T) {
	e := startEcho(t, "svc")
	first := configOf("given-1", []config.Server{serverOf("a.test", prefixLoc("/", "svc")), serverOf("b.test", prefixLoc("/", "svc"))},
		backendOf("svc", e))
	next := configOf("given-2", []config.Server{serverOf("a.test", prefixLoc("/", "svc"), exactLoc("/x", "svc")),
		serverOf("b.test", prefixLoc("/", "svc"), exactLoc("/y", "svc"))}, backendOf("svc", e))
	h := startNginx(t, first, nil)
	digests := func(cfg *config.Configuration) map[string]string {
		out := map[string]string{}
		for _, x := range hostsOf(cfg.Servers) {
			out[x.Name] = x.Digest
		}
		return out
	}
	was, now := digests(first), digests(next)
	steps := []struct {
		name  string
		apply func() error
		want  map[string]string // host digests the Lua side holds
	}{
		{"only the host the Change names", func() error {
			_, err := h.app.Apply(t.Context(), next, config.Change{ServersUpserted: next.Servers[1:2]})
			return err
		}, map[string]string{"_": was["_"], "a.test": now["a.test"], "b.test": was["b.test"]}},
		{"Restore sends what differs from the running state", func() error { return h.app.Restore(t.Context()) }, now},
	}
	for _, s := range steps {
		if err := s.apply(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		routes, err := h.lua.GetRoutes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, x := range routes.Hosts {
			got[x.Name] = x.Digest
		}
		if !maps.Equal(got, s.want) {
			t.Errorf("%s: the Lua side holds %v, want %v", s.name, got, s.want)
		}
	}
	// (The test's backends have no checksum, so they are always sent.)
	if st := h.app.LastRestore(); st.Hosts != 1 || st.Removed != 0 {
		t.Errorf("Restore sent %+v, want one host (b.test) and no removal", st)
	}
}
