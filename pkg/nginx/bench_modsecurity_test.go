package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"
)

// BenchmarkModSecurityThroughput compares a route with ModSecurity and the
// OWASP Core Rule Set (SecRuleEngine On, paranoia level 1; a harmless GET
// that every rule of the request phases inspects) with the same route
// without it, both proxying to the tiny backend of throughputSnippet, in
// alternating bounded load runs (16 connections, 5 rounds of 4k
// requests). It reports the median ratio crs/plain.
func BenchmarkModSecurityThroughput(b *testing.B) {
	ports := freePorts(b, 2)
	backend := ports[0]
	be := config.Backend{Name: "svc", Namespace: "default", Service: "svc", Port: "80", LoadBalance: "round_robin",
		Endpoints: []config.Endpoint{{Address: "127.0.0.1", Port: int32(backend)}}}
	waf := prefixLoc("/", "svc")
	waf.Ingress = "default/waf"
	waf.Settings.ModSecurity = &config.ModSecurity{Engine: "On", CRS: true}
	cfg := configOf("bench-modsec", []config.Server{serverOf("plain.test", prefixLoc("/", "svc")), serverOf("crs.test", waf)}, be)
	h := startNginx(b, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.ReloadTimeout = 2 * testWait // nginx -t parses the Core Rule Set
		o.testHTTPSnippet = throughputSnippet(backend, ports[1])
	})
	plain, crsRate, ratio := abRates(b, h.opts.HTTPPort, func(int) string { return "plain.test" }, func(int) string { return "crs.test" },
		16, 4000, 5, 1000)
	b.ReportMetric(crsRate, "crs-req/s")
	b.ReportMetric(plain, "plain-req/s")
	b.ReportMetric(ratio, "crs/plain")
}
