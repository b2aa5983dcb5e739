package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// Benchmarks with a real nginx. Run them with a fixed count:
//
//	go test ./pkg/nginx -run '^$' -bench DynamicUpdate -benchtime 500x
//	go test ./pkg/nginx -run '^$' -bench AddHost -benchtime 200x
//	go test ./pkg/nginx -run '^$' -bench Reload -benchtime 20x
//	go test ./pkg/nginx -run '^$' -bench RouterThroughput -benchtime 1x
//	go test ./pkg/nginx -run '^$' -bench LuaMemory -benchtime 1x

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// median is the middle value of v (sorted in place).
func median(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }

func reportLatency(b *testing.B, prefix string, d []time.Duration) {
	b.ReportMetric(float64(percentile(d, 0.50).Microseconds())/1000, prefix+"-p50-ms")
	b.ReportMetric(float64(percentile(d, 0.99).Microseconds())/1000, prefix+"-p99-ms")
}

// renderConfig is a Configuration of servers hosts, each with two Prefix
// paths to its own backend (no endpoints), one in ten with TLS.
func renderConfig(servers int) *config.Configuration {
	cfg := &config.Configuration{
		Global:             config.Global{SSLRedirect: true, ProxyConnectTimeout: 5, ProxyReadTimeout: 60, ProxySendTimeout: 60, ProxyBodySize: "1m", UpstreamKeepalive: 320},
		Servers:            []config.Server{{Hostname: "_"}},
		DefaultCertificate: "ingress/default",
		Checksum:           "bench-" + strconv.Itoa(servers),
	}
	var backends []*config.Backend
	for i := range servers {
		name := fmt.Sprintf("ns%d-svc%d-80", i%100, i)
		backends = append(backends, &config.Backend{Name: name})
		cfg.Servers = append(cfg.Servers, config.Server{
			Hostname: fmt.Sprintf("host-%d.example.com", i), TLS: i%10 == 0, SSLRedirect: i%10 == 0,
			Locations: []config.Location{
				{Path: "/api", PathType: config.PathPrefix, Backend: name},
				{Path: "/", PathType: config.PathPrefix, Backend: name},
			},
		})
	}
	cfg.Backends = config.NewBackendList(backends)
	return cfg
}

// tableHost is the i-th host of hostTable.
func tableHost(i int) string { return "host-" + strconv.Itoa(i) + ".example.com" }

// hostTable is a route table of n plain-HTTP hosts, each with Prefix /api
// and / to its own backend whose one endpoint is ep.
func hostTable(n int, ep config.Endpoint) *config.Configuration {
	servers := make([]config.Server, 0, n)
	backends := make([]config.Backend, 0, n)
	for i := range n {
		name := fmt.Sprintf("ns%d-svc%d-80", i%100, i)
		backends = append(backends, config.Backend{Name: name, Namespace: "ns", Service: name, Port: "80",
			LoadBalance: "round_robin", Endpoints: []config.Endpoint{ep}})
		servers = append(servers, serverOf(tableHost(i), prefixLoc("/api", name), prefixLoc("/", name)))
	}
	return configOf("table-"+itoa(n), servers, backends...)
}

