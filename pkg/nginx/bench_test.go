package nginx

import (
	"context"
	"fmt"
	"github.com/ingress-sync/ingress-sync/internal/echo"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// Benchmarks with a real nginx. Run them with a fixed count:
//
//	go test ./pkg/nginx -run '^$' -bench Render
//	go test ./pkg/nginx -run '^$' -bench DynamicUpdate -benchtime 500x
//	go test ./pkg/nginx -run '^$' -bench Reload -benchtime 20x
//	go test ./pkg/nginx -run '^$' -bench BalancerThroughput -benchtime 1x

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func reportLatency(b *testing.B, prefix string, d []time.Duration) {
	b.ReportMetric(float64(percentile(d, 0.50).Microseconds())/1000, prefix+"-p50-ms")
	b.ReportMetric(float64(percentile(d, 0.99).Microseconds())/1000, prefix+"-p99-ms")
}

func renderConfig(servers int) *model.Configuration {
	cfg := &model.Configuration{
		Global:             model.Global{SSLRedirect: true, ProxyConnectTimeout: 5, ProxyReadTimeout: 60, ProxySendTimeout: 60, ProxyBodySize: "1m", UpstreamKeepalive: 320},
		Servers:            []model.Server{{Hostname: "_"}},
		DefaultCertificate: "ingress/default",
		Checksum:           "bench-" + strconv.Itoa(servers),
	}
	for i := range servers {
		name := fmt.Sprintf("ns%d-svc%d-80", i%100, i)
		cfg.Backends = append(cfg.Backends, model.Backend{Name: name})
		cfg.Servers = append(cfg.Servers, model.Server{
			Hostname: fmt.Sprintf("host-%d.example.com", i), TLS: i%10 == 0, SSLRedirect: i%10 == 0,
			Locations: []model.Location{
				{Path: "/api", PathType: model.PathPrefix, Backend: name},
				{Path: "/", PathType: model.PathPrefix, Backend: name},
			},
		})
	}
	return cfg
}

func BenchmarkRender(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			r, err := NewRenderer(goldenOptions())
			if err != nil {
				b.Fatal(err)
			}
			cfg := renderConfig(n)
			out, err := r.Render(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Render(cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "conf-bytes")
			b.ReportMetric(float64(len(out))/float64(n), "bytes/server")
		})
	}
}

// BenchmarkDynamicUpdate measures the time from the start of a POST of new
// endpoints to the first request answered by the new endpoint.
func BenchmarkDynamicUpdate(b *testing.B) {
	a, c := startEcho(b, "a"), startEcho(b, "c")
	h := startNginx(b, configOf("bench-dynamic", []model.Server{serverOf("dyn.test", prefixLoc("/", "svc"))}, backendOf("svc", a)),
		func(o *Options) { o.DisableAccessLog = true })
	ctx := context.Background()
	eps := []*echo.Server{a, c}
	var total, post []time.Duration
	extra := 0
	for i := 0; b.Loop(); i++ {
		next := eps[(i+1)%2]
		start := time.Now()
		if err := h.update(ctx, model.Change{BackendsUpserted: []model.Backend{backendOf("svc", next)}}); err != nil {
			b.Fatal(err)
		}
		post = append(post, time.Since(start))
		for tries := 0; ; tries++ {
			r, err := h.get("http://dyn.test/")
			if err != nil {
				b.Fatal(err)
			}
			if r.Reply.Backend == next.Name {
				extra += tries
				break
			}
			if tries > 1000 {
				b.Fatalf("endpoint %s never answered", next.Name)
			}
		}
		total = append(total, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, "update-to-served", total)
	reportLatency(b, "post", post)
	b.ReportMetric(float64(extra)/float64(len(total)), "stale-requests/op")
}

// BenchmarkReload measures reloads of a changed location: from SIGHUP to a
// new worker serving the new checksum, and the whole Reload (render,
// nginx -t, swap, signal, confirm).
func BenchmarkReload(b *testing.B) {
	a, c := startEcho(b, "a"), startEcho(b, "c")
	first, second := reloadConfigs(a, c)
	h := startNginx(b, first, func(o *Options) { o.DisableAccessLog = true })
	ctx := context.Background()
	var confirm, whole, test []time.Duration
	for i := 0; b.Loop(); i++ {
		cfg := second
		if i%2 == 1 {
			cfg = first
		}
		start := time.Now()
		if err := h.reload(ctx, cfg); err != nil {
			b.Fatal(err)
		}
		whole = append(whole, time.Since(start))
		st := h.app.LastReload()
		confirm, test = append(confirm, st.Confirm), append(test, st.Test)
	}
	b.StopTimer()
	reportLatency(b, "signal-to-served", confirm)
	reportLatency(b, "reload", whole)
	reportLatency(b, "nginx-t", test)
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

// loadRun sends total requests for host to 127.0.0.1:port over conns
// keep-alive connections and returns requests per second.
func loadRun(b *testing.B, port int, host string, conns, total int) float64 {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	start := time.Now()
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += conns {
				req, err := http.NewRequest(http.MethodGet, url, nil)
				if err != nil {
					errs <- err
					return
				}
				req.Host = host
				resp, err := c.Do(req)
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return float64(total) / elapsed.Seconds()
}

// BenchmarkBalancerThroughput compares the Lua balancer with a static
// upstream block, both proxying to the same tiny nginx backend with
// keepalive, in alternating bounded load runs (16 connections, 10 rounds of
// 10k requests each); it reports the medians, the median ratio and the
// nginx CPU time per request of each path.
func BenchmarkBalancerThroughput(b *testing.B) {
	ports := freePorts(b, 2)
	backend, static := ports[0], ports[1]
	snippet := fmt.Sprintf(`    upstream static_bench {
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
	cfg := configOf("bench-throughput", []model.Server{serverOf("lb.test", prefixLoc("/", "svc"))},
		model.Backend{Name: "svc", Endpoints: []model.Endpoint{{Address: "127.0.0.1", Port: int32(backend)}}})
	h := startNginx(b, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.testHTTPSnippet = snippet
	})
	const conns, total, rounds = 16, 10000, 10
	loadRun(b, static, "lb.test", conns, 2000) // warm up both
	loadRun(b, h.opts.HTTPPort, "lb.test", conns, 2000)
	master := h.proc.Pid()
	var luaRates, staticRates, ratios []float64
	var luaCPU, staticCPU time.Duration
	for b.Loop() {
		for range rounds {
			c0 := workerCPU(b, master)
			s := loadRun(b, static, "lb.test", conns, total)
			c1 := workerCPU(b, master)
			l := loadRun(b, h.opts.HTTPPort, "lb.test", conns, total)
			c2 := workerCPU(b, master)
			staticCPU, luaCPU = staticCPU+c1-c0, luaCPU+c2-c1
			staticRates, luaRates, ratios = append(staticRates, s), append(luaRates, l), append(ratios, l/s)
		}
	}
	b.StopTimer()
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(luaRates), "lua-req/s")
	b.ReportMetric(median(staticRates), "static-req/s")
	// The median of the ratios of back-to-back runs cancels slow drift of
	// the machine's load.
	b.ReportMetric(median(ratios), "lua/static")
	// nginx CPU per request (both include the tiny backend server, which
	// runs in the same workers): steadier than req/s on a shared machine.
	n := float64(len(luaRates) * total)
	b.ReportMetric(float64(luaCPU.Microseconds())/n, "lua-cpu-us/req")
	b.ReportMetric(float64(staticCPU.Microseconds())/n, "static-cpu-us/req")
}
