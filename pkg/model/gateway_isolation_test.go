package model

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// builtFrom is the Configuration of a Store (with the Gateway API source)
// holding objs.
func builtFrom(t *testing.T, objs ...runtime.Object) *config.Configuration {
	t.Helper()
	s := newGatewayStore()
	for _, o := range objs {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	return Build(s, testOptions())
}

// TestBuildListenerIsolation: the Servers of a Gateway port with several
// listeners carry their hostnames (Server.Listeners), and a route's
// hostname that a more specific listener takes is not among its Servers;
// a port of one listener carries none.
func TestBuildListenerIsolation(t *testing.T) {
	all := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}
	edge := eventstest.Gateway()
	wild := gatewayv1.Hostname("*.example.com")
	edge.Spec.Listeners = []gatewayv1.Listener{
		{Name: "any", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: all},
		{Name: "wild", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: &wild, AllowedRoutes: all},
		{Name: "alone", Port: 81, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: all},
	}
	route := func(name string, section gatewayv1.SectionName, hosts ...gatewayv1.Hostname) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", name)}
		r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name),
			Namespace: ptr(gatewayv1.Namespace(edge.Namespace)), SectionName: ptr(section)}}
		r.Spec.Hostnames = hosts
		r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
		return r
	}
	cfg := builtFrom(t, eventstest.GatewayClass(), edge, service("app", "web", svcPort("http", 80)), gatewayService(edge, 10000),
		route("any", "any", "a.example.org", "*.example.com"), route("wild", "wild"), route("alone", "alone", "*.example.com"))
	var got []string
	for _, srv := range cfg.Servers {
		if srv.Port != 0 {
			got = append(got, srv.Key())
		}
	}
	if want := []string{"10080:*.example.com", "10080:a.example.org", "10081:*.example.com"}; !slices.Equal(got, want) {
		t.Fatalf("servers %v, want %v", got, want)
	}
	for _, c := range []struct {
		port      int
		host      string
		listeners []string
		ingress   string
	}{
		{10080, "*.example.com", []string{"*.example.com", "_"}, "app/wild"},
		{10080, "a.example.org", []string{"*.example.com", "_"}, "app/any"},
		{10081, "*.example.com", nil, "app/alone"},
	} {
		srv := serverAt(cfg, c.port, c.host)
		if !slices.Equal(srv.Listeners, c.listeners) || srv.Locations[0].Ingress != c.ingress {
			t.Errorf("%s: listeners %v, route %s; want %v, %s", srv.Key(), srv.Listeners, srv.Locations[0].Ingress, c.listeners, c.ingress)
		}
	}
	checkDataPlane(t, cfg)
}

// TestBuildBackendFilters: a backendRef's request header filter stays with
// its backend, and a single backend with one is not routed as a plain
// backend (which has no filter of its own).
func TestBuildBackendFilters(t *testing.T) {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	set := func(v string) *gatewayv1.HTTPHeaderFilter {
		return &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "Backend", Value: v}}}
	}
	ref := func(svc string, f *gatewayv1.HTTPHeaderFilter) gatewayv1.HTTPBackendRef {
		b := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr(gatewayv1.PortNumber(80))}}}
		if f != nil {
			b.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: f}}
		}
		return b
	}
	exact := func(p string) []gatewayv1.HTTPRouteMatch {
		return []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr(gatewayv1.PathMatchExact), Value: ptr(p)}}}
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{
		{Matches: exact("/two"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", set("web")), ref("canary", nil)}},
		{Matches: exact("/one"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", set("one"))}},
		{Matches: exact("/plain"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", nil)}},
	}
	cfg := builtFrom(t, eventstest.GatewayClass(), edge, service("app", "web", svcPort("http", 80)),
		service("app", "canary", svcPort("http", 80)), r, gatewayService(edge, 10000))
	a := serverAt(cfg, 10080, "a.example.com")
	filter := func(v string) *config.HeaderFilter {
		return &config.HeaderFilter{Set: []config.Header{{Name: "Backend", Value: v}}}
	}
	want := map[string][]config.WeightedBackend{
		"/two":   {{Backend: "app-web-80", Weight: 1, RequestHeaders: filter("web")}, {Backend: "app-canary-80", Weight: 1}},
		"/one":   {{Backend: "app-web-80", Weight: 1, RequestHeaders: filter("one")}},
		"/plain": nil,
	}
	for _, l := range a.Locations {
		w, ok := want[l.Path]
		if !ok {
			continue
		}
		if !reflect.DeepEqual(l.Backends, w) || (w == nil) != (l.Backend == "app-web-80") {
			t.Errorf("location %s: backend %q, backends %+v, want %+v", l.Path, l.Backend, l.Backends, w)
		}
		delete(want, l.Path)
	}
	if len(want) > 0 {
		t.Errorf("locations missing: %v", want)
	}
	checkDataPlane(t, cfg)
}
