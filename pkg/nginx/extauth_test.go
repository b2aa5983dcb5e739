package nginx

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// authService is an in-process auth service on 127.0.0.1: the path says
// what it answers (/ok 200 with X-User and a cookie, /deny 401, /forbid
// 403, /fail 500, /slow 200 after slowAuth); it records what it receives.
type authService struct {
	srv  *http.Server
	port int
	mu   sync.Mutex
	got  map[string][]*http.Request
}

// slowAuth is longer than the tests' auth timeout (1s).
const slowAuth = 3 * time.Second

func startAuthService(t *testing.T) *authService {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &authService{port: ln.Addr().(*net.TCPAddr).Port, got: map[string][]*http.Request{}}
	a.srv = &http.Server{Handler: http.HandlerFunc(a.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = a.srv.Serve(ln) }()
	t.Cleanup(func() { _ = a.srv.Close() })
	return a
}

func (a *authService) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/echo-body" { // as a backend: the request body back
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		_, _ = w.Write(b)
		return
	}
	r.Body.Close()
	a.mu.Lock()
	a.got[r.URL.Path] = append(a.got[r.URL.Path], r)
	a.mu.Unlock()
	switch r.URL.Path {
	case "/ok", "/oauth2/ok":
		w.Header().Set("X-User", "alice")
		w.Header().Set("X-Email", "alice@example.com")
		if r.URL.Query().Get("cookie") != "" {
			w.Header().Set("Set-Cookie", "session=abc; Path=/")
		}
		if r.URL.Query().Get("nostore") != "" {
			w.Header().Set("Cache-Control", "no-store")
		}
		w.WriteHeader(200)
	case "/deny", "/oauth2/auth":
		w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
		w.Header().Set("Set-Cookie", "csrf=x; Path=/")
		w.WriteHeader(401)
	case "/forbid":
		w.WriteHeader(403)
	case "/slow":
		select {
		case <-time.After(slowAuth):
		case <-r.Context().Done():
		}
		w.WriteHeader(200)
	default:
		w.WriteHeader(500)
	}
}

// requests returns the requests path received so far.
func (a *authService) requests(path string) []*http.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*http.Request(nil), a.got[path]...)
}

func (a *authService) url(pathAndQuery string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", a.port, pathAndQuery)
}

func authIngress(name string, kv ...string) runtime.Object {
	opts := []fixtures.IngressOption{fixtures.Rule(name+".auth.test", fixtures.Prefix("/", "web", 80)),
		fixtures.Rule(name+".auth.test", fixtures.Prefix("/.well-known/acme-challenge", "web", 80))}
	for i := 0; i+1 < len(kv); i += 2 {
		opts = append(opts, ann(kv[i], kv[i+1]))
	}
	return fixtures.Ingress("default", name, opts...)
}

func withAuthTimeout(o *Options) { o.AuthTimeout = time.Second }

