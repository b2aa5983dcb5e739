package gateway

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestTranslateTimeouts(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	d := func(s string) *gatewayv1.Duration { v := gatewayv1.Duration(s); return &v }
	tests := []struct {
		name     string
		in       *gatewayv1.HTTPRouteTimeouts
		want     string // the path's Timeouts as JSON, "" for a rule left out
		problems []string
	}{
		{name: "none", in: nil, want: "null"},
		{name: "request", in: &gatewayv1.HTTPRouteTimeouts{Request: d("500ms")}, want: `{"requestMillis":500}`},
		{name: "both, in several units", in: &gatewayv1.HTTPRouteTimeouts{Request: d("1m30s"), BackendRequest: d("1s250ms")},
			want: `{"requestMillis":90000,"backendRequestMillis":1250}`},
		{name: "zero: the longest", in: &gatewayv1.HTTPRouteTimeouts{BackendRequest: d("0s")}, want: `{"backendRequestMillis":86400000}`},
		{name: "longer than a day: a day", in: &gatewayv1.HTTPRouteTimeouts{Request: d("48h")}, want: `{"requestMillis":86400000}`},
		{name: "not a duration", in: &gatewayv1.HTTPRouteTimeouts{Request: d("1.5s")},
			problems: []string{`timeouts.request "1.5s" is not a duration`}},
		{name: "backend request longer than the request", in: &gatewayv1.HTTPRouteTimeouts{Request: d("1s"), BackendRequest: d("2s")},
			problems: []string{"timeouts.backendRequest is longer than timeouts.request"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httpRoute([]string{"a.example.com"}, gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("web", 8)}, Timeouts: tc.in})
			e := translated(t, r, ours, edge)
			var got []string
			for _, h := range e.Rules {
				for _, p := range h.Paths {
					data, err := json.Marshal(p.Timeouts)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, string(data))
				}
			}
			if want := []string{tc.want}; tc.want == "" && len(got) > 0 || tc.want != "" && !slices.Equal(got, want) {
				t.Errorf("timeouts %q, want %q", got, tc.want)
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
