package gateway

import (
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestCheckRoute(t *testing.T) {
	regex := gatewayv1.PathMatchRegularExpression
	headerRegex := gatewayv1.HeaderMatchRegularExpression
	other := gatewayv1.Namespace("other")
	port := gatewayv1.PortNumber(80)
	kind := gatewayv1.Kind("Bucket")
	svc := func(name string, ns *gatewayv1.Namespace, k *gatewayv1.Kind) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(name), Namespace: ns, Kind: k, Port: &port}}}
	}
	tests := []struct {
		name string
		rule gatewayv1.HTTPRouteRule
		want []string // one substring per Problem
	}{
		{name: "valid", rule: gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{svc("web", nil, nil)}}},
		{name: "another namespace is taken as granted", rule: gatewayv1.HTTPRouteRule{
			BackendRefs: []gatewayv1.HTTPBackendRef{svc("web", &other, nil)}}},
		{name: "regex path that does not compile", rule: gatewayv1.HTTPRouteRule{
			Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &regex, Value: new("/(a")}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{svc("web", nil, nil)}},
			want: []string{"rule 0 match 0: path \"/(a\""}},
		{name: "header regex that does not compile", rule: gatewayv1.HTTPRouteRule{
			Matches: []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{
				{Type: &headerRegex, Name: "x-a", Value: "(("}}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{svc("web", nil, nil)}},
			want: []string{"header \"x-a\""}},
		{name: "backend of another kind answers 500", rule: gatewayv1.HTTPRouteRule{
			BackendRefs: []gatewayv1.HTTPBackendRef{svc("web", nil, &kind)}},
			want: []string{"not of a supported kind; its share of the requests answers 500"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &gatewayv1.HTTPRoute{Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{tc.rule}}}
			r.Namespace, r.Name = "shop", "r"
			got := CheckRoute(r)
			if len(got) != len(tc.want) {
				t.Fatalf("CheckRoute = %q, want %d Problems like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) || !strings.Contains(got[i], "left out") && !strings.Contains(got[i], "answers 500") {
					t.Errorf("Problem %d = %q, want it to contain %q and say what is left out", i, got[i], w)
				}
			}
		})
	}
}
