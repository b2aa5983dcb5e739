package model

import (
	"strings"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"reflect"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Canary Ingresses: merging into the main Ingress's location, the values,
// precedence between canary Ingresses, and what is never served.

const (
	canary80   = "default-canary-80"
	mainIng    = "default/main"
	canaryIng  = "default/canary"
	canaryHost = "a.example.com"
)

func canaryServices() []runtime.Object {
	return objs(webService(), one(
		service("default", "canary", svcPort("", 80)),
		slice("default", "canary-1", "canary", "", 8080, ready("10.0.0.9")),
		service("other", "canary", svcPort("", 80)),
	))
}

// mainIngress is the main Ingress of canaryHost: Prefix /info to web.
func mainIngress(opts ...ingOpt) *networkingv1.Ingress {
	return newIngress("default", "main", append([]ingOpt{created(0), rule(canaryHost, prefix("/info", "web", 80))}, opts...)...)
}

// canaryIngress is a canary Ingress named name, newer than the main one,
// with the canary annotation and the given pairs of further canary-*
// annotations, for Prefix /info to the canary Service unless opts add rules.
func canaryIngress(name string, age int, kv []string, opts ...ingOpt) *networkingv1.Ingress {
	all := []ingOpt{created(age), nginx("canary", "true")}
	for i := 0; i+1 < len(kv); i += 2 {
		all = append(all, nginx(kv[i], kv[i+1]))
	}
	all = append(all, opts...)
	ing := newIngress("default", name, all...)
	if len(ing.Spec.Rules) == 0 {
		rule(canaryHost, prefix("/info", "canary", 80))(ing)
	}
	return ing
}

func withCanary(l config.Location, c config.Canary) config.Location {
	l.Canary = &c
	return l
}

func canaryOf(c config.Canary) config.Canary {
	if c.Backend == "" {
		c.Backend = canary80
	}
	if c.Ingress == "" {
		c.Ingress = canaryIng
	}
	if c.WeightTotal == 0 {
		c.WeightTotal = 100
	}
	return c
}

// mainServer is canaryHost with /info to web, with canary c when not nil.
func mainServer(c *config.Canary) config.Server {
	l := loc("/info", config.PathPrefix, web80, mainIng)
	if c != nil {
		l = withCanary(l, canaryOf(*c))
	}
	return srv(canaryHost, l, catchAll(""))
}

var (
	webBackend    = be("default", "web", "80", ep("10.0.0.1", 8080))
	canaryBackend = be("default", "canary", "80", ep("10.0.0.9", 8080))
)

func TestBuildCanary(t *testing.T) {
	header := []string{"canary-by-header", "X-Canary"}
	runBuildCases(t, map[string]buildCase{
		"by header, merged into the main's location": {
			objs:     objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, header))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Header: "X-Canary"})},
			backends: []config.Backend{canaryBackend, webBackend},
		},
		"canary older than the main one": {
			objs:    objs(canaryServices(), one(mainIngress(created(5)), canaryIngress("canary", 1, header))),
			servers: []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Header: "X-Canary"})},
		},
		"every value": {
			objs: objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{
				"canary-weight", "30", "canary-weight-total", "1000", "canary-by-header", "X_Flag",
				"canary-by-header-value", " DoCanary ", "canary-by-cookie", "Canary-By-Cookie"}))),
			servers: []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Weight: 30, WeightTotal: 1000, Header: "X_Flag",
				HeaderValue: "DoCanary", Cookie: "Canary-By-Cookie"})},
		},
		"header pattern with '$' and backslash": {
			objs:    objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-by-header", "V", "canary-by-header-pattern", `^v\d+$`}))),
			servers: []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Header: "V", HeaderPattern: `^v\d+$`})},
		},
		"weight above the total is the total": {
			objs:    objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-weight", "250"}))),
			servers: []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Weight: 100})},
		},
		"weight 0 and the default total": {
			objs:    objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-weight", "0"}))),
			servers: []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{})},
		},
		"a total below 100 is 100, as ingress-nginx takes it": {
			objs:     objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-weight", "50", "canary-weight-total", "50"}))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Weight: 50})},
			problems: []string{"canary-weight-total=\"50\": below 100, which ingress-nginx takes as 100"},
		},
		"invalid values left out, the rest applies": {
			objs: objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{
				"canary-weight", "-5", "canary-by-header", "X Canary", "canary-by-cookie", "a;b", "canary-weight-total", "1.5",
				"canary-by-header-value", "", "canary-by-header-pattern", "[][**da?$&*", "canary-x", "1"}))),
			servers: []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{})},
			problems: []string{
				`canary-by-cookie="a;b": contains ';'`,
				`canary-by-header-pattern="[][**da?$&*": is not a valid regular expression`,
				`canary-by-header-value="": must not be empty`,
				`canary-by-header="X Canary": may only contain letters, digits, '-' and '_'`,
				`canary-weight-total="1.5": must be a whole number`,
				`canary-weight="-5": must be a whole number`,
				`canary-x="1": not supported`,
			},
		},
		"a pattern nginx's PCRE reads otherwise is refused": {
			objs:     objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-by-header", "V", "canary-by-header-pattern", `\pL`}))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Header: "V"})},
			problems: []string{`canary-by-header-pattern="\\pL"`},
		},
		"a value wins over a pattern": {
			objs: objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-by-header", "V",
				"canary-by-header-value", "yes", "canary-by-header-pattern", "^y"}))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Header: "V", HeaderValue: "yes"})},
			problems: []string{"canary-by-header-pattern: ignored, nginx.ingress.kubernetes.io/canary-by-header-value is set"},
		},
		"a value without a header means nothing": {
			objs:     objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-by-header-value", "yes"}))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{})},
			problems: []string{"mean nothing without nginx.ingress.kubernetes.io/canary-by-header"},
		},
		"canary annotations without canary=true: a main Ingress": {
			objs: objs(canaryServices(), one(mainIngress(), newIngress("default", "canary", created(1), nginx("canary", "false"),
				nginx("canary-by-header", "X-Canary"), rule(canaryHost, prefix("/info", "canary", 80), prefix("/new", "canary", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv(canaryHost, loc("/info", config.PathPrefix, web80, mainIng),
				loc("/new", config.PathPrefix, canary80, canaryIng), catchAll(""))},
			problems: []string{
				`annotation nginx.ingress.kubernetes.io/canary-by-header: nginx.ingress.kubernetes.io/canary is not "true"; ignored`,
				"host a.example.com path /info (Prefix): conflicts with Ingress default/main",
			},
		},
		"canary=yes is invalid: a main Ingress": {
			objs: objs(canaryServices(), one(mainIngress(), newIngress("default", "canary", created(1), nginx("canary", "yes"),
				rule(canaryHost, prefix("/new", "canary", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv(canaryHost, loc("/info", config.PathPrefix, web80, mainIng),
				loc("/new", config.PathPrefix, canary80, canaryIng), catchAll(""))},
			problems: []string{`canary="yes": must be true or false`},
		},
		"the canary alone is never served": {
			objs:     objs(canaryServices(), one(canaryIngress("canary", 1, header, tlsFor("tls", canaryHost), defaultBackend("canary", 80)))),
			servers:  []config.Server{srv("_", catchAll(""))},
			backends: []config.Backend{},
			problems: []string{
				"host a.example.com path \"/info\" (Prefix): no main Ingress serves this host; the canary path is not served",
				"spec.defaultBackend: no path of a main Ingress of this namespace without host",
				"spec.tls: ignored on a canary Ingress",
			},
		},
		"no main Ingress for the path": {
			objs: objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, header,
				rule(canaryHost, prefix("/other", "canary", 80), exact("/info", "canary", 80), prefix("/info/", "canary", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Header: "X-Canary"})},
			backends: []config.Backend{canaryBackend, webBackend},
			problems: []string{
				`path "/info" (Exact): no main Ingress serves this host and path`,
				`path "/other" (Prefix): no main Ingress serves this host and path`,
			},
		},
		"the oldest canary of a path is used": {
			objs: objs(canaryServices(), one(mainIngress(),
				canaryIngress("canary", 2, header),
				canaryIngress("canary-b", 3, []string{"canary-weight", "100"}, rule(canaryHost, prefix("/info", "web", 80))),
				canaryIngress("canary-c", 4, []string{"canary-weight", "100"}, rule(canaryHost, prefix("/info", "canary", 80))))),
			servers: []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Header: "X-Canary"})},
			problems: []string{
				`Ingress default/canary-b: host a.example.com path "/info" (Prefix): the main Ingress default/main routes to the same backend; the canary is ignored`,
				`Ingress default/canary-c: host a.example.com path "/info" (Prefix): has the canary of Ingress default/canary, which is older and is used`,
			},
		},
		"a canary of another namespace is ignored": {
			objs: objs(canaryServices(), one(mainIngress(), newIngress("other", "canary", created(1), nginx("canary", "true"),
				nginx("canary-weight", "100"), rule(canaryHost, prefix("/info", "canary", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(nil)},
			backends: []config.Backend{webBackend},
			problems: []string{"served by Ingress default/main of another namespace, and a canary applies to its own namespace only"},
		},
		"a canary whose service is missing": {
			objs:     objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, header, rule(canaryHost, prefix("/info", "missing", 80))))),
			servers:  []config.Server{srv("_", catchAll("")), mainServer(nil)},
			problems: []string{"service default/missing not found; path left out"},
		},
		"the main Ingress's settings apply, the canary's are ignored": {
			objs: objs(canaryServices(), one(mainIngress(nginx("proxy-read-timeout", "30")),
				canaryIngress("canary", 1, []string{"proxy-read-timeout", "99", "load-balance", "ewma", "ssl-redirect", "false"}))),
			servers: []config.Server{srv("_", catchAll("")), srv(canaryHost,
				withCanary(withSettings(loc("/info", config.PathPrefix, web80, mainIng), config.LocationSettings{ProxyReadTimeout: 30}), canaryOf(config.Canary{})),
				withSettings(catchAll(""), config.LocationSettings{ProxyReadTimeout: 30}))},
			backends: []config.Backend{{Name: canary80, Namespace: "default", Service: "canary", Port: "80",
				Endpoints: []config.Endpoint{ep("10.0.0.9", 8080)}, LoadBalance: config.LoadBalanceEWMA}, webBackend},
			problems: []string{"annotations nginx.ingress.kubernetes.io/proxy-read-timeout, nginx.ingress.kubernetes.io/ssl-redirect: ignored on a canary Ingress"},
		},
		"a canary's default backend joins the paths without host": {
			objs: objs(canaryServices(), one(
				newIngress("default", "main", created(0), rule("", prefix("/a", "web", 80), exact("/bb", "web", 80))),
				canaryIngress("canary", 1, header, defaultBackend("canary", 80), rule("", prefix("/a", "canary", 80))))),
			servers: []config.Server{srv("_",
				withCanary(loc("/bb", config.PathExact, web80, mainIng), canaryOf(config.Canary{Header: "X-Canary"})),
				withCanary(loc("/a", config.PathPrefix, web80, mainIng), canaryOf(config.Canary{Header: "X-Canary"})),
				catchAll(""))},
		},
	})
}

// A regex location (use-regex on the main Ingress) takes the canary of an
// ImplementationSpecific path of the same text, and every Location Build
// makes of it has the canary.
func TestBuildCanaryRegexPath(t *testing.T) {
	cfg := buildWith(t, objs(canaryServices(), one(
		newIngress("default", "main", created(0), nginx("use-regex", "true"), rule(canaryHost, implSpecific("/api/v[0-9]+", "web", 80), prefix("/info", "web", 80))),
		canaryIngress("canary", 1, []string{"canary-weight", "10"}, rule(canaryHost, implSpecific("/api/v[0-9]+", "canary", 80))))), nil)
	checkDataPlane(t, cfg)
	checkProblems(t, cfg.Problems, nil)
	withCanaries := 0
	for _, s := range cfg.Servers {
		for _, l := range s.Locations {
			switch {
			case l.Canary == nil:
			case l.Path == "/api/v[0-9]+" && *l.Canary == canaryOf(config.Canary{Weight: 10}):
				withCanaries++
			default:
				t.Errorf("location %s %q has canary %+v", l.PathType, l.Path, *l.Canary)
			}
		}
	}
	if withCanaries != 1 {
		t.Errorf("%d locations have the canary, want 1", withCanaries)
	}
}

// When the main Ingress goes, its canary is served no more and its
// backend is not sent; when it comes back, the canary is merged again.
func TestCanaryMainRemoved(t *testing.T) {
	s := newTestStore(t, objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, []string{"canary-weight", "20"})))...)
	before := Build(s, testOptions())
	check.Equal(t, "servers", before.Servers, []config.Server{srv("_", catchAll("")), mainServer(&config.Canary{Weight: 20})})
	if _, err := s.Apply(deleteEvent(events.KindIngress, "default", "main")); err != nil {
		t.Fatal(err)
	}
	after := Build(s, testOptions())
	checkDataPlane(t, after)
	check.Equal(t, "servers", after.Servers, []config.Server{srv("_", catchAll(""))})
	check.Equal(t, "backends", after.Backends, config.BackendList{})
	checkProblems(t, after.Problems, []string{"no main Ingress serves this host; the canary path is not served"})
	ch := config.Diff(before, after)
	if ch.Reload || !slices.Contains(ch.ServersRemoved, canaryHost) || !slices.Contains(ch.BackendsRemoved, canary80) {
		t.Errorf("diff: %+v", ch)
	}
	if _, err := s.Apply(upsertEvent(mainIngress())); err != nil {
		t.Fatal(err)
	}
	if again := Build(s, testOptions()); again.Checksum != before.Checksum {
		t.Errorf("checksum %s after the main came back, want %s", again.Checksum, before.Checksum)
	}
}

