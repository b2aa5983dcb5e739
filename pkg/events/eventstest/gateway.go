package eventstest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The Gateway API fixtures set every field a route builder will read, and
// the status the watcher will write, with pointers to zero values where the
// API has them (a weight of 0, the core group ""), which must survive the
// round trip as pointers.

// GatewayController is the controllerName of the fixture GatewayClass.
const GatewayController = "ingress-sync.io/gateway-controller"

// condition is a status condition as the API server stores it.
func condition(typ, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, ObservedGeneration: 3,
		LastTransitionTime: Created(), Reason: reason, Message: reason + " by the fixture"}
}

// GatewayClass is a cluster-scoped class of our controller, accepted.
func GatewayClass() *gatewayv1.GatewayClass {
	return &gatewayv1.GatewayClass{
		ObjectMeta: objectMeta("", "ingress-sync", "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "501"),
		Spec: gatewayv1.GatewayClassSpec{
			ControllerName: GatewayController,
			ParametersRef: &gatewayv1.ParametersReference{Group: "ingress-sync.io", Kind: "GatewayParameters",
				Name: "default", Namespace: ptr.To[gatewayv1.Namespace]("ingress")},
			Description: ptr.To("the fixture class"),
		},
		Status: gatewayv1.GatewayClassStatus{
			Conditions:        []metav1.Condition{condition("Accepted", "Accepted")},
			SupportedFeatures: []gatewayv1.SupportedFeature{{Name: "Gateway"}, {Name: "HTTPRoute"}},
		},
	}
}

// Gateway has an HTTP and an HTTPS listener (a certificate in its own
// namespace and one in another), allowed routes of every form, addresses
// and infrastructure.
func Gateway() *gatewayv1.Gateway {
	from, sel := gatewayv1.NamespacesFromSame, gatewayv1.NamespacesFromSelector
	return &gatewayv1.Gateway{
		ObjectMeta: objectMeta("shop", "edge", "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", "502"),
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "ingress-sync",
			Listeners: []gatewayv1.Listener{
				{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
					AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}}},
				{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To[gatewayv1.Hostname]("*.shop.example.com"),
					TLS:           listenerTLS(),
					AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &sel, Selector: selector()}, Kinds: routeKinds()}},
			},
			Addresses:      []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: "192.0.2.20"}},
			Infrastructure: &gatewayv1.GatewayInfrastructure{Labels: map[gatewayv1.LabelKey]gatewayv1.LabelValue{"team": "shop"}, Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"lb.example.com/kind": "nlb"}},
		},
		Status: gatewayv1.GatewayStatus{
			Addresses:  []gatewayv1.GatewayStatusAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: "192.0.2.20"}},
			Conditions: []metav1.Condition{condition("Accepted", "Accepted"), condition("Programmed", "Programmed")},
			Listeners: []gatewayv1.ListenerStatus{{Name: "https", SupportedKinds: routeKinds(), AttachedRoutes: 2,
				Conditions: []metav1.Condition{condition("ResolvedRefs", "ResolvedRefs")}}},
		},
	}
}

func listenerTLS() *gatewayv1.ListenerTLSConfig {
	return &gatewayv1.ListenerTLSConfig{
		Mode: ptr.To(gatewayv1.TLSModeTerminate),
		CertificateRefs: []gatewayv1.SecretObjectReference{
			{Name: "shop-tls"},
			{Group: ptr.To[gatewayv1.Group](""), Kind: ptr.To[gatewayv1.Kind]("Secret"), Name: "wildcard", Namespace: ptr.To[gatewayv1.Namespace]("certs")},
		},
		Options: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"ingress-sync.io/min-version": "1.2"},
	}
}

func selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{
		MatchLabels:      map[string]string{"gateway-access": "shop"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "staging"}}},
	}
}

func routeKinds() []gatewayv1.RouteGroupKind {
	return []gatewayv1.RouteGroupKind{{Group: ptr.To[gatewayv1.Group](gatewayv1.GroupName), Kind: "HTTPRoute"}}
}

// HTTPRoute has every match, filter, timeout and backend form.
func HTTPRoute() *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: objectMeta("shop", "web", "3c4d5e6f-7a8b-4c9d-0e1f-2a3b4c5d6e7f", "503"),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{
				{Name: "edge", SectionName: ptr.To[gatewayv1.SectionName]("https")},
				{Group: ptr.To[gatewayv1.Group](gatewayv1.GroupName), Kind: ptr.To[gatewayv1.Kind]("Gateway"),
					Namespace: ptr.To[gatewayv1.Namespace]("infra"), Name: "shared", Port: ptr.To[gatewayv1.PortNumber](8080)},
			}},
			Hostnames: []gatewayv1.Hostname{"shop.example.com", "*.shop.example.com"},
			Rules:     []gatewayv1.HTTPRouteRule{matchRule(), filterRule()},
		},
		Status: gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{
			ParentRef: gatewayv1.ParentReference{Name: "edge"}, ControllerName: GatewayController,
			Conditions: []metav1.Condition{condition("Accepted", "Accepted"), condition("ResolvedRefs", "ResolvedRefs")},
		}}}},
	}
}

