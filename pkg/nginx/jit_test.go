package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRequestPathCompiles sends traffic through router.lua, balancer.lua,
// metrics.lua and tracing.lua with LuaJIT's trace log (jit.v) on, and fails when a
// function was blacklisted: from then on every trace that reaches it
// aborts, and the request path runs in the interpreter, several
// microseconds a request slower (see lua/nvar.lua). Reading ngx.var or
// ngx.now in request code did this within some ten thousand requests.
func TestRequestPathCompiles(t *testing.T) {
	jitDir := luaJITLibDir(t)
	ports := freePorts(t, 3)
	logPath := filepath.Join(testDir(t), "jit.log")
	cfg := hostTable(10, config.Endpoint{Address: "127.0.0.1", Port: int32(ports[0])})
	for i := range cfg.Servers[1:] { // a candidate with conditions the requests do not meet before "/api"
		s := &cfg.Servers[i+1]
		cond := withMatch(s.Locations[0], config.Match{Method: "GET", Headers: []config.MatchValue{hdr("x-never", "1")},
			Query: []config.MatchValue{hdrRegex("q", "[0-9]+")}})
		s.Locations = append([]config.Location{cond}, s.Locations...)
	}
	// The same hosts on a Gateway listener's port: half of the requests
	// go there (router.lua's lookup in the port's table).
	for _, s := range slices.Clone(cfg.Servers) {
		s.Port = ports[2]
		cfg.Servers = append(cfg.Servers, s)
	}
	cfg.Listeners = []config.Listener{{Port: ports[2], Gateway: "app/edge"}}
	// Half of the hosts traced (lua/tracing.lua in the rewrite and log
	// phases, AlwaysOn: every request of them records a span).
	for i := range cfg.Servers {
		for j := range cfg.Servers[i].Locations {
			if i%2 == 0 {
				cfg.Servers[i].Locations[j].Settings.Tracing = &config.Tracing{Sampler: config.SamplerAlwaysOn, TrustIncoming: true, ParentBased: true}
			}
		}
	}
	h := startNginx(t, cfg, func(o *Options) {
		o.DisableAccessLog = true
		o.WorkerProcesses = 1 // all requests in one LuaJIT VM
		o.testHTTPSnippet = throughputSnippet(ports[0], ports[1])
		// In the master: the workers inherit the attached trace log.
		o.testInitLua = fmt.Sprintf(`package.path = %q .. package.path; require("jit.v").start(%q)`,
			jitDir+"/?.lua;", logPath)
	})
	paths := []string{"/", "/api", "/api/x/y", "/other/thing", "/api/"}
	const conns, perConn = 8, 5000
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	clients := []*http.Client{h.newHTTPClient(), onPort(ports[2])}
	for w := range conns {
		c := clients[w%2]
		wg.Go(func() {
			for i := range perConn {
				n := w*perConn + i
				host := tableHost(n % 10)
				if err := loadRequest(c, "http://"+host+paths[n%len(paths)], host); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	traces, aborts := 0, map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.Contains(line, "blacklisted"):
			t.Errorf("after %d requests: %s", conns*perConn, line)
		case strings.HasPrefix(line, "[TRACE ---"):
			aborts[line]++
		case strings.HasPrefix(line, "[TRACE"):
			traces++
		}
	}
	t.Logf("%d requests: %d traces, aborts: %v", conns*perConn, traces, aborts)
	if traces == 0 {
		t.Fatalf("the trace log has no trace: %q", data)
	}
	// An abort that keeps coming back ends in a blacklist.
	for line, n := range aborts {
		if n >= maxRepeatedAborts {
			t.Errorf("aborted %d times: %s", n, line)
		}
	}
}

// maxRepeatedAborts: LuaJIT blacklists a trace start after about a dozen
// aborts; the code of the request path aborts at most a few times at one
// place while its loops are being compiled.
const maxRepeatedAborts = 6

// luaJITLibDir returns the directory of LuaJIT's jit.* modules
// (libluajit2-5.1-common, a dependency of the nginx Lua module).
func luaJITLibDir(t *testing.T) string {
	t.Helper()
	found, _ := filepath.Glob("/usr/share/luajit-2.1*/jit/v.lua")
	if len(found) == 0 {
		t.Fatal("no /usr/share/luajit-2.1*/jit/v.lua: LuaJIT's jit modules (libluajit2-5.1-common) are missing")
	}
	return filepath.Dir(filepath.Dir(found[0]))
}
