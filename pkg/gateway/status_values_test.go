package gateway

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestUnknownValue(t *testing.T) {
	match := func(change func(*gatewayv1.HTTPRouteMatch)) gatewayv1.HTTPRouteRule {
		m := pathMatch(gatewayv1.PathMatchExact, "/")
		change(&m)
		return rule([]gatewayv1.HTTPRouteMatch{m}, backend("web", 80))
	}
	filtered := func(typ gatewayv1.HTTPRouteFilterType, onBackend bool) gatewayv1.HTTPRouteRule {
		r := rule(nil, backend("web", 80))
		if onBackend {
			r.BackendRefs[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: typ}}
		} else {
			r.Filters = []gatewayv1.HTTPRouteFilter{{Type: typ}}
		}
		return r
	}
	tests := []struct {
		name string
		rule gatewayv1.HTTPRouteRule
		want string // a part of the reason, "" for none
	}{
		{name: "every value known", rule: match(func(m *gatewayv1.HTTPRouteMatch) {
			m.Headers = []gatewayv1.HTTPHeaderMatch{{Type: ptr.To(gatewayv1.HeaderMatchRegularExpression), Name: "x", Value: "y"}}
			m.Method = ptr.To(gatewayv1.HTTPMethodPatch)
		})},
		{name: "known filter not served yet is not unknown", rule: filtered(gatewayv1.HTTPRouteFilterURLRewrite, false)},
		{name: "path type", rule: match(func(m *gatewayv1.HTTPRouteMatch) { m.Path.Type = ptr.To[gatewayv1.PathMatchType]("Glob") }), want: `path type "Glob"`},
		{name: "header type", rule: match(func(m *gatewayv1.HTTPRouteMatch) {
			m.Headers = []gatewayv1.HTTPHeaderMatch{{Type: ptr.To[gatewayv1.HeaderMatchType]("Prefix"), Name: "x", Value: "y"}}
		}), want: `header match type "Prefix"`},
		{name: "query type", rule: match(func(m *gatewayv1.HTTPRouteMatch) {
			m.QueryParams = []gatewayv1.HTTPQueryParamMatch{{Type: ptr.To[gatewayv1.QueryParamMatchType]("Prefix"), Name: "x", Value: "y"}}
		}), want: `query parameter match type "Prefix"`},
		{name: "method", rule: match(func(m *gatewayv1.HTTPRouteMatch) { m.Method = ptr.To[gatewayv1.HTTPMethod]("BREW") }), want: `method "BREW"`},
		{name: "rule filter", rule: filtered("Teleport", false), want: `filter type "Teleport"`},
		{name: "backendRef filter", rule: filtered("Teleport", true), want: `backendRef web: filter type "Teleport"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unknownValue(httpRoute(nil, tc.rule))
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("unknownValue = %q, want %q", got, tc.want)
			}
		})
	}
}
