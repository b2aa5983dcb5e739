package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/golden"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestChecksumEncodingUnambiguous: changes that TestChecksumAndDiffSeeEveryField
// does not make (the same values split otherwise between the elements of
// a list, an element more) give checksums of their own.
func TestChecksumEncodingUnambiguous(t *testing.T) {
	tests := map[string]func(c *config.Configuration){
		"server added":   func(c *config.Configuration) { c.Servers = append(c.Servers, srv("b.com")) },
		"location added": func(c *config.Configuration) { c.Servers[1].Locations = append(c.Servers[1].Locations, catchAll("")) },
		"backend added": func(c *config.Configuration) {
			added := be("ns", "zz", "80")
			c.Backends = config.NewBackendList(append(c.Backends.Slice(), &added))
		},
		"certificate host split": func(c *config.Configuration) { c.Certificates[1].Hosts = []string{"a.c", "om"} },
		"ranges": func(c *config.Configuration) {
			c.Servers[1].Locations[0].Settings.AllowSourceRange = []string{"::/0", "::/1"}
		},
		"ranges joined": func(c *config.Configuration) {
			c.Servers[1].Locations[0].Settings.AllowSourceRange = []string{"::/0::/1"}
		},
	}
	base := diffBase(t).ComputeChecksum()
	seen := map[string]string{base: "base"}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			c := diffBase(t)
			mutate(c)
			sum := c.ComputeChecksum()
			if other, dup := seen[sum]; dup {
				t.Errorf("checksum %s equals that of %q", sum, other)
			}
			seen[sum] = name
		})
	}
}

func TestChecksumAndEqual(t *testing.T) {
	cfg := Build(newTestStore(t, goldenInputs(t)["full"]...), goldenOptions(t))
	if cfg.Checksum == "" || cfg.Checksum != cfg.ComputeChecksum() {
		t.Fatalf("Build checksum %q, ComputeChecksum %q", cfg.Checksum, cfg.ComputeChecksum())
	}
	for _, b := range cfg.Backends.All() {
		if b.Checksum != config.BackendChecksum(b) {
			t.Errorf("backend %s: stored checksum differs from BackendChecksum", b.Name)
		}
	}
	stale := *cfg
	stale.Checksum = ""
	if !cfg.Equal(&stale) || !stale.Equal(cfg) {
		t.Error("Equal is false for the same content without a stored checksum")
	}
	var nilCfg *config.Configuration
	if !nilCfg.Equal(nil) || cfg.Equal(nil) || nilCfg.Equal(cfg) {
		t.Error("Equal with nil")
	}
}

// goldenOptions are the options of the golden and determinism scenarios.
func goldenOptions(t testing.TB) Options {
	o := testOptions()
	o.DefaultBackendService = "ingress/fallback"
	o.ConfigMap = "ingress/config"
	o.FallbackCertificate = &config.Certificate{Name: config.FallbackCertificateName, Cert: testdata(t, "other.crt"), Key: testdata(t, "other.key")}
	return o
}

