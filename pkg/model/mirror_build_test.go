package model

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// TestBuildIngressMirror: an Ingress's mirror-target is a URL mirror of
// each of its paths, and of no other Ingress's.
func TestBuildIngressMirror(t *testing.T) {
	s := newTestStore(t,
		service("app", "web", svcPort("http", 80)),
		newIngress("app", "mirrored", rule("a.example.com", prefix("/", "web", 80), prefix("/api", "web", 80)),
			annotation("nginx.ingress.kubernetes.io/mirror-target", "https://m.example.com$request_uri"),
			annotation("nginx.ingress.kubernetes.io/mirror-request-body", "off")),
		newIngress("app", "plain", rule("b.example.com", prefix("/", "web", 80))))
	cfg := Build(s, testOptions())
	want := []config.Mirror{{URL: "https://m.example.com$request_uri", Numerator: 1, Denominator: 1}}
	for _, tc := range []struct {
		host, path string
		want       []config.Mirror
	}{{"a.example.com", "/", want}, {"a.example.com", "/api", want}, {"b.example.com", "/", nil}} {
		l := mirrorLocation(t, cfg, 0, tc.host, tc.path)
		if !reflect.DeepEqual(l.Mirrors, tc.want) {
			t.Errorf("%s%s mirrors %+v, want %+v", tc.host, tc.path, l.Mirrors, tc.want)
		}
	}
	checkDataPlane(t, cfg)
}

// TestBuildHTTPRouteMirrors: a rule's mirrors become the Backends they
// name, sent with the Configuration; a mirror whose Service does not exist
// is left out with a Problem and the rule is served as without it.
func TestBuildHTTPRouteMirrors(t *testing.T) {
	g := eventstest.Gateway()
	g.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}
	mirror := func(svc string, pct int32) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
			BackendRef: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr(gatewayv1.PortNumber(8080))}, Percent: ptr(pct)}}
	}
	r := eventstest.HTTPRoute()
	r.Namespace = g.Namespace
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(g.Name)}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{
		Filters: []gatewayv1.HTTPRouteFilter{mirror("shadow", 20), mirror("gone", 50), mirror("shadow", 100)},
		BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), g, gatewayService(g, 10000), r,
		service(g.Namespace, "web", svcPort("http", 80)), service(g.Namespace, "shadow", svcPort("http", 8080)),
		slice(g.Namespace, "shadow-1", "shadow", "http", 8080, ready("10.0.0.9"))} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	name := g.Namespace + "-shadow-8080"
	l := mirrorLocation(t, cfg, 10080, "a.example.com", "/")
	want := []config.Mirror{{Backend: name, Body: true, Numerator: 20, Denominator: 100}, {Backend: name, Body: true, Numerator: 100, Denominator: 100}}
	if l.Backend != g.Namespace+"-web-80" || !reflect.DeepEqual(l.Mirrors, want) {
		t.Fatalf("location %+v, want backend web and mirrors %+v", l, want)
	}
	sent := false
	for _, b := range cfg.Backends.All() {
		sent = sent || b.Name == name && len(b.Endpoints) == 1
	}
	if !sent {
		t.Errorf("backend %s is not sent", name)
	}
	if got := strings.Join(problemStrings(cfg.Problems), "\n"); !strings.Contains(got, "mirror backend gone") || !strings.Contains(got, "mirror left out") {
		t.Errorf("problems:\n%s\nwant the missing mirror Service", got)
	}
	checkDataPlane(t, cfg)
}

// locationOf returns the Location of Prefix path on host of port.
func mirrorLocation(t *testing.T, cfg *config.Configuration, port int, host, path string) *config.Location {
	t.Helper()
	s := serverAt(cfg, port, host)
	if s == nil {
		t.Fatalf("no server %s on port %d", host, port)
	}
	for i := range s.Locations {
		if l := &s.Locations[i]; l.Path == path && l.PathType == config.PathPrefix {
			return l
		}
	}
	t.Fatalf("server %s has no Prefix %s: %+v", host, path, s.Locations)
	return nil
}
