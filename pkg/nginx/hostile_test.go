package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// A property test of issue 11's isolation rule: whatever model.Build emits
// from random and hostile Ingresses, the data plane takes it (every push
// accepted, no Lua error), the good Ingresses keep being served, and every
// hostile route Build kept answers without a server error.

const (
	hostileSeed    = 11
	hostileFirst   = 5000 // hostile Ingresses before the first round
	hostileRounds  = 5
	hostileChurn   = 1000 // removed and added per round
	hostileSamples = 400  // hostile routes requested per round
	goodIngresses  = 4
)

// hostileBuild builds s with the controller flags of the test.
func hostileBuild(s *model.Store) *config.Configuration {
	return model.Build(s, model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx"})
}

// hostileGen makes random and hostile Ingress values from a seeded source
// and curated lists.
type hostileGen struct {
	r                                 *rand.Rand
	paths, hosts, keys, values, runes []string
}

func newHostileGen(seed uint64) hostileGen {
	return hostileGen{
		r: rand.New(rand.NewPCG(seed, seed)),
		paths: []string{
			"/api/(.*)", "/(", "/)", "/{", "/}", "/$1", "/a{2,}", "/(a+)+$", "/[z-a]", "/(?P<n>x)", "/(?i)x", "/(?=x)",
			`/\`, `/\d+`, "/%00", "/%2F", "/..", "/./x", "//", "/a b", "/ü", "/.*", "/", "", "/foo/", "/\t", "/\n", "x",
			"/" + strings.Repeat("x", 1100), "/" + strings.Repeat("(", 50), "/x{1000}", "/(x{1000}){1000}", "/(.*)/(.*)/(.*)",
			"/v1/(users|groups)/([0-9]+)", "/img/.+\\.png", "/;", "/'", "/\"", "/${x}", "/%", "/#frag", "/?q=1",
			"/(a|aa)+$", "/" + strings.Repeat("a?", 30) + strings.Repeat("a", 30),
		},
		hosts: []string{
			"", "_", "*", "*.", "a..b", "-x.test", strings.Repeat("a", 300) + ".test", strings.Repeat("a", 64) + ".test",
			"1.2.3.4", "[::1]", "x.test:80", "*.*.test", "ex ample.test", "GOOD-0.test", "good-0.test", "good-1.test",
			"*.test", "*.good-2.test", "xn--bcher-kva.test", "ünï.test", "a.test.", ".a.test", "a_b.test",
		},
		keys: []string{
			"rewrite-target", "use-regex", "proxy-body-size", "proxy-read-timeout", "proxy-connect-timeout",
			"proxy-send-timeout", "backend-protocol", "whitelist-source-range", "allowlist-source-range", "denylist-source-range",
			"force-ssl-redirect", "ssl-redirect", "load-balance", "upstream-hash-by", "affinity", "session-cookie-name",
			"session-cookie-path", "session-cookie-max-age", "configuration-snippet", "server-snippet", "no-such-annotation",
			"affinity-mode", "affinity-canary-behavior", "session-cookie-secure", "session-cookie-samesite",
			"session-cookie-conditional-samesite-none", "session-cookie-domain", "session-cookie-expires",
			"session-cookie-change-on-failure", "upstream-hash-by-subset", "upstream-hash-by-subset-size",
			"proxy-buffering", "proxy-request-buffering", "proxy-http-version", "proxy-next-upstream-tries",
			"proxy-redirect-from", "proxy-redirect-to", "proxy-cookie-domain", "proxy-cookie-path", "enable-access-log",
			"custom-http-errors", "default-backend", "disable-proxy-intercept-errors",
			"limit-rps", "limit-rpm", "limit-burst-multiplier", "limit-connections", "limit-rate", "limit-rate-after",
			"limit-allowlist", "limit-whitelist", "auth-type", "auth-secret", "auth-secret-type", "auth-realm", "satisfy",
			"auth-url", "auth-signin", "auth-cache-key", "auth-response-headers", "auth-cache-duration", "auth-method",
			"proxy-ssl-secret", "proxy-ssl-verify", "proxy-ssl-name", "proxy-ssl-protocols", "proxy-ssl-ciphers",
			"auth-tls-secret", "auth-tls-verify-client", "auth-tls-verify-depth", "auth-tls-error-page", "auth-tls-match-cn",
		},
		values: []string{
			"/$1", "/$", "/$a", "/$10", "/$1/$2$3", "$request_uri", "${x}", "true", "false", "TRUE", "1", "0", "-1",
			"99999999999", "1025g", "1024g", "1m", "1M", "10.0.0.0/8", "10.0.0.0/8, ::/0", "0.0.0.0/0", "300.1.1.1",
			"GRPC", "grpcs", "HTTPS", "FTP", "round_robin", "ewma", "cookie", "/x;return 200", "a\nb", "}", "{", "/",
			"$remote_addr$request_uri", "3600", "3601", strings.Repeat("9", 5000), "/" + strings.Repeat("a", 100_000),
			"persistent", "balanced", "legacy", "None", "lax", ".foo.bar", "${request_uri}-x", "$cookie_JSESSIONID", "2147483648",
			"on", "off", "1.0", "1.1", "404,503", "499", "a.test b.test", "http://a.test/", "web",
			"http://127.0.0.1:1/auth?u=$escaped_request_uri", "https://$host/start?rd=$request_uri", "X-User,X-Email", "200 1m",
			"TLSv1.3", "HIGH:!aNULL", "HIGH:!HIGH",
		},
		runes: strings.Split("a Z 0 9 / . - _ * ü é 漢 字 🙂 \u200b \u0000 \u007f \ufffd \U0010ffff", " "),
	}
}

func (g hostileGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// bytesString is n random bytes below limit (128: every ASCII byte).
func (g hostileGen) bytesString(n, limit int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(limit))
	}
	return string(b)
}

// utf8String is n random runes, most of them outside ASCII.
func (g hostileGen) utf8String(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(g.pick(g.runes))
	}
	return b.String()
}

// metaString is n characters mostly from regex and nginx metacharacters.
func (g hostileGen) metaString(n int) string {
	const alphabet = `()[]{}.*+?^$|\/;'"` + "`~#%&=:,!@ abcAZ019"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// anyString is one of the random strings above, or one of the curated ones.
func (g hostileGen) anyString(curated []string) string {
	switch g.r.IntN(6) {
	case 0:
		return g.bytesString(g.r.IntN(40), 128)
	case 1:
		return g.utf8String(g.r.IntN(20))
	case 2:
		return g.metaString(g.r.IntN(30))
	case 3:
		return strings.Repeat(g.pick(curated), 1+g.r.IntN(3))
	}
	return g.pick(curated)
}

// path is a path as users write them, or a hostile one.
func (g hostileGen) path(i int) string {
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("/p%d/%s", i, g.pick([]string{"", "x", "(.*)", "x/", "a-b_c.d~e"}))
	case 1:
		return "/" + g.anyString(g.paths)
	}
	return g.anyString(g.paths)
}

// host is a plain, wildcard or hostile host.
func (g hostileGen) host(i int) string {
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("h%d.hostile.test", i)
	case 1:
		return fmt.Sprintf("*.w%d.hostile.test", i%50)
	}
	return g.anyString(g.hosts)
}

func (g hostileGen) annotations() map[string]string {
	out := map[string]string{}
	for range g.r.IntN(5) {
		key := ingress.AnnotationPrefix + g.pick(g.keys)
		if g.r.IntN(10) == 0 {
			key = ingress.AnnotationPrefix + g.metaString(8)
		}
		out[key] = g.anyString(g.values)
	}
	if g.r.IntN(4) == 0 { // the pattern of issue 11, "Why" point 2
		out[ingress.AnnotationPrefix+"rewrite-target"] = "/$1"
		out[ingress.AnnotationPrefix+"use-regex"] = "true"
	}
	return out
}

func (g hostileGen) httpPath(i int, good bool) networkingv1.HTTPIngressPath {
	svc := g.pick([]string{"hostile-a", "hostile-b", "noeps", "missing", "good-0", strings.ToLower(g.metaString(5))})
	port := int32(80)
	if g.r.IntN(4) == 0 {
		port = 9999 // not a port of the Service
	}
	p := fixtures.Path(networkingv1.PathType(g.pick([]string{"Exact", "Prefix", "ImplementationSpecific", "", "Regex"})), g.path(i), svc, port)
	if *p.PathType == "" {
		p.PathType = nil
	}
	if g.r.IntN(5) == 0 {
		p.Backend = *fixtures.NamedBackend(svc, g.pick([]string{"http", "nope", "HTTP", ""}))
	}
	if good { // a host of a good Ingress: only the very path it has, which conflicts
		p = fixtures.Prefix("/", svc, 80)
	}
	return p
}

// ingress is hostile Ingress number i, created after every good one.
func (g hostileGen) ingress(i int) *networkingv1.Ingress {
	opts := []fixtures.IngressOption{fixtures.Created(fixtures.Epoch.Add(time.Hour + time.Duration(i)*time.Second))}
	for k, v := range g.annotations() {
		opts = append(opts, fixtures.Annotation(k, v))
	}
	for range 1 + g.r.IntN(3) {
		host := g.host(i)
		good := strings.Contains(host, "good-")
		var paths []networkingv1.HTTPIngressPath
		for range 1 + g.r.IntN(3) {
			paths = append(paths, g.httpPath(i, good))
		}
		if g.r.IntN(10) == 0 {
			paths = append(paths, paths...) // duplicates
		}
		opts = append(opts, fixtures.Rule(host, paths...))
	}
	// spec.tls applies to the host whatever Ingress names it: keep it off
	// the good hosts (an empty host would mean every rule host).
	if host := g.host(i); g.r.IntN(10) == 0 && host != "" && !strings.Contains(host, "good-") {
		opts = append(opts, fixtures.TLS(g.pick([]string{"missing", "x"}), host))
	}
	if g.r.IntN(20) == 0 {
		opts = append(opts, fixtures.DefaultBackend(g.pick([]string{"hostile-a", "missing"}), 80))
	}
	return fixtures.Ingress("default", fmt.Sprintf("hostile-%d", i), opts...)
}

// curatedIngresses are hostile Ingresses whose effect the test checks: the
// Ingress of issue 11 ("Why" point 2), an ordinary one created after it,
// and a duplicate of a good host with annotations that must not reach it.
func curatedIngresses() []*networkingv1.Ingress {
	late := fixtures.Created(fixtures.Epoch.Add(2 * time.Hour))
	return []*networkingv1.Ingress{
		fixtures.Ingress("default", "issue-11", late,
			fixtures.Annotation(ingress.AnnotationPrefix+"rewrite-target", "/$1"),
			fixtures.Rule("api.hostile.test", fixtures.Path(networkingv1.PathTypeImplementationSpecific, "/api/(.*)", "hostile-a", 80))),
		fixtures.Ingress("default", "later", fixtures.Created(fixtures.Epoch.Add(3*time.Hour)),
			fixtures.Rule("later.hostile.test", fixtures.Prefix("/", "hostile-b", 80))),
		fixtures.Ingress("default", "steal-good-0", late,
			fixtures.Annotation(ingress.AnnotationPrefix+"force-ssl-redirect", "true"),
			fixtures.Annotation(ingress.AnnotationPrefix+"whitelist-source-range", "10.0.0.0/8"),
			fixtures.Annotation(ingress.AnnotationPrefix+"proxy-body-size", "99999999999"),
			fixtures.Rule("good-0.test", fixtures.Prefix("/", "hostile-a", 80))),
	}
}

func upsertEventOf(obj runtime.Object, kind events.Kind, ns, name string) events.Event {
	return events.Event{Op: events.OpUpdate, Kind: kind, Namespace: ns, Name: name, Object: obj}
}

// hostileStore holds the good and curated Ingresses with their Services,
// the hostile ones added later.
type hostileStore struct {
	t     *testing.T
	store *model.Store
	good  *model.Store // the same without any hostile Ingress
	live  []string     // names of the random hostile Ingresses in store
}

func (s *hostileStore) apply(ev events.Event, both bool) {
	s.t.Helper()
	if _, err := s.store.Apply(ev); err != nil {
		s.t.Fatal(err)
	}
	if both {
		if _, err := s.good.Apply(ev); err != nil {
			s.t.Fatal(err)
		}
	}
}

// newHostileStore starts the echo backends good-0 to good-<good-1> and
// "hostile", and returns a store of their Services and Ingresses.
func newHostileStore(t *testing.T, good int) *hostileStore {
	var goodPorts []int
	for i := range good {
		goodPorts = append(goodPorts, startEcho(t, fmt.Sprintf("good-%d", i)).Port())
	}
	hostilePort := startEcho(t, "hostile").Port()
	s := &hostileStore{t: t, store: model.NewStore(ingress.NewSource()), good: model.NewStore(ingress.NewSource())}
	services := map[string]int{"hostile-a": hostilePort, "hostile-b": hostilePort, "noeps": 0}
	for i, p := range goodPorts {
		services[fmt.Sprintf("good-%d", i)] = p
	}
	for name, port := range services {
		s.apply(upsertEventOf(fixtures.Service("default", name, 80), events.KindService, "default", name), true)
		if port != 0 {
			es := fixtures.EndpointSlice("default", name+"-1", name, int32(port), "127.0.0.1")
			s.apply(upsertEventOf(es, events.KindEndpointSlice, "default", name+"-1"), true)
		}
	}
	for i := range goodPorts {
		name := fmt.Sprintf("good-%d", i)
		ing := fixtures.Ingress("default", name, fixtures.Rule(name+".test", fixtures.Prefix("/", name, 80)))
		s.apply(upsertEventOf(ing, events.KindIngress, "default", name), true)
	}
	for _, ing := range curatedIngresses() {
		s.apply(upsertEventOf(ing, events.KindIngress, "default", ing.Name), false)
	}
	return s
}

// churn removes n random hostile Ingresses and adds n new ones from g,
// numbered from next.
func (s *hostileStore) churn(g hostileGen, n, next int) {
	for range min(n, len(s.live)) {
		i := g.r.IntN(len(s.live))
		s.apply(events.Event{Op: events.OpDelete, Kind: events.KindIngress, Namespace: "default", Name: s.live[i]}, false)
		s.live = slices.Delete(s.live, i, i+1)
	}
	for i := next; i < next+n; i++ {
		ing := g.ingress(i)
		s.apply(upsertEventOf(ing, events.KindIngress, "default", ing.Name), false)
		s.live = append(s.live, ing.Name)
	}
}

func TestHostileIngresses(t *testing.T) {
	s := newHostileStore(t, goodIngresses)
	g := newHostileGen(hostileSeed)
	s.churn(g, hostileFirst, 0)
	cfg := hostileBuild(s.store)
	h := startNginx(t, cfg, nil)
	next := hostileFirst
	for round := range hostileRounds {
		if round > 0 {
			s.churn(g, hostileChurn, next)
			next += hostileChurn
			cfg = hostileBuild(s.store)
			applyWithoutReload(t, h, cfg)
		}
		t.Logf("round %d: %d servers, %d backends, %d problems", round, len(cfg.Servers), cfg.Backends.Len(), len(cfg.Problems))
		checkRouteTable(t, h, cfg)
		checkGoodServers(t, h, cfg, hostileBuild(s.good))
		checkCurated(t, h)
		checkHostileRoutes(t, h, cfg, g)
	}
}

// checkGoodServers fails unless the good hosts have the routes they have
// without any hostile Ingress, and are served by their backends.
func checkGoodServers(t *testing.T, h *harness, cfg, good *config.Configuration) {
	t.Helper()
	for i := range goodIngresses {
		name := fmt.Sprintf("good-%d", i)
		have := serverNamed(cfg, name+".test")
		want := serverNamed(good, name+".test")
		if have == nil || want == nil || !config.ServerEqual(have, want) {
			t.Errorf("server %s.test changed by hostile Ingresses:\nhave %+v\nwant %+v", name, have, want)
		}
		for _, path := range []string{"/", "/x/y?z=1", "/(.*)"} {
			routeCheck{"http://" + name + ".test" + path, 200, name, path}.verify(t, h)
		}
	}
}

func serverNamed(cfg *config.Configuration, host string) *config.Server {
	for i := range cfg.Servers {
		if cfg.Servers[i].Hostname == host {
			return &cfg.Servers[i]
		}
	}
	return nil
}

// checkCurated checks the Ingresses of curatedIngresses.
func checkCurated(t *testing.T, h *harness) {
	t.Helper()
	for _, c := range []routeCheck{
		{"http://api.hostile.test/api/users?x=1", 200, "hostile", "/users?x=1"},
		{"http://later.hostile.test/x", 200, "hostile", "/x"},
		{"http://good-0.test/steal", 200, "good-0", "/steal"},
	} {
		c.verify(t, h)
	}
}

// checkHostileRoutes requests a random sample of the routes Build kept
// from hostile Ingresses: none may answer with a server error. Only hosts
// whose every route may answer without one are requested (any route of a
// host may take a request, a regex one from another Ingress too): not
// those with a route to a backend without endpoints (503) or speaking
// another protocol than the echo backend's plain HTTP.
func checkHostileRoutes(t *testing.T, h *harness, cfg *config.Configuration, g hostileGen) {
	t.Helper()
	withEndpoints := map[string]bool{"": true} // "" answers 404
	for _, b := range cfg.Backends.All() {
		withEndpoints[b.Name] = len(b.Endpoints) > 0
	}
	safe := func(l *config.Location) bool {
		proto := strings.ToUpper(l.Settings.BackendProtocol)
		// A route whose allow- or deny-list is invalid answers 503 (fail closed).
		return withEndpoints[l.Backend] && (proto == "" || proto == "HTTP") && !l.Settings.SourceRangeInvalid &&
			(l.Settings.BasicAuth == nil || !l.Settings.BasicAuth.Unavailable) && // auth that cannot be applied: 503
			l.Settings.ExternalAuth == nil && // external auth: 503 when unavailable, else the auth service's answer
			(l.Settings.ProxySSL == nil || !l.Settings.ProxySSL.Unavailable) // backend TLS that cannot be applied: 503
	}
	// auth-tls annotations that cannot be applied answer 503 too.
	withoutClientAuth := safe
	safe = func(l *config.Location) bool { return withoutClientAuth(l) && !l.Settings.ClientAuthUnavailable }
	// Rate and connection limits answer 503 beyond them and when invalid
	// (fail closed): hosts with them are not sampled.
	unlimited := func(l *config.Location) bool { return l.Settings.RateLimit == nil }
	kinds := map[config.PathType]int{}
	var urls []string
	hosts, skipped := 0, 0
	for _, s := range cfg.Servers {
		if !slices.ContainsFunc(s.Locations, func(l config.Location) bool { return strings.HasPrefix(l.Ingress, "default/hostile-") }) {
			continue
		}
		if !all(s.Locations, safe) || !all(s.Locations, unlimited) {
			skipped++
			continue
		}
		hosts++
		for _, l := range s.Locations {
			kinds[l.PathType]++
			urls = append(urls, requestURL(s.Hostname, l.Path))
		}
	}
	g.r.Shuffle(len(urls), func(i, j int) { urls[i], urls[j] = urls[j], urls[i] })
	statuses := map[int]int{}
	for _, u := range urls[:min(len(urls), hostileSamples)] {
		r, err := h.get(u)
		statuses[r.Status]++
		if err != nil || r.Status >= 500 {
			t.Errorf("GET %.200s = %d, %v; want no server error", u, r.Status, err)
		}
	}
	t.Logf("hostile routes on %d hosts (%d hosts skipped): %v; answers to %d of them: %v",
		hosts, skipped, kinds, min(len(urls), hostileSamples), statuses)
}

func all[T any](s []T, f func(*T) bool) bool {
	for i := range s {
		if !f(&s[i]) {
			return false
		}
	}
	return true
}

// requestURL is a URL that reaches host with path as its literal path.
func requestURL(host, path string) string {
	switch {
	case host == config.DefaultServerName:
		host = "unrouted.hostile.test"
	case strings.HasPrefix(host, "*."):
		host = "any" + host[1:]
	}
	return (&url.URL{Scheme: "http", Host: host, Path: path}).String()
}

// TestRegexPathsBuildKeeps: regular expressions valid in RE2 (what
// pkg/model checks) that the data plane's PCRE might read differently or
// refuse. Whatever Build keeps, nginx must take, and the other Ingresses
// stay served.
func TestRegexPathsBuildKeeps(t *testing.T) {
	tests := []struct{ name, path string }{
		{"issue 11 pattern", "/api/(.*)"},
		{"code point above 255", `/\x{100}`},
		{"code point 255", `/\x{ff}`},
		{"deep nesting", "/" + strings.Repeat("(", 300) + "a" + strings.Repeat(")", 300)},
		{"unicode class", `/\pL+`},
		{"unicode script", `/\p{Greek}`},
		{"named group", `/(?P<id>[0-9]+)`},
		{"quoted", `/\Q(x)\E`},
		{"posix class", `/[[:alpha:]]+`},
		{"catastrophic backtracking", "/(a+)+$"},
		{"empty alternative", "/(|a)"},
		{"repeat of an empty group", "/()*"},
		{"largest repeat", "/a{1000}"},
		{"end of text", `/x\z`},
		{"case flag", "/(?i)X"},
		{"literal brace", "/a{"},
		{"non-greedy", "/a+?b"},
		{"octal-looking escape", `/\01`},
		{"repeated end of line", "/$+"},
		{"repeated start of line", "/a^*"},
		{"repeated word boundary", `/\b+`},
		{"repeated empty group", "/(?:$)+"},
		{"negated posix class", `/[[:^alpha:]]`},
		{"flag group", `/(?i:a)b`},
		{"class of code points above 255", `/[\x{100}-\x{200}]`},
		{"negated unicode class", `/\P{L}`},
		{"unicode class in a class", `/[^\pL]`},
		{"any byte", `/\C`},
		{"repeated boundary at the end", `/a\B?`},
		{"repeated start of text", `/\A{2}`},
		{"anchor in alternation, repeated", "/(^|a)+"},
		{"many alternatives", "/(" + strings.Repeat("a|", 300) + "b)"},
		{"many groups", "/" + strings.Repeat("(a)", 300)},
	}
	base := newHostileStore(t, 2)
	h := startNginx(t, hostileBuild(base.store), nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ing := fixtures.Ingress("default", "regex", fixtures.Created(fixtures.Epoch.Add(time.Hour)),
				fixtures.Annotation(ingress.AnnotationPrefix+"use-regex", "true"),
				fixtures.Rule("regex.test", fixtures.Path(networkingv1.PathTypeImplementationSpecific, tc.path, "hostile-a", 80)))
			base.apply(upsertEventOf(ing, events.KindIngress, "default", "regex"), false)
			cfg := hostileBuild(base.store)
			kept := serverNamed(cfg, "regex.test") != nil && slices.ContainsFunc(serverNamed(cfg, "regex.test").Locations,
				func(l config.Location) bool { return l.PathType == config.PathRegex })
			t.Logf("path %.40q kept by Build: %v", tc.path, kept)
			if _, err := applyDiff(t.Context(), h.app, cfg); err != nil {
				t.Fatalf("apply: %v", err)
			}
			checkRouteTable(t, h, cfg) // a host the data plane refuses is replaced by one answering 503
			routeCheck{"http://good-1.test/x", 200, "good-1", "/x"}.verify(t, h)
			if r, err := h.get(requestURL("regex.test", tc.path)); err != nil || r.Status >= 500 {
				t.Errorf("GET regex.test%.60s = %d, %v; want no server error for a path Build kept", tc.path, r.Status, err)
			}
		})
	}
}