// BenchmarkDynamicUpdate measures the time from the start of a POST of new
// endpoints to the first request answered by the new endpoint.
func BenchmarkDynamicUpdate(b *testing.B) {
	a, c := startEcho(b, "a"), startEcho(b, "c")
	h := startNginx(b, configOf("bench-dynamic", []config.Server{serverOf("dyn.test", prefixLoc("/", "svc"))}, backendOf("svc", a)),
		func(o *Options) { o.DisableAccessLog = true })
	ctx := context.Background()
	eps := []*echo.Server{a, c}
	var total, post []time.Duration
	extra := 0
	for i := 0; b.Loop(); i++ {
		next := eps[(i+1)%2]
		start := time.Now()
		if err := h.update(ctx, config.Change{BackendsUpserted: []config.Backend{backendOf("svc", next)}}); err != nil {
			b.Fatal(err)
		}
		post = append(post, time.Since(start))
		extra += waitServed(b, h, "http://dyn.test/", next.Name)
		total = append(total, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, "update-to-served", total)
	reportLatency(b, "post", post)
	b.ReportMetric(float64(extra)/float64(len(total)), "stale-requests/op")
}

// waitServed requests url until backend answers it (at most 1000 times)
// and returns how many requests came before.
func waitServed(b *testing.B, h *harness, url, backend string) int {
	for tries := 0; tries <= 1000; tries++ {
		r, err := h.get(url)
		if err != nil {
			b.Fatal(err)
		}
		if r.Status == http.StatusOK && r.Reply.Backend == backend {
			return tries
		}
	}
	b.Fatalf("%s: backend %s never answered", url, backend)
	return 0
}

// BenchmarkAddHost adds one host (a new Server and its Backend) to a route
// table of 10k hosts per iteration: the whole Apply (diff, pushes), and
// from its start to the first request answered by the new host's backend.
// No iteration may reload nginx: reloads/op and worker-restarts count what
// did (the workers' pids before and after).
func BenchmarkAddHost(b *testing.B) {
	e := startEcho(b, "new")
	h := startNginx(b, hostTable(10000, endpointOf(e)), func(o *Options) { o.DisableAccessLog = true })
	ctx := context.Background()
	before := workerPIDs(b, h.proc.Pid())
	// Let the workers finish loading the table (store.lua's timers): the
	// benchmark is the steady state, not the start.
	time.Sleep(2 * time.Second)
	var apply, served []time.Duration
	reloads := 0
	for i := 0; b.Loop(); i++ {
		be := backendOf("added-"+itoa(i), e)
		host := "added-" + itoa(i) + ".example.com"
		next := withChange(h.app.Running(), config.Change{
			ServersUpserted: []config.Server{serverOf(host, prefixLoc("/", be.Name))}, BackendsUpserted: []config.Backend{be}})
		next.Checksum = "added-" + itoa(i)
		start := time.Now()
		if _, err := applyDiff(ctx, h.app, next); err != nil {
			b.Fatal(err)
		}
		apply = append(apply, time.Since(start))
		if !h.app.LastReload().Skipped {
			reloads++
		}
		waitServed(b, h, "http://"+host+"/", e.Name)
		served = append(served, time.Since(start))
	}
	b.StopTimer()
	after := workerPIDs(b, h.proc.Pid())
	restarted := 0
	for _, pid := range before {
		if !slices.Contains(after, pid) {
			restarted++
		}
	}
	reportLatency(b, "apply", apply)
	reportLatency(b, "add-to-served", served)
	b.ReportMetric(float64(reloads)/float64(len(apply)), "reloads/op")
	b.ReportMetric(float64(restarted), "worker-restarts")
}

// BenchmarkReload measures the reload of a global setting (the proxy read
// timeout, alternating), the only kind of change that still reloads: the
// whole Apply (render, nginx -t, swap, SIGHUP, confirmation), nginx -t alone
// and SIGHUP until the new workers serve the new checksum; with 10 and 10k
// hosts in the route table (the new workers load it from the shared dict).
func BenchmarkReload(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			e := startEcho(b, "a")
			first := hostTable(n, endpointOf(e))
			second := *first
			second.Global.ProxyReadTimeout++
			second.Checksum += "-slower"
			h := startNginx(b, first, func(o *Options) { o.DisableAccessLog = true })
			ctx := context.Background()
			var confirm, whole, test []time.Duration
			for i := 0; b.Loop(); i++ {
				cfg := &second
				if i%2 == 1 {
					cfg = first
				}
				start := time.Now()
				if err := h.reload(ctx, cfg); err != nil {
					b.Fatal(err)
				}
				whole = append(whole, time.Since(start))
				st := h.app.LastReload()
				if st.Skipped {
					b.Fatal("a global setting changed and nginx did not reload")
				}
				confirm, test = append(confirm, st.Confirm), append(test, st.Test)
			}
			b.StopTimer()
			reportLatency(b, "signal-to-served", confirm)
			reportLatency(b, "reload", whole)
			reportLatency(b, "nginx-t", test)
		})
	}
}