// goldenInputs are the scenarios of the golden files.
func goldenInputs(t testing.TB) map[string][]runtime.Object {
	base := one(
		service("ingress", "fallback", svcPort("http", 8080)),
		slice("ingress", "fallback-x", "fallback", "http", 8080, ready("10.9.0.1")),
		fixtures.ConfigMap("ingress", "config", "proxy-read-timeout", "120", "use-forwarded-headers", "true"),
		service("shop", "web", svcPort("http", 80)),
		slice("shop", "web-a", "web", "http", 8080, ready("10.0.0.2"), ready("10.0.0.1"), notReady("10.0.0.3")),
		service("shop", "api", svcPort("grpc", 9000)),
		slice("shop", "api-a", "api", "grpc", 9000, ready("10.0.1.1")),
		tlsSecret(t, "shop", "shop-tls", "example"),
	)
	full := append(one(
		newIngress("shop", "storefront", created(1), tlsFor("shop-tls", "shop.example.com", "*.example.com"),
			nginx("proxy-body-size", "8m"),
			rule("shop.example.com", prefix("/", "web", "http"), exact("/healthz", "web", 80)),
			rule("*.example.com", prefix("/", "web", "http"))),
		newIngress("shop", "api", created(2), nginx("backend-protocol", "GRPC"), nginx("load-balance", "ewma"),
			nginx("whitelist-source-range", "10.0.0.0/8,192.168.1.1"),
			rule("shop.example.com", implSpecific("/api/", "api", "grpc"))),
	), base...)
	problems := append(one(
		newIngress("shop", "old", created(1), rule("shop.example.com", prefix("/", "web", 80))),
		newIngress("shop", "new", created(2), nginx("proxy-read-timeout", "1s; }"),
			tlsFor("missing", "shop.example.com"),
			rule("shop.example.com", prefix("/", "api", 9000), prefix("/gone", "nope", 80), prefix("relative", "web", 80))),
		newIngress("shop", "snippet", created(3), nginx("server-snippet", "return 200;"), tlsFor("shop-tls", "snippet.example.com"),
			rule("snippet.example.com", prefix("/", "web", 80))),
		newIngress("other", "not-ours", className("traefik"), rule("x.example.com", prefix("/", "web", 80))),
	), base...)
	return map[string][]runtime.Object{"full": full, "problems": problems, "empty": nil}
}

func TestGolden(t *testing.T) {
	for name, inputs := range goldenInputs(t) {
		t.Run(name, func(t *testing.T) {
			cfg := Build(newTestStore(t, inputs...), goldenOptions(t))
			checkDataPlane(t, cfg)
			got, err := json.MarshalIndent(cfg, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name, append(got, '\n'), "")
		})
	}
}

// determinismInputs generate n Ingresses with conflicts, shared backends,
// TLS and annotation problems.
func determinismInputs(t testing.TB, n int) []runtime.Object {
	out := one(tlsSecret(t, "ns", "cert", "example"), service("ingress", "fallback"), fixtures.ConfigMap("ingress", "config"))
	for i := range n {
		svc := fmt.Sprintf("svc-%d", i%7)
		out = append(out,
			newIngress("ns", fmt.Sprintf("ing-%d", i), created(i%5), tlsFor("cert", fmt.Sprintf("h%d.example.com", i%11)),
				nginx("load-balance", []string{"ewma", "round_robin"}[i%2]), nginx("proxy-read-timeout", fmt.Sprint(i%3)),
				rule(fmt.Sprintf("h%d.example.com", i%11), prefix(fmt.Sprintf("/p%d", i%4), svc, 80), exact("/", svc, "http"))),
		)
		if i%7 == i%11 {
			out = append(out, service("ns", svc), slice("ns", fmt.Sprintf("%s-%d", svc, i), svc, "http", 8080,
				ready(fmt.Sprintf("10.0.%d.%d", i%7, i%13)), ready(fmt.Sprintf("10.1.%d.%d", i%7, i%3))))
		}
	}
	return out
}

func TestBuildDeterministic(t *testing.T) {
	inputs := determinismInputs(t, 200)
	first := Build(newTestStore(t, inputs...), goldenOptions(t))
	if len(first.Problems) == 0 || len(first.Servers) < 10 || first.Backends.Len() == 0 {
		t.Fatalf("scenario too small: %d problems, %d servers, %d backends", len(first.Problems), len(first.Servers), first.Backends.Len())
	}
	for seed := range uint64(5) {
		shuffled := append([]runtime.Object(nil), inputs...)
		r := rand.New(rand.NewPCG(seed, seed))
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		s := newTestStore(t, shuffled...)
		for range 2 {
			got := Build(s, goldenOptions(t))
			if got.Checksum != first.Checksum {
				t.Fatalf("seed %d: checksum %s, want %s", seed, got.Checksum, first.Checksum)
			}
			if !reflect.DeepEqual(got, first) {
				t.Fatalf("seed %d: Configuration differs with the same checksum", seed)
			}
		}
	}
}
