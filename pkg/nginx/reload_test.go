package nginx

import (
	"bytes"
	"errors"
	"github.com/ingress-sync/ingress-sync/internal/echo"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

func reloadConfigs(a, b *echo.Server) (*model.Configuration, *model.Configuration) {
	first := configOf("reload-1", []model.Server{serverOf("r.test", prefixLoc("/a", "a"))}, backendOf("a", a))
	second := configOf("reload-2", []model.Server{serverOf("r.test", prefixLoc("/a", "a"), exactLoc("/b", "b"))},
		backendOf("a", a), backendOf("b", b))
	return first, second
}

func TestReloadIsConfirmed(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	first, second := reloadConfigs(a, b)
	h := startNginx(t, first, nil)
	master := h.proc.Pid()
	before := workerPIDs(t, master)
	if r := h.mustGet("http://r.test/b"); r.Status != 404 {
		t.Fatalf("before the reload /b = %d, want 404", r.Status)
	}

	if err := h.reload(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	stats := h.app.LastReload()
	t.Logf("reload: %+v", stats)
	if stats.Skipped || stats.Confirm <= 0 {
		t.Errorf("stats = %+v, want a confirmed reload", stats)
	}
	// Confirmed means new workers answer with the new checksum now.
	for range 4 {
		v, err := h.lua.GetVersion(t.Context())
		if err != nil || v.Checksum != "reload-2" {
			t.Fatalf("version after reload = %+v, %v", v, err)
		}
		if slices.Contains(before, v.PID) {
			t.Fatalf("version answered by old worker %d", v.PID)
		}
	}
	if r := h.mustGet("http://r.test/b"); r.Status != 200 || r.Reply.Backend != "b" {
		t.Fatalf("after the reload /b = %d from %q", r.Status, r.Reply.Backend)
	}
	if h.proc.Pid() != master {
		t.Errorf("master changed on reload")
	}

	t.Run("unchanged configuration is not reloaded", func(t *testing.T) {
		now := workerPIDs(t, master)
		if err := h.reload(t.Context(), second); err != nil {
			t.Fatal(err)
		}
		if !h.app.LastReload().Skipped {
			t.Errorf("identical configuration reloaded")
		}
		if got := workerPIDs(t, master); !slices.Equal(got, now) {
			t.Errorf("workers changed: %v -> %v", now, got)
		}
	})
	t.Run("reload removes backends after the swap", func(t *testing.T) {
		third := configOf("reload-3", []model.Server{serverOf("r.test", exactLoc("/b", "b"))}, backendOf("b", b))
		if err := h.reload(t.Context(), third); err != nil {
			t.Fatal(err)
		}
		got, err := h.lua.GetBackends(t.Context())
		if err != nil || len(got.Backends) != 1 || got.Backends[0].Name != "b" {
			t.Fatalf("backends after reload = %+v, %v", got.Backends, err)
		}
	})
}

func TestBrokenConfigurationIsRejected(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	first, second := reloadConfigs(a, b)
	h := startNginx(t, first, nil)
	h.allowLuaErrors = true // the init_by_lua case below fails on purpose
	master := h.proc.Pid()
	good, err := os.ReadFile(h.opts.confPath())
	if err != nil {
		t.Fatal(err)
	}
	// brokenApplier returns h.app rendering with o's test hooks.
	withHooks := func(t *testing.T, mutate func(*Options)) func() {
		o := h.app.opts
		mutate(&o)
		r, err := NewRenderer(o)
		if err != nil {
			t.Fatal(err)
		}
		saved := h.app.renderer
		h.app.renderer = r
		return func() { h.app.renderer = saved }
	}

	tests := []struct {
		name    string
		hooks   func(*Options)
		cfg     func() *model.Configuration
		want    error
		message string
	}{
		{
			name: "invalid value is never rendered",
			cfg: func() *model.Configuration {
				c := *second
				c.Servers = []model.Server{{Hostname: "_"}, serverOf("r.test", prefixLoc("/a;return 200", "a"))}
				return &c
			},
			want: ErrInvalidValue, message: "path",
		},
		{
			name:  "nginx -t failure",
			hooks: func(o *Options) { o.testHTTPSnippet = "    no_such_directive on;" },
			cfg:   func() *model.Configuration { return second },
			want:  ErrConfigTest, message: `unknown directive "no_such_directive"`,
		},
		{
			name: "Lua error in init_by_lua passes nginx -t but is not confirmed",
			hooks: func(o *Options) {
				o.testInitLua = `error("broken on purpose")`
				o.ReloadTimeout = 2 * time.Second
			},
			cfg:  func() *model.Configuration { return second },
			want: ErrReloadNotConfirmed, message: "broken on purpose",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hooks != nil {
				defer withHooks(t, tc.hooks)()
				saved := h.app.opts
				h.app.opts = h.app.renderer.Options()
				defer func() { h.app.opts = saved }()
			}
			err := h.reload(t.Context(), tc.cfg())
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("Reload = %v, want %v with %q", err, tc.want, tc.message)
			}
			now, rerr := os.ReadFile(h.opts.confPath())
			if rerr != nil || !bytes.Equal(now, good) {
				t.Errorf("nginx.conf was not kept or restored")
			}
			// The old configuration keeps serving.
			if r := h.mustGet("http://r.test/a/x"); r.Status != 200 || r.Reply.Backend != "a" {
				t.Errorf("old configuration: /a = %d from %q", r.Status, r.Reply.Backend)
			}
			waitFor(t, "workers serving the old checksum", func() bool {
				v, err := h.lua.GetVersion(t.Context())
				return err == nil && v.Checksum == "reload-1"
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
		if r := h.mustGet("http://r.test/b"); r.Status != 200 || r.Reply.Backend != "b" {
			t.Fatalf("/b = %d from %q", r.Status, r.Reply.Backend)
		}
	})
}
