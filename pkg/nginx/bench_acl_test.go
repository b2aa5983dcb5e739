package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// aclBenchList is n distinct /24 CIDRs of 10.0.0.0/8 and, last in
// sorted order, 127.0.0.1/32 (the load client): as model.Build sends them.
func aclBenchList(n int) []string {
	out := make([]string, 0, n+1)
	for i := range n {
		out = append(out, fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))
	}
	out = append(out, "127.0.0.1/32")
	slices.Sort(out)
	return out
}

// BenchmarkAllowListThroughput compares a route with an allow-list of 1,000
// CIDRs (the client in it) with the same route without, both through
// router.lua to the tiny backend of throughputSnippet, in alternating
// bounded load runs (16 connections, 6 rounds of 5k requests each). It
// reports the medians and the median ratio acl/plain.
func BenchmarkAllowListThroughput(b *testing.B) {
	ports := freePorts(b, 2)
	backend, static := ports[0], ports[1]
	be := config.Backend{Name: "bench-web-80", Namespace: "bench", Service: "web", Port: "80", LoadBalance: "round_robin",
		Endpoints: []config.Endpoint{{Address: "127.0.0.1", Port: int32(backend)}}}
	acl := prefixLoc("/", be.Name)
	acl.Settings.AllowSourceRange = aclBenchList(999)
	cfg := configOf("acl-bench", []config.Server{serverOf("plain.bench", prefixLoc("/", be.Name)), serverOf("acl.bench", acl)}, be)
	h := startNginx(b, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.testHTTPSnippet = throughputSnippet(backend, static)
	})
	plain, aclRate, ratio := abRates(b, h.opts.HTTPPort, func(int) string { return "plain.bench" }, func(int) string { return "acl.bench" },
		16, 5000, 6, 2000)
	b.ReportMetric(plain, "plain-req/s")
	b.ReportMetric(aclRate, "acl1000-req/s")
	b.ReportMetric(ratio, "acl/plain")
}

// lookupSnippet serves GET /lookup?n=N on port: it builds an ipmatch
// matcher of N random CIDRs (IPv4 /16 to /32 and IPv6 /32 to /128, a
// quarter each of IPv6) and times lookups of random addresses with it, and
// with a linear scan of the same ranges for comparison.
func lookupSnippet(port int) string {
	return fmt.Sprintf(`    server {
        listen 127.0.0.1:%d;
        access_log off;
        location = /lookup {
            content_by_lua_block {
                local ipmatch = require("ipmatch")
                local n = tonumber(ngx.var.arg_n)
                math.randomseed(n)
                local r = math.random
                local function v4() return string.format("%%d.%%d.%%d.%%d", r(1, 223), r(0, 255), r(0, 255), r(0, 255)) end
                local function v6() return string.format("2001:db8:%%x:%%x::%%x", r(0, 65535), r(0, 65535), r(0, 65535)) end
                local cidrs = {}
                for i = 1, n do
                    if i %% 4 == 0 then cidrs[i] = v6() .. "/" .. r(32, 128) else cidrs[i] = v4() .. "/" .. r(16, 32) end
                end
                local t0 = os.clock()
                local m = assert(ipmatch.new(cidrs))
                local build = os.clock() - t0
                local addrs = {}
                for i = 1, 1000 do addrs[i] = (i %% 4 == 0) and v6() or v4() end
                local iters, hits = 200000, 0
                t0 = os.clock()
                for i = 1, iters do
                    if ipmatch.match(m, addrs[i %% 1000 + 1]) then hits = hits + 1 end
                end
                local lookup = (os.clock() - t0) / iters
                -- The same ranges scanned one by one (what the lookup replaces).
                local ranges = {}
                for _, fam in ipairs({ 4, 16 }) do
                    local t = m[fam]
                    for i = 1, t.n do ranges[#ranges + 1] = { t.lo[i], t.hi[i] } end
                end
                local liters = math.max(20, math.floor(2e6 / n))
                t0 = os.clock()
                for i = 1, liters do
                    local b = ipmatch.parse(addrs[i %% 1000 + 1])
                    for j = 1, #ranges do
                        local x = ranges[j]
                        if #x[1] == #b and x[1] <= b and b <= x[2] then break end
                    end
                end
                local linear = (os.clock() - t0) / liters
                ngx.say(require("cjson").encode({ buildMs = build * 1e3, lookupNs = lookup * 1e9, linearNs = linear * 1e9, hits = hits }))
            }
        }
    }`, port)
}

// BenchmarkAllowListLookup is the cost of one allow-list lookup in Lua at
// 10, 1,000 and 100,000 CIDRs (a binary search over merged ranges: it grows
// with log n), next to a linear scan of the same ranges, and the time to
// build the matcher (once per route change and worker).
func BenchmarkAllowListLookup(b *testing.B) {
	port := freePorts(b, 1)[0]
	h := startNginx(b, configOf("lookup", nil), func(o *Options) { o.testHTTPSnippet = lookupSnippet(port) })
	_ = h
	c := &http.Client{Timeout: 5 * time.Minute}
	for _, n := range []int{10, 1000, 100000} {
		b.Run("cidrs="+strconv.Itoa(n), func(b *testing.B) {
			var out struct{ BuildMs, LookupNs, LinearNs float64 }
			for b.Loop() {
				resp, err := c.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/lookup?n=" + strconv.Itoa(n))
				if err != nil {
					b.Fatal(err)
				}
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("status %d: %v", resp.StatusCode, err)
				}
			}
			b.ReportMetric(out.LookupNs, "lookup-ns")
			b.ReportMetric(out.LinearNs, "linear-ns")
			b.ReportMetric(out.BuildMs, "build-ms")
		})
	}
}