// workerCPU returns the CPU time the workers of master used so far, from
// /proc (clock ticks of 10 ms).
func workerCPU(b *testing.B, master int) time.Duration {
	var ticks int64
	for _, pid := range workerPIDs(b, master) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatal(err)
		}
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		// utime and stime are fields 14 and 15 of stat, 12 and 13 here.
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// loadResult is one load run: requests per second and the latency of
// every request.
type loadResult struct {
	rate    float64
	latency []time.Duration
}

// loadRun sends total requests to 127.0.0.1:port over conns keep-alive
// connections, request i with Host hostOf(i).
func loadRun(b *testing.B, port int, hostOf func(int) string, conns, total int) loadResult {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	lat := make([]time.Duration, total)
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			for i := w; i < total; i += conns {
				t0 := time.Now()
				if err := loadRequest(c, url, hostOf(i)); err != nil {
					errs <- err
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return loadResult{rate: float64(total) / elapsed.Seconds(), latency: lat}
}

func loadRequest(c *http.Client, url, host string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", host, resp.StatusCode)
	}
	return nil
}

// abRates runs alternating bounded loads (conns connections, rounds of
// total requests each, after a warm-up of warm requests each) against two
// kinds of host on port, a plain one and one with a feature, and returns
// the medians of their rates and of the ratios feature/plain of
// back-to-back runs (which cancels slow drift of the machine's load).
func abRates(b *testing.B, port int, plain, feature func(int) string, conns, total, rounds, warm int) (plainRate, featureRate, ratio float64) {
	loadRun(b, port, plain, conns, warm)
	loadRun(b, port, feature, conns, warm)
	var plainRates, featureRates, ratios []float64
	for b.Loop() {
		for range rounds {
			p := loadRun(b, port, plain, conns, total)
			f := loadRun(b, port, feature, conns, total)
			plainRates, featureRates, ratios = append(plainRates, p.rate), append(featureRates, f.rate), append(ratios, f.rate/p.rate)
		}
	}
	b.StopTimer()
	return median(plainRates), median(featureRates), median(ratios)
}

// throughputSnippet is a tiny backend on port backend and a static
// upstream to it (keepalive as the Lua path's) served on port static.
func throughputSnippet(backend, static int) string {
	return fmt.Sprintf(`    upstream static_bench {
        server 127.0.0.1:%[1]d;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:%[1]d;
        access_log off;
        location / { return 200 "ok"; }
    }
    server {
        listen 127.0.0.1:%[2]d;
        location / { proxy_pass http://static_bench; }
    }`, backend, static)
}

// BenchmarkRouterThroughput compares the Lua path (router.lua on a route
// table of 10 or 10k hosts, then balancer.lua) with a static upstream
// block, both proxying to the same tiny nginx backend with keepalive, in
// alternating bounded load runs (16 connections, 10 rounds of 10k requests
// each; Lua requests go to every host of the table in turn). It reports the
// medians, the median ratio, the latency percentiles over all requests and
// the nginx CPU time per request of each path. Traffic metrics are off:
// they are the log phase's, with their own ratio (BenchmarkMetricsThroughput).
func BenchmarkRouterThroughput(b *testing.B) {
	for _, c := range []struct{ hosts, requested int }{{10, 10}, {10000, 10}, {10000, 10000}} {
		b.Run(fmt.Sprintf("hosts=%d/requested=%d", c.hosts, c.requested), func(b *testing.B) { routerThroughput(b, c.hosts, c.requested) })
	}
}

func routerThroughput(b *testing.B, hosts, requested int) {
	ports := freePorts(b, 2)
	backend, static := ports[0], ports[1]
	cfg := hostTable(hosts, config.Endpoint{Address: "127.0.0.1", Port: int32(backend)})
	h := startNginx(b, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.Metrics.Disabled = true
		o.testHTTPSnippet = throughputSnippet(backend, static)
	})
	const conns, total, rounds = 16, 10000, 10
	anyHost := func(int) string { return "static.test" }
	luaHost := func(i int) string { return tableHost(i % requested) }
	loadRun(b, static, anyHost, conns, 2000) // warm up both; every host once
	loadRun(b, h.opts.HTTPPort, luaHost, conns, max(2000, requested))
	master := h.proc.Pid()
	var luaRates, staticRates, ratios []float64
	var luaLat, staticLat []time.Duration
	var luaCPU, staticCPU time.Duration
	for b.Loop() {
		for round := range rounds {
			c0 := workerCPU(b, master)
			s := loadRun(b, static, anyHost, conns, total)
			c1 := workerCPU(b, master)
			l := loadRun(b, h.opts.HTTPPort, func(i int) string { return luaHost(round*total + i) }, conns, total)
			c2 := workerCPU(b, master)
			staticCPU, luaCPU = staticCPU+c1-c0, luaCPU+c2-c1
			staticRates, luaRates, ratios = append(staticRates, s.rate), append(luaRates, l.rate), append(ratios, l.rate/s.rate)
			staticLat, luaLat = append(staticLat, s.latency...), append(luaLat, l.latency...)
		}
	}
	b.StopTimer()
	b.ReportMetric(median(luaRates), "lua-req/s")
	b.ReportMetric(median(staticRates), "static-req/s")
	// The median of the ratios of back-to-back runs cancels slow drift of
	// the machine's load.
	b.ReportMetric(median(ratios), "lua/static")
	reportLatency(b, "lua", luaLat)
	reportLatency(b, "static", staticLat)
	// nginx CPU per request (both include the tiny backend server, which
	// runs in the same workers): steadier than req/s on a shared machine.
	n := float64(len(luaRates) * total)
	b.ReportMetric(float64(luaCPU.Microseconds())/n, "lua-cpu-us/req")
	b.ReportMetric(float64(staticCPU.Microseconds())/n, "static-cpu-us/req")
}