// TestExternalAuth: auth-url and its annotations as ingress-nginx's e2e
// tests (annotations/auth.go) describe them, against an in-process auth
// service: 2xx passes with auth-response-headers set upstream, 401 and 403
// are answered (401 with auth-signin: 302 to it with rd, the oauth2-proxy
// pattern), the auth service down, failing or too slow answers 500; the
// request headers the auth service gets; the method; the cache; an
// invalid value fails closed; routes without auth send no auth request.
func TestExternalAuth(t *testing.T) {
	web := startEcho(t, "web")
	as := startAuthService(t)
	down := fmt.Sprintf("http://127.0.0.1:%d/", deadPort(t))
	objs := append(echoService("web", web.Port()),
		authIngress("ok", "auth-url", as.url("/ok?uri=$escaped_request_uri&h=$host"), "auth-response-headers", "X-User, X-Missing"),
		authIngress("cookie", "auth-url", as.url("/ok?cookie=1")),
		authIngress("deny", "auth-url", as.url("/deny")),
		authIngress("deny-cookie", "auth-url", as.url("/deny"), "auth-always-set-cookie", "true"),
		authIngress("oauth2", "auth-url", as.url("/oauth2/auth"), "auth-signin", "https://$host/oauth2/start?rd=$escaped_request_uri"),
		authIngress("signin", "auth-url", as.url("/deny"), "auth-signin", "https://login.example.com/start"),
		authIngress("signin-param", "auth-url", as.url("/deny"), "auth-signin", "https://login.example.com/start?x=1", "auth-signin-redirect-param", "back"),
		authIngress("forbid", "auth-url", as.url("/forbid")),
		authIngress("fail", "auth-url", as.url("/fail")),
		authIngress("down", "auth-url", down),
		authIngress("slow", "auth-url", as.url("/slow")),
		authIngress("method", "auth-url", as.url("/ok?m=1"), "auth-method", "POST", "auth-request-redirect", "https://back.example.com/x"),
		authIngress("cache", "auth-url", as.url("/ok?c=1"), "auth-cache-key", "$remote_addr", "auth-cache-duration", "200 1m"),
		authIngress("cache-cookie", "auth-url", as.url("/ok?cookie=1&c=2"), "auth-cache-key", "$host", "auth-cache-duration", "200 1m"),
		authIngress("cache-nostore", "auth-url", as.url("/ok?nostore=1&c=3"), "auth-cache-key", "$host", "auth-cache-duration", "200 1m"),
		authIngress("cache-deny", "auth-url", as.url("/forbid?c=1"), "auth-cache-key", "$http_x_key", "auth-cache-duration", "403 1m"),
		authIngress("headers", "auth-url", as.url("/ok?hs=1"), "auth-proxy-set-headers", "auth-headers"),
		authIngress("any-in", "auth-url", as.url("/deny?any=in"), "satisfy", "any", "allowlist-source-range", "127.0.0.1/32"),
		authIngress("any-out", "auth-url", as.url("/deny?any=out"), "satisfy", "any", "allowlist-source-range", "10.0.0.0/8"),
		authIngress("all-in", "auth-url", as.url("/ok?all=in"), "allowlist-source-range", "127.0.0.1/32"),
		authIngress("bad-scheme", "auth-url", "ftp://127.0.0.1/x"),
		authIngress("bad-var", "auth-url", as.url("/ok?x=$document_root")),
		authIngress("bad-headers", "auth-url", as.url("/ok"), "auth-response-headers", "X-User;rm"),
		authIngress("bad-duration", "auth-url", as.url("/ok"), "auth-cache-key", "$host", "auth-cache-duration", "200 forever"),
		authIngress("bad-configmap", "auth-url", as.url("/ok"), "auth-proxy-set-headers", "missing"),
		authIngress("open"),
		headerConfigMap("default", "auth-headers", "X-Auth-Extra", "yes"),
		fixtures.Service("default", "authback", 80), fixtures.EndpointSlice("default", "authback-1", "authback", int32(as.port), "127.0.0.1"),
		fixtures.Ingress("default", "post", ann("auth-url", as.url("/ok?post=1")), fixtures.Rule("post.auth.test", fixtures.Prefix("/", "authback", 80))),
		fixtures.Ingress("default", "post-open", fixtures.Rule("post-open.auth.test", fixtures.Prefix("/", "authback", 80))),
	)
	cfg := buildACL(t, objs...)
	if got := problemsOf(cfg); len(got) != 5 || !strings.Contains(strings.Join(got, " "), "503") {
		t.Fatalf("problems %q, want the five invalid Ingresses, answering 503", got)
	}
	h := startNginx(t, cfg, withAuthTimeout)
	get := func(host, path string, header ...string) (int, http.Header, map[string][]string) {
		t.Helper()
		r := h.mustGet("http://"+host+".auth.test"+path, header...)
		if r.Status == 200 && r.Reply.Backend != "web" {
			t.Fatalf("%s: 200 from %q", host, r.Reply.Backend)
		}
		if r.Status != 200 && r.Reply.Backend != "" {
			t.Fatalf("%s: status %d served by %q", host, r.Status, r.Reply.Backend)
		}
		return r.Status, r.Header, r.Reply.Headers
	}

	t.Run("2xx passes and sets auth-response-headers upstream", func(t *testing.T) {
		status, _, up := get("ok", "/a/b?q=1", "X-Missing", "spoofed", "X-User", "mallory", "Cookie", "sid=1")
		if status != 200 || strings.Join(up["X-User"], ",") != "alice" || up["X-Missing"] != nil || up["X-Email"] != nil {
			t.Fatalf("status %d, upstream headers %v", status, up)
		}
		rs := as.requests("/ok")
		r := rs[len(rs)-1]
		want := map[string]string{
			"X-Original-Url": "http://ok.auth.test/a/b?q=1", "X-Original-Method": "GET", "X-Sent-From": "nginx-ingress-controller",
			"X-Real-Ip": "127.0.0.1", "X-Forwarded-For": "127.0.0.1", "X-Auth-Request-Redirect": "/a/b?q=1",
			"X-Forwarded-Host": "ok.auth.test", "Cookie": "sid=1", "X-Original-Uri": "", "X-Forwarded-Proto": "",
		}
		for k, v := range want {
			if got := r.Header.Get(k); got != v {
				t.Errorf("auth request header %s = %q, want %q", k, got, v)
			}
		}
		if r.Method != "GET" || r.Host != "127.0.0.1" || r.ContentLength > 0 {
			t.Errorf("auth request %s host %q length %d", r.Method, r.Host, r.ContentLength)
		}
		if q := r.URL.Query(); q.Get("uri") != "/a/b?q=1" || q.Get("h") != "ok.auth.test" {
			t.Errorf("auth URL query %v, want the expanded variables", q)
		}
	})

	t.Run("the auth response's Set-Cookie", func(t *testing.T) {
		if status, hd, _ := get("cookie", "/"); status != 200 || hd.Get("Set-Cookie") != "session=abc; Path=/" {
			t.Errorf("2xx: status %d, Set-Cookie %q", status, hd.Get("Set-Cookie"))
		}
		if status, hd, _ := get("deny", "/"); status != 401 || hd.Get("Set-Cookie") != "" || hd.Get("WWW-Authenticate") != `Bearer realm="test"` {
			t.Errorf("401: status %d, headers %v", status, hd)
		}
		if status, hd, _ := get("deny-cookie", "/"); status != 401 || hd.Get("Set-Cookie") != "csrf=x; Path=/" {
			t.Errorf("401 with auth-always-set-cookie: status %d, Set-Cookie %q", status, hd.Get("Set-Cookie"))
		}
	})

	tests := []struct {
		name, host, path string
		status           int
		location         string
	}{
		{"oauth2-proxy: 302 to signin with rd", "oauth2", "/dash/x?a=b", 302, "https://oauth2.auth.test/oauth2/start?rd=%2Fdash%2Fx%3Fa%3Db"},
		{"signin: the default rd parameter", "signin", "/p", 302, "https://login.example.com/start?rd=http://signin.auth.test%2Fp"},
		{"signin: auth-signin-redirect-param", "signin-param", "/p", 302, "https://login.example.com/start?x=1&back=http://signin-param.auth.test%2Fp"},
		{"403", "forbid", "/", 403, ""},
		{"auth answers 500", "fail", "/", 500, ""},
		{"auth service down", "down", "/", 500, ""},
		{"auth slower than the timeout", "slow", "/", 500, ""},
		{"satisfy any: allowed address, no auth request", "any-in", "/", 200, ""},
		{"satisfy any: other address, auth", "any-out", "/", 401, ""},
		{"satisfy all: allowed address, auth too", "all-in", "/", 200, ""},
		{"invalid scheme", "bad-scheme", "/", 503, ""},
		{"unknown variable", "bad-var", "/", 503, ""},
		{"invalid header list", "bad-headers", "/", 503, ""},
		{"invalid cache duration", "bad-duration", "/", 503, ""},
		{"missing auth-proxy-set-headers ConfigMap", "bad-configmap", "/", 503, ""},
		{"no auth", "open", "/", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, hd, _ := get(tc.host, tc.path)
			if status != tc.status || hd.Get("Location") != tc.location {
				t.Fatalf("status %d Location %q, want %d %q", status, hd.Get("Location"), tc.status, tc.location)
			}
		})
	}
	if n := len(as.requests("/slow")); n != 1 {
		t.Errorf("slow auth: %d requests, want 1 (no retry)", n)
	}
	for _, q := range []string{"any=in", "all=in"} {
		n := 0
		for _, r := range append(as.requests("/deny"), as.requests("/ok")...) {
			if r.URL.RawQuery == q {
				n++
			}
		}
		if want := map[string]int{"any=in": 0, "all=in": 1}[q]; n != want {
			t.Errorf("auth requests with %s: %d, want %d", q, n, want)
		}
	}

	t.Run("auth-method", func(t *testing.T) {
		if status, _, _ := get("method", "/m?z=1"); status != 200 {
			t.Fatalf("status %d", status)
		}
		var r *http.Request
		for _, x := range as.requests("/ok") {
			if x.URL.RawQuery == "m=1" {
				r = x
			}
		}
		if r == nil || r.Method != "POST" || r.Header.Get("X-Original-Uri") != "/m?z=1" || r.Header.Get("X-Scheme") != "http" ||
			r.Header.Get("X-Auth-Request-Redirect") != "https://back.example.com/x" || r.Header.Get("X-Original-Method") != "GET" {
			t.Fatalf("auth request %+v", r)
		}
	})

	t.Run("auth-proxy-set-headers go to the auth service only", func(t *testing.T) {
		status, _, up := get("headers", "/")
		if status != 200 || up["X-Auth-Extra"] != nil {
			t.Fatalf("status %d, upstream headers %v", status, up)
		}
		var got string
		for _, x := range as.requests("/ok") {
			if x.URL.RawQuery == "hs=1" {
				got = x.Header.Get("X-Auth-Extra")
			}
		}
		if got != "yes" {
			t.Fatalf("auth request X-Auth-Extra %q, want yes", got)
		}
	})

	t.Run("cache: the second request is not seen by the auth service", func(t *testing.T) {
		count := func(path, q string) int {
			n := 0
			for _, r := range as.requests(path) {
				if r.URL.RawQuery == q {
					n++
				}
			}
			return n
		}
		for i := 0; i < 3; i++ {
			if status, _, up := get("cache", "/"); status != 200 {
				t.Fatalf("request %d: status %d, upstream %v", i, status, up)
			}
		}
		if n := count("/ok", "c=1"); n != 1 {
			t.Errorf("cached 200: %d auth requests, want 1", n)
		}
		for i := 0; i < 2; i++ {
			get("cache-deny", "/", "X-Key", "k1")
			if status, _, _ := get("cache-deny", "/", "X-Key", "k2"); status != 403 {
				t.Fatalf("cached 403: status %d", status)
			}
		}
		if n := count("/forbid", "c=1"); n != 2 {
			t.Errorf("cached 403 under two keys: %d auth requests, want 2", n)
		}
		for _, host := range []string{"cache-cookie", "cache-nostore"} {
			for i := 0; i < 2; i++ {
				if status, _, _ := get(host, "/"); status != 200 {
					t.Fatalf("%s: status %d", host, status)
				}
			}
		}
		if n, m := count("/ok", "cookie=1&c=2"), count("/ok", "nostore=1&c=3"); n != 2 || m != 2 {
			t.Errorf("answers with Set-Cookie or Cache-Control: no-store: %d and %d auth requests, want 2 each (not cached)", n, m)
		}
	})

	t.Run("the request body reaches the backend, not the auth service", func(t *testing.T) {
		for _, size := range []int{5, 256 << 10} {
			for _, host := range []string{"post-open", "post"} {
				body := strings.Repeat("b", size)
				req, err := http.NewRequest(http.MethodPost, "http://"+host+".auth.test/echo-body", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := h.http.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(got) != body {
					t.Fatalf("%s: POST of %d bytes: status %d, %d bytes back", host, size, resp.StatusCode, len(got))
				}
			}
		}
		for _, r := range as.requests("/ok") {
			if r.URL.RawQuery == "post=1" && (r.Method != "GET" || r.ContentLength > 0 || r.Header.Get("X-Original-Method") != "POST") {
				t.Errorf("auth request %s length %d original method %q", r.Method, r.ContentLength, r.Header.Get("X-Original-Method"))
			}
		}
	})

	if errs := luaErrors(h.opts.errorLogPath()); len(errs) > 0 {
		t.Errorf("Lua errors: %q", errs)
	}
}

