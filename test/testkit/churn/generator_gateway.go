package churn

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// The Gateway API objects of a Spec with Routes events.KindHTTPRoute.
const (
	GatewayClassName = "churn"
	GatewayName      = "churn"
	// GatewayPort is the port of the Gateway's one HTTP listener.
	GatewayPort = 80
)

func (g *Generator) httpRoutes() bool { return g.spec.Routes == events.KindHTTPRoute }

// GatewayNamespace is the namespace of the Gateway (the first one).
func (g *Generator) GatewayNamespace() string { return g.apps[0].ns }

func (g *Generator) gatewayClass() *gatewayv1.GatewayClass {
	return &gatewayv1.GatewayClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "GatewayClass"},
		ObjectMeta: metav1.ObjectMeta{Name: GatewayClassName},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: gateway.DefaultControllerName},
	}
}

func (g *Generator) gateway() *gatewayv1.Gateway {
	all := gatewayv1.NamespacesFromAll
	return &gatewayv1.Gateway{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Namespace: g.GatewayNamespace(), Name: GatewayName},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: GatewayClassName,
			Listeners: []gatewayv1.Listener{{Name: "http", Port: GatewayPort, Protocol: gatewayv1.HTTPProtocolType,
				AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &all}}}},
		},
	}
}

// httpRoute routes host to service (PathPrefix /, and /api as a rule of
// its own when api is set) through the Gateway.
func (g *Generator) httpRoute(ns, name, host, service string, api bool) *gatewayv1.HTTPRoute {
	backend := []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(service), Port: ptr.To[gatewayv1.PortNumber](servicePort)}}}}
	rule := func(path string) gatewayv1.HTTPRouteRule {
		return gatewayv1.HTTPRouteRule{BackendRefs: backend, Matches: []gatewayv1.HTTPRouteMatch{{
			Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(path)}}}}
	}
	rules := []gatewayv1.HTTPRouteRule{rule("/")}
	if api {
		rules = append(rules, rule("/api"))
	}
	gwNS := gatewayv1.Namespace(g.GatewayNamespace())
	return &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: GatewayName, Namespace: &gwNS}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules:           rules,
		},
	}
}