// bootstrapIngresses and bootstrapTLSEvery are the shape of the churn
// scenario bootstrap-50k (test/testkit/churn): 16130 Ingresses, one in ten with
// TLS.
const (
	bootstrapIngresses = 16130
	bootstrapTLSEvery  = 10
)

// bootstrapConfig builds, with model.Build, the Configuration of the
// bootstrap-50k cluster: Ingress app-<i> (host app-<i>.churn.test, Prefix
// "/") to its own Service with 1 to 4 endpoints over 100 namespaces, and
// for one in ten a TLS Secret (from a pool of 4 certificates).
func bootstrapConfig(b *testing.B, n int) *config.Configuration {
	pool := make([]*certs.Pair, 4)
	for i := range pool {
		p, err := certs.Generate(certs.Options{Hosts: []string{"*.churn.test"}})
		if err != nil {
			b.Fatal(err)
		}
		pool[i] = p
	}
	s := model.NewStore(ingress.NewSource())
	put := func(obj runtime.Object) {
		m := obj.(metav1.Object)
		ev := events.Event{Op: events.OpCreate, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj}
		if _, err := s.Apply(ev); err != nil {
			b.Fatal(err)
		}
	}
	put(fixtures.IngressClass("ingress-sync", "k8s.io/ingress-sync", false))
	for i := range n {
		ns, name := "churn-"+itoa(i%100), "app-"+itoa(i)
		host := name + ".churn.test"
		addrs := make([]string, 1+i%4)
		for j := range addrs {
			addrs[j] = fmt.Sprintf("198.18.0.%d", 1+(i+j*61)%240)
		}
		opts := []fixtures.IngressOption{fixtures.Class("ingress-sync"), fixtures.Rule(host, fixtures.Prefix("/", name, 80))}
		if i%bootstrapTLSEvery == 0 {
			put(fixtures.TLSSecret(ns, name+"-tls", pool[i%len(pool)]))
			opts = append(opts, fixtures.TLS(name+"-tls", host))
		}
		put(fixtures.Service(ns, name, 80))
		put(fixtures.EndpointSlice(ns, name+"-1", name, 8080, addrs...))
		put(fixtures.Ingress(ns, name, opts...))
	}
	return model.Build(s, model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "ingress-sync"})
}

