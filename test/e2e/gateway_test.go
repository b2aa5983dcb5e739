package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
)

// TestHTTPRoute: an HTTPRoute attached to a Gateway of ours is served by
// both nginx beside the Ingresses, over HTTP and HTTPS (the listener's
// certificate), with no reload: its paths, a change of its Gateway's
// hostname, and its delete.
func TestHTTPRoute(t *testing.T) {
	ns := setup(t)
	host := ns + ".gw.example.com"
	ca, err := certs.Generate(certs.Options{CommonName: "e2e gateway CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	applySecret(t, fixtures.TLSSecret(ns, "gw-tls", leaf(t, ca, host)))
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
		Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host))},
			{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host)),
				TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "gw-tls"}}}},
		}}}
	create(t, edge, gw.Gateways(ns).Create, func(ctx context.Context) error {
		return gw.Gateways(ns).Delete(ctx, edge.Name, metav1.DeleteOptions{})
	})
	ref := func(svc string) []gatewayv1.HTTPBackendRef {
		return []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}}
	}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
		Rules: []gatewayv1.HTTPRouteRule{
			{BackendRefs: ref(web.Name)},
			{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchExact), Value: ptr.To("/api")}}},
				BackendRefs: ref(api.Name)},
			{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchExact), Value: ptr.To("/split")}}},
				BackendRefs: append(ref(web.Name), ref(api.Name)...)},
		}}}
	before := reloads(t)
	create(t, route, gw.HTTPRoutes(ns).Create, func(ctx context.Context) error {
		return gw.HTTPRoutes(ns).Delete(ctx, route.Name, metav1.DeleteOptions{})
	})
	h := "http://" + host
	routes(t, nil, map[string]string{h + "/": "web", h + "/shop/cart": "web", h + "/api": "api", h + "/api/": "web"})
	routes(t, roots, map[string]string{"https://" + host + "/api": "api", "https://" + host + "/": "web"})
	// Two backends of weight 1: each takes about half of the requests.
	split := startLoop(t, h+"/split", web.Name, api.Name)
	eventually(t, waitTimeout, "both backends of /split", func() error {
		if !split.saw(web.Name) || !split.saw(api.Name) {
			return fmt.Errorf("web seen %v, api seen %v", split.saw(web.Name), split.saw(api.Name))
		}
		return nil
	})
	split.finish(t)

	cur, err := gw.Gateways(ns).Get(t.Context(), edge.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cur.Spec.Listeners {
		cur.Spec.Listeners[i].Hostname = ptr.To(gatewayv1.Hostname(ns + ".moved.example.com"))
	}
	if _, err := gw.Gateways(ns).Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	routes(t, nil, map[string]string{"http://" + ns + ".moved.example.com/api": "api", h + "/": ""})

	if err := gw.HTTPRoutes(ns).Delete(t.Context(), route.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	routes(t, nil, map[string]string{"http://" + ns + ".moved.example.com/": ""})
	converged(t)
	if after := reloads(t); !slices.Equal(after, before) {
		t.Fatalf("reloads %v -> %v: an HTTPRoute, its Gateway's hostname and its delete must reload nothing", before, after)
	}
}

// create creates obj with createFn and deletes it with del at the end of
// the test (nothing garbage-collects here).
func create[T any](t *testing.T, obj T, createFn func(context.Context, T, metav1.CreateOptions) (T, error), del func(context.Context) error) {
	t.Helper()
	if _, err := createFn(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %T: %v", obj, err)
	}
	t.Cleanup(func() {
		if err := del(context.Background()); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %T: %v", obj, err)
		}
	})
}
