package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderRefusesBadListeners: the renderer's own checks of the L4
// listeners and the stream settings (pkg/model checked them first).
func TestRenderRefusesBadListeners(t *testing.T) {
	opts := goldenOptions()
	r, err := NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	tcp := func(port int) config.L4Service { return config.L4Service{Protocol: config.L4TCP, Port: port} }
	udpProxy := config.L4Service{Protocol: config.L4UDP, Port: 53, EncodeProxy: true}
	nginx := func(f func(*config.NginxSettings)) config.Global {
		n := config.DefaultGlobal().Nginx
		f(&n)
		return config.Global{Nginx: n}
	}
	tests := []struct {
		name   string
		l4     []config.L4Service
		global config.Global
	}{
		{"port 0", []config.L4Service{tcp(0)}, config.Global{}},
		{"port 65536", []config.L4Service{tcp(65536)}, config.Global{}},
		{"negative port", []config.L4Service{tcp(-1)}, config.Global{}},
		{"the HTTP port", []config.L4Service{tcp(opts.HTTPPort)}, config.Global{}},
		{"the HTTPS port", []config.L4Service{tcp(443)}, config.Global{}},
		{"the status port", []config.L4Service{tcp(DefaultStatusPort)}, config.Global{}},
		{"twice", []config.L4Service{tcp(9000), tcp(9000)}, config.Global{}},
		{"unknown protocol", []config.L4Service{{Protocol: "SCTP", Port: 9000}}, config.Global{}},
		{"hostile protocol", []config.L4Service{{Protocol: "TCP;\nlisten 1", Port: 9000}}, config.Global{}},
		{"UDP with PROXY", []config.L4Service{udpProxy}, config.Global{}},
		{"stream timeout", []config.L4Service{tcp(9000)}, nginx(func(n *config.NginxSettings) { n.ProxyStreamTimeout = -1 })},
		{"stream responses", []config.L4Service{tcp(9000)}, nginx(func(n *config.NginxSettings) { n.ProxyStreamResponses = -1 })},
		{"connect timeout", []config.L4Service{tcp(9000)}, config.Global{ProxyConnectTimeout: 1 << 30}},
		{"log format", []config.L4Service{tcp(9000)}, nginx(func(n *config.NginxSettings) { n.LogFormatStream = "$remote_addr;\n}" })},
		{"log format variable", []config.L4Service{tcp(9000)}, nginx(func(n *config.NginxSettings) { n.LogFormatStream = "${remote_addr" })},
		{"log path", []config.L4Service{tcp(9000)}, nginx(func(n *config.NginxSettings) { n.StreamAccessLogPath = "/var/log/x;" })},
		{"log path in /proc", []config.L4Service{tcp(9000)}, nginx(func(n *config.NginxSettings) { n.StreamAccessLogPath = "/proc/self/fd/1" })},
		{"trusted CIDR", []config.L4Service{tcp(9000)}, nginx(func(n *config.NginxSettings) { n.ProxyRealIPCIDR = "10.0.0.1/8" })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Render(&config.Configuration{Global: tc.global, L4: tc.l4})
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("err = %v, want ErrInvalidValue", err)
			}
		})
	}
	t.Run("UDP on the HTTP ports is fine", func(t *testing.T) {
		if _, err := r.Render(&config.Configuration{L4: []config.L4Service{{Protocol: config.L4UDP, Port: 443}}}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStreamOnlyWhenNeeded: no L4 service and no passthrough renders no
// stream block and loads no stream module.
func TestStreamOnlyWhenNeeded(t *testing.T) {
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	conf, err := r.Render(&config.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(conf), "\nstream {") || strings.Contains(string(conf), "ngx_stream") {
		t.Fatal("a stream block or module without L4 services or passthrough")
	}
}

// TestListenersDecideTheReload: only the listeners reach nginx.conf; the
// endpoints, names and passthrough hosts do not change its checksum.
func TestListenersDecideTheReload(t *testing.T) {
	opts := goldenOptions()
	opts.EnableSSLPassthrough = true
	r, err := NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(cfg *config.Configuration) string {
		t.Helper()
		_, s, err := r.render(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := &config.Configuration{L4: []config.L4Service{{Protocol: config.L4TCP, Port: 9000}}}
	same := &config.Configuration{
		L4: []config.L4Service{{Protocol: config.L4TCP, Port: 9000, Namespace: "x", Service: "y", ServicePort: "z",
			Endpoints: []config.Endpoint{{Address: "10.0.0.1", Port: 1}}}},
		Passthrough: []config.PassthroughHost{{Hostname: "a.example.com"}},
	}
	if sum(base) != sum(same) {
		t.Error("endpoints, names or passthrough hosts changed nginx.conf")
	}
	for name, l := range map[string]config.L4Service{
		"port":   {Protocol: config.L4TCP, Port: 9001},
		"udp":    {Protocol: config.L4UDP, Port: 9000},
		"decode": {Protocol: config.L4TCP, Port: 9000, DecodeProxy: true},
		"encode": {Protocol: config.L4TCP, Port: 9000, EncodeProxy: true},
	} {
		if sum(&config.Configuration{L4: []config.L4Service{l}}) == sum(base) {
			t.Errorf("%s: nginx.conf did not change", name)
		}
	}
}

// FuzzEndpointFiles: whatever the addresses, ports and host names, the
// endpoint files are valid JSON that hold only "addr:port" endpoints of
// valid IP addresses.
func FuzzEndpointFiles(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "fd00::1", "::ffff:10.0.0.1", "fe80::1%eth0", `1.2.3.4"],"x":["`, "\x00", "a\nb", "[::1]"} {
		f.Add(s, int32(80), "host.example.com")
	}
	a := &Applier{log: slog.New(slog.NewTextHandler(io.Discard, nil)), opts: Options{EnableSSLPassthrough: true}}
	f.Fuzz(func(t *testing.T, addr string, port int32, host string) {
		eps := []config.Endpoint{{Address: addr, Port: port}, {Address: "10.0.0.1", Port: 80}}
		files, err := a.streamFiles(&config.Configuration{
			L4:          []config.L4Service{{Protocol: config.L4TCP, Port: 9000, Endpoints: eps}},
			Passthrough: []config.PassthroughHost{{Hostname: host, Endpoints: eps}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var l4 struct{ Endpoints []string }
		var pt struct{ Hosts map[string][]string }
		if err := json.Unmarshal(files["tcp-9000.json"], &l4); err != nil {
			t.Fatalf("%s: %v", files["tcp-9000.json"], err)
		}
		if err := json.Unmarshal(files[passthroughFile], &pt); err != nil {
			t.Fatalf("%s: %v", files[passthroughFile], err)
		}
		lists := [][]string{l4.Endpoints}
		for _, l := range pt.Hosts {
			lists = append(lists, l)
		}
		for _, list := range lists {
			if len(list) == 0 || list[len(list)-1] != "10.0.0.1:80" {
				t.Fatalf("the valid endpoint is missing: %q", list)
			}
			for _, e := range list {
				if _, _, err := splitEndpoint(e); err != nil {
					t.Fatalf("endpoint %q: %v", e, err)
				}
			}
		}
	})
}

// TestStreamFileWriteFailure: an endpoint file that cannot be written is
// an Apply error (ErrStreamFiles) before any reload, and the next Apply
// writes it.
func TestStreamFileWriteFailure(t *testing.T) {
	requireNginx(t)
	opts := testOptions(t)
	app, err := NewApplier(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := app.opts.streamDir()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil { // a file where the directory was
		t.Fatal(err)
	}
	cfg := l4Config("files", tcpService(9000, config.Endpoint{Address: "127.0.0.1", Port: 1}))
	if _, err := applyDiff(t.Context(), app, cfg); !errors.Is(err, ErrStreamFiles) {
		t.Fatalf("Apply = %v, want ErrStreamFiles", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// No nginx runs: the reload fails after the files are written.
	if _, err := applyDiff(t.Context(), app, cfg); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Apply = %v, want ErrNotRunning", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "tcp-9000.json"))
	if err != nil || string(data) != `{"endpoints":["127.0.0.1:1"]}` {
		t.Fatalf("file %q, %v", data, err)
	}
}
