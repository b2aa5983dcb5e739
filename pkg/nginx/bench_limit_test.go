package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"
)

// BenchmarkLimitThroughput compares a route with a rate limit that is
// never reached (lua/limit.lua takes its bucket on every request) with the
// same route without it, both proxying to the tiny backend of
// throughputSnippet, in alternating bounded load runs (16 connections, 5
// rounds of 10k requests). "rps" has limit-rps only; "rps+connections"
// also counts the requests in progress (an incr in the rewrite phase and
// one in the log phase). It reports the median ratio limited/plain.
func BenchmarkLimitThroughput(b *testing.B) {
	for _, c := range []struct {
		name  string
		limit config.RateLimit
	}{
		{"rps", config.RateLimit{RPS: 1 << 20, BurstMultiplier: 5}},
		{"rps+connections", config.RateLimit{RPS: 1 << 20, BurstMultiplier: 5, Connections: 1 << 20}},
	} {
		b.Run(c.name, func(b *testing.B) { limitThroughput(b, c.limit) })
	}
}

func limitThroughput(b *testing.B, limit config.RateLimit) {
	ports := freePorts(b, 2)
	backend := ports[0]
	be := config.Backend{Name: "svc", Namespace: "default", Service: "svc", Port: "80", LoadBalance: "round_robin",
		Endpoints: []config.Endpoint{{Address: "127.0.0.1", Port: int32(backend)}}}
	limited := prefixLoc("/", "svc")
	limited.Ingress = "default/limited"
	limited.Settings.RateLimit = &limit
	cfg := configOf("bench-limit", []config.Server{serverOf("plain.test", prefixLoc("/", "svc")), serverOf("limited.test", limited)}, be)
	h := startNginx(b, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.testHTTPSnippet = throughputSnippet(backend, ports[1])
	})
	plain, limitedRate, ratio := abRates(b, h.opts.HTTPPort, func(int) string { return "plain.test" }, func(int) string { return "limited.test" },
		16, 10000, 5, 2000)
	b.ReportMetric(limitedRate, "limited-req/s")
	b.ReportMetric(plain, "plain-req/s")
	b.ReportMetric(ratio, "limited/plain")
}
