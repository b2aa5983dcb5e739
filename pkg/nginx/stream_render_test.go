package nginx

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// TestRenderRefusesBadListeners: the renderer's own checks of the L4
// listeners and the stream settings (pkg/model checked them first).
func TestRenderRefusesBadListeners(t *testing.T) {
	opts := goldenOptions()
	r, err := NewRenderer(opts)
	if err != nil {
		t.Fatal(err)
	}
	tcp := func(port int) model.L4Service { return model.L4Service{Protocol: model.L4TCP, Port: port} }
	udpProxy := model.L4Service{Protocol: model.L4UDP, Port: 53, EncodeProxy: true}
	nginx := func(f func(*model.NginxSettings)) model.Global {
		n := model.DefaultGlobal().Nginx
		f(&n)
		return model.Global{Nginx: n}
	}
	tests := []struct {
		name   string
		l4     []model.L4Service
		global model.Global
	}{
		{"port 0", []model.L4Service{tcp(0)}, model.Global{}},
		{"port 65536", []model.L4Service{tcp(65536)}, model.Global{}},
		{"negative port", []model.L4Service{tcp(-1)}, model.Global{}},
		{"the HTTP port", []model.L4Service{tcp(opts.HTTPPort)}, model.Global{}},
		{"the HTTPS port", []model.L4Service{tcp(443)}, model.Global{}},
		{"the status port", []model.L4Service{tcp(DefaultStatusPort)}, model.Global{}},
		{"twice", []model.L4Service{tcp(9000), tcp(9000)}, model.Global{}},
		{"unknown protocol", []model.L4Service{{Protocol: "SCTP", Port: 9000}}, model.Global{}},
		{"hostile protocol", []model.L4Service{{Protocol: "TCP;\nlisten 1", Port: 9000}}, model.Global{}},
		{"UDP with PROXY", []model.L4Service{udpProxy}, model.Global{}},
		{"stream timeout", []model.L4Service{tcp(9000)}, nginx(func(n *model.NginxSettings) { n.ProxyStreamTimeout = -1 })},
		{"stream responses", []model.L4Service{tcp(9000)}, nginx(func(n *model.NginxSettings) { n.ProxyStreamResponses = -1 })},
		{"connect timeout", []model.L4Service{tcp(9000)}, model.Global{ProxyConnectTimeout: 1 << 30}},
		{"log format", []model.L4Service{tcp(9000)}, nginx(func(n *model.NginxSettings) { n.LogFormatStream = "$remote_addr;\n}" })},
		{"log format variable", []model.L4Service{tcp(9000)}, nginx(func(n *model.NginxSettings) { n.LogFormatStream = "${remote_addr" })},
		{"log path", []model.L4Service{tcp(9000)}, nginx(func(n *model.NginxSettings) { n.StreamAccessLogPath = "/var/log/x;" })},
		{"log path in /proc", []model.L4Service{tcp(9000)}, nginx(func(n *model.NginxSettings) { n.StreamAccessLogPath = "/proc/self/fd/1" })},
		{"trusted CIDR", []model.L4Service{tcp(9000)}, nginx(func(n *model.NginxSettings) { n.ProxyRealIPCIDR = "10.0.0.1/8" })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Render(&model.Configuration{Global: tc.global, L4: tc.l4})
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("err = %v, want ErrInvalidValue", err)
			}
		})
	}
	t.Run("UDP on the HTTP ports is fine", func(t *testing.T) {
		if _, err := r.Render(&model.Configuration{L4: []model.L4Service{{Protocol: model.L4UDP, Port: 443}}}); err != nil {
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
	conf, err := r.Render(&model.Configuration{})
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
	sum := func(cfg *model.Configuration) string {
		t.Helper()
		_, s, err := r.render(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := &model.Configuration{L4: []model.L4Service{{Protocol: model.L4TCP, Port: 9000}}}
	same := &model.Configuration{
		L4: []model.L4Service{{Protocol: model.L4TCP, Port: 9000, Namespace: "x", Service: "y", ServicePort: "z",
			Endpoints: []model.Endpoint{{Address: "10.0.0.1", Port: 1}}}},
		Passthrough: []model.PassthroughHost{{Hostname: "a.example.com"}},
	}
	if sum(base) != sum(same) {
		t.Error("endpoints, names or passthrough hosts changed nginx.conf")
	}
	for name, l := range map[string]model.L4Service{
		"port":   {Protocol: model.L4TCP, Port: 9001},
		"udp":    {Protocol: model.L4UDP, Port: 9000},
		"decode": {Protocol: model.L4TCP, Port: 9000, DecodeProxy: true},
		"encode": {Protocol: model.L4TCP, Port: 9000, EncodeProxy: true},
	} {
		if sum(&model.Configuration{L4: []model.L4Service{l}}) == sum(base) {
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
		eps := []model.Endpoint{{Address: addr, Port: port}, {Address: "10.0.0.1", Port: 80}}
		files, err := a.streamFiles(&model.Configuration{
			L4:          []model.L4Service{{Protocol: model.L4TCP, Port: 9000, Endpoints: eps}},
			Passthrough: []model.PassthroughHost{{Hostname: host, Endpoints: eps}},
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
	cfg := l4Config("files", tcpService(9000, model.Endpoint{Address: "127.0.0.1", Port: 1}))
	if _, err := app.Apply(t.Context(), cfg); !errors.Is(err, ErrStreamFiles) {
		t.Fatalf("Apply = %v, want ErrStreamFiles", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// No nginx runs: the reload fails after the files are written.
	if _, err := app.Apply(t.Context(), cfg); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Apply = %v, want ErrNotRunning", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "tcp-9000.json"))
	if err != nil || string(data) != `{"endpoints":["127.0.0.1:1"]}` {
		t.Fatalf("file %q, %v", data, err)
	}
}
