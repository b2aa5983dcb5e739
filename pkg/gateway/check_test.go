package gateway

import (
	"slices"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
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

// FuzzCheckRouteAgreesWithTranslation: for a route of hostile matches and
// filters on a Gateway that accepts it, CheckRoute says exactly the
// Problems the translation says, and a route whose Problems leave nothing
// out (config.Problem.Unserved) keeps a path for every match: what the
// admission webhook refuses is what the syncers would leave out.
func FuzzCheckRouteAgreesWithTranslation(f *testing.F) {
	f.Add("/api", uint8(0), "x-a", "v", "GET", uint16(0))
	f.Add("/(a", uint8(2), "x-b", "((", "get", uint16(301))
	f.Add("//a/../b", uint8(1), "bad name", ".*", "PO ST", uint16(418))
	f.Add("/a\x00b", uint8(3), "", "\\", "", uint16(308))
	f.Fuzz(func(t *testing.T, path string, typ uint8, header, value, method string, code uint16) {
		types := []gatewayv1.PathMatchType{gatewayv1.PathMatchPathPrefix, gatewayv1.PathMatchExact, gatewayv1.PathMatchRegularExpression, "Glob"}
		pt := types[int(typ)%len(types)]
		m := gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: &pt, Value: &path}}
		headerType := gatewayv1.HeaderMatchType([]string{"Exact", "RegularExpression"}[int(typ)%2])
		if header != "" {
			m.Headers = []gatewayv1.HTTPHeaderMatch{{Type: &headerType, Name: gatewayv1.HTTPHeaderName(header), Value: value}}
		}
		if method != "" {
			m.Method = (*gatewayv1.HTTPMethod)(&method)
		}
		r := rule([]gatewayv1.HTTPRouteMatch{m, pathMatch(gatewayv1.PathMatchPathPrefix, "/ok")}, backend("web", 80))
		if code != 0 {
			c := int(code)
			r.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect,
				RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: &c}}}
		}
		route := httpRoute([]string{"shop.example.com"}, r)
		e := translated(t, route, class("c", testController), gw("infra", "edge", "c", allNamespaces(listener("http", 80, ""))))
		got := CheckRoute(route)
		if !slices.Equal(got, e.Problems) {
			t.Fatalf("CheckRoute = %q, translation's Problems %q", got, e.Problems)
		}
		unserved := slices.ContainsFunc(got, func(p string) bool {
			return config.Problem{Reason: p}.Unserved() != config.ServedAsIs
		})
		paths := 0
		for _, h := range e.Rules {
			paths += len(h.Paths)
		}
		if len(e.Rules) != 1 || unserved == (paths == 2) {
			t.Fatalf("%d hosts with %d paths of 2 matches, Problems %q (unserved: %v)", len(e.Rules), paths, got, unserved)
		}
	})
}
