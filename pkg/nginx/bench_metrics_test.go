package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"
	"time"
)

// BenchmarkMetricsThroughput compares two nginx, one collecting the
// traffic metrics (lua/metrics.lua, the default) and one with them off,
// on the same route table (10 hosts, a Prefix "/" each) through router.lua
// to the tiny backend of throughputSnippet, in alternating bounded load
// runs (16 connections, 10 rounds of 15k requests each, every host in turn:
// 10 label sets). It reports the medians, the median ratio on/off and the
// nginx CPU time per request of each.
func BenchmarkMetricsThroughput(b *testing.B) {
	start := func(disabled bool) *harness {
		ports := freePorts(b, 2)
		cfg := hostTable(10, config.Endpoint{Address: "127.0.0.1", Port: int32(ports[0])})
		return startNginx(b, cfg, func(o *Options) {
			o.DisableAccessLog = true
			o.Metrics.Disabled = disabled
			o.testHTTPSnippet = throughputSnippet(ports[0], ports[1])
		})
	}
	on, off := start(false), start(true)
	onRates, offRates, ratios, onCPU, offCPU := pairedLoad(b, on, off)
	b.StopTimer()
	b.ReportMetric(median(onRates), "metrics-req/s")
	b.ReportMetric(median(offRates), "plain-req/s")
	b.ReportMetric(median(ratios), "metrics/plain")
	// nginx CPU per request (with the tiny backend in the same workers):
	// steadier than req/s on a shared machine.
	n := float64(len(onRates) * pairedTotal)
	b.ReportMetric(float64(onCPU.Microseconds())/n, "metrics-cpu-us/req")
	b.ReportMetric(float64(offCPU.Microseconds())/n, "plain-cpu-us/req")
}

// pairedTotal is the number of requests of one run of pairedLoad.
const pairedTotal = 15000

// pairedLoad warms on and off (two nginx of the same 10-host table), then
// runs bounded loads on each in turn (16 connections, 10 rounds of
// pairedTotal requests, every host in turn) and returns the request rates
// of each, the paired ratios on/off and the CPU time of each nginx's
// workers.
func pairedLoad(b *testing.B, on, off *harness) (onRates, offRates, ratios []float64, onCPU, offCPU time.Duration) {
	host := func(i int) string { return tableHost(i % 10) }
	const conns, rounds, warm = 16, 10, 5000
	loadRun(b, off.opts.HTTPPort, host, conns, warm)
	loadRun(b, on.opts.HTTPPort, host, conns, warm)
	for b.Loop() {
		for range rounds {
			c0 := workerCPU(b, off.proc.Pid())
			f := loadRun(b, off.opts.HTTPPort, host, conns, pairedTotal)
			c1, c2 := workerCPU(b, off.proc.Pid()), workerCPU(b, on.proc.Pid())
			n := loadRun(b, on.opts.HTTPPort, host, conns, pairedTotal)
			c3 := workerCPU(b, on.proc.Pid())
			offCPU, onCPU = offCPU+c1-c0, onCPU+c3-c2
			onRates, offRates, ratios = append(onRates, n.rate), append(offRates, f.rate), append(ratios, n.rate/f.rate)
		}
	}
	return onRates, offRates, ratios, onCPU, offCPU
}
