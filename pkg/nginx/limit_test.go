package nginx

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// statusOf returns the status of GET url.
func (h *harness) statusOf(url string) int {
	h.t.Helper()
	return h.mustGet(url).Status
}

// statuses returns the statuses of n sequential GETs of url.
func (h *harness) statuses(url string, n int) []int {
	h.t.Helper()
	out := make([]int, n)
	for i := range out {
		out[i] = h.statusOf(url)
	}
	return out
}

func countOf(codes []int, code int) int {
	n := 0
	for _, c := range codes {
		if c == code {
			n++
		}
	}
	return n
}

// TestLimitRequests: limit-rps and limit-rpm as ingress-nginx's e2e tests
// (annotations/limitrps.go) describe them, with rates low enough that a
// burst of requests exceeds them whatever the timing (one request a
// minute): burst + 1 requests pass, the next ones get 503 or the
// ConfigMap's code; the allowlist bypasses; each Ingress has its own
// bucket, shared by its paths.
func TestLimitRequests(t *testing.T) {
	web := startEcho(t, "web")
	rule := func(host string, paths ...string) fixtures.IngressOption {
		hps := make([]networkingv1.HTTPIngressPath, len(paths))
		for i, p := range paths {
			hps[i] = fixtures.Prefix(p, "web", 80)
		}
		return fixtures.Rule(host, hps...)
	}
	cfg := buildIngresses(t, map[string]int{"web": web.Port()},
		fixtures.Ingress("default", "rpm", ann("limit-rpm", "1"), ann("limit-burst-multiplier", "3"), rule("rpm.test", "/a", "/b")),
		fixtures.Ingress("default", "both", ann("limit-rps", "100"), ann("limit-rpm", "1"), ann("limit-burst-multiplier", "1"),
			rule("both.test", "/")),
		fixtures.Ingress("default", "code", ann("limit-rpm", "1"), ann("limit-burst-multiplier", "0"), rule("code.test", "/")),
		fixtures.Ingress("default", "allowed", ann("limit-rpm", "1"), ann("limit-burst-multiplier", "0"),
			ann("limit-allowlist", "10.0.0.0/8, 127.0.0.1"), rule("allowed.test", "/")),
		fixtures.Ingress("default", "others", ann("limit-rpm", "1"), ann("limit-burst-multiplier", "0"),
			ann("limit-whitelist", "10.0.0.0/8"), rule("others.test", "/")),
		fixtures.Ingress("default", "plain", rule("plain.test", "/")),
	)
	// The ConfigMap's limit-req-status-code reaches the routes through
	// Build (model tests); here it is set on the built route.
	for i := range cfg.Servers {
		if s := &cfg.Servers[i]; s.Hostname == "code.test" {
			for j := range s.Locations {
				if rl := s.Locations[j].Settings.RateLimit; rl != nil {
					c := *rl
					c.ReqStatus = 429
					s.Locations[j].Settings.RateLimit = &c
				}
			}
		}
	}
	h := startNginx(t, cfg, nil)
	t.Run("burst + 1 pass, then 503; the paths of one Ingress share the bucket", func(t *testing.T) {
		got := append(h.statuses("http://rpm.test/a", 2), h.statuses("http://rpm.test/b", 4)...)
		if want := []int{200, 200, 200, 200, 503, 503}; !slices.Equal(got, want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
	})
	t.Run("with rps and rpm both apply", func(t *testing.T) {
		if got, want := h.statuses("http://both.test/", 4), []int{200, 200, 503, 503}; !slices.Equal(got, want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
	})
	t.Run("the ConfigMap's status code", func(t *testing.T) {
		if got, want := h.statuses("http://code.test/", 3), []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
	})
	t.Run("the allowlist bypasses the limit", func(t *testing.T) {
		if got := h.statuses("http://allowed.test/", 5); countOf(got, 200) != 5 {
			t.Errorf("statuses %v, want only 200", got)
		}
		if got, want := h.statuses("http://others.test/", 2), []int{200, 503}; !slices.Equal(got, want) {
			t.Errorf("a client outside limit-whitelist: %v, want %v", got, want)
		}
	})
	t.Run("other Ingresses are not limited", func(t *testing.T) {
		if got := h.statuses("http://plain.test/", 5); countOf(got, 200) != 5 {
			t.Errorf("statuses %v, want only 200", got)
		}
	})
	t.Run("an Ingress change applies without reload", func(t *testing.T) {
		cfg2 := buildIngresses(t, map[string]int{"web": web.Port()},
			fixtures.Ingress("default", "plain", ann("limit-rpm", "1"), ann("limit-burst-multiplier", "0"), rule("plain.test", "/")))
		applyWithoutReload(t, h, cfg2)
		if got, want := h.statuses("http://plain.test/", 2), []int{200, 503}; !slices.Equal(got, want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
	})
}

// TestLimitFailsClosed: an invalid limit annotation makes its Ingress's
// routes answer 503 with a Problem; another Ingress of the same host is
// served.
func TestLimitFailsClosed(t *testing.T) {
	web := startEcho(t, "web")
	cfg := buildServicesWithProblems(t, map[string][]*echo.Server{"web": {web}},
		fixtures.Ingress("default", "bad", ann("limit-rps", "ten"), fixtures.Rule("fc.test", fixtures.Prefix("/bad", "web", 80))),
		fixtures.Ingress("default", "good", fixtures.Created(fixtures.Epoch.Add(time.Second)),
			fixtures.Rule("fc.test", fixtures.Prefix("/good", "web", 80))))
	if len(cfg.Problems) != 1 {
		t.Fatalf("problems %+v, want the limit-rps one", cfg.Problems)
	}
	h := startNginx(t, cfg, nil)
	checkServed(t, h, "http://fc.test/bad", 503, "")
	checkServed(t, h, "http://fc.test/good", 200, "web")
}

// holdBackend answers every request only when released: started counts
// the requests it holds.
type holdBackend struct {
	srv     *http.Server
	port    int
	started atomic.Int64
	release chan struct{}
	once    sync.Once
}

func startHoldBackend(t *testing.T) *holdBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &holdBackend{port: ln.Addr().(*net.TCPAddr).Port, release: make(chan struct{})}
	b.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.started.Add(1)
		select {
		case <-b.release:
		case <-time.After(testWait):
		}
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = b.srv.Serve(ln) }()
	t.Cleanup(func() {
		b.unblock()
		_ = b.srv.Close()
	})
	return b
}

func (b *holdBackend) unblock() { b.once.Do(func() { close(b.release) }) }

// TestLimitConnections: limit-connections (annotations/limitconnections.go):
// with two requests in progress, a third from the same client gets 503;
// once they are done, requests pass again (the log phase took them back).
func TestLimitConnections(t *testing.T) {
	hold := startHoldBackend(t)
	cfg := buildIngresses(t, map[string]int{"hold": hold.port},
		fixtures.Ingress("default", "conn", ann("limit-connections", "2"), fixtures.Rule("conn.test", fixtures.Prefix("/", "hold", 80))))
	h := startNginx(t, cfg, nil)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() {
			r, err := h.get("http://conn.test/slow" + strconv.Itoa(i))
			if err == nil {
				codes[i] = r.Status
			}
		})
	}
	waitFor(t, "two requests held by the backend", func() bool { return hold.started.Load() == 2 })
	if got := h.statusOf("http://conn.test/third"); got != 503 {
		t.Errorf("a third request in progress: %d, want 503", got)
	}
	hold.unblock()
	wg.Wait()
	if !slices.Equal(codes, []int{200, 200}) {
		t.Errorf("held requests: %v, want 200s", codes)
	}
	// The log phase runs after the answer: poll (bounded) until it did.
	waitFor(t, "a request to pass again", func() bool { return h.statusOf("http://conn.test/after") == 200 })
	if n := hold.started.Load(); n != 3 {
		t.Errorf("the backend saw %d requests, want 3 (the refused one never reached it)", n)
	}
}

