package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
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
	cfg  *config.Configuration
} {
	return map[string]struct {
		opts func(*Options)
		cfg  *config.Configuration
	}{
		"empty": {cfg: &config.Configuration{Checksum: "c0ffee"}},
		"gateway_passthrough": {
			opts: func(o *Options) { o.EnableSSLPassthrough, o.ListenAddress = true, "127.0.0.1" },
			cfg:  &config.Configuration{Checksum: "c0ffee", Listeners: []config.Listener{{Port: 10000}, {Port: 10001, TLS: true}}}},
		"gateway_streams": {cfg: &config.Configuration{Checksum: "c0ffee", Streams: []config.Stream{
			{Protocol: config.L4TLS, Port: 10443, Hostname: "abc.example.com", Gateway: "infra/edge", Route: "TLSRoute app/abc",
				Backends: []config.StreamBackend{{Namespace: "app", Service: "abc", Port: 443, Weight: 1}}},
			{Protocol: config.L4TLS, Port: 10443, Hostname: "*.example.com", Gateway: "infra/edge", Route: "TLSRoute app/any"},
			{Protocol: config.L4TCP, Port: 15432, Gateway: "infra/edge", Route: "TCPRoute db/pg"},
			{Protocol: config.L4UDP, Port: 10053, Gateway: "infra/edge", Route: "UDPRoute dns/coredns"},
		}}},
		"gateway": {cfg: &config.Configuration{Checksum: "c0ffee",
			Servers: []config.Server{{Hostname: "_"}, {Hostname: "_", Port: 10000, Locations: []config.Location{
				{Path: "/", PathType: config.PathPrefix, Backend: "app-web-80", Ingress: "app/web"}}}},
			Listeners: []config.Listener{{Port: 10000}, {Port: 10001, TLS: true}}}},
		"hosts": {cfg: &config.Configuration{
			Global: config.Global{SSLRedirect: true, ProxyConnectTimeout: 5, ProxyReadTimeout: 60, ProxySendTimeout: 60,
				ProxyBodySize: "1m", UpstreamKeepalive: 320},
			Servers: []config.Server{
				{Hostname: "_", Locations: []config.Location{{Path: "/", PathType: config.PathPrefix, Backend: "default-fallback-80"}}},
				{Hostname: "*.apps.example.com", Locations: []config.Location{{Path: "/", PathType: config.PathPrefix, Backend: "default-apps-http"}}},
				{Hostname: "shop.example.com", TLS: true, SSLRedirect: true, Locations: []config.Location{
					{Path: "/cart", PathType: config.PathExact, Backend: "shop-cart-80", Ingress: "shop/cart"},
					{Path: "/cart", PathType: config.PathPrefix, Backend: "shop-web-80", Ingress: "shop/web"},
					{Path: "/health", PathType: config.PathExact, Backend: "", Ingress: "shop/web"},
					{Path: "/public/", PathType: config.PathPrefix, Backend: "shop-web-80", Ingress: "shop/web",
						Settings: config.LocationSettings{SSLRedirect: ptr(false)}},
					{Path: "/", PathType: config.PathPrefix, Backend: "shop-web-80", Ingress: "shop/web"},
				}},
				{Hostname: "www.example.com", Locations: []config.Location{{Path: "/blog", PathType: config.PathPrefix, Backend: "www-blog-8080"}}},
			},
			DefaultBackend:     "default-fallback-80",
			DefaultCertificate: "ingress/default-cert",
			Checksum:           "sha256:4a1b",
		}},
		"settings": {
			opts: func(o *Options) {
				o.IPv6, o.User, o.Group, o.DisableAccessLog, o.HTTPSPort = true, "www-data", "www-data", true, 8443
			},
			cfg: &config.Configuration{
				Global: config.Global{UseForwardedHeaders: true},
				Servers: []config.Server{{Hostname: "_"}, {Hostname: "api.example.com", TLS: true, SSLRedirect: true, Locations: []config.Location{
					{Path: "/grpc", PathType: config.PathPrefix, Backend: "api-grpc-50051", Settings: config.LocationSettings{
						BackendProtocol: "GRPC", ProxyReadTimeout: 3600, ProxySendTimeout: 3600}},
					{Path: "/secure", PathType: config.PathExact, Backend: "api-tls-443", Settings: config.LocationSettings{
						BackendProtocol: "HTTPS", RewriteTarget: "/", AllowSourceRange: []string{"10.0.0.1/8", "192.168.1.7", "2001:db8::/32"}}},
					{Path: "/v1.0", PathType: config.PathPrefix, Backend: "api-v1-80", Settings: config.LocationSettings{
						RewriteTarget: "/api/", ProxyBodySize: "16M", ProxyConnectTimeout: 2}},
					{Path: "/", PathType: config.PathPrefix, Backend: "api-web-80", Settings: config.LocationSettings{
						RewriteTarget: "/web", BackendProtocol: "GRPCS"}},
				}}},
				Checksum: "v2",
			},
		},
		"stream": {
			opts: func(o *Options) { o.IPv6, o.EnableSSLPassthrough = true, true },
			cfg: &config.Configuration{
				Global: config.Global{ProxyConnectTimeout: 7},
				L4: []config.L4Service{
					{Protocol: config.L4TCP, Port: 5432, Namespace: "db", Service: "postgres", ServicePort: "pg",
						Endpoints: []config.Endpoint{{Address: "10.1.0.4", Port: 5432}}},
					{Protocol: config.L4TCP, Port: 9000, Namespace: "mq", Service: "broker", ServicePort: "amqp",
						DecodeProxy: true, EncodeProxy: true},
					{Protocol: config.L4UDP, Port: 53, Namespace: "kube-system", Service: "coredns", ServicePort: "dns",
						Endpoints: []config.Endpoint{{Address: "fd00::53", Port: 53}}},
				},
				Passthrough: []config.PassthroughHost{{Hostname: "argocd.example.com", Ingress: "argocd/server",
					Backend: "argocd-server-443", Endpoints: []config.Endpoint{{Address: "10.1.0.9", Port: 8443}}}},
				Checksum: "sha256:l4stream",
			},
		},
		"passthrough": {
			opts: func(o *Options) {
				o.EnableSSLPassthrough, o.ListenAddress, o.DisableAccessLog = true, "127.0.0.1", true
			},
			cfg: &config.Configuration{
				Global: config.Global{UseForwardedHeaders: true, Nginx: func() config.NginxSettings {
					n := config.DefaultGlobal().Nginx
					n.UseProxyProtocol, n.UseHTTP2, n.ProxyRealIPCIDR = true, true, "10.0.0.0/8"
					n.ProxyStreamTimeout, n.ProxyStreamResponses = 30, 2
					n.LogFormatStream = "$remote_addr $ssl_preread_server_name $upstream_addr"
					return n
				}()},
				Passthrough: []config.PassthroughHost{{Hostname: "vault.example.com", Ingress: "vault/vault"}},
				Checksum:    "pt",
			},
		},
		// Every tuning key of the ConfigMap set (config.TuningSettings).
		"tuning": {cfg: &config.Configuration{Checksum: "tuned", Global: config.Global{Nginx: func() config.NginxSettings {
			n := config.DefaultGlobal().Nginx
			n.Tuning = config.TuningSettings{UnderscoresInHeaders: "on", IgnoreInvalidHeaders: "off", HTTP2MaxRequests: 1000,
				SSLECDHCurve: "X25519:prime256v1", SSLBufferSize: "4k", RetryNonIdempotent: true, DefaultType: "text/html",
				SkipAccessLogURLs: "/healthz,/ping", AccessLogParams: "buffer=16k flush=5s", ErrorLogPath: "/dev/stdout",
				Syslog: true, SyslogHost: "127.0.0.1", SyslogPort: 5514, ReusePort: "on", WorkerCPUAffinity: "auto",
				MaxWorkerOpenFiles: 65536, MultiAccept: "on", AioWrite: "on", DebugConnections: "192.0.2.0/24",
				ServerNamesHashBucketSize: 128, ServerNamesHashMaxSize: 1024, MapHashBucketSize: 128,
				ProxyHeadersHashBucketSize: 128, ProxyHeadersHashMaxSize: 1024, VariablesHashBucketSize: 256, VariablesHashMaxSize: 4096}
			return n
		}()}}},
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
			if l := leaks(got, tc.cfg); len(l) > 0 {
				t.Errorf("values of the cluster in nginx.conf: %q", l)
			}
			golden.Check(t, name, got, "")
		})
	}
}

