package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// alive reports whether pid runs (a zombie waiting for its new parent to
// reap it does not).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

func TestProcessRestartsNginxAndRestoresState(t *testing.T) {
	a := startEcho(t, "a")
	h := startNginx(t, configOf("restart-1", []config.Server{serverOf("p.test", prefixLoc("/", "svc"))}), nil)
	// State pushed after the start (a later Apply) must survive too.
	if err := h.update(t.Context(), config.Change{BackendsUpserted: []config.Backend{backendOf("svc", a)}}); err != nil {
		t.Fatal(err)
	}
	if r := h.mustGet("http://p.test/"); r.Status != 200 {
		t.Fatalf("before the kill: %d", r.Status)
	}
	master := h.proc.Pid()
	workers := workerPIDs(t, master)

	killed := time.Now()
	if err := syscall.Kill(master, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new nginx master", func() bool { p := h.proc.Pid(); return p != 0 && p != master })
	if h.proc.Starts() != 2 {
		t.Errorf("starts = %d, want 2", h.proc.Starts())
	}
	waitFor(t, "workers of the killed master to be gone", func() bool {
		for _, w := range workers {
			if alive(w) {
				return false
			}
		}
		return true
	})
	// The OnStart hook (Applier.Restore) pushes the state to the new
	// master's empty shared dicts.
	waitFor(t, "requests served again", func() bool {
		r, err := h.get("http://p.test/")
		return err == nil && r.Status == 200 && r.Reply.Backend == "a"
	})
	got, err := h.lua.GetBackends(t.Context())
	if err != nil || len(got.Backends) != 1 || got.Backends[0].Name != "svc" {
		t.Fatalf("backends after restart = %+v, %v", got, err)
	}
	t.Logf("served again %s after the kill", time.Since(killed))
}

func TestGracefulStopDrainsRequests(t *testing.T) {
	slow := startEcho(t, "slow")
	slow.SetDelay(700 * time.Millisecond)
	h := startNginx(t, configOf("drain-1", []config.Server{serverOf("d.test", prefixLoc("/", "slow"))}, backendOf("slow", slow)), nil)
	master := h.proc.Pid()

	type answer struct {
		r   echo.Response
		err error
	}
	inflight := make(chan answer, 1)
	go func() {
		r, err := h.get("http://d.test/slow")
		inflight <- answer{r, err}
	}()
	waitFor(t, "the request to reach the backend", func() bool {
		return slow.Requests() > 0
	})
	if err := h.shutdown(); err != nil {
		t.Fatalf("Start returned %v, want nil after a graceful stop", err)
	}
	select {
	case a := <-inflight:
		if a.err != nil || a.r.Status != 200 {
			t.Fatalf("in-flight request: %d, %v; want it completed", a.r.Status, a.err)
		}
	case <-time.After(testWait):
		t.Fatal("in-flight request never completed")
	}
	if alive(master) {
		t.Errorf("nginx master %d still running after Start returned", master)
	}
	if _, err := os.Stat(h.opts.pidPath()); err == nil {
		t.Errorf("pid file left behind")
	}
}

// TestGracefulStopIsBounded: a request that never ends does not hold the
// stop longer than worker_shutdown_timeout.
func TestGracefulStopIsBounded(t *testing.T) {
	slow := startEcho(t, "slow")
	slow.SetDelay(30 * time.Second)
	h := startNginx(t, configOf("kill-1", []config.Server{serverOf("k.test", prefixLoc("/", "slow"))}, backendOf("slow", slow)),
		func(o *Options) { o.WorkerShutdownTimeout = time.Second })
	master := h.proc.Pid()
	go func() { _, _ = h.get("http://k.test/stuck") }()
	waitFor(t, "the request to reach the backend", func() bool {
		return slow.Requests() > 0
	})
	start := time.Now()
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}
	if alive(master) {
		t.Errorf("nginx master %d still running", master)
	}
	t.Logf("stopped %s after SIGQUIT with a stuck request", time.Since(start))
}

// TestGracefulStopKillsUnresponsiveNginx: a master that does not act on
// SIGQUIT (stopped here with SIGSTOP) is killed with its workers after
// WorkerShutdownTimeout.
func TestGracefulStopKillsUnresponsiveNginx(t *testing.T) {
	h := startNginx(t, configOf("stuck-1", nil), func(o *Options) { o.WorkerShutdownTimeout = time.Second })
	master := h.proc.Pid()
	workers := workerPIDs(t, master)
	if err := syscall.Kill(master, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "master and workers killed", func() bool {
		for _, p := range append(workers, master) {
			if alive(p) {
				return false
			}
		}
		return true
	})
}

func TestOptionsValidation(t *testing.T) {
	valid := Options{Dir: "/var/lib/x", NginxBinary: "/usr/sbin/nginx"}
	if _, err := valid.Complete(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*Options)
	}{
		{"no dir", func(o *Options) { o.Dir = "" }},
		{"relative dir", func(o *Options) { o.Dir = "var/lib" }},
		{"dir with space", func(o *Options) { o.Dir = "/var/a b" }},
		{"dir with semicolon", func(o *Options) { o.Dir = "/var/a;b" }},
		{"dir too long for the unix socket", func(o *Options) { o.Dir = "/" + string(make([]byte, 0)) + repeat("d", 100) }},
		{"listen address not an IP", func(o *Options) { o.ListenAddress = "localhost" }},
		{"port out of range", func(o *Options) { o.HTTPPort = 70000 }},
		{"same ports", func(o *Options) { o.HTTPPort, o.HTTPSPort = 8080, 8080 }},
		{"negative workers", func(o *Options) { o.WorkerProcesses = -1 }},
		{"user without group", func(o *Options) { o.User = "nobody" }},
		{"user with semicolon", func(o *Options) { o.User, o.Group = "a;b", "c" }},
		{"bad log level", func(o *Options) { o.ErrorLogLevel = "loud" }},
		{"bad dict size", func(o *Options) { o.BackendsDictSize = "64 m" }},
		{"zero dict size", func(o *Options) { o.CertificatesDictSize = "0" }},
		{"short shutdown timeout", func(o *Options) { o.WorkerShutdownTimeout = time.Millisecond }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := valid
			tc.mutate(&o)
			if _, err := o.Complete(); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("Complete = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
