package admission

import (
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
	"github.com/ingress-sync/ingress-sync/pkg/model"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The pools of the hostile Ingresses (after those of pkg/model's
// hostile_test.go, which this package cannot import): values that break
// out of an nginx directive or a Lua string, numbers out of range, regular
// expressions that do not compile or differ in PCRE, hosts and paths the
// build leaves out.
var (
	hostileValues = []string{"", "0", "-1", "60s", "99999999999", "1024g", "8m", "on", "off", "true", "yes", "TLSv1.3",
		"10.0.0.0/8", "10.0.0.0/33", "::1", "a;b", "x}", "{", "\"q\"", "a\nb", "$host", "${x}", "\\", "/$1", "/$10",
		"http://a.example.com/x", "javascript:x", "default/x", "../x", "(?<=a)b", "a{2,1}", "[", strings.Repeat("a", 5000)}
	hostileHosts = []string{"shop.example.com", "*.example.com", "*.*.example.com", "*", "*.", "A.example.com", "a..b",
		"-a.example.com", "a_b.example.com", "127.0.0.1", "[::1]", "a.example.com.", strings.Repeat("a", 64) + ".com", ""}
	hostilePaths = []string{"", "/", "/api", "/api/", "api", "/a b", "/a;b", "/a{b}", "/(.*)", "/api/v[0-9]+/(.*)",
		"/(api", "/(?<n>x)", "/a\\d+", "/(?=x)", "/a++", "/%00", "/\x00", "/~user", "//"}
)

// quiet discards the Handler's logs.
var quiet = slog.New(slog.DiscardHandler)

// hostileGen draws hostile Ingresses from a seed.
type hostileGen struct {
	r     *rand.Rand
	names []string
	ann   map[string]ingress.RegistryEntry
}

func newHostileGen(seed uint64) *hostileGen {
	g := &hostileGen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), ann: map[string]ingress.RegistryEntry{}}
	for _, e := range ingress.Annotations() {
		g.names = append(g.names, e.Name)
		g.ann[e.Name] = e
	}
	g.names = append(g.names, "server-snippet", "no-such-annotation")
	return g
}

func (g *hostileGen) pick(pool []string) string { return pool[g.r.IntN(len(pool))] }

// value is the registry's valid sample of name half the time, else hostile.
func (g *hostileGen) value(name string) string {
	if s := g.ann[name].Sample; s != "" && g.r.IntN(2) == 0 {
		return s
	}
	return g.pick(hostileValues)
}

// ingress is an Ingress of class nginx routing to Service svc.
func (g *hostileGen) ingress(extraName, extraValue string) *networkingv1.Ingress {
	ann := map[string]string{}
	for range g.r.IntN(4) {
		n := g.pick(g.names)
		ann[ingress.AnnotationPrefix+n] = g.value(n)
	}
	if extraName != "" {
		ann[ingress.AnnotationPrefix+extraName] = extraValue
	}
	ing := newIngress(g.pick(hostileHosts), g.pick(hostilePaths), ann)
	ing.CreationTimestamp = metav1.Unix(1, 0)
	types := []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific, "Regex"}
	ing.Spec.Rules[0].HTTP.Paths[0].PathType = &types[g.r.IntN(len(types))]
	if g.r.IntN(3) == 0 {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{g.pick(hostileHosts)}}} // default certificate: no Secret
	}
	return ing
}

// buildProblems builds a Store holding ing and its Service, and returns
// whether the build leaves ing, or part of it, unserved, with the reasons.
func buildProblems(t *testing.T, ing *networkingv1.Ingress) (bool, []string) {
	t.Helper()
	s := model.NewStore(ingress.NewSource())
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ing.Namespace, Name: "svc"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	for _, ev := range []events.Event{
		{Op: events.OpCreate, Kind: events.KindService, Namespace: svc.Namespace, Name: svc.Name, Object: svc},
		{Op: events.OpCreate, Kind: events.KindIngress, Namespace: ing.Namespace, Name: ing.Name, Object: ing},
	} {
		if _, err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	cfg := model.Build(s, model.Options{ControllerClass: ingress.DefaultControllerClass, IngressClass: ingress.DefaultIngressClass, EnableSSLPassthrough: true})
	var unserved bool
	var reasons []string
	for _, p := range cfg.Problems {
		if p.Kind == intent.KindIngress && p.Namespace == ing.Namespace && p.Name == ing.Name && p.Unserved() != config.ServedAsIs {
			unserved = true
			reasons = append(reasons, p.Reason)
		}
	}
	return unserved, reasons
}

// entryOf is the Ingress source's entry of ing.
func entryOf(t *testing.T, ing *networkingv1.Ingress) *intent.Entry {
	e, err := ingress.NewSource().Translate(events.KindIngress, intent.Key{Namespace: ing.Namespace, Name: ing.Name}, ing)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// FuzzReviewAgreesWithBuild sends hostile Ingresses through the webhook
// (an AdmissionReview to the Handler) and checks its answer against what
// model.Build makes of the same Ingress: refused ⇔ the build leaves it, or
// part of it, unserved. An Ingress whose build depends on other objects
// is only checked one way: refused ⇒ unserved.
func FuzzReviewAgreesWithBuild(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed, "", "")
	}
	f.Add(uint64(1), "configuration-snippet", "deny all;")
	f.Add(uint64(2), "use-regex", "true")
	f.Add(uint64(3), "whitelist-source-range", "10.0.0.0/33")
	f.Add(uint64(4), "auth-tls-match-cn", "CN=(a")
	f.Add(uint64(5), "rewrite-target", "/$10")
	f.Add(uint64(6), "limit-rps", "-1")
	f.Fuzz(func(t *testing.T, seed uint64, name, value string) {
		if strings.ContainsAny(name, "/") || len(name) > 63 {
			return
		}
		ing := newHostileGen(seed).ingress(name, value)
		resp := NewHandler(Options{Logger: quiet}).Review(&admissionv1.AdmissionRequest{UID: "u", Kind: ingressGVK, Operation: admissionv1.Create,
			Namespace: ing.Namespace, Name: ing.Name, Object: runtime.RawExtension{Raw: mustJSON(t, ing)}})
		unserved, reasons := buildProblems(t, ing)
		refused := !resp.Allowed
		if refused && !unserved {
			t.Fatalf("refused (%s), but the build serves all of it; annotations %q", resp.Result.Message, ing.Annotations)
		}
		if !refused && unserved && standsAlone(entryOf(t, ing)) {
			t.Fatalf("allowed (warnings %q), but the build leaves it unserved: %q; Ingress %+v", resp.Warnings, reasons, ing.Spec)
		}
	})
}
