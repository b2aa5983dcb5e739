package model

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// TestBuildHTTPRoute: an HTTPRoute attached to a Gateway of ours is built
// beside the Ingresses, with the build's rules between them: on one host
// and path the older object wins, and the other's Problem names it by
// kind.
func TestBuildHTTPRoute(t *testing.T) {
	class := eventstest.GatewayClass()
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	route := func(ns, host string, created int) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta(ns, "r")}
		r.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(created) * time.Second))
		r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
		r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(host)}
		r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
		return r
	}
	s := newGatewayStore()
	for _, o := range []runtime.Object{class, edge, service("app", "web", svcPort("http", 80)), service("app2", "web", svcPort("http", 80)),
		slice("app", "web-1", "web", "http", 80, ready("10.0.0.1")),
		route("app", "a.example.com", 10), route("app2", "b.example.com", 30),
		newIngress("app2", "ing", created(20), rule("b.example.com", prefix("/", "web", 80)))} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	a := serverOf(cfg, "a.example.com")
	if a == nil || len(a.Locations) == 0 || a.Locations[0].Backend != "app-web-80" || a.Locations[0].Ingress != "app/r" {
		t.Fatalf("a.example.com: %+v", a)
	}
	b := serverOf(cfg, "b.example.com")
	if b == nil || b.Locations[0].Ingress != "app2/ing" {
		t.Fatalf("b.example.com: %+v, want the older Ingress's path", b)
	}
	want := "HTTPRoute app2/r: host b.example.com path / (Prefix): conflicts with Ingress app2/ing, which is older and is used"
	if got := strings.Join(problemStrings(cfg.Problems), "\n"); !strings.Contains(got, want) {
		t.Fatalf("problems:\n%s\nwant one like %q", got, want)
	}
}

func serverOf(cfg *config.Configuration, host string) *config.Server {
	for i := range cfg.Servers {
		if cfg.Servers[i].Hostname == host {
			return &cfg.Servers[i]
		}
	}
	return nil
}

// TestBuildHTTPSRoute: a route on an HTTPS listener gets the listener's
// certificate for its hosts, from the Gateway's namespace; one on an HTTP
// listener as well is not redirected to HTTPS.
func TestBuildHTTPSRoute(t *testing.T) {
	edge := eventstest.Gateway()
	all := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}
	edge.Spec.Listeners = []gatewayv1.Listener{
		{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: all},
		{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, AllowedRoutes: all,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "edge-cert"}}}},
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), edge, tlsSecret(t, edge.Namespace, "edge-cert", "example"),
		service("app", "web", svcPort("http", 80)), r} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	a := serverOf(cfg, "a.example.com")
	if a == nil || !a.TLS || a.SSLRedirect {
		t.Fatalf("a.example.com: %+v, want TLS without a redirect", a)
	}
	var certHosts []string
	for _, c := range cfg.Certificates {
		certHosts = append(certHosts, c.Hosts...)
	}
	if !slices.Contains(certHosts, "a.example.com") {
		t.Fatalf("certificates for %q, want a.example.com's from %s/edge-cert (problems %q)", certHosts, edge.Namespace, problemStrings(cfg.Problems))
	}
	eff, err := s.Apply(upsertEvent(tlsSecret(t, edge.Namespace, "edge-cert", "other")))
	if err != nil || !s.CanChange(eff, testOptions()) {
		t.Fatalf("a change of the listener's Secret cannot change the Configuration (%v)", err)
	}
}

// TestBuildHTTPRouteWeights: a rule's backends share its requests by
// weight (Location.Backends); one that does not resolve answers its share
// 500 rather than sending it to the others.
func TestBuildHTTPRouteWeights(t *testing.T) {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	ref := func(svc string, w int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: ptr(w),
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr(gatewayv1.PortNumber(80))}}}
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{
		{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", 90), ref("canary", 10)}},
		{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr(gatewayv1.PathMatchExact), Value: ptr("/x")}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", 1), ref("missing", 1)}},
	}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), edge, service("app", "web", svcPort("http", 80)),
		service("app", "canary", svcPort("http", 80)), r} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	a := serverOf(cfg, "a.example.com")
	if a == nil || len(a.Locations) != 2 {
		t.Fatalf("a.example.com: %+v, want two paths", a)
	}
	want := [][]config.WeightedBackend{{{Backend: "app-web-80", Weight: 1}, {Backend: "", Weight: 1}},
		{{Backend: "app-web-80", Weight: 90}, {Backend: "app-canary-80", Weight: 10}}}
	for i, w := range want {
		if l := a.Locations[i]; l.Backend != "" || !reflect.DeepEqual(l.Backends, w) {
			t.Errorf("location %s: backend %q, backends %+v, want %+v", l.Path, l.Backend, l.Backends, w)
		}
	}
	if got := strings.Join(problemStrings(cfg.Problems), "\n"); !strings.Contains(got, "path /x: backend missing: service app/missing not found; its share of the requests answers 500") {
		t.Fatalf("problems:\n%s", got)
	}
	checkDataPlane(t, cfg)
}