// TestLimitRate: limit-rate and limit-rate-after set $limit_rate and the
// limit_rate_after of the route's responses, seen in the access log (no
// timing: the transfer rate itself is nginx's). As ingress-nginx's docs
// say, it needs proxy-buffering: nginx sends an unbuffered answer
// unlimited ($limit_rate 0).
func TestLimitRate(t *testing.T) {
	web := startEcho(t, "web")
	cfg := buildIngresses(t, map[string]int{"web": web.Port()},
		fixtures.Ingress("default", "slow", ann("limit-rate", "10"), ann("limit-rate-after", "2"), ann("proxy-buffering", "on"),
			fixtures.Rule("slow.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "unbuffered", ann("limit-rate", "10"), fixtures.Rule("unbuffered.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "fast", fixtures.Rule("fast.test", fixtures.Prefix("/", "web", 80))))
	cfg.Global.Nginx.LogFormatUpstream = "mark=$arg_mark rate=$limit_rate after=$ingress_limit_rate_after"
	h := startNginx(t, cfg, nil)
	checkServed(t, h, "http://slow.test/?mark=slow", 200, "web")
	checkServed(t, h, "http://unbuffered.test/?mark=unbuffered", 200, "web")
	checkServed(t, h, "http://fast.test/?mark=fast", 200, "web")
	log := filepath.Join(h.opts.Dir, "logs", "access.log")
	var data []byte
	// Two workers write the lines, each after its answer: wait for all three.
	waitFor(t, "the access log lines", func() bool {
		data, _ = os.ReadFile(log)
		return bytes.Count(data, []byte("mark=")) >= 3
	})
	for _, want := range []string{"mark=slow rate=10240 after=2048\n", "mark=unbuffered rate=0 after=\n", "mark=fast rate=0 after=\n"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("access log %q lacks %q", data, want)
		}
	}
}
