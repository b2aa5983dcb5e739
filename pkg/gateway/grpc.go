package gateway

import (
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// A GRPCRoute is translated, attached and given its status as the
// HTTPRoute it is to the data plane (HTTPView): a gRPC call is an HTTP/2
// POST of path /<service>/<method>, so a method match is a path match and
// a gRPC header match a header match; its filters and backendRefs are
// those of an HTTPRoute of the same names. The view keeps the GRPCRoute's
// kind in its TypeMeta (routeKind): what depends on the kind (the
// listeners' allowedRoutes.kinds, the ReferenceGrants of its backendRefs,
// the Origin of its entry, the protocol of its backends) reads it there.

// grpcRouteKind is GRPCRoute as a RouteGroupKind.
var grpcRouteKind = gatewayv1.RouteGroupKind{Group: new(gatewayv1.Group(gatewayv1.GroupName)), Kind: "GRPCRoute"}

// HTTPView returns the HTTPRoute a GRPCRoute is served as (see above);
// nil for nil.
func HTTPView(g *gatewayv1.GRPCRoute) *gatewayv1.HTTPRoute {
	if g == nil {
		return nil
	}
	r := &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: string(events.KindGRPCRoute)},
		ObjectMeta: g.ObjectMeta,
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: g.Spec.CommonRouteSpec,
			Hostnames:       g.Spec.Hostnames,
		},
		Status: gatewayv1.HTTPRouteStatus{RouteStatus: g.Status.RouteStatus},
	}
	for i := range g.Spec.Rules {
		r.Spec.Rules = append(r.Spec.Rules, httpRule(&g.Spec.Rules[i]))
	}
	return r
}

// routeKind is the kind of route r: GRPCRoute for the view of one,
// HTTPRoute otherwise.
func routeKind(r *gatewayv1.HTTPRoute) events.Kind {
	if r.Kind == string(events.KindGRPCRoute) {
		return events.KindGRPCRoute
	}
	return events.KindHTTPRoute
}

// IsGRPC reports whether r is the view of a GRPCRoute (HTTPView).
func IsGRPC(r *gatewayv1.HTTPRoute) bool { return routeKind(r) == events.KindGRPCRoute }

// httpRule is the HTTPRoute rule of GRPCRoute rule g.
func httpRule(g *gatewayv1.GRPCRouteRule) gatewayv1.HTTPRouteRule {
	out := gatewayv1.HTTPRouteRule{Name: g.Name, SessionPersistence: g.SessionPersistence,
		Filters: httpFilters(g.Filters)}
	for i := range g.Matches {
		out.Matches = append(out.Matches, httpMatch(&g.Matches[i]))
	}
	for _, b := range g.BackendRefs {
		out.BackendRefs = append(out.BackendRefs, gatewayv1.HTTPBackendRef{BackendRef: b.BackendRef, Filters: httpFilters(b.Filters)})
	}
	return out
}

// httpFilters are the HTTPRoute filters of GRPCRoute filters fs: the same
// types with the same settings.
func httpFilters(fs []gatewayv1.GRPCRouteFilter) []gatewayv1.HTTPRouteFilter {
	var out []gatewayv1.HTTPRouteFilter
	for _, f := range fs {
		out = append(out, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterType(f.Type),
			RequestHeaderModifier: f.RequestHeaderModifier, ResponseHeaderModifier: f.ResponseHeaderModifier,
			RequestMirror: f.RequestMirror, ExtensionRef: f.ExtensionRef})
	}
	return out
}

// httpMatch is the HTTPRoute match of GRPCRoute match g: its method as a
// path (grpcPath), its headers as header matches.
func httpMatch(g *gatewayv1.GRPCRouteMatch) gatewayv1.HTTPRouteMatch {
	typ, value := grpcPath(g.Method)
	out := gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: &typ, Value: &value}}
	for _, h := range g.Headers {
		t := gatewayv1.HeaderMatchExact
		if h.Type != nil && *h.Type == gatewayv1.GRPCHeaderMatchRegularExpression {
			t = gatewayv1.HeaderMatchRegularExpression
		} else if h.Type != nil && *h.Type != gatewayv1.GRPCHeaderMatchExact {
			t = gatewayv1.HeaderMatchType(*h.Type) // not known: the translator leaves the match out
		}
		out.Headers = append(out.Headers, gatewayv1.HTTPHeaderMatch{Type: &t, Name: gatewayv1.HTTPHeaderName(h.Name), Value: h.Value})
	}
	return out
}

// anyName matches one element of a gRPC path: a service or a method.
const anyName = "[^/]+"

// grpcPath is the path match of method match m: every request without
// one; Exact with service and method the path /<service>/<method>, with
// the service alone the prefix /<service>; any other the regular
// expression of the whole path, case-sensitive ((?-i): the router's
// regular expressions ignore case otherwise), an element not given
// matching any name. A type that is not known stays as written, which the
// translator refuses.
func grpcPath(m *gatewayv1.GRPCMethodMatch) (gatewayv1.PathMatchType, string) {
	if m == nil || (m.Service == nil && m.Method == nil) {
		return gatewayv1.PathMatchPathPrefix, "/"
	}
	typ := gatewayv1.GRPCMethodMatchExact
	if m.Type != nil {
		typ = *m.Type
	}
	svc, method := deref(m.Service), deref(m.Method)
	switch typ {
	case gatewayv1.GRPCMethodMatchExact:
		switch {
		case svc != "" && method != "":
			return gatewayv1.PathMatchExact, "/" + svc + "/" + method
		case svc != "":
			return gatewayv1.PathMatchPathPrefix, "/" + svc
		}
		return gatewayv1.PathMatchRegularExpression, "/(?-i)" + anyName + "/" + regexp.QuoteMeta(method) + "$"
	case gatewayv1.GRPCMethodMatchRegularExpression:
		return gatewayv1.PathMatchRegularExpression, "/(?-i)(?:" + orAny(svc) + ")/(?:" + orAny(method) + ")$"
	}
	return gatewayv1.PathMatchType(typ), "/"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orAny(re string) string {
	if re == "" {
		return anyName
	}
	return re
}
