package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestTranslateBackendFilters(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	setHeader := func(name, value string) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: value}}}}
	}
	filtered := func(svc string, weight int32, fs ...gatewayv1.HTTPRouteFilter) gatewayv1.HTTPBackendRef {
		b := backend(svc, 8)
		b.Weight, b.Filters = &weight, fs
		return b
	}
	tests := []struct {
		name     string
		refs     []gatewayv1.HTTPBackendRef
		want     []string // per weighted backend: "service*weight filter-JSON", "500*weight" for one not served
		problems []string
	}{
		{name: "a filter per backend", refs: []gatewayv1.HTTPBackendRef{filtered("v1", 10, setHeader("Backend", "v1")), filtered("v2", 10, setHeader("Backend", "v2"))},
			want: []string{`v1*10 {"set":[{"name":"Backend","value":"v1"}]}`, `v2*10 {"set":[{"name":"Backend","value":"v2"}]}`}},
		{name: "one backend with a filter", refs: []gatewayv1.HTTPBackendRef{filtered("v1", 1, gatewayv1.HTTPRouteFilter{
			Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
				Add: []gatewayv1.HTTPHeader{{Name: "X-Add", Value: "a"}}, Remove: []string{"X-Gone"}}})},
			want: []string{`v1*1 {"add":[{"name":"X-Add","value":"a"}],"remove":["X-Gone"]}`}},
		{name: "a backend without filter beside one with", refs: []gatewayv1.HTTPBackendRef{filtered("v1", 1), filtered("v2", 3, setHeader("B", "2"))},
			want: []string{"v1*1 null", `v2*3 {"set":[{"name":"B","value":"2"}]}`}},
		{name: "a filter of another type: that share answers 500", refs: []gatewayv1.HTTPBackendRef{
			filtered("v1", 1, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier,
				ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X", Value: "1"}}}}),
			filtered("v2", 1)},
			want: []string{"500*1", "v2*1 null"}, problems: []string{"backendRef v1: filter ResponseHeaderModifier is not served yet; its share of the requests answers 500"}},
		{name: "the filter given twice", refs: []gatewayv1.HTTPBackendRef{filtered("v1", 1, setHeader("A", "1"), setHeader("B", "2"))},
			want: []string{"500*1"}, problems: []string{"backendRef v1: filter RequestHeaderModifier is given twice"}},
		{name: "a header name that is not a token", refs: []gatewayv1.HTTPBackendRef{filtered("v1", 1, setHeader("A B", "1"))},
			want: []string{"500*1"}, problems: []string{`backendRef v1: filter RequestHeaderModifier: header "A B": header name is not a token`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := translated(t, httpRoute(nil, rule(nil, tc.refs...)), ours, edge)
			if len(e.Rules) != 1 || len(e.Rules[0].Paths) != 1 {
				t.Fatalf("rules %+v", e.Rules)
			}
			var got []string
			for _, w := range e.Rules[0].Paths[0].Weighted {
				if w.Invalid {
					got = append(got, fmt.Sprintf("500*%d", w.Weight))
					continue
				}
				js, err := json.Marshal(w.RequestHeaders)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s*%d %s", w.Backend.Service, w.Weight, js))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("backends\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			checkProblems(t, e.Problems, tc.problems)
		})
	}
}