// leaks returns the values of cfg's servers, backends and certificates
// (host names, paths, backend and certificate names, route settings, the
// model checksum) that appear in conf as a whole word (so "/health" is not
// found in the status server's "/healthz"). "_" and "/" are left out:
// nginx.conf has them of its own.
func leaks(conf []byte, cfg *config.Configuration) []string {
	values := []string{cfg.DefaultBackend, cfg.DefaultCertificate, cfg.Checksum}
	for _, s := range cfg.Servers {
		values = append(values, s.Hostname)
		for _, l := range s.Locations {
			st := l.Settings
			values = append(values, l.Path, l.Backend, l.Ingress, st.RewriteTarget, string(st.ProxyBodySize))
			values = append(values, st.AllowSourceRange...)
		}
	}
	for _, b := range cfg.Backends.All() {
		values = append(values, b.Name)
	}
	for _, c := range cfg.Certificates {
		values = append(values, c.Name)
		values = append(values, c.Hosts...)
	}
	for _, l := range cfg.L4 {
		values = append(values, l.Namespace, l.Service, l.ServicePort)
		for _, e := range l.Endpoints {
			values = append(values, e.Address)
		}
	}
	for _, p := range cfg.Passthrough {
		values = append(values, p.Hostname, p.Ingress, p.Backend)
		for _, e := range p.Endpoints {
			values = append(values, e.Address)
		}
	}
	var out []string
	for _, v := range values {
		word := regexp.MustCompile(`(^|[^A-Za-z0-9._-])` + regexp.QuoteMeta(v) + `($|[^A-Za-z0-9._-])`)
		if v != "" && v != "_" && v != "/" && word.Match(conf) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
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

// hostile holds values no validator of pkg/model lets through: nginx.conf
// syntax, Lua string syntax, control bytes, regex metacharacters, UTF-8
// and a huge value.
var hostile = []string{
	"a.com;", "a.com\nlisten 81", "a.com}", "$host", "a.com b.com", `x"; return 200; "`, "/p;return 200",
	"/p{", "/p}\n", `/p'`, "/$uri", "/a#b", "/api/(.*)", `\`, "]]", "\x00\r\t", "é.exämple", "*.*.com",
	"10.0.0.0/8; allow all", "1m; client_max_body_size 0", strings.Repeat("a", 5000),
}

// hostileConfig puts every hostile value in every place of a Configuration
// that is not Global: host names, paths, path types, route settings,
// backends, endpoints, certificates, the defaults and the checksum.
func hostileConfig(g config.Global) *config.Configuration {
	cfg := &config.Configuration{Global: g, Servers: []config.Server{{Hostname: "_"}}}
	var backends []*config.Backend
	for i, v := range hostile {
		loc := config.Location{Path: v, PathType: config.PathType(v), Backend: v, Ingress: v, Settings: config.LocationSettings{
			ProxyConnectTimeout: -i, ProxyReadTimeout: 1 << 30, ProxyBodySize: config.Size(v), BackendProtocol: v,
			RewriteTarget: v, AllowSourceRange: []string{v},
		}}
		cfg.Servers = append(cfg.Servers, config.Server{Hostname: v, TLS: true, Locations: []config.Location{loc, loc}})
		backends = append(backends, &config.Backend{Name: v, Namespace: v, Service: v, Port: v, LoadBalance: v,
			UpstreamHashBy: v, Affinity: &config.Affinity{CookieName: v, CookiePath: v},
			Endpoints: []config.Endpoint{{Address: v, Port: -1}}})
		cfg.Certificates = append(cfg.Certificates, config.Certificate{Name: v, Hosts: []string{v}, Cert: []byte(v), Key: []byte(v)})
	}
	cfg.Backends = config.NewBackendList(backends)
	cfg.Servers = append(cfg.Servers, cfg.Servers...) // duplicates too
	cfg.DefaultBackend, cfg.DefaultCertificate, cfg.Checksum = hostile[5], hostile[6], hostile[7]
	return cfg
}

// TestRenderDependsOnlyOnGlobal: nginx.conf and its checksum are the same
// whatever the Servers, Backends and Certificates, hostile values included;
// only Global and the Options reach the file.
func TestRenderDependsOnlyOnGlobal(t *testing.T) {
	global := goldenConfigs()["hosts"].cfg.Global
	tests := []struct {
		name string
		cfg  *config.Configuration
	}{
		{"hosts, paths and settings", goldenConfigs()["hosts"].cfg},
		{"more settings", func() *config.Configuration { c := *goldenConfigs()["settings"].cfg; c.Global = global; return &c }()},
		{"hostile values everywhere but Global", hostileConfig(global)},
		{"ten thousand hosts", func() *config.Configuration { c := renderConfig(10000); c.Global = global; return c }()},
	}
	options := map[string]func(*Options){"default options": nil, "settings options": goldenConfigs()["settings"].opts}
	for optsName, opts := range options {
		o := goldenOptions()
		if opts != nil {
			opts(&o)
		}
		r, err := NewRenderer(o)
		if err != nil {
			t.Fatal(err)
		}
		want, wantSum, err := r.render(&config.Configuration{Global: global}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			t.Run(optsName+"/"+tc.name, func(t *testing.T) {
				got, err := r.Render(tc.cfg)
				if err != nil {
					t.Fatalf("Render = %v; nothing outside Global can fail it", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("nginx.conf differs from the one of Global alone")
				}
				if _, sum, _ := r.render(tc.cfg, nil); sum != wantSum {
					t.Errorf("checksum %s, want %s", sum, wantSum)
				}
			})
		}
	}
}

// TestRenderRejectsInvalidGlobalValues: the global settings are what still
// reaches nginx.conf; a value that fails its validator renders nothing.
// (The proxy timeouts and body size are route values: nginx.conf holds
// ingress-nginx's defaults, see TestRouteDefaultsAreNotRendered.)
func TestRenderRejectsInvalidGlobalValues(t *testing.T) {
	tests := []struct {
		name   string
		global config.Global
	}{
		{"negative keepalive", config.Global{UpstreamKeepalive: -1}},
		{"huge keepalive", config.Global{UpstreamKeepalive: 1 << 20}},
		{"gzip types with a directive", nginxGlobal(func(n *config.NginxSettings) { n.UseGzip, n.GzipTypes = true, "text/css;}" })},
		{"ciphers with a quote", nginxGlobal(func(n *config.NginxSettings) { n.SSLCiphers = "HIGH'" })},
		{"protocols unknown", nginxGlobal(func(n *config.NginxSettings) { n.SSLProtocols = "SSLv2" })},
		{"session cache size", nginxGlobal(func(n *config.NginxSettings) { n.SSLSessionCacheSize = "10m;" })},
		{"log format with a literal $", nginxGlobal(func(n *config.NginxSettings) { n.LogFormatUpstream = "$ {" })},
		{"worker processes", nginxGlobal(func(n *config.NginxSettings) { n.WorkerProcesses = "2;" })},
		{"error log level", nginxGlobal(func(n *config.NginxSettings) { n.ErrorLogLevel = "loud" })},
		{"keep-alive negative", nginxGlobal(func(n *config.NginxSettings) { n.KeepAlive = -1 })},
		{"gzip level", nginxGlobal(func(n *config.NginxSettings) { n.UseGzip, n.GzipLevel = true, 10 })},
		{"brotli types with a directive", nginxGlobal(func(n *config.NginxSettings) {
			n.Brotli = config.BrotliSettings{Enable: true, Level: 4, Types: "text/css;}\nload_module /tmp/x.so;"}
		})},
		{"brotli level", nginxGlobal(func(n *config.NginxSettings) { n.Brotli = config.BrotliSettings{Enable: true, Level: 12, Types: "*"} })},
		{"brotli min length", nginxGlobal(func(n *config.NginxSettings) {
			n.Brotli = config.BrotliSettings{Enable: true, MinLength: -1, Types: "*"}
		})},
	}
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := r.Render(&config.Configuration{Global: tc.global})
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("Render = %v, want an error wrapping ErrInvalidValue", err)
			}
			if out != nil {
				t.Errorf("Render returned output with the error")
			}
		})
	}
}

// TestLargeConfigurationPassesNginxTest: with 10k hosts, WriteConfig (which
// runs nginx -t) passes and writes the nginx.conf of the global settings
// alone, so what nginx -t checks does not grow with the hosts.
func TestLargeConfigurationPassesNginxTest(t *testing.T) {
	requireNginx(t)
	opts := goldenOptions()
	opts.Dir = testDir(t)
	app, err := NewApplier(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := renderConfig(10000)
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + ".example.com"
	cfg.Servers = append(cfg.Servers, config.Server{Hostname: long})
	if err := app.WriteConfig(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(opts.confPath())
	if err != nil {
		t.Fatal(err)
	}
	want, err := app.Renderer().Render(&config.Configuration{Global: cfg.Global})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("nginx.conf of %d servers differs from the one of their global settings alone", len(cfg.Servers))
	}
	t.Logf("nginx -t with %d servers: %s", len(cfg.Servers), app.LastReload().Test)
}

// nginxGlobal is the default Global with mutate applied to its Nginx
// settings.
func nginxGlobal(mutate func(*config.NginxSettings)) config.Global {
	g := config.DefaultGlobal()
	mutate(&g.Nginx)
	return g
}

// TestRenderSettings: the ConfigMap's directives appear in nginx.conf as
// set, keep-alive and workers included.
func TestRenderSettings(t *testing.T) {
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := nginxGlobal(func(n *config.NginxSettings) {
		n.KeepAlive, n.KeepAliveRequests, n.UpstreamKeepaliveTimeout, n.UpstreamKeepaliveRequests = 10, 20, 30, 40
		n.WorkerProcesses, n.MaxWorkerConnections, n.WorkerShutdownTimeout, n.ErrorLogLevel = "3", 2048, 60, "warn"
		n.SSLSessionCache, n.LogFormatEscapeJSON = false, true
	})
	out, err := r.Render(&config.Configuration{Global: g})
	if err != nil {
		t.Fatal(err)
	}
	conf := string(out)
	for _, want := range []string{"\n    keepalive_timeout 10s;", "\n    keepalive_requests 20;", "\n        keepalive_timeout 30s;",
		"\n        keepalive_requests 40;", "worker_processes 3;", "worker_connections 2048;", "worker_shutdown_timeout 60s;",
		"error_log stderr warn;", "log_format upstreaminfo escape=json '"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	if strings.Contains(conf, "ssl_session_cache") {
		t.Error("ssl_session_cache rendered with ssl-session-cache false")
	}
}

// TestRouteDefaultsAreNotRendered: the ConfigMap's proxy timeouts and body
// size reach the routes (model.Build), never nginx.conf, so that changing
// them reloads nothing; nginx.conf keeps ingress-nginx's defaults.
func TestRouteDefaultsAreNotRendered(t *testing.T) {
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := r.Render(&config.Configuration{Global: config.DefaultGlobal()})
	if err != nil {
		t.Fatal(err)
	}
	g := config.DefaultGlobal()
	g.ProxyConnectTimeout, g.ProxyReadTimeout, g.ProxySendTimeout, g.ProxyBodySize = 1, 300, 301, "8m; allow all"
	out, err := r.Render(&config.Configuration{Global: g})
	if err != nil || !bytes.Equal(out, plain) {
		t.Fatalf("Render with other route defaults = %v, same output %v; want the defaults' nginx.conf", err, bytes.Equal(out, plain))
	}
}

// TestRenderLogEscape: log-format-escape-none wins over escape-json, as in
// ingress-nginx's template.
func TestRenderLogEscape(t *testing.T) {
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		json, none bool
		want       string
	}{
		{false, false, "log_format upstreaminfo '"},
		{true, false, "log_format upstreaminfo escape=json '"},
		{true, true, "log_format upstreaminfo escape=none '"},
		{false, true, "log_format upstreaminfo escape=none '"},
	} {
		g := nginxGlobal(func(n *config.NginxSettings) { n.LogFormatEscapeJSON, n.LogFormatEscapeNone = tc.json, tc.none })
		out, err := r.Render(&config.Configuration{Global: g})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("json=%v none=%v: nginx.conf lacks %q", tc.json, tc.none, tc.want)
		}
	}
}

// TestRenderRefusesGatewayPorts: a Gateway listener port reaches a listen
// directive only from 1024 to 65535, not on one of nginx's own ports, once
// and in order; anything else renders nothing.
func TestRenderRefusesGatewayPorts(t *testing.T) {
	opts := goldenOptions()
	opts.StatusPort = 10246
	r, err := NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		ports []int
	}{
		{"below 1024", []int{80}},
		{"above 65535", []int{70000}},
		{"the status port", []int{10246}},
		{"twice", []int{10000, 10000}},
		{"out of order", []int{10001, 10000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Configuration{Checksum: "c0ffee"}
			for _, p := range tc.ports {
				cfg.Listeners = append(cfg.Listeners, config.Listener{Port: p})
			}
			if conf, err := r.Render(cfg); !errors.Is(err, ErrInvalidValue) || conf != nil {
				t.Fatalf("rendered %d bytes, %v; want ErrInvalidValue", len(conf), err)
			}
		})
	}
}
