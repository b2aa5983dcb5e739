package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// metricsConfig has two hosts with known answers: a.test "/" (200 from
// web-a) and Exact "/gone" to a backend without endpoints (503); b.test
// "/" (200 from web-b) and Exact "/none" without a backend (404).
func metricsConfig(t *testing.T, sum string) *config.Configuration {
	a, b := startEcho(t, "web-a"), startEcho(t, "web-b")
	gone := config.Backend{Name: "gone", Namespace: "default", Service: "gone", Port: "80", LoadBalance: "round_robin"}
	locA, locB := prefixLoc("/", "web-a"), prefixLoc("/", "web-b")
	locA.Ingress, locB.Ingress = "shop/front", "blog/main"
	goneLoc, noneLoc := exactLoc("/gone", "gone"), exactLoc("/none", "")
	goneLoc.Ingress, noneLoc.Ingress = "shop/front", "blog/main"
	return configOf(sum, []config.Server{serverOf("a.test", locA, goneLoc), serverOf("b.test", locB, noneLoc)},
		backendOf("web-a", a), backendOf("web-b", b), gone)
}

// gatherer registers a TrafficCollector of h on a fresh registry.
func gatherer(t *testing.T, h *harness) *prometheus.Registry {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewTrafficCollector(TrafficCollectorOptions{Client: h.lua, Metrics: h.opts.Metrics, Running: h.app.Running,
		ConstLabels: prometheus.Labels{"controller_class": "k8s.io/ingress-sync", "controller_namespace": "ingress", "controller_pod": "p"}}))
	return reg
}

// sample is one gathered metric: its labels (without the constant ones)
// and its counter or gauge value or histogram count.
type sample struct {
	labels string
	value  float64
}

// samples returns the samples of family name, sorted by labels.
func samples(t *testing.T, reg prometheus.Gatherer, name string) []sample {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var out []sample
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() { // (client_model is not a direct dependency: no type names)
			var l []string
			for _, p := range m.GetLabel() {
				if !strings.HasPrefix(p.GetName(), "controller_") {
					l = append(l, p.GetName()+"="+p.GetValue())
				}
			}
			v := -1.0
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			}
			out = append(out, sample{labels: strings.Join(l, ","), value: v})
		}
	}
	slices.SortFunc(out, func(a, b sample) int { return strings.Compare(a.labels, b.labels) })
	return out
}

// sendRequests sends n GETs of each url and checks their status.
func sendRequests(t *testing.T, h *harness, n int, urls map[string]int) {
	t.Helper()
	for url, status := range urls {
		for range n {
			if r := h.mustGet(url); r.Status != status {
				t.Fatalf("GET %s: status %d, want %d", url, r.Status, status)
			}
		}
	}
}

// waitRequests waits until family requests sums to total (the log phase
// runs after the response is sent).
func waitRequests(t *testing.T, reg prometheus.Gatherer, total float64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%v requests counted", total), func() bool {
		var sum float64
		for _, s := range samples(t, reg, "nginx_ingress_controller_requests") {
			sum += s.value
		}
		return sum == total
	})
}

func reqLabels(status, path, ns, ing, svc, host string) string {
	return fmt.Sprintf("canary=,host=%s,ingress=%s,method=GET,namespace=%s,path=%s,service=%s,status=%s", host, ing, ns, path, svc, status)
}

// TestTrafficMetrics: requests to two hosts with known statuses give
// ingress-nginx's counters and histogram counts, by its labels.
func TestTrafficMetrics(t *testing.T) {
	h := startNginx(t, metricsConfig(t, "metrics-1"), nil)
	reg := gatherer(t, h)
	sendRequests(t, h, 3, map[string]int{"http://a.test/": 200, "http://a.test/gone": 503})
	sendRequests(t, h, 2, map[string]int{"http://b.test/x": 200, "http://b.test/none": 404})
	waitRequests(t, reg, 10)
	want := []sample{
		{reqLabels("200", "/", "shop", "front", "web-a", "a.test"), 3},
		{reqLabels("503", "/gone", "shop", "front", "gone", "a.test"), 3},
		{reqLabels("200", "/", "blog", "main", "web-b", "b.test"), 2},
		{reqLabels("404", "/none", "blog", "main", "", "b.test"), 2},
	}
	slices.SortFunc(want, func(a, b sample) int { return strings.Compare(a.labels, b.labels) })
	for _, name := range []string{"requests", "request_duration_seconds", "request_size", "response_size", "bytes_sent"} {
		if got := samples(t, reg, "nginx_ingress_controller_"+name); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, want)
		}
	}
	// Upstream times: only the requests proxied to a backend.
	proxied := []sample{want[0], want[2]}
	if want[0].labels > want[2].labels {
		proxied = []sample{want[2], want[0]}
	}
	for _, name := range []string{"response_duration_seconds", "connect_duration_seconds", "header_duration_seconds"} {
		got := samples(t, reg, "nginx_ingress_controller_"+name)
		got = slices.DeleteFunc(got, func(s sample) bool { return strings.Contains(s.labels, "status=503") }) // the no-endpoints server
		if !slices.Equal(got, proxied) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, proxied)
		}
	}
	checkStub(t, reg)
	if d := samples(t, reg, "ingress_sync_traffic_metrics_dropped_total"); len(d) != 2 || d[0].value != 0 || d[1].value != 0 {
		t.Errorf("dropped: %v", d)
	}
}

