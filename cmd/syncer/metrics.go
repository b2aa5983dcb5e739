package main

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
)

// registerMetricsFlags registers ingress-nginx's traffic metrics flags
// (--enable-metrics, --metrics-per-host, the bucket lists) and the cap and
// dict size of ingress-sync's collection (lua/metrics.lua).
func registerMetricsFlags(fs *flag.FlagSet, m *nginx.MetricsOptions) {
	m.DictSize, m.MaxSeries = nginx.DefaultMetricsDictSize, nginx.DefaultMetricsMaxSeries
	m.TimeBuckets, m.LengthBuckets, m.SizeBuckets = nginx.DefaultTimeBuckets, nginx.DefaultLengthBuckets, nginx.DefaultSizeBuckets
	fs.BoolFunc("enable-metrics", "collect per-request traffic metrics (nginx_ingress_controller_requests and histograms); default true", func(v string) error {
		on, err := strconv.ParseBool(v)
		m.Disabled = !on
		return err
	})
	fs.BoolFunc("metrics-per-host", "export the traffic metrics with a host label (the Ingress rule's host); default true", func(v string) error {
		on, err := strconv.ParseBool(v)
		m.WithoutHost = !on
		return err
	})
	fs.IntVar(&m.MaxSeries, "metrics-max-series", m.MaxSeries,
		"most distinct traffic label sets (Ingress path, host, method, status...); samples of new ones beyond it are dropped and counted in ingress_sync_traffic_metrics_dropped_total")
	fs.Var(sizeFlag{&m.DictSize}, "metrics-dict-size", "shared memory for the traffic metrics, an nginx `size` (about 3 KB, estimated, per label set)")
	fs.Var(bucketsFlag{&m.TimeBuckets}, "time-buckets", "upper bounds of the duration histograms, seconds, comma-separated")
	fs.Var(bucketsFlag{&m.LengthBuckets}, "length-buckets", "upper bounds of the request and response size histograms, bytes, comma-separated")
	fs.Var(bucketsFlag{&m.SizeBuckets}, "size-buckets", "upper bounds of the bytes_sent histogram, bytes, comma-separated")
}

// bucketsFlag is a comma-separated list of increasing numbers.
type bucketsFlag struct{ p *[]float64 }

func (b bucketsFlag) String() string {
	if b.p == nil {
		return ""
	}
	s := make([]string, len(*b.p))
	for i, v := range *b.p {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (b bucketsFlag) Set(v string) error {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) || (len(out) > 0 && n <= out[len(out)-1]) {
			return fmt.Errorf("%q is not a list of increasing numbers", v)
		}
		out = append(out, n)
	}
	*b.p = out
	return nil
}

// controllerLabels are ingress-nginx's controller_* labels of this syncer.
func controllerLabels(f *runFlags) syncer.ControllerLabels {
	return syncer.ControllerLabels{Namespace: os.Getenv("POD_NAMESPACE"), Class: f.model.opts.ControllerClass, Pod: f.pod}
}

// dataPlane is what the metrics read of the syncer's nginx
// (*syncer.Nginx): its status server and its running Configuration.
type dataPlane interface {
	Client() *nginx.Client
	Running() *config.Configuration
}

// registerMetrics registers what /metrics serves beside the syncer's own
// ingress_sync_syncer_* metrics (syncer.New registers those): the traffic
// collector reading nginx on every scrape, ingress-nginx's nginx process
// metrics (the master of nginx's pid file and its workers, in either
// nginx mode), the NATS connection gauge, and
// ingress-nginx's controller metrics of the applies, kept by the
// ControllerMetrics it returns (its Observe is syncer.Options.Observe).
func registerMetrics(reg prometheus.Registerer, f *runFlags, ngx dataPlane, natsConnected func() bool) *syncer.ControllerMetrics {
	l := controllerLabels(f)
	reg.MustRegister(nginx.NewTrafficCollector(nginx.TrafficCollectorOptions{
		Client: ngx.Client(), Metrics: f.nginx.Metrics, Running: ngx.Running, Logger: f.nginx.Logger,
		ConstLabels: prometheus.Labels{"controller_namespace": l.Namespace, "controller_class": l.Class, "controller_pod": l.Pod},
	}))
	reg.MustRegister(nginx.NewProcessCollector(nginx.ProcessCollectorOptions{
		PidFile: f.nginx.PidFile(), Logger: f.nginx.Logger,
		ConstLabels: prometheus.Labels{"controller_namespace": l.Namespace, "controller_class": l.Class, "controller_pod": l.Pod},
	}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingress_sync_syncer_nats_connected",
		Help: "1 while the syncer's NATS connection is up, else 0."}, func() float64 {
		if natsConnected() {
			return 1
		}
		return 0
	}))
	return syncer.NewControllerMetrics(reg, l)
}
