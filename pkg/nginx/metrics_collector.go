package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TrafficCollectorOptions configure a TrafficCollector.
type TrafficCollectorOptions struct {
	// Client reads the loopback status server.
	Client *Client
	// Metrics are the completed options nginx.conf was rendered with.
	Metrics MetricsOptions
	// ConstLabels are ingress-nginx's controller_namespace,
	// controller_class and controller_pod.
	ConstLabels prometheus.Labels
	// Running returns the running Configuration (its backends give the
	// service label); nil, or nil returned: the label is empty.
	Running func() *config.Configuration
	// Timeout bounds one scrape of nginx (default 5s).
	Timeout time.Duration
	Logger  *slog.Logger
}

// TrafficCollector is a prometheus.Collector of ingress-nginx's request
// metrics and nginx connection gauges, read from nginx on every scrape,
// and of ingress_sync_traffic_metrics_dropped_total.
type TrafficCollector struct {
	o       TrafficCollectorOptions
	labels  []string
	hists   [numHists]*prometheus.Desc
	bounds  [numHists][]float64
	reqs    *prometheus.Desc
	conns   *prometheus.Desc
	connsT  *prometheus.Desc
	reqsT   *prometheus.Desc
	dropped *prometheus.Desc
	mirrors *prometheus.Desc
	errors  prometheus.Counter

	mu       sync.Mutex
	services map[string]string
	of       *config.Configuration
}

// requestLabels are ingress-nginx's request labels, host last (only
// with metrics per host).
var requestLabels = []string{"status", "method", "path", "namespace", "ingress", "service", "canary", "host"}

// NewTrafficCollector returns a collector reading o.Client.
func NewTrafficCollector(o TrafficCollectorOptions) *TrafficCollector {
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Metrics.defaults()
	c := &TrafficCollector{o: o, labels: requestLabels}
	if o.Metrics.WithoutHost {
		c.labels = requestLabels[:len(requestLabels)-1]
	}
	const ns = "nginx_ingress_controller_"
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(ns+name, help, labels, o.ConstLabels)
	}
	c.reqs = d("requests", "The total number of client requests", c.labels)
	for i, h := range []struct {
		name, help string
		bounds     []float64
	}{
		{"request_duration_seconds", "The request processing time in seconds", o.Metrics.TimeBuckets},
		{"response_duration_seconds", "The time spent on receiving the response from the upstream server", o.Metrics.TimeBuckets},
		{"connect_duration_seconds", "The time spent on establishing a connection with the upstream server", o.Metrics.TimeBuckets},
		{"header_duration_seconds", "The time spent on receiving first header from the upstream server", o.Metrics.TimeBuckets},
		{"request_size", "The request length (including request line, header, and request body)", o.Metrics.LengthBuckets},
		{"response_size", "The response length (including request line, header, and request body)", o.Metrics.LengthBuckets},
		{"bytes_sent", "DEPRECATED The number of bytes sent to a client", o.Metrics.SizeBuckets},
	} {
		c.hists[i], c.bounds[i] = d(h.name, h.help, c.labels), h.bounds
	}
	c.conns = d("nginx_process_connections", "current number of client connections with state {active, reading, writing, waiting}", []string{"state"})
	c.connsT = d("nginx_process_connections_total", "total number of connections with state {accepted, handled}", []string{"state"})
	c.reqsT = d("nginx_process_requests_total", "total number of client requests", nil)
	c.dropped = prometheus.NewDesc("ingress_sync_traffic_metrics_dropped_total",
		"Request samples not counted: reason cap (a new label set beyond --metrics-max-series) or memory (the metrics dict was full).",
		[]string{"reason"}, nil)
	c.mirrors = prometheus.NewDesc("ingress_sync_mirror_requests_total",
		"Copies of requests to mirrors (mirror-target, RequestMirror): result sent (the mirror answered), dropped (beyond the in-flight bound, a body over 1 MiB, no endpoint) or failed (connect, TLS, timeout, DNS).",
		[]string{"result"}, nil)
	c.errors = prometheus.NewCounter(prometheus.CounterOpts{Name: "ingress_sync_traffic_metrics_scrape_errors_total",
		Help: "Scrapes that could not read the traffic metrics or stub_status from nginx."})
	return c
}

