package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The good tenant ("team") and the hostile one ("evil", "team-a"): the
// hostile Ingresses are newer than every good one, share the good hosts,
// and carry every kind of value the cluster could hold.
const (
	goodNS = "team"
	evilNS = "evil"
)

// goodObjects are a tenant's well-formed objects: TLS, regex and rewrite
// paths, settings, a default backend, the default server and a wildcard.
// Every host they share with hostile Ingresses is a regex host already
// (use-regex): a valid use-regex or rewrite-target makes all paths of its
// host regexes, as in ingress-nginx, so a hostile Ingress could otherwise
// change the form of the good routes legitimately (TestBuildRegexPaths
// covers that).
func goodObjects(t testing.TB) []runtime.Object {
	s := func(name string, ports ...corev1.ServicePort) runtime.Object { return service(goodNS, name, ports...) }
	return []runtime.Object{
		s("a-web", svcPort("http", 80)), slice(goodNS, "a-web-1", "a-web", "http", 8080, ready("10.1.0.1"), ready("10.1.0.2")),
		s("api", svcPort("", 8080)), slice(goodNS, "api-1", "api", "", 9000, ready("10.1.1.1")),
		tlsSecret(t, goodNS, "tls", "example"),
		newIngress(goodNS, "site", created(0), tlsFor("tls", "a.example.com"), nginx("proxy-read-timeout", "30"),
			rule("a.example.com", prefix("/", "a-web", "http"), exact("/health", "api", 8080))),
		newIngress(goodNS, "rx", created(1), nginx("rewrite-target", "/$1"), nginx("use-regex", "true"),
			rule("a.example.com", implSpecific("/api/v[0-9]+/(.*)", "api", 8080), implSpecific("/users/([0-9]+)", "api", 8080))),
		newIngress(goodNS, "grpc", created(2), nginx("backend-protocol", "GRPC"), nginx("use-regex", "true"), nginx("allowlist-source-range", "10.0.0.0/8,::1"),
			nginx("proxy-body-size", "8m"), nginx("load-balance", "ewma"),
			rule("b.example.com", prefix("/app", "api", 8080), implSpecific("/static/", "a-web", 80))),
		newIngress(goodNS, "dflt", created(3), defaultBackend("api", 8080), nginx("use-regex", "true"), rule("", prefix("/shared", "a-web", 80))),
		newIngress(goodNS, "wild", created(4), nginx("ssl-redirect", "false"), nginx("use-regex", "true"), rule("*.example.com", prefix("/w", "a-web", 80))),
	}
}

// evilObjects are the hostile tenants' Services, slices and Secrets:
// endpoints with bad addresses and ports, an ExternalName, a backend name
// that collides with a good one ("team-a-web-80"), a Secret with the
// longest name whose Certificate Name the data plane takes (253
// characters in all).
func evilObjects(t testing.TB) []runtime.Object {
	long := tlsSecret(t, evilNS, longSecret, "example")
	mismatched := tlsSecret(t, evilNS, "bad", "example")
	mismatched.Data[corev1.TLSPrivateKeyKey] = testdata(t, "other.key")
	badPorts := slice(evilNS, "web-2", "web", "http", 0, ready("10.9.0.9"))
	badPorts.Ports = append(badPorts.Ports, discoveryv1.EndpointPort{Name: ptr("big"), Port: ptr(int32(70000))},
		discoveryv1.EndpointPort{Name: ptr("neg"), Port: ptr(int32(-1))}, discoveryv1.EndpointPort{Name: ptr("nil")})
	return []runtime.Object{
		service(evilNS, "web", svcPort("http", 80), svcPort("big", 81), svcPort("neg", 82), svcPort("nil", 83), svcPort("", 8080)),
		slice(evilNS, "web-1", "web", "http", 8080, ready("10.9.0.1"), ready("1.2.3.4; drop"), ready("fe80::1%eth0"),
			ready("::ffff:10.9.0.2"), ready(""), notReady("10.9.0.3"), readyUnknown("2001:db8::1")),
		badPorts,
		externalName(evilNS, "ext", "example.org"),
		service("team-a", "web", svcPort("", 80)), slice("team-a", "web-1", "web", "", 80, ready("10.8.0.1")),
		long, mismatched, tlsSecret(t, evilNS, "other", "other"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: evilNS, Name: "opaque"}, Type: corev1.SecretTypeOpaque},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: evilNS, Name: "client-ca"}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"ca.crt": testdata(t, "example.crt")}},
	}
}

var longSecret = strings.Repeat("s", 253)