// A change of a canary value changes the checksum and is a route change of
// its host only, never a reload.
func TestCanaryChangeIsARouteChange(t *testing.T) {
	build := func(kv ...string) *config.Configuration {
		return buildWith(t, objs(canaryServices(), one(mainIngress(), canaryIngress("canary", 1, kv),
			newIngress("default", "b", created(2), rule("b.example.com", prefix("/", "web", 80))))), nil)
	}
	base := build("canary-weight", "10")
	for name, kv := range map[string][]string{
		"weight":  {"canary-weight", "11"},
		"total":   {"canary-weight", "10", "canary-weight-total", "1000"},
		"header":  {"canary-weight", "10", "canary-by-header", "X"},
		"cookie":  {"canary-weight", "10", "canary-by-cookie", "c"},
		"pattern": {"canary-weight", "10", "canary-by-header", "X", "canary-by-header-pattern", "a"},
	} {
		t.Run(name, func(t *testing.T) {
			next := build(kv...)
			if next.Checksum == base.Checksum {
				t.Fatal("same checksum")
			}
			ch := config.Diff(base, next)
			if ch.Reload || len(ch.ServersUpserted) != 1 || ch.ServersUpserted[0].Hostname != canaryHost || len(ch.BackendsUpserted) != 0 {
				t.Errorf("diff: reload %v, servers %d, backends %d", ch.Reload, len(ch.ServersUpserted), len(ch.BackendsUpserted))
			}
		})
	}
	if again := build("canary-weight", "10"); again.Checksum != base.Checksum {
		t.Error("checksum not deterministic")
	}
}

