package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// buildACL builds objs as buildObjects does, but returns the Problems
// instead of failing on them (the fail-closed cases have some).
func buildACL(t *testing.T, objs ...runtime.Object) *config.Configuration {
	t.Helper()
	s := model.NewStore(ingress.NewSource())
	for _, obj := range objs {
		kind := events.KindIngress
		switch obj.(type) {
		case *corev1.Service:
			kind = events.KindService
		case *corev1.ConfigMap:
			kind = events.KindConfigMap
		case *networkingv1.Ingress:
		default:
			kind = events.KindEndpointSlice
		}
		m := obj.(metav1.Object)
		if _, err := s.Apply(upsertEventOf(obj, kind, m.GetNamespace(), m.GetName())); err != nil {
			t.Fatal(err)
		}
	}
	return model.Build(s, model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx", ConfigMap: headerController})
}

// aclIngress is an Ingress for host <name>.acl.test to web with the
// annotations kv (name, value pairs).
func aclIngress(name string, kv ...string) *networkingv1.Ingress {
	opts := []fixtures.IngressOption{fixtures.Rule(name+".acl.test", fixtures.Prefix("/", "web", 80))}
	for i := 0; i+1 < len(kv); i += 2 {
		opts = append(opts, ann(kv[i], kv[i+1]))
	}
	return fixtures.Ingress("default", name, opts...)
}

// aclCase is a request to <host>.acl.test and the status it must get.
type aclCase struct {
	host   string
	header []string
	status int
}

func checkACL(t *testing.T, h *harness, cases []aclCase) {
	t.Helper()
	for _, c := range cases {
		r := h.mustGet("http://"+c.host+".acl.test/x", c.header...)
		if r.Status != c.status {
			t.Errorf("%s.acl.test %v: status %d, want %d", c.host, c.header, r.Status, c.status)
		}
		if c.status == 200 && r.Reply.Backend != "web" {
			t.Errorf("%s.acl.test: served by %q", c.host, r.Reply.Backend)
		}
	}
}

// TestSourceRanges: allowlist-, whitelist- and denylist-source-range as
// ingress-nginx's e2e tests (annotations/ipallowlist.go, ipdenylist.go)
// describe them, checked against the client's address (127.0.0.1 here);
// deny comes first; a list that cannot be applied answers 503 (fail
// closed) and leaves other Ingresses alone; X-Forwarded-For is not trusted
// without proxy-real-ip-cidr; changes (and the ConfigMap's
// whitelist-source-range) never reload.
func TestSourceRanges(t *testing.T) {
	web := startEcho(t, "web")
	base := append(echoService("web", web.Port()),
		aclIngress("plain"),
		aclIngress("allowed", "allowlist-source-range", "10.0.0.0/8, 127.0.0.1"),
		aclIngress("other", "whitelist-source-range", "10.0.0.0/8,2001:db8::/32"),
		aclIngress("denied", "denylist-source-range", "127.0.0.0/8"),
		aclIngress("deny-other", "denylist-source-range", "10.0.0.0/8", "allowlist-source-range", "127.0.0.1"),
		aclIngress("deny-first", "denylist-source-range", "127.0.0.1", "allowlist-source-range", "127.0.0.0/8"),
		aclIngress("bad-deny", "denylist-source-range", "127.0.0.0/8,nonsense"),
		aclIngress("bad-allow", "allowlist-source-range", "10.0.0.0/33", "whitelist-source-range", "0.0.0.0/0"),
		aclIngress("spoof", "allowlist-source-range", "10.1.2.3"),
	)
	cfg := buildACL(t, base...)
	if got := problemsOf(cfg); len(got) != 2 || !strings.Contains(got[0]+got[1], "503") {
		t.Fatalf("problems %v, want the two invalid lists, saying they answer 503", got)
	}
	h := startNginx(t, cfg, nil)
	checkACL(t, h, []aclCase{
		{host: "plain", status: 200},
		{host: "allowed", status: 200},
		{host: "other", status: 403},
		{host: "denied", status: 403},
		{host: "deny-other", status: 200},
		{host: "deny-first", status: 403},
		{host: "bad-deny", status: 503},
		{host: "bad-allow", status: 503},
		{host: "spoof", header: []string{"X-Forwarded-For", "10.1.2.3"}, status: 403},
		{host: "spoof", header: []string{"X-Real-IP", "10.1.2.3"}, status: 403},
	})

	t.Run("changed lists and the ConfigMap's default apply without a reload", func(t *testing.T) {
		changed := append(echoService("web", web.Port()),
			aclIngress("plain"),
			aclIngress("allowed", "allowlist-source-range", "127.0.0.1"),
			aclIngress("other", "whitelist-source-range", "127.0.0.0/8"),
			aclIngress("denied", "denylist-source-range", "10.0.0.0/8"),
			aclIngress("bad-deny", "denylist-source-range", "10.0.0.0/8"),
			headerConfigMap("ingress", "controller", "whitelist-source-range", "192.0.2.0/24"),
		)
		applyWithoutReload(t, h, buildACL(t, changed...))
		checkACL(t, h, []aclCase{
			{host: "plain", status: 403}, // the ConfigMap's allow-list
			{host: "allowed", status: 200},
			{host: "other", status: 200},
			{host: "denied", status: 403}, // the default still allows 192.0.2.0/24 only
			{host: "bad-deny", status: 403},
		})
	})
}

func problemsOf(cfg *config.Configuration) []string {
	var out []string
	for _, p := range cfg.Problems {
		out = append(out, fmt.Sprint(p))
	}
	return out
}

// TestRealClientAddress: the ConfigMap's real-IP settings, as
// ingress-nginx's e2e tests (settings/forwarded_headers.go,
// proxy_protocol.go) describe them, but with explicit trust: the
// forwarded header counts only from a proxy of proxy-real-ip-cidr
// (127.0.0.1, the test client, here); block-cidrs answers 403.
func TestRealClientAddress(t *testing.T) {
	web := startEcho(t, "web")
	ings := append(echoService("web", web.Port()),
		aclIngress("plain"),
		aclIngress("client", "allowlist-source-range", "10.1.2.3"),
	)
	with := func(kv ...string) *config.Configuration {
		return buildACL(t, append(ings[:len(ings):len(ings)], headerConfigMap("ingress", "controller", kv...))...)
	}
	h := startNginx(t, with("use-forwarded-headers", "true"), nil)
	xff := func(v string) []string { return []string{"X-Forwarded-For", v} }
	t.Run("use-forwarded-headers without trusted proxies", func(t *testing.T) {
		checkACL(t, h, []aclCase{{host: "client", header: xff("10.1.2.3"), status: 403}, {host: "plain", status: 200}})
		if r := h.mustGet("http://plain.acl.test/", "X-Forwarded-For", "10.1.2.3"); r.Reply.Headers.Get("X-Forwarded-For") != "127.0.0.1" {
			t.Errorf("X-Forwarded-For sent %q, want the peer", r.Reply.Headers.Get("X-Forwarded-For"))
		}
	})
	reload(t, h, with("use-forwarded-headers", "true", "proxy-real-ip-cidr", "127.0.0.1"))
	t.Run("from a trusted proxy", func(t *testing.T) {
		checkACL(t, h, []aclCase{
			{host: "client", header: xff("10.1.2.3"), status: 200},
			{host: "client", header: xff("10.1.2.3, 127.0.0.1"), status: 200}, // recursive: trusted hops skipped
			{host: "client", header: xff("10.1.2.3, 10.9.9.9"), status: 403},
			{host: "client", status: 403},
		})
		r := h.mustGet("http://plain.acl.test/", "X-Forwarded-For", "10.1.2.3")
		if got := r.Reply.Headers.Get("X-Forwarded-For"); got != "10.1.2.3" {
			t.Errorf("X-Forwarded-For sent %q, want the client address", got)
		}
		if got := r.Reply.Headers.Get("X-Real-IP"); got != "10.1.2.3" {
			t.Errorf("X-Real-IP sent %q, want the client address", got)
		}
	})
	reload(t, h, with("use-forwarded-headers", "true", "proxy-real-ip-cidr", "127.0.0.1", "compute-full-forwarded-for", "true"))
	t.Run("compute-full-forwarded-for", func(t *testing.T) {
		r := h.mustGet("http://plain.acl.test/", "X-Forwarded-For", "10.1.2.3")
		if got := r.Reply.Headers.Get("X-Forwarded-For"); got != "10.1.2.3, 127.0.0.1" {
			t.Errorf("X-Forwarded-For sent %q, want the client's list and the peer", got)
		}
	})
	reload(t, h, with("enable-real-ip", "true", "forwarded-for-header", "X-Client", "proxy-real-ip-cidr", "10.0.0.0/8"))
	t.Run("an untrusted peer's header is ignored", func(t *testing.T) {
		checkACL(t, h, []aclCase{{host: "client", header: []string{"X-Client", "10.1.2.3"}, status: 403}})
	})
	reload(t, h, with("enable-real-ip", "true", "forwarded-for-header", "X-Client", "proxy-real-ip-cidr", "127.0.0.0/8"))
	t.Run("enable-real-ip and forwarded-for-header", func(t *testing.T) {
		checkACL(t, h, []aclCase{
			{host: "client", header: []string{"X-Client", "10.1.2.3"}, status: 200},
			{host: "client", header: xff("10.1.2.3"), status: 403},
		})
	})
	t.Run("block-cidrs, without a reload", func(t *testing.T) {
		applyWithoutReload(t, h, with("enable-real-ip", "true", "forwarded-for-header", "X-Client", "proxy-real-ip-cidr", "127.0.0.0/8",
			"block-cidrs", "192.0.2.0/24, 10.1.2.3"))
		checkACL(t, h, []aclCase{
			{host: "plain", header: []string{"X-Client", "10.1.2.3"}, status: 403},
			{host: "unknown", header: []string{"X-Client", "10.1.2.3"}, status: 403},
			{host: "plain", status: 200},
		})
	})
}

// reload applies cfg, which must reload nginx (a ConfigMap change of
// nginx.conf).
func reload(t *testing.T, h *harness, cfg *config.Configuration) {
	t.Helper()
	reloaded, err := applyDiff(context.Background(), h.app, cfg)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, h.logs())
	}
	if !reloaded {
		t.Fatalf("apply did not reload")
	}
}

