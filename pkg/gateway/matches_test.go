package gateway

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// matchText is " if" and the conditions of m, "" for nil: "method=GET",
// "h:name=value" (or "~" for a regex), "q:name=value".
func matchText(m *config.Match) string {
	if m == nil {
		return ""
	}
	var parts []string
	if m.Method != "" {
		parts = append(parts, "method="+m.Method)
	}
	for _, l := range []struct {
		p    string
		list []config.MatchValue
	}{{"h:", m.Headers}, {"q:", m.Query}} {
		for _, v := range l.list {
			op := "="
			if v.Regex {
				op = "~"
			}
			parts = append(parts, l.p+v.Name+op+v.Value)
		}
	}
	return " if " + strings.Join(parts, " ")
}

func TestTranslateMatches(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	web := backend("web", 8)
	regexHeader := ptr.To(gatewayv1.HeaderMatchRegularExpression)
	regexQuery := ptr.To(gatewayv1.QueryParamMatchRegularExpression)
	tests := []struct {
		name     string
		matches  []gatewayv1.HTTPRouteMatch
		want     []string
		problems []string
	}{
		{name: "header, exact: the name lower case", matches: []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "Version", Value: "Two"}}}},
			want: []string{"10080:a.example.com / Prefix web:8 if h:version=Two"}},
		{name: "headers sorted, the first of one name counts", matches: []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "b", Value: "1"}, {Name: "a", Value: "1"}, {Name: "B", Value: "2"}}}},
			want: []string{"10080:a.example.com / Prefix web:8 if h:a=1 h:b=1"}},
		{name: "header regex", matches: []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x", Value: "v[0-9]+", Type: regexHeader}}}},
			want: []string{"10080:a.example.com / Prefix web:8 if h:x~v[0-9]+"}},
		{name: "header regex PCRE reads otherwise", matches: []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x", Value: `\p{Greek}`, Type: regexHeader}}}},
			problems: []string{`header "x": regular expression`}},
		{name: "header value with a control character", matches: []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x", Value: "a\nb"}}}},
			problems: []string{`header "x": the value holds a control`}},
		{name: "header name not a token", matches: []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "a b", Value: "1"}}}},
			problems: []string{`header "a b": name is not a token`}},
		{name: "query, names keep their case", matches: []gatewayv1.HTTPRouteMatch{{
			QueryParams: []gatewayv1.HTTPQueryParamMatch{{Name: "ANIMAL", Value: "Whale"}, {Name: "animal", Value: "x", Type: regexQuery}}}},
			want: []string{"10080:a.example.com / Prefix web:8 if q:ANIMAL=Whale q:animal~x"}},
		{name: "method with a path", matches: []gatewayv1.HTTPRouteMatch{{
			Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchExact), Value: ptr.To("/x")}, Method: ptr.To(gatewayv1.HTTPMethodPost)}},
			want: []string{"10080:a.example.com /x Exact web:8 if method=POST"}},
		{name: "matches of a rule are ORed: a path each", matches: []gatewayv1.HTTPRouteMatch{
			{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "color", Value: "blue"}}},
			{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "color", Value: "green"}}}},
			want: []string{"10080:a.example.com / Prefix web:8 if h:color=blue", "10080:a.example.com / Prefix web:8 if h:color=green"}},
		{name: "one bad match leaves the others", matches: []gatewayv1.HTTPRouteMatch{
			{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x", Value: "("}, {Name: "y", Value: "1"}}},
			{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x", Value: "(", Type: regexHeader}}},
			{Method: ptr.To(gatewayv1.HTTPMethodGet)}},
			want:     []string{"10080:a.example.com / Prefix web:8 if h:x=( h:y=1", "10080:a.example.com / Prefix web:8 if method=GET"},
			problems: []string{`rule 0 match 1: header "x": regular expression`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := translated(t, httpRoute([]string{"a.example.com"}, rule(tc.matches, web)), ours, edge)
			if got := summary(e); !slices.Equal(got, tc.want) {
				t.Errorf("paths %q, want %q", got, tc.want)
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