// canaryValues are values the canary annotations accept, so that hostile
// canaries also reach the data plane.
var canaryValues = map[string][]string{
	"canary-weight": {"0", "1", "50", "100", "1000"}, "canary-weight-total": {"100", "200", "1000", "1000000000"},
	"canary-by-header": {"X-Canary", "x_flag", "CanaryByHeader"}, "canary-by-header-value": {"DoCanary", "a b", "yes"},
	"canary-by-header-pattern": {"^Do[A-Z][a-z]+y$", `^v\d+$`, "^(a|b)$", "(?i)yes", ".*"},
	"canary-by-cookie":         {"Canary-By-Cookie", "c", "a.b~c"},
}

// Hostile canary Ingresses, each beside a main Ingress of its own
// namespace on a host it shares with the good tenant or owns, carrying
// random canary annotations (hostile and valid values) and paths: Build
// keeps the data plane contract, the good tenant's view does not change
// (a canary never joins another namespace's paths), and canaries of the
// hostile tenant's own paths are merged.
func TestHostileCanaries(t *testing.T) {
	good := append(goodObjects(t), evilObjects(t)...)
	base := Build(newTestStore(t, good...), testOptions())
	want := viewOf(base, goodNS)
	g := newHostileGen(12)
	names := []string{"canary-weight", "canary-weight-total", "canary-by-header", "canary-by-header-value",
		"canary-by-header-pattern", "canary-by-cookie"}
	merged := 0
	for round := range 1500 {
		p := g.httpPath()
		if g.r.IntN(2) == 0 {
			p.Path = g.pick([]string{"/", "/api", "/app/x", "/api/v[0-9]+", ""})
			p.Backend = ingressBackend("web", []any{80, "http"}[g.r.IntN(2)])
		}
		host := g.pick(append([]string{"c.example.com", "c.example.com"}, sharedHosts...))
		main := p
		main.Backend = ingressBackend("web", "big")
		opts := []ingOpt{created(1000 + 2*round), nginx("canary", g.pick([]string{"true", "true", "true", "false", "maybe"})),
			rule(host, p, g.httpPath())}
		for range 1 + g.r.IntN(6) {
			n := g.pick(names)
			v := g.str(hostileValues)
			if g.r.IntN(3) > 0 {
				v = g.pick(canaryValues[n])
			}
			opts = append(opts, nginx(n, v))
		}
		hostile := []runtime.Object{
			newIngress(evilNS, "main", created(999+2*round), rule(host, main)),
			newIngress(evilNS, "canary", opts...),
		}
		s := newTestStore(t, append(good, hostile...)...)
		cfg := Build(s, testOptions())
		checkDataPlane(t, cfg)
		if got := viewOf(cfg, goodNS); !reflect.DeepEqual(got, want) {
			check.Equal(t, "good tenant", got, want)
		}
		if t.Failed() {
			t.Fatalf("round %d: %s", round, describe(hostile))
		}
		for _, srv := range cfg.Servers {
			for _, l := range srv.Locations {
				if l.Canary != nil {
					merged++
				}
			}
		}
	}
	if merged < 200 {
		t.Errorf("only %d canaries merged in 1500 rounds (want 200): the test does not reach the data plane", merged)
	}
}