// Describe implements prometheus.Collector.
func (c *TrafficCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.hists {
		ch <- d
	}
	ch <- c.reqs
	ch <- c.conns
	ch <- c.connsT
	ch <- c.reqsT
	ch <- c.dropped
	ch <- c.mirrors
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector: it reads nginx, bounded by the
// timeout. A failed read is counted and leaves its metrics out.
func (c *TrafficCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.o.Timeout)
	defer cancel()
	if st, err := c.o.Client.GetStubStatus(ctx); err == nil {
		c.collectStub(ch, st)
	} else {
		c.failed(err)
	}
	if !c.o.Metrics.Disabled {
		if t, err := c.o.Client.GetTraffic(ctx); err == nil {
			c.collectTraffic(ch, t)
		} else {
			c.failed(err)
		}
	}
	c.errors.Collect(ch)
}

func (c *TrafficCollector) failed(err error) {
	c.errors.Inc()
	if !errors.Is(err, context.Canceled) {
		c.o.Logger.Warn("cannot read nginx metrics", "err", err)
	}
}

func (c *TrafficCollector) collectStub(ch chan<- prometheus.Metric, st StubStatus) {
	for _, g := range []struct {
		state string
		v     float64
	}{{"active", st.Active}, {"reading", st.Reading}, {"writing", st.Writing}, {"waiting", st.Waiting}} {
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, g.v, g.state)
	}
	ch <- prometheus.MustNewConstMetric(c.connsT, prometheus.CounterValue, st.Accepted, "accepted")
	ch <- prometheus.MustNewConstMetric(c.connsT, prometheus.CounterValue, st.Handled, "handled")
	ch <- prometheus.MustNewConstMetric(c.reqsT, prometheus.CounterValue, st.Requests)
}

func (c *TrafficCollector) collectTraffic(ch chan<- prometheus.Metric, t Traffic) {
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, t.Dropped, "cap")
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, t.Evicted, "memory")
	ch <- prometheus.MustNewConstMetric(c.mirrors, prometheus.CounterValue, t.Mirrors.Sent, "sent")
	ch <- prometheus.MustNewConstMetric(c.mirrors, prometheus.CounterValue, t.Mirrors.Dropped, "dropped")
	ch <- prometheus.MustNewConstMetric(c.mirrors, prometheus.CounterValue, t.Mirrors.Failed, "failed")
	services := c.serviceNames()
	for i := range t.Series {
		s := &t.Series[i]
		lv := []string{s.Status, s.Method, s.Path, s.Namespace, s.Ingress, services[s.Backend], s.Canary, s.Host}[:len(c.labels)]
		ch <- prometheus.MustNewConstMetric(c.reqs, prometheus.CounterValue, s.Requests, lv...)
		for h := range numHists {
			if m, ok := constHistogram(c.hists[h], c.bounds[h], &s.Hists[h], lv); ok {
				ch <- m
			}
		}
	}
}

// constHistogram makes the cumulative histogram of h; false when it has
// no observation (an upstream time of a request that reached none).
func constHistogram(d *prometheus.Desc, bounds []float64, h *TrafficHistogram, lv []string) (prometheus.Metric, bool) {
	if len(h.Buckets) == 0 {
		return nil, false
	}
	cum := make(map[float64]uint64, len(bounds))
	var n uint64
	for i, b := range bounds {
		n += h.Buckets[i]
		cum[b] = n
	}
	n += h.Buckets[len(bounds)]
	return prometheus.MustNewConstHistogram(d, n, h.Sum, cum, lv...), true
}

// serviceNames maps the running Configuration's backend names to their
// Service names, rebuilt when the Configuration changes.
func (c *TrafficCollector) serviceNames() map[string]string {
	var cfg *config.Configuration
	if c.o.Running != nil {
		cfg = c.o.Running()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg != c.of || c.services == nil {
		c.services, c.of = map[string]string{}, cfg
		if cfg != nil {
			for _, b := range cfg.Backends.All() {
				c.services[b.Name] = b.Service
			}
		}
	}
	return c.services
}