func checkStub(t *testing.T, reg prometheus.Gatherer) {
	t.Helper()
	conns := samples(t, reg, "nginx_ingress_controller_nginx_process_connections")
	if len(conns) != 4 || conns[0].labels != "state=active" || conns[0].value < 1 {
		t.Errorf("nginx_process_connections: %v", conns)
	}
	if r := samples(t, reg, "nginx_ingress_controller_nginx_process_requests_total"); len(r) != 1 || r[0].value < 10 {
		t.Errorf("nginx_process_requests_total: %v", r)
	}
	if c := samples(t, reg, "nginx_ingress_controller_nginx_process_connections_total"); len(c) != 2 {
		t.Errorf("nginx_process_connections_total: %v", c)
	}
}

// TestTrafficMetricsCap: beyond MaxSeries (3) label sets, the samples of new
// ones are dropped and counted; without the host label (metrics per host
// off) the label is absent.
func TestTrafficMetricsCap(t *testing.T) {
	h := startNginx(t, metricsConfig(t, "metrics-cap"), func(o *Options) {
		o.Metrics.MaxSeries = 3
		o.Metrics.WithoutHost = true
	})
	reg := gatherer(t, h)
	sendRequests(t, h, 3, map[string]int{"http://a.test/": 200})
	sendRequests(t, h, 2, map[string]int{"http://b.test/": 200})
	sendRequests(t, h, 4, map[string]int{"http://b.test/none": 404, "http://a.test/gone": 503})
	// Each worker flushes its counts on its own timer: wait for both the
	// drops and the 9 counted requests.
	var got []sample
	waitFor(t, "dropped samples and requests counted", func() bool {
		d := samples(t, reg, "ingress_sync_traffic_metrics_dropped_total")
		got = samples(t, reg, "nginx_ingress_controller_requests")
		n := 0.0
		for _, s := range got {
			n += s.value
		}
		return len(d) == 2 && d[0].value == 4 && d[0].labels == "reason=cap" && n >= 9
	})
	want := []sample{
		{"canary=,ingress=front,method=GET,namespace=shop,path=/,service=web-a,status=200", 3},
		{"canary=,ingress=main,method=GET,namespace=blog,path=/,service=web-b,status=200", 2},
	}
	if len(got) != 3 || !slices.Contains(got, want[0]) || !slices.Contains(got, want[1]) {
		t.Errorf("requests:\n got %v\nwant %v and one of the last two label sets", got, want)
	}
	var total float64
	for _, s := range got {
		total += s.value
	}
	if total != 9 {
		t.Errorf("requests counted %v, want 9 (13 sent, 4 dropped)", total)
	}
}

// TestTrafficMetricsReload: counters survive a reload (the shared dict
// keeps its entries across SIGHUP), with the counts of the old workers.
func TestTrafficMetricsReload(t *testing.T) {
	cfg := metricsConfig(t, "metrics-reload")
	h := startNginx(t, cfg, nil)
	reg := gatherer(t, h)
	// No wait: the old workers add what they counted when they exit.
	sendRequests(t, h, 3, map[string]int{"http://a.test/": 200})
	next := *cfg
	next.Checksum = "metrics-reload-2"
	next.Global.UpstreamKeepalive = 64
	if err := h.reload(t.Context(), &next); err != nil {
		t.Fatal(err)
	}
	if got := h.app.LastReload(); got.Skipped || got.Confirm == 0 {
		t.Fatalf("no reload: %+v", got)
	}
	sendRequests(t, h, 2, map[string]int{"http://a.test/": 200})
	waitRequests(t, reg, 5)
	if got := samples(t, reg, "nginx_ingress_controller_requests"); len(got) != 1 {
		t.Errorf("requests after reload: %v", got)
	}
}

// TestTrafficMetricsDisabled: with metrics off nothing is counted and the
// collector still exports the connection gauges.
func TestTrafficMetricsDisabled(t *testing.T) {
	h := startNginx(t, metricsConfig(t, "metrics-off"), func(o *Options) { o.Metrics.Disabled = true })
	reg := gatherer(t, h)
	sendRequests(t, h, 2, map[string]int{"http://a.test/": 200})
	if _, err := h.lua.GetTraffic(t.Context()); !errorsIs(err, ErrMetricsDisabled) {
		t.Errorf("GetTraffic: %v, want ErrMetricsDisabled", err)
	}
	if got := samples(t, reg, "nginx_ingress_controller_requests"); len(got) != 0 {
		t.Errorf("requests: %v", got)
	}
	checkStub(t, reg)
}

// TestTrafficMetricsCanary: requests the canary serves carry its backend
// in the canary label, under the main route's Ingress, path and Service,
// as ingress-nginx's $proxy_alternative_upstream_name.
func TestTrafficMetricsCanary(t *testing.T) {
	mainBackend, canaryBackend := backendOf("main", startEcho(t, "main")), backendOf("canary", startEcho(t, "canary"))
	cfg := configOf("metrics-canary", []config.Server{serverOf("c.test", canaryLoc("/", config.Canary{Header: "X-Canary"}))},
		mainBackend, canaryBackend)
	h := startNginx(t, cfg, nil)
	reg := gatherer(t, h)
	for i := range 5 {
		var header []string
		if i < 2 {
			header = []string{"X-Canary", "always"}
		}
		if r := h.mustGet("http://c.test/", header...); r.Status != 200 {
			t.Fatalf("status %d", r.Status)
		}
	}
	waitRequests(t, reg, 5)
	want := []sample{
		{"canary=,host=c.test,ingress=test,method=GET,namespace=default,path=/,service=main,status=200", 3},
		{"canary=canary,host=c.test,ingress=test,method=GET,namespace=default,path=/,service=main,status=200", 2},
	}
	if got := samples(t, reg, "nginx_ingress_controller_requests"); !slices.Equal(got, want) {
		t.Errorf("requests:\n got %v\nwant %v", got, want)
	}
}