// TestProxyProtocol: use-proxy-protocol puts the PROXY protocol on the
// public listeners; the client address is the header's (a Go client writes
// a PROXY v1 header here); a connection without one is refused.
func TestProxyProtocol(t *testing.T) {
	web := startEcho(t, "web")
	cfg := buildACL(t, append(echoService("web", web.Port()),
		aclIngress("client", "allowlist-source-range", "10.1.2.3"),
		headerConfigMap("ingress", "controller", "use-proxy-protocol", "true", "use-forwarded-headers", "true", "compute-full-forwarded-for", "true"))...)
	h := startNginx(t, cfg, nil)
	h.allowLuaErrors = true // nginx logs the connection without a header
	for _, c := range []struct {
		src    string
		status int
	}{{"10.1.2.3", 200}, {"10.9.9.9", 403}} {
		status, xff := proxyProtocolGet(t, h.opts.HTTPPort, c.src, "client.acl.test")
		if status != c.status {
			t.Errorf("PROXY from %s: status %d, want %d", c.src, status, c.status)
		}
		if c.status == 200 && xff != c.src {
			t.Errorf("PROXY from %s: X-Forwarded-For sent %q", c.src, xff)
		}
	}
	if _, err := h.get("http://client.acl.test/"); err == nil {
		t.Errorf("a request without a PROXY header was answered")
	}
}