// matchRule has every kind of match, weighted backends (one of weight 0,
// one in another namespace) and both timeouts.
func matchRule() gatewayv1.HTTPRouteRule {
	exact, prefix, regex := gatewayv1.PathMatchExact, gatewayv1.PathMatchPathPrefix, gatewayv1.PathMatchRegularExpression
	hdrExact, hdrRegex := gatewayv1.HeaderMatchExact, gatewayv1.HeaderMatchRegularExpression
	return gatewayv1.HTTPRouteRule{
		Name: ptr.To[gatewayv1.SectionName]("api"),
		Matches: []gatewayv1.HTTPRouteMatch{
			{Path: &gatewayv1.HTTPPathMatch{Type: &exact, Value: ptr.To("/login")}, Method: ptr.To(gatewayv1.HTTPMethodPost)},
			{Path: &gatewayv1.HTTPPathMatch{Type: &prefix, Value: ptr.To("/api")},
				Headers:     []gatewayv1.HTTPHeaderMatch{{Type: &hdrExact, Name: "X-Version", Value: "2"}, {Type: &hdrRegex, Name: "User-Agent", Value: "^curl/.*"}},
				QueryParams: []gatewayv1.HTTPQueryParamMatch{{Type: ptr.To(gatewayv1.QueryParamMatchExact), Name: "debug", Value: "1"}}},
			{Path: &gatewayv1.HTTPPathMatch{Type: &regex, Value: ptr.To(`/v[0-9]+/.*`)}},
		},
		BackendRefs: []gatewayv1.HTTPBackendRef{
			{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "api", Port: ptr.To[gatewayv1.PortNumber](8080)}, Weight: ptr.To[int32](90)}},
			{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
				Group: ptr.To[gatewayv1.Group](""), Kind: ptr.To[gatewayv1.Kind]("Service"), Name: "api-canary",
				Namespace: ptr.To[gatewayv1.Namespace]("canary"), Port: ptr.To[gatewayv1.PortNumber](8080)}, Weight: ptr.To[int32](0)},
				Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
					RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Canary", Value: "true"}}}}}},
		},
		Timeouts: &gatewayv1.HTTPRouteTimeouts{Request: ptr.To[gatewayv1.Duration]("10s"), BackendRequest: ptr.To[gatewayv1.Duration]("2s")},
	}
}

// filterRule has every standard filter.
func filterRule() gatewayv1.HTTPRouteRule {
	return gatewayv1.HTTPRouteRule{
		Filters: []gatewayv1.HTTPRouteFilter{
			{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: headerFilter()},
			{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: headerFilter()},
			{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
				Scheme: ptr.To("https"), Hostname: ptr.To[gatewayv1.PreciseHostname]("www.shop.example.com"),
				Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr.To("/moved")},
				Port: ptr.To[gatewayv1.PortNumber](8443), StatusCode: ptr.To(308)}},
			{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
				Hostname: ptr.To[gatewayv1.PreciseHostname]("internal.shop"),
				Path:     &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To("/")}}},
			{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
				BackendRef: gatewayv1.BackendObjectReference{Name: "mirror", Port: ptr.To[gatewayv1.PortNumber](80)}, Percent: ptr.To[int32](25)}},
			{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
				BackendRef: gatewayv1.BackendObjectReference{Name: "mirror-2", Port: ptr.To[gatewayv1.PortNumber](80)},
				Fraction:   &gatewayv1.Fraction{Numerator: 1, Denominator: ptr.To[int32](3)}}},
			{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
				AllowOrigins: []gatewayv1.CORSOrigin{"https://*.example.com"}, AllowCredentials: ptr.To(false),
				AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"GET", "POST"}, AllowHeaders: []gatewayv1.HTTPHeaderName{"X-Token"},
				ExposeHeaders: []gatewayv1.HTTPHeaderName{"X-Trace"}, MaxAge: 600}},
			{Type: gatewayv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gatewayv1.LocalObjectReference{Group: "ingress-sync.io", Kind: "Snippet", Name: "none"}},
		},
		BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr.To[gatewayv1.PortNumber](80)}}}},
	}
}

func headerFilter() *gatewayv1.HTTPHeaderFilter {
	return &gatewayv1.HTTPHeaderFilter{
		Set:    []gatewayv1.HTTPHeader{{Name: "X-Shop", Value: "1"}},
		Add:    []gatewayv1.HTTPHeader{{Name: "X-Via", Value: "ingress-sync"}},
		Remove: []string{"X-Internal"},
	}
}

// ReferenceGrant lets the Gateways and HTTPRoutes of namespace shop refer
// to every Secret and to the Service api-canary of namespace canary.
func ReferenceGrant() *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{
		ObjectMeta: objectMeta("canary", "from-shop", "4d5e6f7a-8b9c-4d0e-1f2a-3b4c5d6e7f80", "504"),
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{
				{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: "shop"},
				{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "shop"},
			},
			To: []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Secret"}, {Group: "", Kind: "Service", Name: ptr.To[gatewayv1.ObjectName]("api-canary")}},
		},
	}
}