// memorySnippet serves GET /memory on port: what the worker that answers
// holds after it synced its three stores and a full garbage collection (its
// Lua heap), and the capacity and free space of each shared dict.
func memorySnippet(port int) string {
	return fmt.Sprintf(`    server {
        listen 127.0.0.1:%d;
        access_log off;
        location = /memory {
            content_by_lua_block {
                require("router").hosts:sync()
                require("balancer").backends:sync()
                require("certificate").certificates:sync()
                collectgarbage("collect")
                local out = { pid = ngx.worker.pid(), luaKB = collectgarbage("count"), dicts = {} }
                for _, name in ipairs({ "ingress_routes", "ingress_backends", "ingress_certificates" }) do
                    local d = ngx.shared[name]
                    out.dicts[name] = { capacity = d:capacity(), free = d:free_space() }
                end
                ngx.say(require("cjson").encode(out))
            }
        }
    }`, port)
}

// workerMemory is one answer of memorySnippet.
type workerMemory struct {
	Pid   int     `json:"pid"`
	LuaKB float64 `json:"luaKB"`
	Dicts map[string]struct {
		Capacity float64 `json:"capacity"`
		Free     float64 `json:"free"`
	} `json:"dicts"`
}

// used is the bytes of dict name not in free pages.
func (m workerMemory) used(name string) float64 { return m.Dicts[name].Capacity - m.Dicts[name].Free }

// readMemory asks /memory over new connections until every worker of h
// answered (at most 200 requests); it returns the answers by pid.
func readMemory(b *testing.B, h *harness, port int) map[int]workerMemory {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	want := len(workerPIDs(b, h.proc.Pid()))
	out := map[int]workerMemory{}
	for range 200 {
		resp, err := c.Get("http://127.0.0.1:" + itoa(port) + "/memory")
		if err != nil {
			b.Fatal(err)
		}
		var m workerMemory
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		out[m.Pid] = m
		if len(out) >= want {
			break
		}
	}
	return out
}

// BenchmarkLuaMemory measures what the route, backend and certificate
// tables of the bootstrap-50k cluster (16130 Ingresses, 1613 TLS Secrets)
// take in nginx: the shared dicts (capacity minus free pages, less the same
// figure of an nginx with an empty configuration) and the Lua heap of a
// worker (each worker holds its decoded copy), in total and per Ingress,
// and the time from the start of nginx until that state is pushed.
func BenchmarkLuaMemory(b *testing.B) {
	empty, _ := memoryOf(b, configOf("empty", nil))
	cfg := bootstrapConfig(b, bootstrapIngresses)
	var full map[int]workerMemory
	var start time.Duration
	for b.Loop() {
		full, start = memoryOf(b, cfg)
	}
	b.StopTimer()
	base := anyWorker(empty)
	n := float64(bootstrapIngresses)
	var total float64
	for _, d := range []struct{ dict, unit string }{
		{"ingress_routes", "routes"}, {"ingress_backends", "backends"}, {"ingress_certificates", "certs"},
	} {
		used := anyWorker(full).used(d.dict) - base.used(d.dict)
		total += used
		b.ReportMetric(used/(1<<20), d.unit+"-dict-MB")
	}
	b.ReportMetric(total/n, "dict-bytes/ingress")
	var heap float64
	for _, m := range full {
		heap = max(heap, m.LuaKB-base.LuaKB)
	}
	b.ReportMetric(heap/1024, "worker-lua-heap-MB")
	b.ReportMetric(heap*1024/n, "heap-bytes/ingress")
	b.ReportMetric(float64(len(cfg.Servers)), "hosts")
	b.ReportMetric(start.Seconds(), "start-to-pushed-s")
}

// memoryOf starts nginx on cfg, reads the memory of its workers and stops
// it; it also returns how long the start took (nginx -t, start, the whole
// state pushed).
func memoryOf(b *testing.B, cfg *config.Configuration) (map[int]workerMemory, time.Duration) {
	port := freePorts(b, 1)[0]
	t0 := time.Now()
	h := startNginx(b, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.testHTTPSnippet = memorySnippet(port)
	})
	start := time.Since(t0)
	defer h.stop()
	return readMemory(b, h, port), start
}

func anyWorker(m map[int]workerMemory) workerMemory {
	for _, w := range m {
		return w
	}
	return workerMemory{}
}
