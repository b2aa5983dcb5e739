package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// mirrorFilter is a RequestMirror filter to Service svc (of namespace ns
// when not ""), port 8080 unless noPort.
func mirrorFilter(ns, svc string, set func(*gatewayv1.HTTPRequestMirrorFilter)) gatewayv1.HTTPRouteFilter {
	f := &gatewayv1.HTTPRequestMirrorFilter{BackendRef: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](8080)}}
	if ns != "" {
		f.BackendRef.Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	if set != nil {
		set(f)
	}
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: f}
}

func percent(p int32) func(*gatewayv1.HTTPRequestMirrorFilter) {
	return func(f *gatewayv1.HTTPRequestMirrorFilter) { f.Percent = ptr.To(p) }
}

func fraction(num int32, den *int32) func(*gatewayv1.HTTPRequestMirrorFilter) {
	return func(f *gatewayv1.HTTPRequestMirrorFilter) {
		f.Fraction = &gatewayv1.Fraction{Numerator: num, Denominator: den}
	}
}

// serviceGrant lets the HTTPRoutes of namespace from refer to the
// Services of ns.
func serviceGrant(ns, from string) *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "routes"}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: gatewayv1.Namespace(from)}},
		To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service"}}}}
}

// TestTranslateMirrors: each RequestMirror filter of a rule becomes a
// mirror of its paths, in order, with its share of the requests; one that
// cannot be served is left out with a Problem and the rule is served
// without it.
func TestTranslateMirrors(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	web := backend("web", 8)
	prefix := []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/p")}
	nine := make([]gatewayv1.HTTPRouteFilter, 9)
	for i := range nine {
		nine[i] = mirrorFilter("", fmt.Sprintf("m%d", i), nil)
	}
	tests := []struct {
		name     string
		filters  []gatewayv1.HTTPRouteFilter
		objs     []any
		want     []string // each mirror: service:port num/den body
		problems []string
	}{
		{name: "every request, body included", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", nil)},
			want: []string{"shadow:8080 1/1 body"}},
		{name: "percent", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", percent(20))},
			want: []string{"shadow:8080 20/100 body"}},
		{name: "fraction", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", fraction(25, ptr.To[int32](50)))},
			want: []string{"shadow:8080 25/50 body"}},
		{name: "fraction of 100 by default", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", fraction(7, nil))},
			want: []string{"shadow:8080 7/100 body"}},
		{name: "two mirrors beside a header filter, in order", filters: []gatewayv1.HTTPRouteFilter{
			mirrorFilter("", "b", nil),
			{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
				Set: []gatewayv1.HTTPHeader{{Name: "X", Value: "1"}}}},
			mirrorFilter("", "a", percent(50))},
			want: []string{"b:8080 1/1 body", "a:8080 50/100 body"}},
		{name: "another namespace with a grant", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("other", "shadow", nil)},
			objs: []any{serviceGrant("other", "app")}, want: []string{"other/shadow:8080 1/1 body"}},
		{name: "another namespace without a grant: left out", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("other", "shadow", nil)},
			problems: []string{"rule 0: filter RequestMirror backendRef other/shadow is in another namespace and no ReferenceGrant there allows it; mirror left out"}},
		{name: "not a Service: left out", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", func(f *gatewayv1.HTTPRequestMirrorFilter) {
			f.BackendRef.Kind = ptr.To[gatewayv1.Kind]("Bucket")
		})}, problems: []string{"filter RequestMirror backendRef shadow is"}},
		{name: "no port: left out", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", func(f *gatewayv1.HTTPRequestMirrorFilter) {
			f.BackendRef.Port = nil
		})}, problems: []string{"filter RequestMirror backendRef shadow has no port"}},
		{name: "percent and fraction: left out", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", func(f *gatewayv1.HTTPRequestMirrorFilter) {
			percent(5)(f)
			fraction(1, nil)(f)
		})}, problems: []string{"filter RequestMirror must copy 0 to 100 percent"}},
		{name: "fraction above one: left out", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "shadow", fraction(3, ptr.To[int32](2)))},
			problems: []string{"filter RequestMirror must copy"}},
		{name: "no settings: left out", filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestMirror}},
			problems: []string{"filter RequestMirror has no settings"}},
		{name: "nine mirrors: the first eight", filters: nine,
			want:     []string{"m0:8080 1/1 body", "m1:8080 1/1 body", "m2:8080 1/1 body", "m3:8080 1/1 body", "m4:8080 1/1 body", "m5:8080 1/1 body", "m6:8080 1/1 body", "m7:8080 1/1 body"},
			problems: []string{"filter RequestMirror a rule has at most 8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httpRoute([]string{"a.example.com"}, gatewayv1.HTTPRouteRule{Matches: prefix, Filters: tc.filters, BackendRefs: []gatewayv1.HTTPBackendRef{web}})
			e := translated(t, r, append([]any{ours, edge}, tc.objs...)...)
			if got := summary(e); !slices.Equal(got, []string{"10080:a.example.com /p Prefix web:8"}) {
				t.Fatalf("paths %q: a mirror must not change how the rule is served", got)
			}
			var got []string
			for _, m := range e.Rules[0].Paths[0].Mirrors {
				s := fmt.Sprintf("%s:%d %d/%d", m.Backend.Service, m.Backend.PortNumber, m.Spec.Numerator, m.Spec.Denominator)
				if m.Backend.Namespace != "" {
					s = m.Backend.Namespace + "/" + s
				}
				if m.Spec.Body {
					s += " body"
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("mirrors %q, want %q", got, tc.want)
			}
			if len(e.Problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %q", e.Problems, tc.problems)
			}
			for i, p := range tc.problems {
				if !strings.Contains(e.Problems[i], p) {
					t.Errorf("problem %q, want it to hold %q", e.Problems[i], p)
				}
			}
		})
	}
}