// TestGlobalExternalAuth: the ConfigMap's global-auth-url protects every
// route (no reload), enable-global-auth "false" opts an Ingress out, an
// Ingress's own auth-url wins, no-auth-locations is not protected.
func TestGlobalExternalAuth(t *testing.T) {
	web := startEcho(t, "web")
	as := startAuthService(t)
	objs := append(echoService("web", web.Port()),
		authIngress("plain"),
		authIngress("optout", "enable-global-auth", "false"),
		authIngress("own", "auth-url", as.url("/ok?own=1")),
	)
	h := startNginx(t, buildACL(t, objs...), withAuthTimeout)
	for _, host := range []string{"plain", "optout", "own"} {
		if r := h.mustGet("http://" + host + ".auth.test/"); r.Status != 200 {
			t.Fatalf("%s without global auth: status %d", host, r.Status)
		}
	}
	global := append(objs, headerConfigMap("ingress", "controller", "global-auth-url", as.url("/deny?global=1"),
		"global-auth-signin", "https://login.example.com/start", "global-auth-response-headers", "X-User"))
	applyWithoutReload(t, h, buildACL(t, global...))
	tests := []struct {
		host, path string
		status     int
	}{
		{"plain", "/", 302},
		{"optout", "/", 200},
		{"own", "/", 200},
		{"plain", "/.well-known/acme-challenge/token", 200},
	}
	for _, tc := range tests {
		if r := h.mustGet("http://" + tc.host + ".auth.test" + tc.path); r.Status != tc.status {
			t.Errorf("%s%s: status %d, want %d", tc.host, tc.path, r.Status, tc.status)
		}
	}
	if n := len(as.requests("/deny")); n != 1 {
		t.Errorf("global auth requests: %d, want 1 (plain only)", n)
	}
}

