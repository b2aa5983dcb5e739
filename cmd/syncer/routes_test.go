package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/replay"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

// heldRoutes is what the fake Lua endpoint holds: two hosts, one refused.
func heldRoutes() nginx.Routes {
	body := int64(1 << 20)
	return nginx.Routes{Version: 7, Generation: 2, Checksum: "abc123", Hosts: []nginx.Host{
		{Name: "shop.example.com", Routes: []nginx.Route{
			{Path: "/api", Type: "prefix", Backend: "shop-api-80", Ingress: "shop/api", Protocol: "grpc", ReadTimeout: 30, BodySize: &body},
			{Path: "/", Type: "prefix", Backend: "shop-web-80", Ingress: "shop/web", Redirect: true},
		}},
		{Name: "bad.example.com", Unavailable: true},
	}}
}

// viewText is the text WriteText makes of a view, which `syncer routes`
// must print unchanged.
func viewText(t *testing.T, v replay.RouteView, asJSON bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeRoutes(&b, &v, asJSON); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRoutes(t *testing.T) {
	held := heldRoutes()
	port := luaEndpoint(t, map[string]any{
		"/configuration/routes":                       held,
		"/configuration/routes?host=shop.example.com": held.Hosts[0],
	})
	all := replay.NewRouteView(held.Checksum, held.Hosts)
	shop := replay.NewRouteView("", held.Hosts[:1])
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"every host", nil, viewText(t, all, false)},
		{"json", []string{"--json"}, viewText(t, all, true)},
		{"output json", []string{"--output", "json"}, viewText(t, all, true)},
		{"one host", []string{"--host", "shop.example.com"}, viewText(t, shop, false)},
		{"host names are lower case", []string{"--host", "SHOP.example.com", "--json"}, viewText(t, shop, true)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCmd(t, "", append([]string{"routes", "--status-port", port}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out, tc.want)
			}
		})
	}
	out, _, _ := runCmd(t, "", "routes", "--status-port", port)
	for _, want := range []string{"Routes of configuration abc123: 2 hosts, 2 routes", "HOST", "SETTINGS",
		"shop.example.com  prefix  /api  shop-api-80  shop/api  protocol=grpc readTimeout=30 bodySize=1048576",
		"bad.example.com   -       -     -            -         unavailable"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestRoutesErrors(t *testing.T) {
	port := luaEndpoint(t, map[string]any{"/configuration/routes": heldRoutes()})
	tests := []struct {
		name string
		args []string
		want string
		is   error
	}{
		{"nothing listening", []string{"--status-port", closedPort(t), "--timeout", "1s"}, "is nginx running", nil},
		{"unknown host", []string{"--status-port", port, "--host", "nope.example.com"}, `no routes for host "nope.example.com"`, nginx.ErrNotFound},
		{"bad output", []string{"--output", "table"}, "want text or json", errUsage},
		{"bad port", []string{"--status-port", "70000"}, "is not a port", errUsage},
		{"bad timeout", []string{"--timeout", "0s"}, "must be positive", errUsage},
		{"arguments", []string{"shop.example.com"}, "unexpected arguments", errUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCmd(t, "", append([]string{"routes"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v; want one saying %q (%v)", err, tc.want, tc.is)
			}
			if out != "" {
				t.Errorf("stdout %q on error", out)
			}
		})
	}
}

// routesStory has what the route view shows: a TLS host (redirects), an
// Exact path, a regex path with a rewrite and every per-route setting, a
// wildcard host, and the controller ConfigMap.
func routesStory(t *testing.T) []storyEvent {
	t.Helper()
	pair, err := certs.Generate(certs.Options{Hosts: []string{"shop.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	const a = "nginx.ingress.kubernetes.io/"
	shop := fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80), fixtures.Exact("/healthz", "web", 80))
	api := fixtures.Rule("shop.example.com", fixtures.Path(networkingv1.PathTypeImplementationSpecific, "/api/(.*)", "api", 80))
	return []storyEvent{
		{events.OpCreate, fixtures.IngressClass("nginx", "k8s.io/ingress-sync", false)},
		{events.OpCreate, fixtures.Service("shop", "web", 80)},
		{events.OpCreate, fixtures.EndpointSlice("shop", "web-1", "web", 8080, "198.18.0.1")},
		{events.OpCreate, fixtures.Service("shop", "api", 80)},
		{events.OpCreate, fixtures.EndpointSlice("shop", "api-1", "api", 9090, "198.18.0.2")},
		{events.OpCreate, fixtures.Service("apps", "router", 8080)},
		{events.OpCreate, fixtures.TLSSecret("shop", "shop-tls", pair)},
		{events.OpCreate, fixtures.Ingress("shop", "web", shop, fixtures.TLS("shop-tls", "shop.example.com"))},
		{events.OpCreate, fixtures.Ingress("shop", "api", api, fixtures.Annotation(a+"rewrite-target", "/$1"),
			fixtures.Annotation(a+"backend-protocol", "GRPC"), fixtures.Annotation(a+"proxy-read-timeout", "30"),
			fixtures.Annotation(a+"proxy-connect-timeout", "3"), fixtures.Annotation(a+"proxy-body-size", "8m"),
			fixtures.Annotation(a+"whitelist-source-range", "10.0.0.0/8, 192.168.0.0/16"))},
		{events.OpCreate, fixtures.Ingress("apps", "router", fixtures.Rule("*.apps.example.com", fixtures.Prefix("/", "router", 8080)))},
		{events.OpCreate, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ingress-sync"},
			Data: map[string]string{"proxy-body-size": "2m"}}},
	}
}

// TestRoutesLiveEqualsReplay runs `syncer run` with a real nginx on a
// recorded stream: once nginx holds the routes of the last Configuration,
// `syncer routes` prints exactly what `syncer replay --at <last> --routes`
// prints, for every host and for each one, as text and as JSON.
func TestRoutesLiveEqualsReplay(t *testing.T) {
	story := routesStory(t)
	url := publishEvents(t, story)
	common := []string{"--nats-url", url, "--configmap", "kube-system/ingress-sync"}
	statusPort := startSyncer(t, common)
	last := strconv.Itoa(len(story))
	replayed := func(args ...string) string {
		t.Helper()
		out, stderr, err := runCmd(t, "", append(append([]string{"replay", "--at", last, "--routes"}, common...), args...)...)
		if err != nil {
			t.Fatalf("replay --routes %v: %v\n%s", args, err, stderr)
		}
		return out
	}
	live := func(args ...string) string {
		t.Helper()
		out, _, err := runCmd(t, "", append([]string{"routes", "--status-port", statusPort}, args...)...)
		if err != nil {
			t.Fatalf("routes %v: %v", args, err)
		}
		return out
	}
	want := replayed()
	header := want[:strings.Index(want, "\n")] // names the Configuration's checksum
	waitForRoutes(t, statusPort, header)
	for _, args := range [][]string{nil, {"--host", "shop.example.com"}, {"--host", "*.apps.example.com"}, {"--host", "_"}} {
		for _, format := range [][]string{nil, {"--output", "json"}} {
			args := append(append([]string{}, args...), format...)
			if got, want := live(args...), replayed(args...); got != want {
				t.Errorf("routes %v from nginx:\n%s\nreplayed:\n%s", args, got, want)
			}
		}
	}
	for _, route := range []string{"shop.example.com    regex", "rewrite=/$1", "protocol=grpc", `allow=["10.0.0.0/8","192.168.0.0/16"]`,
		"bodySize=8388608", "*.apps.example.com  prefix", "redirect=true"} {
		if !strings.Contains(want, route) {
			t.Errorf("the route view lacks %q: the comparison proves less than it should:\n%s", route, want)
		}
	}
}

// startSyncer runs `syncer run` in this process with a real nginx on free
// ports until the test ends, and returns nginx's status port.
func startSyncer(t *testing.T, flags []string) string {
	t.Helper()
	return runSyncer(t, flags).status
}

// liveSyncer is a `syncer run` of a test: its nginx dir and ports, and the
// files its stdout and stderr go to.
type liveSyncer struct {
	dir, http, https, status, metrics string
	stdout, stderr                    string
	// confFlags are its flags that reach nginx.conf.
	confFlags []string
}

// runSyncer runs `syncer run --pod-name routes-test` with flags, as
// startSyncer.
func runSyncer(t *testing.T, flags []string) *liveSyncer {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "syncer-routes-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // nginx workers run unprivileged
		t.Fatal(err)
	}
	ports, err := freeport.Ports(4)
	if err != nil {
		t.Fatal(err)
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	conf := []string{"--nginx-dir", dir, "--listen-address", "127.0.0.1", "--http-port", p(0), "--https-port", p(1),
		"--status-port", p(2), "--worker-processes", "1", "--worker-shutdown-timeout", "1s", "--routes-dict-size", "8m",
		"--regex-cache-entries", "128"}
	args := append([]string{"run", "--pod-name", "routes-test", "--metrics-addr", "127.0.0.1:" + p(3), "--log-level", "warn"}, conf...)
	args = append(args, flags...)
	logs, err := os.Create(filepath.Join(dir, "syncer.log")) // safe for the syncer's goroutines
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dispatch(ctx, args, strings.NewReader(""), stdout, logs) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			logs.Close()
			stdout.Close()
			if err != nil {
				out, _ := os.ReadFile(logs.Name())
				t.Errorf("syncer run: %v\n%s", err, out)
			}
		case <-time.After(cmdTestTimeout):
			t.Errorf("syncer run did not stop within %s", cmdTestTimeout)
		}
	})
	return &liveSyncer{dir: dir, http: p(0), https: p(1), status: p(2), metrics: p(3), stdout: stdout.Name(), stderr: logs.Name(), confFlags: conf}
}

// waitForRoutes waits (bounded) until `syncer routes` says nginx holds the
// routes of the Configuration that header names.
func waitForRoutes(t *testing.T, port, header string) {
	t.Helper()
	deadline := time.Now().Add(cmdTestTimeout)
	var out string
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var b bytes.Buffer
		err = dispatch(ctx, []string{"routes", "--status-port", port, "--timeout", "1s"}, strings.NewReader(""), &b, &b)
		cancel()
		if out = b.String(); err == nil && strings.HasPrefix(out, header+"\n") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nginx does not hold %q after %s: %v\n%s", header, cmdTestTimeout, err, out)
}
