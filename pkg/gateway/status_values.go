package gateway

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The values of the enums of HTTPRoute that the API (v1.6.3) knows. The
// specification asks a route holding any other (an API newer than ours;
// the CRDs' validation refuses them otherwise) to be not Accepted, with
// reason UnsupportedValue: unknownValue finds them.
var (
	knownPathTypes   = []gatewayv1.PathMatchType{gatewayv1.PathMatchExact, gatewayv1.PathMatchPathPrefix, gatewayv1.PathMatchRegularExpression}
	knownHeaderTypes = []gatewayv1.HeaderMatchType{gatewayv1.HeaderMatchExact, gatewayv1.HeaderMatchRegularExpression}
	knownQueryTypes  = []gatewayv1.QueryParamMatchType{gatewayv1.QueryParamMatchExact, gatewayv1.QueryParamMatchRegularExpression}
	knownMethods     = []gatewayv1.HTTPMethod{gatewayv1.HTTPMethodGet, gatewayv1.HTTPMethodHead, gatewayv1.HTTPMethodPost,
		gatewayv1.HTTPMethodPut, gatewayv1.HTTPMethodDelete, gatewayv1.HTTPMethodConnect, gatewayv1.HTTPMethodOptions,
		gatewayv1.HTTPMethodTrace, gatewayv1.HTTPMethodPatch}
	knownFilterTypes = []gatewayv1.HTTPRouteFilterType{gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		gatewayv1.HTTPRouteFilterResponseHeaderModifier, gatewayv1.HTTPRouteFilterRequestRedirect,
		gatewayv1.HTTPRouteFilterURLRewrite, gatewayv1.HTTPRouteFilterRequestMirror, gatewayv1.HTTPRouteFilterCORS,
		gatewayv1.HTTPRouteFilterExternalAuth, gatewayv1.HTTPRouteFilterExtensionRef}
)

// unknownValue names the first value of r's rules that the API does not
// know, "" when there is none.
func unknownValue(r *gatewayv1.HTTPRoute) string {
	for i := range r.Spec.Rules {
		rule := &r.Spec.Rules[i]
		for j := range rule.Matches {
			if why := unknownInMatch(&rule.Matches[j]); why != "" {
				return fmt.Sprintf("rule %d match %d: %s", i, j, why)
			}
		}
		for _, f := range rule.Filters {
			if !slices.Contains(knownFilterTypes, f.Type) {
				return fmt.Sprintf("rule %d: filter type %q is not known", i, f.Type)
			}
		}
		for _, b := range rule.BackendRefs {
			for _, f := range b.Filters {
				if !slices.Contains(knownFilterTypes, f.Type) {
					return fmt.Sprintf("rule %d backendRef %s: filter type %q is not known", i, b.Name, f.Type)
				}
			}
		}
	}
	return ""
}

// unknownInMatch names the first value of m the API does not know.
func unknownInMatch(m *gatewayv1.HTTPRouteMatch) string {
	if m.Path != nil && m.Path.Type != nil && !slices.Contains(knownPathTypes, *m.Path.Type) {
		return fmt.Sprintf("path type %q is not known", *m.Path.Type)
	}
	for _, h := range m.Headers {
		if h.Type != nil && !slices.Contains(knownHeaderTypes, *h.Type) {
			return fmt.Sprintf("header match type %q is not known", *h.Type)
		}
	}
	for _, q := range m.QueryParams {
		if q.Type != nil && !slices.Contains(knownQueryTypes, *q.Type) {
			return fmt.Sprintf("query parameter match type %q is not known", *q.Type)
		}
	}
	if m.Method != nil && !slices.Contains(knownMethods, *m.Method) {
		return fmt.Sprintf("method %q is not known", *m.Method)
	}
	return ""
}