// startDNS answers A queries for name with 127.0.0.1 (NXDOMAIN for the
// others) on a UDP port of 127.0.0.1: the resolver of auth URLs.
func startDNS(t *testing.T, name string) string {
	t.Helper()
	s, err := echo.StartUDP("127.0.0.1:0", func(q []byte) []byte { return dnsReply(q, name) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Addr
}

// dnsReply builds the answer to one DNS query (RFC 1035, 4.1).
func dnsReply(q []byte, name string) []byte {
	if len(q) < 12 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	end := i + 5 // the zero label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	qtype := int(q[i+1])<<8 | int(q[i+2])
	r := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:end]...)
	if !strings.EqualFold(strings.Join(labels, "."), name) {
		r[3] = 0x83 // NXDOMAIN
		return r
	}
	if qtype == 1 {
		r[7] = 1
		r = append(r, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 127, 0, 0, 1)
	}
	return r
}

// TestExternalAuthResolverAndTLS: a host name in auth-url is resolved by
// the resolver of the options; an https auth-url works; without a
// resolver a host name answers 500 (never the content).
func TestExternalAuthResolverAndTLS(t *testing.T) {
	web := startEcho(t, "web")
	as := startAuthService(t)
	tlsAuth := httptest.NewTLSServer(http.HandlerFunc(as.serve))
	t.Cleanup(tlsAuth.Close)
	dns := startDNS(t, "auth.test.internal")
	objs := append(echoService("web", web.Port()),
		authIngress("named", "auth-url", fmt.Sprintf("http://auth.test.internal:%d/ok?named=1", as.port), "auth-response-headers", "X-User"),
		authIngress("unknown", "auth-url", fmt.Sprintf("http://nowhere.test.internal:%d/ok", as.port)),
		authIngress("tls", "auth-url", tlsAuth.URL+"/forbid"),
	)
	cfg := buildACL(t, objs...)
	h := startNginx(t, cfg, func(o *Options) { withAuthTimeout(o); o.Resolvers = []string{dns} })
	for host, want := range map[string]int{"named": 200, "unknown": 500, "tls": 403} {
		r := h.mustGet("http://" + host + ".auth.test/")
		if r.Status != want {
			t.Errorf("%s: status %d, want %d", host, r.Status, want)
		}
		if host == "named" && strings.Join(r.Reply.Headers["X-User"], ",") != "alice" {
			t.Errorf("named: upstream X-User %q", r.Reply.Headers["X-User"])
		}
	}
	if rs := as.requests("/ok"); len(rs) != 1 || rs[0].Host != "auth.test.internal" {
		t.Errorf("auth requests by name: %d, want 1 with Host auth.test.internal", len(rs))
	}
}

