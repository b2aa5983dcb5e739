package model

import (
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

// matchRoute is HTTPRoute app/name, created at epoch+created seconds, on
// a.example.com of the test Gateway, one rule to Service web per match.
func matchRoute(name string, created int, matches ...gatewayv1.HTTPRouteMatch) *gatewayv1.HTTPRoute {
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", name)}
	r.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(created) * time.Second))
	edge := eventstest.Gateway()
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	for _, m := range matches {
		r.Spec.Rules = append(r.Spec.Rules, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{m},
			BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}})
	}
	return r
}

func headerMatch(pairs ...string) gatewayv1.HTTPRouteMatch {
	var m gatewayv1.HTTPRouteMatch
	for i := 0; i+1 < len(pairs); i += 2 {
		m.Headers = append(m.Headers, gatewayv1.HTTPHeaderMatch{Name: gatewayv1.HTTPHeaderName(pairs[i]), Value: pairs[i+1]})
	}
	return m
}

// TestBuildMatchCandidates: Locations of one host and path with different
// conditions are candidates, ordered as the Gateway API's precedence
// (method, more headers, more query parameters, then the older route and
// rule order); the same conditions twice conflict (the older route wins);
// a "/" with conditions keeps the catch-all after it.
func TestBuildMatchCandidates(t *testing.T) {
	class := eventstest.GatewayClass()
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	query := gatewayv1.HTTPRouteMatch{QueryParams: []gatewayv1.HTTPQueryParamMatch{{Name: "q", Value: "1"}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{class, edge, service("app", "web", svcPort("http", 80)),
		matchRoute("old", 10, headerMatch("x", "1"), query, headerMatch("z", "1")),
		matchRoute("new", 20, headerMatch("x", "1", "y", "1"), headerMatch("X", "1"), gatewayv1.HTTPRouteMatch{Method: ptr(gatewayv1.HTTPMethodGet)}, headerMatch("w", "1")),
		gatewayService(edge, 10000)} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	checkDataPlane(t, cfg)
	a := serverAt(cfg, 10080, "a.example.com")
	if a == nil {
		t.Fatal("no server a.example.com")
	}
	var got []string
	for _, l := range a.Locations {
		got = append(got, l.Ingress+" "+l.Path+" "+matchKey(l.Match))
	}
	want := []string{
		"app/new / method=GET", "app/new / h:x=1 h:y=1",
		"app/old / h:x=1", "app/old / h:z=1", "app/new / h:w=1",
		"app/old / q:q=1", " / ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("locations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	conflict := "HTTPRoute app/new: host a.example.com path / (Prefix): conflicts with HTTPRoute app/old, which is older and is used"
	if ps := problemStrings(cfg.Problems); !slices.ContainsFunc(ps, func(p string) bool { return strings.Contains(p, conflict) }) {
		t.Errorf("problems %q, want one like %q", ps, conflict)
	}
}

// matchKey is a readable form of m for tests.
func matchKey(m *config.Match) string {
	if m == nil {
		return ""
	}
	var parts []string
	if m.Method != "" {
		parts = append(parts, "method="+m.Method)
	}
	for _, v := range m.Headers {
		parts = append(parts, "h:"+v.Name+"="+v.Value)
	}
	for _, v := range m.Query {
		parts = append(parts, "q:"+v.Name+"="+v.Value)
	}
	return strings.Join(parts, " ")
}

// TestBuildRouteFilters: a rule's filters reach its Locations; a rule
// that redirects needs no backend (its Location has none).
func TestBuildRouteFilters(t *testing.T) {
	class := eventstest.GatewayClass()
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	r := matchRoute("r", 10, headerMatch("x", "1"), headerMatch("y", "1"))
	r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect,
		RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{Hostname: ptr(gatewayv1.PreciseHostname("example.org"))}}}
	r.Spec.Rules[0].BackendRefs = nil
	r.Spec.Rules[1].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Remove: []string{"X-Gone"}}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{class, edge, service("app", "web", svcPort("http", 80)), r, gatewayService(edge, 10000)} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	checkDataPlane(t, cfg)
	a := serverAt(cfg, 10080, "a.example.com")
	if a == nil || len(a.Locations) != 3 {
		t.Fatalf("a.example.com: %+v", a)
	}
	redirect, headers := a.Locations[0], a.Locations[1]
	if redirect.Backend != "" || redirect.Filters == nil || redirect.Filters.Redirect == nil || redirect.Filters.Redirect.Hostname != "example.org" {
		t.Errorf("redirect location: %+v", redirect)
	}
	if headers.Backend != "app-web-80" || headers.Filters == nil || !slices.Equal(headers.Filters.RequestHeaders.Remove, []string{"X-Gone"}) {
		t.Errorf("header filter location: %+v", headers)
	}
	if len(cfg.Problems) > 0 {
		t.Errorf("problems: %q", problemStrings(cfg.Problems))
	}
}
