package nginx

import (
	"errors"
	"github.com/ingress-sync/ingress-sync/internal/golden"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

func goldenOptions() Options {
	return Options{
		Dir:                   "/var/lib/ingress-sync/nginx",
		NginxBinary:           "/usr/sbin/nginx",
		WorkerProcesses:       2,
		WorkerShutdownTimeout: 240e9,
	}
}

func ptr[T any](v T) *T { return &v }

func goldenConfigs() map[string]struct {
	opts func(*Options)
	cfg  *model.Configuration
} {
	return map[string]struct {
		opts func(*Options)
		cfg  *model.Configuration
	}{
		"empty": {cfg: &model.Configuration{Checksum: "c0ffee"}},
		"hosts": {cfg: &model.Configuration{
			Global: model.Global{SSLRedirect: true, ProxyConnectTimeout: 5, ProxyReadTimeout: 60, ProxySendTimeout: 60,
				ProxyBodySize: "1m", UpstreamKeepalive: 320},
			Servers: []model.Server{
				{Hostname: "_", Locations: []model.Location{{Path: "/", PathType: model.PathPrefix, Backend: "default-fallback-80"}}},
				{Hostname: "*.apps.example.com", Locations: []model.Location{{Path: "/", PathType: model.PathPrefix, Backend: "default-apps-http"}}},
				{Hostname: "shop.example.com", TLS: true, SSLRedirect: true, Locations: []model.Location{
					{Path: "/cart", PathType: model.PathExact, Backend: "shop-cart-80", Ingress: "shop/cart"},
					{Path: "/cart", PathType: model.PathPrefix, Backend: "shop-web-80", Ingress: "shop/web"},
					{Path: "/health", PathType: model.PathExact, Backend: "", Ingress: "shop/web"},
					{Path: "/public/", PathType: model.PathPrefix, Backend: "shop-web-80", Ingress: "shop/web",
						Settings: model.LocationSettings{SSLRedirect: ptr(false)}},
					{Path: "/", PathType: model.PathPrefix, Backend: "shop-web-80", Ingress: "shop/web"},
				}},
				{Hostname: "www.example.com", Locations: []model.Location{{Path: "/blog", PathType: model.PathPrefix, Backend: "www-blog-8080"}}},
			},
			DefaultBackend:     "default-fallback-80",
			DefaultCertificate: "ingress/default-cert",
			Checksum:           "sha256:4a1b",
		}},
		"settings": {
			opts: func(o *Options) {
				o.IPv6, o.User, o.Group, o.DisableAccessLog, o.HTTPSPort = true, "www-data", "www-data", true, 8443
			},
			cfg: &model.Configuration{
				Global: model.Global{UseForwardedHeaders: true},
				Servers: []model.Server{{Hostname: "_"}, {Hostname: "api.example.com", TLS: true, SSLRedirect: true, Locations: []model.Location{
					{Path: "/grpc", PathType: model.PathPrefix, Backend: "api-grpc-50051", Settings: model.LocationSettings{
						BackendProtocol: "GRPC", ProxyReadTimeout: 3600, ProxySendTimeout: 3600}},
					{Path: "/secure", PathType: model.PathExact, Backend: "api-tls-443", Settings: model.LocationSettings{
						BackendProtocol: "HTTPS", RewriteTarget: "/", AllowSourceRange: []string{"10.0.0.1/8", "192.168.1.7", "2001:db8::/32"}}},
					{Path: "/v1.0", PathType: model.PathPrefix, Backend: "api-v1-80", Settings: model.LocationSettings{
						RewriteTarget: "/api/", ProxyBodySize: "16M", ProxyConnectTimeout: 2}},
					{Path: "/", PathType: model.PathPrefix, Backend: "api-web-80", Settings: model.LocationSettings{
						RewriteTarget: "/web", BackendProtocol: "GRPCS"}},
				}}},
				Checksum: "v2",
			},
		},
	}
}

func TestRenderGolden(t *testing.T) {
	for name, tc := range goldenConfigs() {
		t.Run(name, func(t *testing.T) {
			opts := goldenOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			r, err := NewRenderer(opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Render(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name, got, "")
		})
	}
}

// TestRenderedConfigsPassNginxTest runs `nginx -t` on every golden
// configuration with paths moved to a temporary directory.
func TestRenderedConfigsPassNginxTest(t *testing.T) {
	requireNginx(t)
	for name, tc := range goldenConfigs() {
		t.Run(name, func(t *testing.T) {
			opts := goldenOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			opts.Dir, opts.User, opts.Group = testDir(t), "", ""
			app, err := NewApplier(opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := app.WriteConfig(t.Context(), tc.cfg); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRenderRejectsInvalidValues(t *testing.T) {
	base := func() *model.Configuration {
		return &model.Configuration{Checksum: "x", Servers: []model.Server{{Hostname: "_"}, {Hostname: "a.example.com",
			Locations: []model.Location{{Path: "/p", PathType: model.PathPrefix, Backend: "b"}}}}}
	}
	loc := func(c *model.Configuration) *model.Location { return &c.Servers[1].Locations[0] }
	tests := []struct {
		name   string
		mutate func(*model.Configuration)
	}{
		{"host with semicolon", func(c *model.Configuration) { c.Servers[1].Hostname = "a.com;" }},
		{"host with newline", func(c *model.Configuration) { c.Servers[1].Hostname = "a.com\nlisten 81" }},
		{"host with brace", func(c *model.Configuration) { c.Servers[1].Hostname = "a.com}" }},
		{"host with dollar", func(c *model.Configuration) { c.Servers[1].Hostname = "$host" }},
		{"host with space", func(c *model.Configuration) { c.Servers[1].Hostname = "a.com b.com" }},
		{"wildcard in the middle", func(c *model.Configuration) { c.Servers[1].Hostname = "a.*.com" }},
		{"upper case host", func(c *model.Configuration) { c.Servers[1].Hostname = "A.com" }},
		{"duplicate server", func(c *model.Configuration) { c.Servers = append(c.Servers, c.Servers[1]) }},
		{"path with semicolon", func(c *model.Configuration) { loc(c).Path = "/p;return 200" }},
		{"path with brace", func(c *model.Configuration) { loc(c).Path = "/p{" }},
		{"path with closing brace", func(c *model.Configuration) { loc(c).Path = "/p}" }},
		{"path with newline", func(c *model.Configuration) { loc(c).Path = "/p\n" }},
		{"path with quote", func(c *model.Configuration) { loc(c).Path = `/p"` }},
		{"path with single quote", func(c *model.Configuration) { loc(c).Path = `/p'` }},
		{"path with dollar", func(c *model.Configuration) { loc(c).Path = "/$uri" }},
		{"path with space", func(c *model.Configuration) { loc(c).Path = "/a b" }},
		{"path with hash", func(c *model.Configuration) { loc(c).Path = "/a#b" }},
		{"relative path", func(c *model.Configuration) { loc(c).Path = "p" }},
		{"regex path type", func(c *model.Configuration) { loc(c).PathType = "ImplementationSpecific" }},
		{"backend with quote", func(c *model.Configuration) { loc(c).Backend = `b"; return 200; "` }},
		{"backend with dollar", func(c *model.Configuration) { loc(c).Backend = "$b" }},
		{"default backend with brace", func(c *model.Configuration) { c.DefaultBackend = "b}" }},
		{"body size with semicolon", func(c *model.Configuration) { loc(c).Settings.ProxyBodySize = "1m; allow all" }},
		{"body size with unit word", func(c *model.Configuration) { loc(c).Settings.ProxyBodySize = "1mb" }},
		{"negative timeout", func(c *model.Configuration) { loc(c).Settings.ProxyReadTimeout = -1 }},
		{"huge timeout", func(c *model.Configuration) { loc(c).Settings.ProxyReadTimeout = 1 << 30 }},
		{"CIDR with injection", func(c *model.Configuration) { loc(c).Settings.AllowSourceRange = []string{"10.0.0.0/8; allow all"} }},
		{"CIDR with newline", func(c *model.Configuration) { loc(c).Settings.AllowSourceRange = []string{"10.0.0.0/8\n"} }},
		{"CIDR as word", func(c *model.Configuration) { loc(c).Settings.AllowSourceRange = []string{"all"} }},
		{"rewrite with capture", func(c *model.Configuration) { loc(c).Settings.RewriteTarget = "/$1" }},
		{"rewrite with quote", func(c *model.Configuration) { loc(c).Settings.RewriteTarget = `/x" break; return 200 "` }},
		{"rewrite with query", func(c *model.Configuration) { loc(c).Settings.RewriteTarget = "/x?y=1" }},
		{"rewrite to absolute URL", func(c *model.Configuration) { loc(c).Settings.RewriteTarget = "http://evil" }},
		{"unknown backend protocol", func(c *model.Configuration) { loc(c).Settings.BackendProtocol = "FCGI" }},
		{"global body size", func(c *model.Configuration) { c.Global.ProxyBodySize = "1m}" }},
		{"global timeout", func(c *model.Configuration) { c.Global.ProxyConnectTimeout = -5 }},
		{"global keepalive", func(c *model.Configuration) { c.Global.UpstreamKeepalive = -1 }},
		{"checksum with quote", func(c *model.Configuration) { c.Checksum = `x", evil = "` }},
		{"checksum with brace", func(c *model.Configuration) { c.Checksum = "x}" }},
	}
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render(base()); err != nil {
		t.Fatalf("base configuration: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.mutate(cfg)
			out, err := r.Render(cfg)
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("Render = %v, want an error wrapping ErrInvalidValue", err)
			}
			if out != nil {
				t.Errorf("Render returned output with the error")
			}
		})
	}
}

// TestLargeConfigurationPassesNginxTest checks the server name hash sizing
// with nginx itself on thousands of servers.
func TestLargeConfigurationPassesNginxTest(t *testing.T) {
	requireNginx(t)
	opts := goldenOptions()
	opts.Dir = testDir(t)
	opts.ReloadTimeout = 2 * time.Minute // nginx -t takes seconds at this size
	app, err := NewApplier(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := renderConfig(1000)
	cfg.Servers = append(cfg.Servers, model.Server{Hostname: strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + ".example.com"})
	if err := app.WriteConfig(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("nginx -t on %d servers: %s", len(cfg.Servers), app.LastReload().Test)
}
