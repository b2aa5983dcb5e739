package gateway

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// grpcRoute is a GRPCRoute of namespace "app" to gateway infra/edge, with
// hostnames and rules.
func grpcRoute(hosts []string, rules ...gatewayv1.GRPCRouteRule) *gatewayv1.GRPCRoute {
	r := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "rpc"}}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "edge", Namespace: ptr.To[gatewayv1.Namespace]("infra")}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

func grpcBackend(svc string, port int32, weight int32) gatewayv1.GRPCBackendRef {
	return gatewayv1.GRPCBackendRef{BackendRef: gatewayv1.BackendRef{Weight: &weight, BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(svc), Port: ptr.To(gatewayv1.PortNumber(port))}}}
}

func method(typ gatewayv1.GRPCMethodMatchType, svc, m string) gatewayv1.GRPCRouteMatch {
	mm := &gatewayv1.GRPCMethodMatch{Type: &typ}
	if svc != "" {
		mm.Service = &svc
	}
	if m != "" {
		mm.Method = &m
	}
	return gatewayv1.GRPCRouteMatch{Method: mm}
}

func TestGRPCPath(t *testing.T) {
	exact, regex := gatewayv1.GRPCMethodMatchExact, gatewayv1.GRPCMethodMatchRegularExpression
	tests := []struct {
		name string
		m    *gatewayv1.GRPCMethodMatch
		typ  gatewayv1.PathMatchType
		path string
	}{
		{name: "no method match: every call", typ: gatewayv1.PathMatchPathPrefix, path: "/"},
		{name: "exact service and method", m: method(exact, "echo.Echo", "Two").Method, typ: gatewayv1.PathMatchExact, path: "/echo.Echo/Two"},
		{name: "exact service alone: its prefix", m: method(exact, "echo.Echo", "").Method, typ: gatewayv1.PathMatchPathPrefix, path: "/echo.Echo"},
		{name: "exact method alone: any service", m: method(exact, "", "Two").Method, typ: gatewayv1.PathMatchRegularExpression, path: "/(?-i)[^/]+/Two$"},
		{name: "regular expressions", m: method(regex, `echo\..*`, "Echo.*").Method, typ: gatewayv1.PathMatchRegularExpression, path: `/(?-i)(?:echo\..*)/(?:Echo.*)$`},
		{name: "regular expression of the method alone", m: method(regex, "", "Echo.*").Method, typ: gatewayv1.PathMatchRegularExpression, path: `/(?-i)(?:[^/]+)/(?:Echo.*)$`},
		{name: "default type is Exact", m: &gatewayv1.GRPCMethodMatch{Service: ptr.To("a.B"), Method: ptr.To("C")}, typ: gatewayv1.PathMatchExact, path: "/a.B/C"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ, path := grpcPath(tc.m)
			if typ != tc.typ || path != tc.path {
				t.Errorf("grpcPath = %s %q, want %s %q", typ, path, tc.typ, tc.path)
			}
		})
	}
}

func TestTranslateGRPCRoute(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	exact := gatewayv1.GRPCMethodMatchExact
	version := gatewayv1.GRPCRouteMatch{Headers: []gatewayv1.GRPCHeaderMatch{{Name: "Version", Value: "two"}}}
	tests := []struct {
		name     string
		route    *gatewayv1.GRPCRoute
		want     []string
		problems []string
	}{
		{name: "methods become exact paths", route: grpcRoute([]string{"rpc.example.com"},
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{method(exact, "echo.Echo", "Echo")}, BackendRefs: []gatewayv1.GRPCBackendRef{grpcBackend("v1", 8080, 1)}},
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{method(exact, "echo.Echo", "EchoTwo")}, BackendRefs: []gatewayv1.GRPCBackendRef{grpcBackend("v2", 8080, 1)}}),
			want: []string{"10080:rpc.example.com /echo.Echo/Echo Exact v1:8080", "10080:rpc.example.com /echo.Echo/EchoTwo Exact v2:8080"}},
		{name: "headers become header conditions", route: grpcRoute(nil,
			gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{version}, BackendRefs: []gatewayv1.GRPCBackendRef{grpcBackend("v2", 8080, 1)}}),
			want: []string{"10080:_ / Prefix v2:8080 if h:version=two"}},
		{name: "weighted backends", route: grpcRoute(nil,
			gatewayv1.GRPCRouteRule{BackendRefs: []gatewayv1.GRPCBackendRef{grpcBackend("v1", 8080, 7), grpcBackend("v2", 8080, 3), grpcBackend("v3", 8080, 0)}}),
			want: []string{"10080:_ / Prefix :0 = v1:8080*7 v2:8080*3"}},
		{name: "a mirror is not served: the rule is left out", route: grpcRoute(nil,
			gatewayv1.GRPCRouteRule{Filters: []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterRequestMirror,
				RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{BackendRef: gatewayv1.BackendObjectReference{Name: "m"}}}},
				BackendRefs: []gatewayv1.GRPCBackendRef{grpcBackend("v1", 8080, 1)}}),
			problems: []string{"filter RequestMirror is not served yet"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := translated(t, HTTPView(tc.route), ours, edge)
			if e.Origin.Kind != string(events.KindGRPCRoute) || e.Settings.Location.BackendProtocol != "GRPC" {
				t.Errorf("origin kind %q, backend protocol %q; want GRPCRoute, GRPC", e.Origin.Kind, e.Settings.Location.BackendProtocol)
			}
			if got := summary(e); !slices.Equal(got, tc.want) {
				t.Errorf("paths\n got %q\nwant %q", got, tc.want)
			}
			checkProblems(t, e.Problems, tc.problems)
		})
	}
}

