package gateway

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

func TestTranslateFilters(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	web := backend("web", 8)
	prefix := []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/p")}
	exact := []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchExact, "/e")}
	headers := &gatewayv1.HTTPHeaderFilter{
		Set:    []gatewayv1.HTTPHeader{{Name: "X-B", Value: "1"}, {Name: "x-a", Value: "2"}, {Name: "X-A", Value: "3"}},
		Add:    []gatewayv1.HTTPHeader{{Name: "X-Add", Value: "v"}},
		Remove: []string{"X-Gone", "x-gone", "A"},
	}
	full := &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr.To("/full")}
	replacePrefix := &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To("/new")}
	tests := []struct {
		name     string
		matches  []gatewayv1.HTTPRouteMatch
		filters  []gatewayv1.HTTPRouteFilter
		refs     []gatewayv1.HTTPBackendRef
		want     []string // summary, then the filters as JSON
		problems []string
	}{
		{name: "request headers: the first of a name, sorted", matches: prefix, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: headers}},
			want: []string{"10080:a.example.com /p Prefix web:8",
				`{"requestHeaders":{"set":[{"name":"X-B","value":"1"},{"name":"x-a","value":"2"}],"add":[{"name":"X-Add","value":"v"}],"remove":["A","X-Gone"]}}`}},
		{name: "response headers", matches: prefix, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier,
				ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Add: []gatewayv1.HTTPHeader{{Name: "X-R", Value: "1"}}}}},
			want: []string{"10080:a.example.com /p Prefix web:8", `{"responseHeaders":{"add":[{"name":"X-R","value":"1"}]}}`}},
		{name: "a header value with a control character", matches: prefix, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
				RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X", Value: "a\rb"}}}}},
			problems: []string{`filter RequestHeaderModifier header "X": the value holds a control or non-ASCII character`}},
		{name: "redirect: 302 by default, no backend needed", matches: prefix,
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
				Scheme: ptr.To("https"), Hostname: ptr.To[gatewayv1.PreciseHostname]("example.org"), Port: ptr.To[gatewayv1.PortNumber](8443), Path: replacePrefix}}},
			want: []string{"10080:a.example.com /p Prefix :0",
				`{"redirect":{"scheme":"https","hostname":"example.org","port":8443,"path":{"type":"prefix","value":"/new"},"code":302}}`}},
		{name: "redirect code", matches: exact,
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: ptr.To(308)}}},
			want:    []string{"10080:a.example.com /e Exact :0", `{"redirect":{"port":80,"code":308}}`}},
		{name: "redirect code not known", matches: exact,
			filters:  []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: ptr.To(305)}}},
			problems: []string{"filter RequestRedirect statusCode must be 301, 302, 303, 307 or 308"}},
		{name: "replacing the prefix of an Exact match", matches: append(slices.Clone(exact), prefix...), refs: []gatewayv1.HTTPBackendRef{web},
			filters:  []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{Path: replacePrefix}}},
			want:     []string{"10080:a.example.com /p Prefix web:8", `{"rewritePath":{"type":"prefix","value":"/new"}}`},
			problems: []string{`rule 0 match 0: path "/e" is not a PathPrefix match, and a filter replaces the matched prefix`}},
		{name: "rewrite: hostname and full path", matches: exact, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
				Hostname: ptr.To[gatewayv1.PreciseHostname]("backend.example.org"), Path: full}}},
			want: []string{"10080:a.example.com /e Exact web:8", `{"rewriteHost":"backend.example.org","rewritePath":{"type":"full","value":"/full"}}`}},
		{name: "redirect and rewrite on one rule", matches: exact, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{Path: full}},
				{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{}}},
			problems: []string{"RequestRedirect and URLRewrite cannot be on one rule"}},
		{name: "a filter twice", matches: exact, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{Path: full}},
				{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{Path: full}}},
			problems: []string{"filter URLRewrite is given twice"}},
		{name: "CORS", matches: exact, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
				AllowOrigins: []gatewayv1.CORSOrigin{"https://www.foo.com", "https://*.bar.com:8443", "*"}, AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"GET", "*"},
				AllowHeaders: []gatewayv1.HTTPHeaderName{"x-a"}, AllowCredentials: ptr.To(true), MaxAge: 5}}},
			want: []string{"10080:a.example.com /e Exact web:8",
				`{"cors":{"allowOrigins":["https://www.foo.com","https://*.bar.com:8443","*"],"allowMethods":["GET","*"],"allowHeaders":["x-a"],"allowCredentials":true,"maxAge":5}}`}},
		{name: "CORS origin with a path", matches: exact, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
				AllowOrigins: []gatewayv1.CORSOrigin{"https://www.foo.com/x"}}}},
			problems: []string{`filter CORS "https://www.foo.com/x": allowOrigins: must be`}},
		{name: "CORS origin port out of range", matches: exact, refs: []gatewayv1.HTTPBackendRef{web},
			filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
				AllowOrigins: []gatewayv1.CORSOrigin{"https://www.foo.com:70000"}}}},
			problems: []string{`filter CORS "https://www.foo.com:70000": allowOrigins: must be`}},
		{name: "extension ref not served yet", matches: exact, refs: []gatewayv1.HTTPBackendRef{web},
			filters:  []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef}},
			problems: []string{"filter ExtensionRef is not served yet"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httpRoute([]string{"a.example.com"}, gatewayv1.HTTPRouteRule{Matches: tc.matches, Filters: tc.filters, BackendRefs: tc.refs})
			e := translated(t, r, ours, edge)
			var got []string
			for _, h := range e.Rules {
				for _, p := range h.Paths {
					data, err := json.Marshal(p.Filters)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, summary(&intent.Entry{Rules: []intent.Host{{Host: h.Host, Port: h.Port, Paths: []intent.Path{p}}}})[0], string(data))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
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

// TestRedirectListenerPort: a redirect with neither a scheme nor a port
// goes to the port of the listener the request came through (the
// listener's own, not the fleet's); one with a scheme, to its well-known
// port (none written).
func TestRedirectListenerPort(t *testing.T) {
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")), allNamespaces(listener("alt", 8080, "")))
	redirect := func(scheme string) gatewayv1.HTTPRouteRule {
		r := &gatewayv1.HTTPRequestRedirectFilter{}
		if scheme != "" {
			r.Scheme = ptr.To(scheme)
		}
		return gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/"+scheme)},
			Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: r}}}
	}
	e := translated(t, httpRoute([]string{"a.example.com"}, redirect(""), redirect("https")), class("ours", testController), edge)
	var got []string
	for _, h := range e.Rules {
		for _, p := range h.Paths {
			got = append(got, fmt.Sprintf("%d %s %s port %d", h.Port, p.Path, p.Filters.Redirect.Scheme, p.Filters.Redirect.Port))
		}
	}
	want := []string{"10080 /  port 80", "10080 /https https port 0", "18080 /  port 8080", "18080 /https https port 0"}
	if !slices.Equal(got, want) {
		t.Errorf("redirects %q, want %q", got, want)
	}
}
