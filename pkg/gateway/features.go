package gateway

import (
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// supportedFeatures are the Gateway API features the data plane serves
// today, which our GatewayClasses list in status.supportedFeatures (the
// conformance suite runs the tests of exactly these when it is given no
// --supported-features).
//
// The list must name exactly what passes the conformance suite
// (sigs.k8s.io/gateway-api/conformance, GATEWAY-HTTP and GATEWAY-GRPC
// profiles): whoever
// makes a feature pass adds it here, in the same change; a feature listed
// that fails makes the suite fail, and one served but not listed is never
// tested.
var supportedFeatures = []features.FeatureName{
	features.SupportGateway,
	features.SupportHTTPRoute,
	features.SupportReferenceGrant,
	// Listeners on any port (8080 too), a Gateway without spec.addresses
	// given the address of its Service, parentRefs by port, named rules.
	features.SupportGatewayPort8080,
	features.SupportGatewayAddressEmpty,
	features.SupportHTTPRouteParentRefPort,
	features.SupportHTTPRouteNamedRouteRule,
	// Backends of appProtocol kubernetes.io/ws: WebSocket upgrades pass.
	features.SupportHTTPRouteBackendProtocolWebSocket,
	// Matches, filters and timeouts (matches.go, filters.go, cors.go,
	// timeouts.go). ResponseHeaderModification: nginx.conf runs the
	// response header filter whenever it listens on a Gateway's port.
	features.SupportHTTPRouteQueryParamMatching,
	features.SupportHTTPRouteResponseHeaderModification,
	features.SupportHTTPRouteMethodMatching,
	features.SupportHTTPRoutePortRedirect,
	features.SupportHTTPRouteSchemeRedirect,
	features.SupportHTTPRoutePathRedirect,
	features.SupportHTTPRoute303RedirectStatusCode,
	features.SupportHTTPRoute307RedirectStatusCode,
	features.SupportHTTPRoute308RedirectStatusCode,
	features.SupportHTTPRouteHostRewrite,
	features.SupportHTTPRoutePathRewrite,
	features.SupportHTTPRouteRequestTimeout,
	features.SupportHTTPRouteBackendTimeout,
	features.SupportHTTPRouteCORS,
	// Request mirrors (mirror.go, lua/mirror.lua): one, several, a
	// percentage.
	features.SupportHTTPRouteRequestMirror,
	features.SupportHTTPRouteRequestMultipleMirrors,
	features.SupportHTTPRouteRequestPercentageMirror,
	// Listener isolation and 421 for misdirected requests (isolation.go,
	// lua/router.lua), RequestHeaderModifier per backendRef (backends.go).
	features.SupportGatewayHTTPListenerIsolation,
	features.SupportGatewayHTTPSListenerDetectMisdirectedRequests,
	features.SupportHTTPRouteBackendRequestHeaderModification,
	// GRPCRoute (grpc.go) and its named rules.
	features.SupportGRPCRoute,
	features.SupportGRPCRouteNamedRouteRule,
}

// SupportedFeatures returns the features of supportedFeatures as
// GatewayClass status lists them: sorted by name, as the specification
// asks.
func SupportedFeatures() []gatewayv1.SupportedFeature {
	names := slices.Clone(supportedFeatures)
	slices.Sort(names)
	out := make([]gatewayv1.SupportedFeature, len(names))
	for i, n := range names {
		out[i] = gatewayv1.SupportedFeature{Name: gatewayv1.FeatureName(n)}
	}
	return out
}