func TestExternalAuthOptions(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/resolv.conf"
	if err := os.WriteFile(conf, []byte("search default.svc.cluster.local\nnameserver 10.96.0.10\nnameserver fe80::1%eth0\nnameserver fd00::a\nnameserver x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := DefaultResolvers(conf); strings.Join(got, " ") != "10.96.0.10 fd00::a" {
		t.Errorf("DefaultResolvers = %q", got)
	}
	if got := DefaultResolvers(dir + "/missing"); got != nil {
		t.Errorf("DefaultResolvers of a missing file = %q", got)
	}
	for _, tc := range []struct {
		resolvers []string
		timeout   time.Duration
		ok        bool
	}{
		{[]string{"10.96.0.10", "fd00::a", "127.0.0.1:5353", "[::1]:53"}, time.Second, true},
		{[]string{"dns.example.com"}, 0, false},
		{[]string{"10.0.0.1:0"}, 0, false},
		{nil, 2 * time.Hour, false},
	} {
		o := testOptions(t)
		o.Resolvers, o.AuthTimeout = tc.resolvers, tc.timeout
		_, err := o.Complete()
		if (err == nil) != tc.ok {
			t.Errorf("resolvers %q timeout %s: err %v", tc.resolvers, tc.timeout, err)
		}
	}
	v := &view{}
	v.setExtAuth(&Options{Resolvers: []string{"10.96.0.10", "fd00::a", "127.0.0.1:5353"}, AuthTimeout: 1500 * time.Millisecond, AuthCacheDictSize: "1m"})
	if v.Resolver != "10.96.0.10 [fd00::a] 127.0.0.1:5353" || v.AuthTimeout != "1500ms" || v.AuthConnectTimeout != "1500ms" {
		t.Errorf("view %q %q %q", v.Resolver, v.AuthTimeout, v.AuthConnectTimeout)
	}
}

// TestExternalAuthWithBasicAuth: an Ingress with both basic and external
// auth needs both (nginx's satisfy all); with satisfy any, a client its
// allow-list admits needs neither.
func TestExternalAuthWithBasicAuth(t *testing.T) {
	web := startEcho(t, "web")
	as := startAuthService(t)
	secrets := []*corev1.Secret{authSecret("file", map[string]string{"auth": "foo:" + authHashes["apr1"] + "\n"})}
	both := func(name, authPath string, extra ...fixtures.IngressOption) *networkingv1.Ingress {
		opts := append([]fixtures.IngressOption{ann("auth-type", "basic"), ann("auth-secret", "file"), ann("auth-url", as.url(authPath)),
			fixtures.Rule(name+".test", fixtures.Prefix("/", "web", 80))}, extra...)
		return fixtures.Ingress("default", name, opts...)
	}
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, secrets, nil,
		both("both-ok", "/ok"), both("both-deny", "/forbid"),
		both("any-in", "/forbid", ann("satisfy", "any"), ann("allowlist-source-range", "127.0.0.1")),
		both("any-out", "/ok", ann("satisfy", "any"), ann("allowlist-source-range", "10.0.0.0/8")))
	h := startNginx(t, cfg, withAuthTimeout)
	good := basicHeader("foo", "secret")
	tests := []struct {
		host   string
		header []string
		status int
	}{
		{"both-ok", good, 200},
		{"both-ok", nil, 401},
		{"both-deny", good, 403},
		{"any-in", nil, 200},
		{"any-out", nil, 401},
		{"any-out", good, 200},
	}
	for _, tc := range tests {
		if r := h.mustGet("http://"+tc.host+".test/", tc.header...); r.Status != tc.status {
			t.Errorf("%s with %v: status %d, want %d", tc.host, tc.header, r.Status, tc.status)
		}
	}
}
