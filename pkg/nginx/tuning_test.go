package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/model"

	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tuningGlobal builds the Global of a controller ConfigMap holding data
// through model.Build, failing the test on any Problem.
func tuningGlobal(t *testing.T, data map[string]string) config.Global {
	t.Helper()
	s := model.NewStore(ingress.NewSource())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "cfg"}, Data: data}
	if _, err := s.Apply(events.Event{Op: events.OpCreate, Kind: events.KindConfigMap, Object: cm}); err != nil {
		t.Fatal(err)
	}
	built := model.Build(s, model.Options{ControllerClass: "k8s.io/ingress-sync", ConfigMap: "ingress/cfg"})
	for _, p := range built.Problems {
		t.Errorf("problem: %s", p.Reason)
	}
	return built.Global
}

// startTuned starts nginx serving a.test with the ConfigMap data and
// returns the harness and the nginx.conf it runs (nginx -t passed).
func startTuned(t *testing.T, data map[string]string) (*harness, string) {
	t.Helper()
	cfg := settingsConfig(t, nil)
	cfg.Global = tuningGlobal(t, data)
	h := startNginx(t, cfg, nil)
	conf, err := os.ReadFile(filepath.Join(h.opts.Dir, "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return h, string(conf)
}

// TestTuningKeysRenderAndServe sets every tuning key of the ConfigMap
// away from its default: nginx starts with them, nginx.conf holds each
// directive, and requests show the ones a client can see: a header with
// an underscore reaches the backend, skip-access-log-urls leaves its URI
// out of http-access-log-path's file, error-log-path's file is opened.
func TestTuningKeysRenderAndServe(t *testing.T) {
	requireNginx(t)
	logDir := testDir(t)
	accessLog, errorLog := filepath.Join(logDir, "http.log"), filepath.Join(logDir, "error.log")
	h, conf := startTuned(t, map[string]string{
		"enable-underscores-in-headers": "true", "ignore-invalid-headers": "false",
		"http2-max-field-size": "4k", "http2-max-header-size": "16k", "http2-max-requests": "1000",
		"ssl-ecdh-curve": "X25519:prime256v1", "ssl-buffer-size": "4k", "retry-non-idempotent": "true",
		"default-type": "text/html", "skip-access-log-urls": "/skipped, /also?x=1", "http-access-log-path": accessLog,
		"access-log-params": "buffer=4k flush=1s", "error-log-path": errorLog, "reuse-port": "true",
		"worker-cpu-affinity": "auto", "max-worker-open-files": "4096", "enable-multi-accept": "true",
		"enable-aio-write": "true", "debug-connections": "192.0.2.1", "server-name-hash-bucket-size": "128",
		"server-name-hash-max-size": "1024", "map-hash-bucket-size": "128", "proxy-headers-hash-bucket-size": "128",
		"proxy-headers-hash-max-size": "1024", "variables-hash-bucket-size": "256", "variables-hash-max-size": "4096",
		"enable-serial-reloads": "true", "annotations-risk-level": "Critical", "annotation-value-word-blocklist": "load_module",
		"strict-validate-path-type": "true", "allow-cross-namespace-resources": "false", "jaeger-collector-host": "jaeger",
	})
	for _, want := range []string{
		"worker_cpu_affinity auto;", "worker_rlimit_nofile 4096;", "error_log " + errorLog + " ",
		"multi_accept on;", "debug_connection 192.0.2.1;", "underscores_in_headers on;", "ignore_invalid_headers off;",
		"ssl_ecdh_curve X25519:prime256v1;", "ssl_buffer_size 4k;", "aio threads;", "aio_write on;",
		"server_names_hash_bucket_size 128;", "server_names_hash_max_size 1024;", "map_hash_bucket_size 128;",
		"proxy_headers_hash_bucket_size 128;", "proxy_headers_hash_max_size 1024;", "variables_hash_bucket_size 256;",
		"variables_hash_max_size 4096;", "default_type text/html;", "proxy_next_upstream error timeout non_idempotent;",
		"grpc_next_upstream error timeout non_idempotent;", "reuseport", `"/skipped" 0;`, `"/also?x=1" 0;`,
		"access_log " + accessLog + " upstreaminfo buffer=4k flush=1s if=$ingress_log;",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	for _, obsolete := range []string{"http2_max_field_size", "http2_max_header_size", "http2_max_requests"} {
		if strings.Contains(conf, obsolete) {
			t.Errorf("nginx.conf holds the obsolete %s", obsolete)
		}
	}
	base := "http://127.0.0.1:" + strconv.Itoa(h.opts.HTTPPort)
	r := h.mustGet(base+"/headers", "Host", "a.test", "X_Under", "kept")
	if got := r.Reply.Headers.Get("X_Under"); got != "kept" {
		t.Errorf("X_Under reached the backend as %q, want kept (underscores_in_headers on)", got)
	}
	h.mustGet(base+"/skipped", "Host", "a.test")
	h.mustGet(base+"/logged", "Host", "a.test")
	waitFor(t, "the access log file", func() bool {
		b, _ := os.ReadFile(accessLog)
		return strings.Contains(string(b), "/logged")
	})
	if b, _ := os.ReadFile(accessLog); strings.Contains(string(b), "/skipped") {
		t.Errorf("skip-access-log-urls: /skipped was logged:\n%s", b)
	}
	if _, err := os.Stat(errorLog); err != nil {
		t.Errorf("error-log-path: %v", err)
	}
}

// TestTuningSyslog: with enable-syslog, syslog-host and syslog-port the
// access log goes to that syslog server over UDP.
func TestTuningSyslog(t *testing.T) {
	requireNginx(t)
	port := freePorts(t, 1)[0]
	conn, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h, conf := startTuned(t, map[string]string{"enable-syslog": "true", "syslog-host": "127.0.0.1", "syslog-port": strconv.Itoa(port)})
	server := "syslog:server=127.0.0.1:" + strconv.Itoa(port)
	for _, want := range []string{"access_log " + server + " upstreaminfo if=$ingress_log;", "error_log " + server + " "} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	h.mustGet("http://127.0.0.1:"+strconv.Itoa(h.opts.HTTPPort)+"/to-syslog", "Host", "a.test")
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < 100 && time.Now().Before(deadline); i++ {
		if err := conn.SetReadDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no access log line on the syslog port: %v", err)
		}
		if strings.Contains(string(buf[:n]), "/to-syslog") {
			return
		}
	}
	t.Error("no access log line of /to-syslog on the syslog port")
}

// TestTuningRefusedByRenderer: the renderer checks the tuning values again
// (what no ConfigMap parser lets through fails the render).
func TestTuningRefusedByRenderer(t *testing.T) {
	for name, tune := range map[string]config.TuningSettings{
		"switch":        {ReusePort: "yes"},
		"curve":         {SSLECDHCurve: "X25519;"},
		"skip url":      {SkipAccessLogURLs: `/a" 0; default 1`},
		"log params":    {AccessLogParams: "buffer=4k if=$x"},
		"cpu affinity":  {WorkerCPUAffinity: "auto; user root"},
		"syslog host":   {Syslog: true, SyslogHost: "a.com:1;"},
		"debug conn":    {DebugConnections: "all"},
		"hash size":     {VariablesHashMaxSize: 100},
		"default type":  {DefaultType: "text/html;"},
		"buffer size":   {SSLBufferSize: "4k;"},
		"error log":     {ErrorLogPath: "/tmp/a b"},
		"http log path": {HTTPAccessLogPath: "syslog:server=x"},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := NewRenderer(goldenOptions())
			if err != nil {
				t.Fatal(err)
			}
			g := config.DefaultGlobal()
			g.Nginx.Tuning = tune
			if _, err := r.Render(&config.Configuration{Global: g}); err == nil {
				t.Error("rendered")
			}
		})
	}
}

// TestTuningSyslogWithoutHost: enable-syslog without syslog-host leaves
// the logs where they were, with a note in nginx.conf.
func TestTuningSyslogWithoutHost(t *testing.T) {
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := config.DefaultGlobal()
	g.Nginx.Tuning = config.TuningSettings{Syslog: true, SyslogPort: 1514}
	conf, err := r.Render(&config.Configuration{Global: g})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(conf); strings.Contains(s, "syslog:server") || !strings.Contains(s, "# not applied: enable-syslog: no syslog-host") {
		t.Errorf("nginx.conf:\n%s", s)
	}
}
