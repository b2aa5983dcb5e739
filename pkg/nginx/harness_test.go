package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

// The harness runs a real nginx (Debian packages, see hack/install-nginx.sh)
// on 127.0.0.1 and free ports, with Go echo backends.

const (
	testWait     = 20 * time.Second // upper bound of any wait in these tests
	testPollStep = 5 * time.Millisecond
)

// requireNginx fails the test (never skips) when nginx or its Lua module is
// missing.
func requireNginx(t testing.TB) {
	t.Helper()
	bin := findNginx()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("nginx is not installed (%v): run hack/install-nginx.sh as root", err)
	}
	for _, m := range []string{"ndk_http_module.so", "ngx_http_lua_module.so", "ngx_stream_module.so", "ngx_stream_js_module.so",
		"ngx_http_brotli_filter_module.so", "ngx_http_geoip2_module.so", "ngx_http_modsecurity_module.so"} {
		if _, err := os.Stat(filepath.Join(DefaultModulesDir, m)); err != nil {
			t.Fatalf("nginx module %s is missing (%v): run hack/install-nginx.sh as root", m, err)
		}
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := freeport.Ports(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// testDir returns a fresh directory that unprivileged nginx workers can
// traverse (t.TempDir is 0700).
func testDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "ingress-sync-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func testOptions(t testing.TB) Options {
	t.Helper()
	dir := testDir(t)
	ports := freePorts(t, 3)
	logFile, err := os.Create(filepath.Join(dir, "test.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	access := testAccessLog(t, dir)
	return Options{
		Dir:                   dir,
		ListenAddress:         "127.0.0.1",
		HTTPPort:              ports[0],
		HTTPSPort:             ports[1],
		StatusPort:            ports[2],
		WorkerProcesses:       2,
		WorkerConnections:     1024,
		WorkerShutdownTimeout: 5 * time.Second,
		ReloadTimeout:         10 * time.Second,
		StartTimeout:          10 * time.Second,
		RequestTimeout:        5 * time.Second,
		Logger:                slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Stdout:                access,
	}
}

// testAccessLog is the file nginx's stdout goes to in tests (the access
// log, by default): Dir/logs/access.log.
func testAccessLog(t testing.TB, dir string) *os.File {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "logs", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// errorLogPath is where nginx's error log ends up in tests: Process logs
// each line of it ("nginx error log") through the test Logger, into
// test.log.
func (o *Options) errorLogPath() string { return filepath.Join(o.Dir, "test.log") }

type harness struct {
	t testing.TB
	// allowLuaErrors accepts Lua errors in nginx's error log (tests that
	// cause them on purpose); otherwise stop fails the test on any.
	allowLuaErrors bool
	stopped        bool
	opts           Options
	proc           *Process
	app            *Applier
	lua            *Client
	http           *http.Client
	cancel         context.CancelFunc
	done           chan error
	version        int // of the Configurations update makes
}

// startNginx writes cfg, starts nginx and waits until it is ready and the
// dynamic state of cfg is pushed.
func startNginx(t testing.TB, cfg *config.Configuration, mutate func(*Options)) *harness {
	t.Helper()
	requireNginx(t)
	opts := testOptions(t)
	if mutate != nil {
		mutate(&opts)
	}
	proc, err := NewProcess(opts)
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApplier(opts, proc)
	if err != nil {
		t.Fatal(err)
	}
	proc.OnStart(app.Restore)
	ctx, cancel := context.WithCancel(context.Background())
	if err := app.WriteConfig(ctx, cfg); err != nil {
		cancel()
		t.Fatalf("write config: %v", err)
	}
	h := &harness{t: t, opts: app.opts, proc: proc, app: app, lua: app.Client(), cancel: cancel, done: make(chan error, 1)}
	h.http = h.newHTTPClient()
	go func() { h.done <- proc.Start(ctx) }()
	t.Cleanup(h.stop)
	select {
	case <-proc.Ready():
	case err := <-h.done:
		t.Fatalf("nginx stopped before ready: %v\n%s", err, h.logs())
	case <-time.After(testWait):
		t.Fatalf("nginx not ready after %s\n%s", testWait, h.logs())
	}
	return h
}

// shutdown stops nginx and returns what Process.Start returned.
func (h *harness) shutdown() error {
	if h.stopped {
		return nil
	}
	h.stopped = true
	h.cancel()
	select {
	case err := <-h.done:
		return err
	case <-time.After(testWait):
		return fmt.Errorf("nginx did not stop within %s", testWait)
	}
}

func (h *harness) stop() {
	if err := h.shutdown(); err != nil {
		h.t.Errorf("process: %v", err)
	}
	if !h.allowLuaErrors {
		if lines := luaErrors(h.opts.errorLogPath()); len(lines) > 0 {
			h.t.Errorf("Lua errors in nginx's error log:\n%s", strings.Join(lines, "\n"))
		}
	}
	if h.t.Failed() {
		h.t.Logf("logs:\n%s", h.logs())
	}
}

// logs returns the tail of the test log and of nginx's error log.
func (h *harness) logs() string {
	var b strings.Builder
	for _, f := range []string{h.opts.errorLogPath(), filepath.Join(h.opts.Dir, "logs", "access.log")} {
		data, _ := os.ReadFile(f)
		if len(data) > 6000 {
			data = data[len(data)-6000:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", f, data)
	}
	return b.String()
}

// luaErrors returns the error log lines that report a Lua failure.
func luaErrors(path string) []string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, `msg="nginx error log"`) {
			continue
		}
		bad := strings.Contains(l, "[alert]") || strings.Contains(l, "[emerg]") || strings.Contains(l, "[crit]") ||
			(strings.Contains(l, "[error]") && (strings.Contains(l, "lua") || strings.Contains(l, "balancer")))
		if bad && len(out) < 10 {
			out = append(out, l)
		}
	}
	return out
}

// newHTTPClient sends every request to nginx's HTTP or HTTPS port whatever
// the URL's host, which stays the Host header (and the SNI name).
func (h *harness) newHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			port := h.opts.HTTPPort
			if strings.HasSuffix(addr, ":443") {
				port = h.opts.HTTPSPort
			}
			return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		},
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // routing tests, certificates are checked in cert_test.go
		MaxIdleConnsPerHost: 64,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (h *harness) get(url string, header ...string) (echo.Response, error) {
	return echo.Get(context.Background(), h.http, url, header...)
}

func (h *harness) mustGet(url string, header ...string) echo.Response {
	h.t.Helper()
	r, err := h.get(url, header...)
	if err != nil {
		h.t.Fatalf("GET %s: %v", url, err)
	}
	return r
}

// checkServed fails unless GET url answers 200 from backend, or status
// when backend is "".
func checkServed(t *testing.T, h *harness, url string, status int, backend string) {
	t.Helper()
	if r := h.mustGet(url); r.Status != status || r.Reply.Backend != backend {
		t.Fatalf("GET %s = %d from %q, want %d from %q", url, r.Status, r.Reply.Backend, status, backend)
	}
}

// checkNotReloaded fails unless the last Apply skipped the reload and the
// master runs the same workers.
func checkNotReloaded(t *testing.T, h *harness, workers []int) {
	t.Helper()
	if !h.app.LastReload().Skipped {
		t.Errorf("reloaded: %+v", h.app.LastReload())
	}
	if got := workerPIDs(t, h.proc.Pid()); !slices.Equal(got, workers) {
		t.Errorf("workers changed: %v -> %v", workers, got)
	}
}

// waitFor polls cond until it holds, failing the test after testWait.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(testPollStep)
	}
}