// proxyProtocolGet sends GET / with Host host over a new connection that
// starts with a PROXY v1 header from src, and returns the status and the
// X-Forwarded-For the backend got.
func proxyProtocolGet(t *testing.T, port int, src, host string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "PROXY TCP4 %s 127.0.0.1 40000 %d\r\nGET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", src, port, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply struct {
		Headers http.Header `json:"headers"`
	}
	if resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, reply.Headers.Get("X-Forwarded-For")
}

// TestBlockUserAgentsAndReferers: the ConfigMap's block-user-agents and
// block-referers as ingress-nginx's map semantics (exact values ignoring
// case, "~" and "~*" patterns): 403 before any route, pushed without a
// reload.
func TestBlockUserAgentsAndReferers(t *testing.T) {
	web := startEcho(t, "web")
	ings := append(echoService("web", web.Port()), aclIngress("plain"))
	h := startNginx(t, buildACL(t, ings...), nil)
	cfg := buildACL(t, append(ings[:len(ings):len(ings)], headerConfigMap("ingress", "controller",
		"block-user-agents", "BadBot/1.0, ~*crawler, ~^curl/", "block-referers", `~*\.spam\.example$, http://exact.example/`))...)
	if p := problemsOf(cfg); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	applyWithoutReload(t, h, cfg)
	ua := func(v string) []string { return []string{"User-Agent", v} }
	ref := func(v string) []string { return []string{"Referer", v} }
	checkACL(t, h, []aclCase{
		{host: "plain", header: ua("badbot/1.0"), status: 403},
		{host: "plain", header: ua("BadBot/1.0 extra"), status: 200},
		{host: "plain", header: ua("Super CRAWLER 2"), status: 403},
		{host: "plain", header: ua("curl/8.0"), status: 403},
		{host: "plain", header: ua("my curl/8.0"), status: 200},
		{host: "plain", header: ua("Mozilla/5.0"), status: 200},
		{host: "plain", header: ref("https://www.spam.example"), status: 403},
		{host: "plain", header: ref("http://exact.example/"), status: 403},
		{host: "plain", header: ref("http://exact.example/x"), status: 200},
		{host: "unknown", header: ua("curl/8.0"), status: 403}, // the default server's
	})
}
