package model

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// btlsPolicy is a BackendTLSPolicy of namespace app targeting Service svc
// (port section, "" for the whole Service), trusting ConfigMap cm.
func btlsPolicy(name, svc, section, cm, hostname string) *gatewayv1.BackendTLSPolicy {
	p := &gatewayv1.BackendTLSPolicy{ObjectMeta: objMeta("app", name)}
	ref := gatewayv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
		Kind: "Service", Name: gatewayv1.ObjectName(svc)}}
	if section != "" {
		ref.SectionName = ptr(gatewayv1.SectionName(section))
	}
	p.Spec.TargetRefs = []gatewayv1.LocalPolicyTargetReferenceWithSectionName{ref}
	p.Spec.Validation = gatewayv1.BackendTLSPolicyValidation{Hostname: gatewayv1.PreciseHostname(hostname),
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: gatewayv1.ObjectName(cm)}}}
	return p
}

// btlsRoute is a route of namespace app on a.example.com with one rule
// per path, each to the backends given as "service:port".
func btlsRoute(edge *gatewayv1.Gateway, rules map[string][]string) *gatewayv1.HTTPRoute {
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	for _, path := range slices.Sorted(maps.Keys(rules)) {
		backends := rules[path]
		rule := gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr(gatewayv1.PathMatchExact), Value: ptr(path)}}}}
		for _, b := range backends {
			svc, port, _ := strings.Cut(b, ":")
			n := int32(443)
			if port == "8443" {
				n = 8443
			}
			rule.BackendRefs = append(rule.BackendRefs, gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr(gatewayv1.PortNumber(n))}}})
		}
		r.Spec.Rules = append(r.Spec.Rules, rule)
	}
	return r
}

// TestBuildBackendTLSPolicy: the paths to a Service a policy targets are
// proxied over HTTPS with a verifying profile (the CA of its ConfigMap,
// its hostname as SNI and verified name); the policy of the port's name
// takes precedence over the whole Service's; a policy that cannot be
// applied, or backends of one path with different policies, answer 503.
func TestBuildBackendTLSPolicy(t *testing.T) {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	ca := string(testdata(t, "example.crt"))
	cm := func(name, data string) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: objMeta("app", name), Data: map[string]string{}}
		if data != "" {
			c.Data["ca.crt"] = data
		}
		return c
	}
	route := btlsRoute(edge, map[string][]string{
		"/whole": {"whole:443"}, "/port": {"ports:8443"}, "/other-port": {"ports:443"}, "/plain": {"plain:443"},
		"/missing": {"missing-cm:443"}, "/junk": {"junk-cm:443"}, "/mixed": {"whole:443", "plain:443"}, "/same": {"whole:443", "whole:443"},
	})
	objs := []runtime.Object{eventstest.GatewayClass(), edge, gatewayService(edge, 10000), route,
		service("app", "whole", svcPort("https", 443)), service("app", "ports", svcPort("a", 443), svcPort("b", 8443)),
		service("app", "plain", svcPort("http", 443)), service("app", "missing-cm", svcPort("https", 443)), service("app", "junk-cm", svcPort("https", 443)),
		cm("ca", ca), cm("junk", "junk"),
		btlsPolicy("whole", "whole", "", "ca", "whole.example.com"), btlsPolicy("ports", "ports", "", "ca", "ports.example.com"),
		btlsPolicy("port-b", "ports", "b", "ca", "b.example.com"), btlsPolicy("missing", "missing-cm", "", "gone", "m.example.com"),
		btlsPolicy("junk", "junk-cm", "", "junk", "j.example.com"),
	}
	s := newGatewayStore()
	for _, o := range objs {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	a := serverAt(cfg, 10080, "a.example.com")
	if a == nil {
		t.Fatal("no server a.example.com")
	}
	profiles := map[string]config.UpstreamTLS{}
	for _, p := range cfg.UpstreamTLS {
		profiles[p.Name] = p
	}
	want := map[string]string{
		"/whole": "HTTPS whole.example.com", "/port": "HTTPS b.example.com", "/other-port": "HTTPS ports.example.com",
		"/plain": "", "/missing": "HTTPS 503", "/junk": "HTTPS 503", "/mixed": "HTTPS 503", "/same": "HTTPS whole.example.com",
	}
	for _, l := range a.Locations {
		w, ok := want[l.Path]
		if !ok {
			continue
		}
		got := l.Settings.BackendProtocol
		switch ps := l.Settings.ProxySSL; {
		case ps == nil:
		case ps.Unavailable:
			got += " 503"
		default:
			p, ok := profiles[ps.Profile]
			if !ok || !p.Verify || !p.ServerName || p.PeerName != ps.Name || string(p.CA) != ca {
				t.Errorf("%s: profile %+v of %+v", l.Path, p, ps)
			}
			got += " " + ps.Name
		}
		if got != w {
			t.Errorf("%s: %q, want %q", l.Path, got, w)
		}
		delete(want, l.Path)
	}
	if len(want) > 0 {
		t.Errorf("paths not built: %v", want)
	}
	if len(cfg.UpstreamTLS) != 3 {
		t.Errorf("%d profiles, want 3 (one per hostname)", len(cfg.UpstreamTLS))
	}
	problems := strings.Join(problemStrings(cfg.Problems), "\n")
	for _, p := range []string{"BackendTLSPolicy app/missing: caCertificateRef ConfigMap app/gone not found; the backends it targets answer 503",
		"BackendTLSPolicy app/junk: caCertificateRef ConfigMap app/junk: ca.crt holds no PEM certificate",
		"path /mixed: its backends do not all take the same BackendTLSPolicy"} {
		if !strings.Contains(problems, p) {
			t.Errorf("problems:\n%s\nwant %q", problems, p)
		}
	}
	checkDataPlane(t, cfg)

	// The ConfigMap fixed: the next Build takes it.
	if _, err := s.Apply(upsertEvent(cm("junk", ca))); err != nil {
		t.Fatal(err)
	}
	cfg = Build(s, testOptions())
	for _, l := range serverAt(cfg, 10080, "a.example.com").Locations {
		if l.Path == "/junk" && (l.Settings.ProxySSL == nil || l.Settings.ProxySSL.Unavailable) {
			t.Errorf("/junk after its ConfigMap was fixed: %+v", l.Settings.ProxySSL)
		}
	}
}

