package e2e

import (
	"context"
	"net/http"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
)

// TestHTTPRouteMatchesAndFilters: an HTTPRoute's header and query
// matches, a path rewrite, a redirect and weighted backends with one that
// cannot be served, on the whole system; none of it reloads nginx, nor a
// change of the header a rule matches.
func TestHTTPRouteMatchesAndFilters(t *testing.T) {
	ns := setup(t)
	host := ns + ".match.example.com"
	gatewayapi.InstallT(t, w.CP.Config())
	gw := gatewayclient.NewForConfigOrDie(w.CP.Config()).GatewayV1()
	web, api := service(t, ns, "web"), service(t, ns, "api")
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ingress-sync-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gateway.DefaultControllerName}}
	create(t, class, gw.GatewayClasses().Create, func(ctx context.Context) error {
		return gw.GatewayClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
	})
	edge := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host))}}}}
	create(t, edge, gw.Gateways(ns).Create, func(ctx context.Context) error {
		return gw.Gateways(ns).Delete(ctx, edge.Name, metav1.DeleteOptions{})
	})
	fleet := gatewayPorts(t, edge, 80)
	answers := func(t *testing.T, want []answer) {
		t.Helper()
		answersWith(t, func(i int) *http.Client { return clientOn(i, nil, fleet[0]) }, want)
	}
	ref := func(svc string) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}
	}
	prefix := func(p string) *gatewayv1.HTTPPathMatch {
		return &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(p)}
	}
	unknown := ref("other")
	unknown.Kind = ptr.To[gatewayv1.Kind]("Unknown")
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "versions"}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
		Rules: []gatewayv1.HTTPRouteRule{
			{BackendRefs: []gatewayv1.HTTPBackendRef{ref(web.Name)}},
			{Matches: []gatewayv1.HTTPRouteMatch{{Path: prefix("/shop"), Headers: []gatewayv1.HTTPHeaderMatch{{Name: "Version", Value: "two"}}}},
				Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
					Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To("/v2")}}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{ref(api.Name)}},
			{Matches: []gatewayv1.HTTPRouteMatch{{Path: prefix("/shop"), QueryParams: []gatewayv1.HTTPQueryParamMatch{{Name: "v", Value: "2"}}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{ref(api.Name)}},
			{Matches: []gatewayv1.HTTPRouteMatch{{Path: prefix("/old")}},
				Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
					Hostname: ptr.To[gatewayv1.PreciseHostname]("new.example.com"), StatusCode: ptr.To(301)}}}},
			{Matches: []gatewayv1.HTTPRouteMatch{{Path: prefix("/broken")}}, BackendRefs: []gatewayv1.HTTPBackendRef{unknown}},
		}}}
	h := "http://" + host
	routesOn(t, nil, fleet[0], map[string]string{h + "/": ""}) // the listener's port: it reloads nginx once
	converged(t)
	before := reloads(t)
	create(t, route, gw.HTTPRoutes(ns).Create, func(ctx context.Context) error {
		return gw.HTTPRoutes(ns).Delete(ctx, route.Name, metav1.DeleteOptions{})
	})
	answers(t, []answer{
		{url: h + "/shop/cart", status: 200, backend: web.Name, path: "/shop/cart"},
		{url: h + "/shop/cart", header: []string{"version", "two"}, status: 200, backend: api.Name, path: "/v2/cart"},
		{url: h + "/shop/cart?v=2", status: 200, backend: api.Name, path: "/shop/cart?v=2"},
		{url: h + "/shop/cart?v=2", header: []string{"Version", "two"}, status: 200, backend: api.Name, path: "/v2/cart?v=2"}, // headers first
		{url: h + "/shop/cart", header: []string{"Version", "three"}, status: 200, backend: web.Name, path: "/shop/cart"},
		{url: h + "/old/page?x=1", status: 301, headers: map[string]string{"Location": "http://new.example.com/old/page?x=1"}},
		{url: h + "/broken", status: 500},
	})

	// The header a rule matches changes: the route's candidates follow.
	cur, err := gw.HTTPRoutes(ns).Get(t.Context(), route.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Rules[1].Matches[0].Headers[0].Value = "three"
	if _, err := gw.HTTPRoutes(ns).Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	answers(t, []answer{
		{url: h + "/shop/cart", header: []string{"Version", "three"}, status: 200, backend: api.Name, path: "/v2/cart"},
		{url: h + "/shop/cart", header: []string{"Version", "two"}, status: 200, backend: web.Name, path: "/shop/cart"},
	})
	converged(t)
	if after := reloads(t); !slices.Equal(after, before) {
		t.Fatalf("reloads %v -> %v: matches, filters and their changes must reload nothing", before, after)
	}
}