// hostileGen makes hostile Ingresses from a seeded source.
type hostileGen struct{ r *rand.Rand }

func newHostileGen(seed uint64) *hostileGen {
	return &hostileGen{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

func (g *hostileGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

var (
	hostileValues = []string{"", "0", "1", "-1", "+5", "60s", "3600", "3601", "99999999999", "1024g", "1025g", "8m", "1.5m",
		"00000000000001", "true", "false", "maybe", "TRUE", "/", "/$1", "/$host", "/${1}", "$1", "$request_uri", "$host$",
		"10.0.0.0/8", "10.1.2.3/8", "::ffff:1.2.3.4/128", "fe80::1%eth0", "0.0.0.0/0", "::/0", "10.0.0.0/33", "1.2.3.4,,",
		" 10.0.0.1 , 10.0.0.1", "cookie", "ewma", "round_robin", "GRPCS", "grpc", "FCGI", "a\nb", "x; }", `"`, "'", "`",
		`\`, "ü", "\u2028", "\x00", "{", "/a b", "route=1", "/p?q", strings.Repeat("9", 20), strings.Repeat("a", 5000),
		strings.Repeat("10.0.0.1,", 1001)}
	hostileAnnotations = []string{"proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout", "proxy-body-size",
		"backend-protocol", "rewrite-target", "whitelist-source-range", "allowlist-source-range", "denylist-source-range", "ssl-redirect",
		"force-ssl-redirect", "use-regex", "load-balance", "upstream-hash-by", "affinity", "session-cookie-name",
		"session-cookie-path", "session-cookie-max-age", "affinity-mode", "affinity-canary-behavior", "session-cookie-secure",
		"session-cookie-samesite", "session-cookie-conditional-samesite-none", "session-cookie-domain", "session-cookie-expires",
		"session-cookie-change-on-failure", "upstream-hash-by-subset", "upstream-hash-by-subset-size", "server-snippet", "configuration-snippet", "auth-url", "x",
		"app-root", "x-forwarded-prefix", "preserve-trailing-slash", "use-port-in-redirects", "permanent-redirect",
		"permanent-redirect-code", "temporal-redirect", "temporal-redirect-code", "from-to-www-redirect", "enable-cors",
		"cors-allow-origin", "cors-allow-methods", "cors-allow-headers", "cors-expose-headers", "cors-allow-credentials",
		"cors-max-age", "proxy-buffering", "proxy-request-buffering", "proxy-http-version", "proxy-next-upstream",
		"proxy-next-upstream-tries", "proxy-redirect-from", "proxy-redirect-to", "proxy-cookie-domain", "proxy-cookie-path",
		"enable-access-log", "proxy-buffer-size", "custom-http-errors", "default-backend", "disable-proxy-intercept-errors",
		"upstream-vhost", "connection-proxy-header", "server-alias", "service-upstream", "custom-headers",
		"auth-type", "auth-secret", "auth-secret-type", "auth-realm", "satisfy",
		"auth-url", "auth-method", "auth-signin", "auth-signin-redirect-param", "auth-response-headers", "auth-request-redirect",
		"auth-cache-key", "auth-cache-duration", "auth-always-set-cookie", "auth-proxy-set-headers", "enable-global-auth",
		"limit-rps", "limit-rpm", "limit-burst-multiplier", "limit-connections", "limit-rate", "limit-rate-after",
		"limit-allowlist", "limit-whitelist",
		"proxy-ssl-secret", "proxy-ssl-verify", "proxy-ssl-verify-depth", "proxy-ssl-name", "proxy-ssl-server-name",
		"proxy-ssl-protocols", "proxy-ssl-ciphers"}
	// sharedHosts are the good tenant's; hostileHosts never are.
	sharedHosts  = []string{"a.example.com", "b.example.com", "", "*.example.com"}
	hostileHosts = []string{"c.example.com", "*.c.example.com", "*.*.example.com", "*", "*.", "A.example.com", "a..b",
		"-a.com", "a.com.", "ü.example.com", "a b", "localhost", "x", "_", "a_b.com", strings.Repeat("a.", 130) + "com",
		strings.Repeat("a", 64) + ".com"}
	hostilePaths = []string{"", "/", "/api", "/api/", "/health", "/app", "/shared", "/w", "/api/v[0-9]+/(.*)", "/(.*)",
		"/.*", "/a(b", "/(?P<x>a)", "/(?s).", `/a\\(?P<x>a)`, "/a b", "/ü", "/a\x01", "/\x7f", "/a//b", "/a/../b", "/$host",
		"/x;}", "/q?x", "relative", `/\x{100}`, "/a{1001}", "/a{2}{3}", "/" + strings.Repeat("a", 1024),
		"/" + strings.Repeat("b", 1023)}
	regexRunes = []rune("()[]{}?*+|^$.\\/:-=!<>,#aZ09 \tü\u2028")
)

// plausibleValues are values each annotation accepts, so that hostile
// Ingresses also carry settings that reach the data plane.
var plausibleValues = map[string][]string{
	"proxy-connect-timeout": {"1", "3600"}, "proxy-read-timeout": {"60"}, "proxy-send-timeout": {"5"},
	"proxy-body-size": {"0", "8m", "1024g", "99999999999", "1K"}, "backend-protocol": {"https", "GRPC", "grpcs", "auto_http"},
	"proxy-buffering": {"on", "off"}, "proxy-request-buffering": {"off"}, "proxy-http-version": {"1.0", "1.1"},
	"proxy-next-upstream": {"off", "error timeout"}, "proxy-next-upstream-tries": {"0", "1", "5"},
	"proxy-redirect-from": {"http://a.example.com/", "default"}, "proxy-redirect-to": {"/", "https://b.example.com:8443/x?y=1"},
	"proxy-cookie-domain": {"a.example.com b.example.com", "off"}, "proxy-cookie-path": {"/one/ /"}, "enable-access-log": {"false"},
	"limit-rps": {"1", "0", "1048576"}, "limit-rpm": {"60"}, "limit-burst-multiplier": {"0", "1", "1000"},
	"limit-connections": {"1", "0"}, "limit-rate": {"1", "100"}, "limit-rate-after": {"0", "1024"},
	"limit-allowlist": {"10.0.0.0/8", "::1, 127.0.0.1"}, "limit-whitelist": {"0.0.0.0/0"},
	"proxy-ssl-secret": {"web-tls", "default/web-tls"}, "proxy-ssl-verify": {"on", "off"}, "proxy-ssl-verify-depth": {"0", "3"},
	"proxy-ssl-name": {"a.example.com"}, "proxy-ssl-server-name": {"on"}, "proxy-ssl-protocols": {"TLSv1.3", "TLSv1.2 TLSv1.3"},
	"proxy-ssl-ciphers":  {"HIGH:!aNULL", "ECDHE+AESGCM"},
	"custom-http-errors": {"404,503", "500, 502 ,504", ""}, "default-backend": {"web", "api"}, "disable-proxy-intercept-errors": {"true"},
	"rewrite-target": {"/", "/$1", "/$2/x", "/a$0$9"}, "ssl-redirect": {"true", "false"}, "force-ssl-redirect": {"true"},
	"whitelist-source-range": {"10.0.0.0/8", "::ffff:1.2.3.4/128", "192.168.1.1, 10.0.0.0/8"},
	"denylist-source-range":  {"10.1.0.0/16", "::1, 127.0.0.1"},
	"allowlist-source-range": {"::/0", "0.0.0.0/0,::1"}, "use-regex": {"true"}, "load-balance": {"ewma"},
	"upstream-hash-by": {"$request_uri", "$host$uri"}, "affinity": {"cookie"}, "session-cookie-name": {"route"},
	"session-cookie-path": {"/app"}, "session-cookie-max-age": {"3600"},
	"affinity-mode": {"balanced", "persistent"}, "affinity-canary-behavior": {"sticky", "legacy"},
	"session-cookie-secure": {"true"}, "session-cookie-samesite": {"None", "lax"}, "session-cookie-conditional-samesite-none": {"true"},
	"session-cookie-domain": {".example.com"}, "session-cookie-expires": {"172800"}, "session-cookie-change-on-failure": {"true"},
	"upstream-hash-by-subset": {"true"}, "upstream-hash-by-subset-size": {"0", "2"},
	"app-root": {"/app", "/a/b"}, "x-forwarded-prefix": {"/api"}, "preserve-trailing-slash": {"true"},
	"use-port-in-redirects": {"true"}, "permanent-redirect": {"https://example.org/x?a=b", "http://a.example.com"},
	"permanent-redirect-code": {"308", "300"}, "temporal-redirect": {"https://t.example.org"}, "temporal-redirect-code": {"307"},
	"from-to-www-redirect": {"true"}, "enable-cors": {"true"},
	"cors-allow-origin":  {"*", "https://*.example.org:8443, null", "http://a.example.org,https://b.example.org"},
	"cors-allow-methods": {"GET, POST"}, "cors-allow-headers": {"X-A,X-B"}, "cors-expose-headers": {"*", "X-C, X-D"},
	"cors-allow-credentials": {"false"}, "cors-max-age": {"0", "600"},
	"upstream-vhost": {"internal.example.com", "10.0.0.1:8080"}, "connection-proxy-header": {"close", "keep-alive"},
	"server-alias": {"www.example.com", "c.example.com, *.w.example.com", "a.example.com"}, "service-upstream": {"true"},
	"custom-headers": {"evil/headers", "team-a/headers"},
	"auth-type":      {"basic", "digest"}, "auth-secret": {"basic-auth", "team-a/basic-auth", "evil/basic-auth"},
	"auth-secret-type": {"auth-file", "auth-map"}, "auth-realm": {"", "test auth", "Authentication Required"},
	"satisfy":     {"any", "all"},
	"auth-url":    {"http://auth.default.svc/verify?rd=$escaped_request_uri", "https://10.0.0.1:8443/oauth2/auth", "http://[::1]/${host}"},
	"auth-method": {"GET", "POST", "CONNECT"}, "auth-signin": {"https://$host/oauth2/start?rd=$escaped_request_uri", "/login"},
	"auth-signin-redirect-param": {"rd", "back"}, "auth-response-headers": {"X-User, X-Email", ""},
	"auth-request-redirect": {"https://a.example.com/x"}, "auth-cache-key": {"$remote_user$http_authorization", "$cookie_s"},
	"auth-cache-duration": {"200 202 401 5m", "500ms, 403 1y"}, "auth-always-set-cookie": {"true"},
	"auth-proxy-set-headers": {"headers", "team-a/headers"}, "enable-global-auth": {"false"},
}

// str is a hostile string: one from a pool (half the time), random ASCII
// or bytes, UTF-8 and regex metacharacters, or a pool value repeated.
func (g *hostileGen) str(pool []string) string {
	n := g.r.IntN(16)
	switch k := g.r.IntN(8); k {
	case 0, 1: // every ASCII byte, or every byte
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(g.r.IntN(128 << k))
		}
		return string(b)
	case 2:
		r := make([]rune, n)
		for i := range r {
			r[i] = regexRunes[g.r.IntN(len(regexRunes))]
		}
		return string(r)
	case 3:
		return strings.Repeat(g.pick(pool), 1+g.r.IntN(300))
	}
	return g.pick(pool)
}

// value is a value for annotation name: plausible or hostile.
func (g *hostileGen) value(name string) string {
	if p := plausibleValues[name]; p != nil && g.r.IntN(2) == 0 {
		return g.pick(p)
	}
	return g.str(hostileValues)
}

// path is mostly absolute.
func (g *hostileGen) path() string {
	p := g.str(hostilePaths)
	if g.r.IntN(3) > 0 && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

var pathTypes = []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypePrefix,
	networkingv1.PathTypeImplementationSpecific, "", "Regex"}

func (g *hostileGen) httpPath() networkingv1.HTTPIngressPath {
	svc := g.pick([]string{"web", "web", "web", "web", "ext", "missing", "a-web", "Web"})
	ports := []any{80, 80, "http", "big", "neg", "nil", 8080, 0, 99999, "bad_name", "HTTP", ""}
	p := httpPath(pathTypes[g.r.IntN(len(pathTypes))], g.path(), svc, ports[g.r.IntN(len(ports))])
	if p.PathType != nil && *p.PathType == "" {
		p.PathType = nil
	}
	return p
}

func (g *hostileGen) host() string {
	if g.r.IntN(2) == 0 {
		return g.pick(sharedHosts)
	}
	return g.str(hostileHosts)
}

// ingress is hostile Ingress i, created after every good one.
func (g *hostileGen) ingress(i int) *networkingv1.Ingress {
	opts := []ingOpt{created(1000 + i)}
	for range g.r.IntN(7) {
		name := g.pick(hostileAnnotations)
		opts = append(opts, nginx(name, g.value(name)))
	}
	if g.r.IntN(3) == 0 {
		opts = append(opts, nginx("use-regex", "true"))
	}
	for range 1 + g.r.IntN(3) {
		paths := make([]networkingv1.HTTPIngressPath, g.r.IntN(5))
		for j := range paths {
			paths[j] = g.httpPath()
		}
		if len(paths) > 0 && g.r.IntN(4) == 0 {
			paths = append(paths, paths[0]) // a duplicate
		}
		opts = append(opts, rule(g.host(), paths...))
	}
	if g.r.IntN(4) == 0 {
		opts = append(opts, defaultBackend(g.pick([]string{"web", "ext", "missing"}), 80))
	}
	if g.r.IntN(3) == 0 {
		// Explicit hosts only: spec.tls without hosts covers the rule hosts,
		// and TLS is per host (a newer Ingress may turn on TLS for a host
		// that has none, as in ingress-nginx).
		secret := g.pick([]string{"other", "bad", "opaque", "missing", "", longSecret})
		opts = append(opts, tlsFor(secret, g.str(hostileHosts), g.str(hostileHosts)))
	}
	ing := newIngress(evilNS, fmt.Sprintf("h%05d", i), opts...)
	switch g.r.IntN(10) {
	case 0:
		ing.Namespace = "team-a"
	case 1:
		className("other")(ing)
	}
	return ing
}

// tenantView is what Build gives the good tenant: its locations with the
// flags of their servers, its backends and certificates, the default
// backend.
type tenantView struct {
	Locations      map[string][]config.Location
	ServerFlags    map[string][2]bool
	Backends       []config.Backend
	Certificates   []string
	DefaultBackend string
}

func viewOf(cfg *config.Configuration, ns string) tenantView {
	v := tenantView{Locations: map[string][]config.Location{}, ServerFlags: map[string][2]bool{}, DefaultBackend: cfg.DefaultBackend}
	for _, s := range cfg.Servers {
		for _, l := range s.Locations {
			if strings.HasPrefix(l.Ingress, ns+"/") {
				v.Locations[s.Hostname] = append(v.Locations[s.Hostname], l)
				v.ServerFlags[s.Hostname] = [2]bool{s.TLS, s.SSLRedirect}
			}
		}
	}
	for _, b := range cfg.Backends.All() {
		if b.Namespace == ns {
			v.Backends = append(v.Backends, *b)
		}
	}
	for _, c := range cfg.Certificates {
		if strings.HasPrefix(c.Name, ns+"/") {
			v.Certificates = append(v.Certificates, c.Name+" "+strings.Join(c.Hosts, ",")+" "+c.Checksum)
		}
	}
	return v
}

// checkHostile builds the good objects with and without the hostile
// Ingresses: everything Build emits keeps the data plane contract, and
// the good tenant's view is the same.
func checkHostile(t *testing.T, good []runtime.Object, want tenantView, hostile ...runtime.Object) {
	t.Helper()
	s := newTestStore(t, good...)
	for _, o := range hostile {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	cfg := Build(s, testOptions())
	checkDataPlane(t, cfg)
	if got := viewOf(cfg, goodNS); !reflect.DeepEqual(got, want) {
		check.Equal(t, "good tenant", got, want)
	}
}

// TestHostileIngresses builds thousands of random hostile Ingresses next
// to a good tenant, a few at a time and then all together.
func TestHostileIngresses(t *testing.T) {
	good := append(goodObjects(t), evilObjects(t)...)
	base := Build(newTestStore(t, good...), testOptions())
	checkDataPlane(t, base)
	want := viewOf(base, goodNS)
	if len(want.Locations) != 4 || len(base.Problems) > 0 {
		t.Fatalf("good tenant: %d hosts, problems %q", len(want.Locations), problemStrings(base.Problems))
	}
	g := newHostileGen(1)
	const rounds, all = 4000, 1000
	for round := range rounds {
		batch := make([]runtime.Object, 1+g.r.IntN(3))
		for i := range batch {
			batch[i] = g.ingress(round*4 + i)
		}
		checkHostile(t, good, want, batch...)
		if t.Failed() {
			t.Fatalf("round %d: %s", round, describe(batch))
		}
	}
	batch := make([]runtime.Object, all)
	for i := range batch {
		batch[i] = g.ingress(rounds*4 + i)
	}
	checkHostile(t, good, want, batch...)
}

// describe shows hostile Ingresses for a failure message.
func describe(objs []runtime.Object) string {
	var b strings.Builder
	for _, o := range objs {
		ing := o.(*networkingv1.Ingress)
		fmt.Fprintf(&b, "\n%s/%s annotations %q", ing.Namespace, ing.Name, ing.Annotations)
		for _, r := range ing.Spec.Rules {
			fmt.Fprintf(&b, "\n  host %q", r.Host)
			if r.HTTP != nil {
				for _, p := range r.HTTP.Paths {
					pt := "<nil>"
					if p.PathType != nil {
						pt = string(*p.PathType)
					}
					fmt.Fprintf(&b, " %s:%q", pt, p.Path)
				}
			}
		}
		fmt.Fprintf(&b, "\n  tls %+v", ing.Spec.TLS)
	}
	return b.String()
}