// TestBackendTLSPolicySystemCA: wellKnownCACertificates System makes a
// profile that trusts the system's CA certificates, with no CA of its own.
func TestBackendTLSPolicySystemCA(t *testing.T) {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}
	edge.Namespace = "app"
	pol := btlsPolicy("sys", "sys", "", "", "sys.example.com")
	pol.Spec.Validation.CACertificateRefs = nil
	pol.Spec.Validation.WellKnownCACertificates = ptr(gatewayv1.WellKnownCACertificatesSystem)
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), edge, gatewayService(edge, 10000),
		btlsRoute(edge, map[string][]string{"/sys": {"sys:443"}}), service("app", "sys", svcPort("https", 443)), pol} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	if len(cfg.UpstreamTLS) != 1 {
		t.Fatalf("profiles %+v, problems %v", cfg.UpstreamTLS, problemStrings(cfg.Problems))
	}
	if p := cfg.UpstreamTLS[0]; !p.SystemCA || p.CA != nil || !p.Verify || p.PeerName != "sys.example.com" {
		t.Errorf("profile %+v", p)
	}
	l := serverAt(cfg, 10080, "a.example.com").Locations[0]
	if l.Settings.ProxySSL == nil || l.Settings.ProxySSL.Profile != cfg.UpstreamTLS[0].Name || l.Settings.BackendProtocol != "HTTPS" {
		t.Errorf("location %s: %+v", l.Path, l.Settings)
	}
	checkDataPlane(t, cfg)
}

// TestBackendTLSPolicyBound: the policies' profiles count in the bound of
// backend TLS profiles; beyond it, a policy's backends answer 503.
func TestBackendTLSPolicyBound(t *testing.T) {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}
	edge.Namespace = "app"
	route := btlsRoute(edge, map[string][]string{"/a": {"a:443"}, "/b": {"b:443"}})
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), edge, gatewayService(edge, 10000), route,
		service("app", "a", svcPort("https", 443)), service("app", "b", svcPort("https", 443)),
		&corev1.ConfigMap{ObjectMeta: objMeta("app", "ca"), Data: map[string]string{"ca.crt": string(testdata(t, "example.crt"))}},
		btlsPolicy("a", "a", "", "ca", "a.example.com"), btlsPolicy("b", "b", "", "ca", "b.example.com")} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	opts := testOptions()
	opts.MaxUpstreamTLSProfiles = 1
	cfg := Build(s, opts)
	if len(cfg.UpstreamTLS) != 1 {
		t.Fatalf("%d profiles, want 1", len(cfg.UpstreamTLS))
	}
	if got := strings.Join(problemStrings(cfg.Problems), "\n"); !strings.Contains(got, "more than 1 distinct backend TLS profiles") {
		t.Errorf("problems:\n%s", got)
	}
	checkDataPlane(t, cfg)
}