// checkProblems checks that problems hold each of want, in order.
func checkProblems(t *testing.T, problems, want []string) {
	t.Helper()
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want %d like %q", problems, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d %q, want %q in it", i, problems[i], w)
		}
	}
}

// TestH2CListeners: a Gateway's HTTP port serves h2c while only
// GRPCRoutes are attached to it.
func TestH2CListeners(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")), allNamespaces(listener("other", 8080, "")))
	grpcOnly := grpcRoute(nil)
	grpcOnly.Spec.ParentRefs[0].Port = ptr.To[gatewayv1.PortNumber](80)
	httpToo := httpRoute(nil)
	httpToo.Spec.ParentRefs[0].Port = ptr.To[gatewayv1.PortNumber](80)
	tests := []struct {
		name   string
		routes []*gatewayv1.HTTPRoute
		want   []string
	}{
		{name: "no route: HTTP/1.1", want: []string{"10080", "18080"}},
		{name: "a GRPCRoute alone: h2c", routes: []*gatewayv1.HTTPRoute{HTTPView(grpcOnly)}, want: []string{"10080 h2c", "18080"}},
		{name: "a GRPCRoute and an HTTPRoute: HTTP/1.1", routes: []*gatewayv1.HTTPRoute{HTTPView(grpcOnly), httpToo}, want: []string{"10080", "18080"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := NewSource(testController)
			for _, err := range []error{keepErr(src.Keep(events.KindGatewayClass, intent.Key{Name: "ours"}, ours)),
				keepErr(src.Keep(events.KindGateway, intent.Key{Namespace: "infra", Name: "edge"}, edge))} {
				if err != nil {
					t.Fatal(err)
				}
			}
			observe(t, src, gatewayService(edge))
			for _, r := range tc.routes {
				if _, err := src.Translate(routeKind(r), intent.Key{Namespace: r.Namespace, Name: r.Name}, r); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, l := range src.Listeners() {
				s := strings.TrimSpace(strings.Join([]string{strconv.Itoa(l.Port), map[bool]string{true: "h2c"}[l.H2C]}, " "))
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("listeners %q, want %q", got, tc.want)
			}
		})
	}
}

func keepErr(_ []*intent.Entry, err error) error { return err }

// TestGRPCRouteStatus: the kinds a listener allows and the grants a
// GRPCRoute's backendRefs need are GRPCRoute's; h2c backends resolve.
func TestGRPCRouteStatus(t *testing.T) {
	ours := class("ours", testController)
	onlyHTTP := allNamespaces(listener("http", 80, ""))
	onlyHTTP.AllowedRoutes.Kinds = []gatewayv1.RouteGroupKind{{Kind: "HTTPRoute"}}
	h2c := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "v1"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080, AppProtocol: ptr.To("kubernetes.io/h2c")}}}}
	route := grpcRoute(nil, gatewayv1.GRPCRouteRule{BackendRefs: []gatewayv1.GRPCBackendRef{grpcBackend("v1", 8080, 1)}})
	other := grpcRoute(nil, gatewayv1.GRPCRouteRule{BackendRefs: []gatewayv1.GRPCBackendRef{grpcBackend("v1", 8080, 1)}})
	other.Spec.Rules[0].BackendRefs[0].Namespace = ptr.To[gatewayv1.Namespace]("infra")
	httpGrant := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "svc"}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "app"}},
		To:   []gatewayv1.ReferenceGrantTo{{Kind: "Service"}}}}
	tests := []struct {
		name   string
		gw     *gatewayv1.Gateway
		route  *gatewayv1.GRPCRoute
		grants []*gatewayv1.ReferenceGrant
		want   string
	}{
		{name: "accepted, an h2c backend resolves", gw: gw("infra", "edge", "ours", allNamespaces(listener("http", 80, ""))), route: route,
			want: "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs"},
		{name: "a listener of HTTPRoutes only", gw: gw("infra", "edge", "ours", onlyHTTP), route: route,
			want: "Accepted=False/NotAllowedByListeners ResolvedRefs=True/ResolvedRefs"},
		{name: "a grant from HTTPRoutes does not let a GRPCRoute refer", gw: gw("infra", "edge", "ours", allNamespaces(listener("http", 80, ""))),
			route: other, grants: []*gatewayv1.ReferenceGrant{httpGrant}, want: "Accepted=True/Accepted ResolvedRefs=False/RefNotPermitted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &World{Controller: testController,
				Class:   func(string) *gatewayv1.GatewayClass { return ours },
				Gateway: func(string, string) *gatewayv1.Gateway { return tc.gw },
				Service: func(ns, name string) *corev1.Service {
					return map[bool]*corev1.Service{true: h2c}[ns == "app" && name == "v1"]
				},
				Secret: func(string, string) *corev1.Secret { return nil },
				Grants: tc.grants}
			parents := w.RouteParents(HTTPView(tc.route))
			if len(parents) != 1 {
				t.Fatalf("%d parents, want 1", len(parents))
			}
			var got []string
			for _, c := range parents[0].Conditions {
				got = append(got, c.Type+"="+string(c.Status)+"/"+c.Reason)
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("conditions %q, want %q", s, tc.want)
			}
		})
	}
}