// workerPIDs returns the pids of the master's children.
func workerPIDs(t testing.TB, master int) []int {
	t.Helper()
	pids, err := childPIDs(master)
	if err != nil {
		t.Fatalf("workers of %d: %v", master, err)
	}
	// Leave out the workers of an earlier generation still finishing their
	// requests after a reload (a confirmed reload retitles them first):
	// they exit whenever they are done, which is no change of this one.
	return slices.DeleteFunc(pids, func(p int) bool { return retired([]int{p}) })
}

// startEcho starts an echo backend on 127.0.0.1, stopped at cleanup.
func startEcho(t testing.TB, name string) *echo.Server {
	t.Helper()
	e, err := echo.Start(name, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func endpointOf(e *echo.Server) config.Endpoint {
	return config.Endpoint{Address: "127.0.0.1", Port: int32(e.Port())}
}

// Configuration builders.

func backendOf(name string, eps ...*echo.Server) config.Backend {
	b := config.Backend{Name: name, Namespace: "default", Service: name, Port: "80", LoadBalance: "round_robin"}
	for _, e := range eps {
		b.Endpoints = append(b.Endpoints, endpointOf(e))
	}
	return b
}

func prefixLoc(path, backend string) config.Location {
	return config.Location{Path: path, PathType: config.PathPrefix, Backend: backend, Ingress: "default/test"}
}

func exactLoc(path, backend string) config.Location {
	return config.Location{Path: path, PathType: config.PathExact, Backend: backend, Ingress: "default/test"}
}

func serverOf(host string, locs ...config.Location) config.Server {
	return config.Server{Hostname: host, Locations: locs}
}

// configOf returns a Configuration as model.Build makes them: a default
// server, and a catch-all Prefix "/" (to the built-in 404) on every server
// without one.
func configOf(sum string, servers []config.Server, backends ...config.Backend) *config.Configuration {
	all := append([]config.Server{{Hostname: "_"}}, servers...)
	for i := range all {
		if !slices.ContainsFunc(all[i].Locations, func(l config.Location) bool { return l.Path == "/" && l.PathType == config.PathPrefix }) {
			all[i].Locations = append(slices.Clone(all[i].Locations), config.Location{Path: "/", PathType: config.PathPrefix})
		}
	}
	return &config.Configuration{
		Global:   config.Global{SSLRedirect: true, UpstreamKeepalive: 32, ProxyConnectTimeout: 5, ProxyReadTimeout: 60, ProxySendTimeout: 60, ProxyBodySize: "1m"},
		Servers:  all,
		Backends: backendPtrs(backends),
		Checksum: sum,
	}
}

// backendPtrs is the list of pointers to copies of bs, as
// Configuration.Backends holds them.
func backendPtrs(bs []config.Backend) config.BackendList {
	out := make([]*config.Backend, len(bs))
	for i := range bs {
		b := bs[i]
		out[i] = &b
	}
	return config.NewBackendList(out)
}

// withDefaultBackend returns a copy of cfg whose generated catch-alls (Prefix
// "/" of no Ingress) go to backend, as Build makes them for a default backend.
func withDefaultBackend(cfg *config.Configuration, backend, sum string) *config.Configuration {
	next := *cfg
	next.DefaultBackend, next.Checksum = backend, sum
	next.Servers = slices.Clone(cfg.Servers)
	for i := range next.Servers {
		locs := slices.Clone(next.Servers[i].Locations)
		for j := range locs {
			if locs[j].Path == "/" && locs[j].PathType == config.PathPrefix && locs[j].Ingress == "" {
				locs[j].Backend = backend
			}
		}
		next.Servers[i].Locations = locs
	}
	return &next
}

func itoa(n int) string { return strconv.Itoa(n) }

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// reload applies cfg as a whole (a reload only when its global settings
// differ from the running ones).
func (h *harness) reload(ctx context.Context, cfg *config.Configuration) error {
	_, err := applyDiff(ctx, h.app, cfg)
	return err
}

// applyDiff applies next as the syncer does: with the Change from the
// running Configuration, which the caller computes (config.Diff), never
// the Applier.
func applyDiff(ctx context.Context, app *Applier, next *config.Configuration) (bool, error) {
	return app.Apply(ctx, next, config.Diff(app.Running(), next))
}

// update applies ch on top of the running Configuration: the dynamic
// changes tests make without building a whole Configuration. Its checksum
// is the running one's up to the first "+", then "+<n>" for the n-th update.
// The Applier is given ch itself: it pushes what it is told.
func (h *harness) update(ctx context.Context, ch config.Change) error {
	h.version++
	next := withChange(h.app.Running(), ch)
	base, _, _ := strings.Cut(next.Checksum, "+")
	next.Checksum = fmt.Sprintf("%s+%d", base, h.version)
	_, err := h.app.Apply(ctx, next, ch)
	return err
}

// confChecksum returns the checksum of the nginx.conf that h's renderer
// makes for cfg's global settings: what GET /configuration/version reports
// as checksum once the workers run that file.
func (h *harness) confChecksum(cfg *config.Configuration) string {
	h.t.Helper()
	_, sum, err := h.app.renderer.render(cfg, cfg.UpstreamTLS)
	if err != nil {
		h.t.Fatalf("render nginx.conf: %v", err)
	}
	return sum
}

// mustVersion returns GET /configuration/version, failing the test on error.
func (h *harness) mustVersion() Version {
	h.t.Helper()
	v, err := h.lua.GetVersion(context.Background())
	if err != nil {
		h.t.Fatalf("GET /configuration/version: %v", err)
	}
	return v
}

// withChange returns a copy of cfg with ch applied.
func withChange(cfg *config.Configuration, ch config.Change) *config.Configuration {
	next := *cfg
	next.Servers = upsert(cfg.Servers, ch.ServersUpserted, ch.ServersRemoved, func(s config.Server) string { return s.Key() })
	next.Backends = config.NewBackendList(upsert(cfg.Backends.Slice(), backendPtrs(ch.BackendsUpserted).Slice(), ch.BackendsRemoved, func(b *config.Backend) string { return b.Name }))
	next.Certificates = upsert(cfg.Certificates, ch.CertificatesUpserted, ch.CertificatesRemoved, func(c config.Certificate) string { return c.Name })
	if ch.DefaultCertificate != "" {
		next.DefaultCertificate = ch.DefaultCertificate
	}
	return &next
}

func upsert[T any](have, add []T, remove []string, name func(T) string) []T {
	drop := map[string]bool{}
	for _, n := range remove {
		drop[n] = true
	}
	for _, x := range add {
		drop[name(x)] = true
	}
	var out []T
	for _, x := range have {
		if !drop[name(x)] {
			out = append(out, x)
		}
	}
	out = append(out, add...)
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(name(a), name(b)) })
	return out
}
