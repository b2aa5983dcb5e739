package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
)

// reloadConfigs returns two Configurations whose global settings differ
// (proxy-read-timeout), so that going from the first to the second reloads
// nginx; the second also adds the Exact route /b.
func reloadConfigs(a, b *echo.Server) (*config.Configuration, *config.Configuration) {
	first := configOf("reload-1", []config.Server{serverOf("r.test", prefixLoc("/a", "a"))}, backendOf("a", a))
	second := configOf("reload-2", []config.Server{serverOf("r.test", prefixLoc("/a", "a"), exactLoc("/b", "b"))},
		backendOf("a", a), backendOf("b", b))
	second.Global.UpstreamKeepalive = 64 // nginx.conf's upstream keepalive
	return first, second
}

func TestReloadIsConfirmed(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	first, second := reloadConfigs(a, b)
	h := startNginx(t, first, nil)
	master := h.proc.Pid()
	before := workerPIDs(t, master)
	oldSum, newSum := h.confChecksum(first), h.confChecksum(second)
	if oldSum == newSum {
		t.Fatalf("both configurations render nginx.conf %s: no reload to test", oldSum)
	}
	if v := h.mustVersion(); v.Checksum != oldSum || v.Configuration != "reload-1" {
		t.Fatalf("version before the reload = %+v, want checksum %s, configuration reload-1", v, oldSum)
	}
	checkServed(t, h, "http://r.test/b", 404, "")

	if err := h.reload(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	stats := h.app.LastReload()
	t.Logf("reload: %+v", stats)
	if stats.Skipped || stats.Confirm <= 0 {
		t.Errorf("stats = %+v, want a confirmed reload", stats)
	}
	// Confirmed means new workers answer with the new nginx.conf now.
	for range 4 {
		v := h.mustVersion()
		if v.Checksum != newSum || v.Configuration != "reload-2" {
			t.Fatalf("version after reload = %+v, want checksum %s, configuration reload-2", v, newSum)
		}
		if slices.Contains(before, v.PID) {
			t.Fatalf("version answered by old worker %d", v.PID)
		}
	}
	if conf, err := os.ReadFile(h.opts.confPath()); err != nil || !bytes.Contains(conf, []byte("keepalive 64;")) {
		t.Errorf("nginx.conf lacks the new upstream keepalive (%v)", err)
	}
	checkServed(t, h, "http://r.test/b", 200, "b")
	if h.proc.Pid() != master {
		t.Errorf("master changed on reload")
	}

	t.Run("unchanged configuration is not reloaded", func(t *testing.T) {
		now := workerPIDs(t, master)
		if err := h.reload(t.Context(), second); err != nil {
			t.Fatal(err)
		}
		checkNotReloaded(t, h, now)
	})
	t.Run("changing only servers and locations does not reload", func(t *testing.T) {
		now := workerPIDs(t, master)
		routes := configOf("reload-2b", []config.Server{
			serverOf("new.test", prefixLoc("/", "b")),
			serverOf("r.test", prefixLoc("/a", "a"), exactLoc("/c", "a")),
		}, backendOf("a", a), backendOf("b", b))
		routes.Global = second.Global
		if err := h.reload(t.Context(), routes); err != nil {
			t.Fatal(err)
		}
		checkNotReloaded(t, h, now)
		checkServed(t, h, "http://r.test/c", 200, "a")
		checkServed(t, h, "http://r.test/b", 404, "")
		checkServed(t, h, "http://new.test/x", 200, "b")
		if v := h.mustVersion(); v.Checksum != newSum || v.Configuration != "reload-2b" {
			t.Errorf("version = %+v, want checksum %s, configuration reload-2b", v, newSum)
		}
	})
	t.Run("reload removes backends after the swap", func(t *testing.T) {
		third := configOf("reload-3", []config.Server{serverOf("r.test", exactLoc("/b", "b"))}, backendOf("b", b))
		third.Global = second.Global
		third.Global.UpstreamKeepalive = 32
		if err := h.reload(t.Context(), third); err != nil {
			t.Fatal(err)
		}
		if h.app.LastReload().Skipped {
			t.Errorf("a new upstream keepalive did not reload")
		}
		if v := h.mustVersion(); v.Checksum != h.confChecksum(third) || v.Configuration != "reload-3" {
			t.Errorf("version = %+v, want configuration reload-3", v)
		}
		got, err := h.lua.GetBackends(t.Context())
		if err != nil || len(got.Backends) != 1 || got.Backends[0].Name != "b" {
			t.Fatalf("backends after reload = %+v, %v", got.Backends, err)
		}
		checkServed(t, h, "http://r.test/b", 200, "b")
	})
}

func TestBrokenConfigurationIsRejected(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	first, second := reloadConfigs(a, b)
	h := startNginx(t, first, nil)
	h.allowLuaErrors = true // the init_by_lua case below fails on purpose
	master := h.proc.Pid()
	oldSum := h.confChecksum(first)
	good, err := os.ReadFile(h.opts.confPath())
	if err != nil {
		t.Fatal(err)
	}
	// withHooks makes h.app render with mutate's test hooks until the
	// returned function runs.
	withHooks := func(t *testing.T, mutate func(*Options)) func() {
		o := h.app.opts
		mutate(&o)
		r, err := NewRenderer(o)
		if err != nil {
			t.Fatal(err)
		}
		savedR, savedO := h.app.renderer, h.app.opts
		h.app.renderer, h.app.opts = r, r.Options()
		return func() { h.app.renderer, h.app.opts = savedR, savedO }
	}

	tests := []struct {
		name    string
		hooks   func(*Options)
		cfg     func() *config.Configuration
		want    error
		message string
	}{
		{
			name: "invalid global value is never rendered",
			cfg: func() *config.Configuration {
				c := *second
				c.Global.UpstreamKeepalive = -1
				return &c
			},
			want: ErrInvalidValue, message: "upstream keepalive",
		},
		{
			name:  "nginx -t failure",
			hooks: func(o *Options) { o.testHTTPSnippet = "    no_such_directive on;" },
			cfg:   func() *config.Configuration { return second },
			want:  ErrConfigTest, message: `unknown directive "no_such_directive"`,
		},
		{
			name: "Lua error in init_by_lua passes nginx -t but is not confirmed",
			hooks: func(o *Options) {
				o.testInitLua = `error("broken on purpose")`
				o.ReloadTimeout = 2 * time.Second
			},
			cfg:  func() *config.Configuration { return second },
			want: ErrReloadNotConfirmed, message: "broken on purpose",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hooks != nil {
				defer withHooks(t, tc.hooks)()
			}
			err := h.reload(t.Context(), tc.cfg())
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("Apply = %v, want %v with %q", err, tc.want, tc.message)
			}
			now, rerr := os.ReadFile(h.opts.confPath())
			if rerr != nil || !bytes.Equal(now, good) {
				t.Errorf("nginx.conf was not kept or restored")
			}
			if got := h.app.Running().Checksum; got != "reload-1" {
				t.Errorf("running configuration %s after a failed Apply, want reload-1", got)
			}
			// The old nginx.conf keeps serving.
			checkServed(t, h, "http://r.test/a/x", 200, "a")
			waitFor(t, "workers serving the old nginx.conf", func() bool {
				v, err := h.lua.GetVersion(t.Context())
				return err == nil && v.Checksum == oldSum
			})
			if h.proc.Pid() != master {
				t.Errorf("nginx master changed")
			}
		})
	}

	t.Run("a good configuration reloads afterwards", func(t *testing.T) {
		if err := h.reload(t.Context(), second); err != nil {
			t.Fatal(err)
		}
		if v := h.mustVersion(); v.Checksum != h.confChecksum(second) || v.Configuration != "reload-2" {
			t.Errorf("version = %+v, want the second configuration", v)
		}
		checkServed(t, h, "http://r.test/b", 200, "b")
	})
}
