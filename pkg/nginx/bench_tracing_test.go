package nginx

import (
	"context"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/tracing"
	"github.com/ingress-sync/ingress-sync/test/testkit/otlptest"
)

// BenchmarkTracingThroughput compares two nginx on the same route table
// (10 hosts, as BenchmarkMetricsThroughput), one with every route traced
// (enable-opentelemetry, AlwaysOn: every request makes, records and
// propagates a span) and one without, in alternating bounded load runs.
// pkg/tracing drains the traced nginx's spans to a real OTLP/gRPC receiver
// in this process meanwhile, as the syncer does. It reports the medians,
// the median ratio traced/plain and the nginx CPU time per request.
func BenchmarkTracingThroughput(b *testing.B) {
	rcv := otlptest.Start(b)
	start := func(traced bool) *harness {
		ports := freePorts(b, 2)
		cfg := hostTable(10, config.Endpoint{Address: "127.0.0.1", Port: int32(ports[0])})
		if traced {
			for i := range cfg.Servers {
				for j := range cfg.Servers[i].Locations {
					cfg.Servers[i].Locations[j].Settings.Tracing = &config.Tracing{Sampler: config.SamplerAlwaysOn, TrustIncoming: true, ParentBased: true}
				}
			}
		}
		return startNginx(b, cfg, func(o *Options) {
			o.DisableAccessLog = true
			o.testHTTPSnippet = throughputSnippet(ports[0], ports[1])
		})
	}
	on, off := start(true), start(false)
	settings := config.DefaultOpenTelemetry()
	settings.CollectorHost, settings.CollectorPort, settings.ScheduleDelayMillis = "127.0.0.1", rcv.Port, 100
	exp, err := tracing.New(tracing.Options{Fetch: on.lua.Spans, Poll: 100 * time.Millisecond,
		Settings: func() config.OpenTelemetry { return settings }})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- exp.Start(ctx) }()
	defer func() { cancel(); <-done }()
	onRates, offRates, ratios, onCPU, offCPU := pairedLoad(b, on, off)
	b.StopTimer()
	if len(rcv.Spans()) == 0 {
		b.Fatal("no span reached the receiver")
	}
	b.ReportMetric(median(onRates), "traced-req/s")
	b.ReportMetric(median(offRates), "plain-req/s")
	b.ReportMetric(median(ratios), "traced/plain")
	n := float64(len(onRates) * pairedTotal)
	b.ReportMetric(float64(onCPU.Microseconds())/n, "traced-cpu-us/req")
	b.ReportMetric(float64(offCPU.Microseconds())/n, "plain-cpu-us/req")
}
