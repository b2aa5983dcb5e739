package nginx

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// benchAuthUsers is the number of users of the uncached variants: more than
// lua/auth.lua's LRU holds (1,024), requested in turn, so that every
// request verifies its hash.
const benchAuthUsers = 4096

// BenchmarkBasicAuthThroughput compares a route with basic auth (apr1 and
// bcrypt cost 5) with the same route without it. Both go through the same
// front proxy in the test nginx (loadRun cannot set headers), which adds
// the Authorization header by Host, to router.lua; the backend is
// throughputSnippet's. "cached" sends one user's header (the LRU of
// verified headers answers after the first request); "uncached" cycles
// through benchAuthUsers users, each request a hash verification. Each
// reports the median ratio of back-to-back bounded runs as auth/plain.
func BenchmarkBasicAuthThroughput(b *testing.B) {
	for _, c := range []struct {
		format string
		cached bool
		total  int
	}{{"apr1", true, 10000}, {"bcrypt", true, 10000}, {"apr1", false, 4000}, {"bcrypt", false, 2000}} {
		name := c.format + "/cached"
		if !c.cached {
			name = c.format + "/uncached"
		}
		b.Run(name, func(b *testing.B) { basicAuthThroughput(b, c.format, c.cached, c.total) })
	}
}

func basicAuthThroughput(b *testing.B, format string, cached bool, total int) {
	ports := freePorts(b, 3)
	backend, static, front := ports[0], ports[1], ports[2]
	hash := authHashes[format]
	users := 1
	if !cached {
		users = benchAuthUsers
	}
	var file strings.Builder
	for i := range users {
		fmt.Fprintf(&file, "u%d:%s\n", i, hash)
	}
	secret := authSecret("bench", map[string]string{"auth": file.String()})
	cfg := buildWithSecrets(b, map[string]int{"web": backend}, []*corev1.Secret{secret}, nil,
		fixtures.Ingress("default", "plain", fixtures.Rule("*.plain.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "auth", ann("auth-type", "basic"), ann("auth-secret", "bench"),
			fixtures.Rule("*.auth.test", fixtures.Prefix("/", "web", 80))))
	startNginx(b, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.testHTTPSnippet = throughputSnippet(backend, static) + "\n" + authFrontSnippet(front, o.HTTPPort, users)
	})
	const conns, rounds = 16, 5
	host := func(zone string) func(int) string {
		return func(i int) string { return "u" + strconv.Itoa(i%users) + "." + zone + ".test" }
	}
	_, authRate, ratio := abRates(b, front, host("plain"), host("auth"), conns, total, rounds, max(1000, users))
	b.ReportMetric(authRate, "auth-req/s")
	b.ReportMetric(ratio, "auth/plain")
}

// authFrontSnippet is a proxy on port front to router.lua on port lua that
// sends user u<i>'s Authorization (password "secret") for the hosts
// u<i>.auth.test.
func authFrontSnippet(front, lua, users int) string {
	var m strings.Builder
	for i := range users {
		cred := base64.StdEncoding.EncodeToString([]byte("u" + strconv.Itoa(i) + ":secret"))
		fmt.Fprintf(&m, "        u%d.auth.test \"Basic %s\";\n", i, cred)
	}
	return fmt.Sprintf(`    map $host $bench_auth {
        hostnames;
        default "";
%s    }
    upstream lua_bench {
        server 127.0.0.1:%d;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:%d;
        access_log off;
        location / {
            proxy_pass http://lua_bench;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header Authorization $bench_auth;
        }
    }`, m.String(), lua, front)
}