// Header patterns take the checks of regex paths, and only valid syntax.
func TestValidateHeaderPattern(t *testing.T) {
	for name, tc := range map[string]struct {
		pattern string
		ok      bool
	}{
		"e2e pattern":         {"^Do[A-Z][a-z]+y$", true},
		"escapes":             {`^v\d+\.\d+$`, true},
		"alternation":         {"^(yes|true)$", true},
		"leading repeat":      {"*a", false},
		"unclosed class":      {"[][**da?$&*", false},
		"unicode class":       {`\p{Greek}`, false},
		"named group":         {"(?P<x>a)", false},
		"flags":               {"(?s).", false},
		"space":               {"a b", false},
		"repeated assertion":  {"$+", false},
		"empty":               {"", false},
		"too long":            {strings.Repeat("a", 1024), false},
		"longest":             {strings.Repeat("a", 1023), true},
		"case-insensitive on": {"(?i)yes", true},
	} {
		t.Run(name, func(t *testing.T) {
			if err := intent.ValidateHeaderPattern(tc.pattern); (err == nil) != tc.ok {
				t.Errorf("ValidateHeaderPattern(%q) = %v, want ok %v", tc.pattern, err, tc.ok)
			}
		})
	}
}

// FuzzCanaryHeaderPattern checks ValidateHeaderPattern against an
// independent reading of what it accepts, as FuzzRegexPath does for regex
// paths: at most 1023 printable ASCII characters, compiling with Go's
// regexp, without named groups or the s and m flags.
func FuzzCanaryHeaderPattern(f *testing.F) {
	for _, seed := range []string{"^Do[A-Z][a-z]+y$", `^v\d+$`, "[][**da?$&*", "*a", "(?P<x>a)", "(?s).", "a b", "$+", `\pL`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if intent.ValidateHeaderPattern(p) != nil {
			return
		}
		if p == "" || len(p) > 1023 || strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r > '~' }) {
			t.Fatalf("accepted %q", p)
		}
		checkSameInPCRE(t, p)
	})
}
