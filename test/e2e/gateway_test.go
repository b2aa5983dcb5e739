package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
)

// TestHTTPRoute: an HTTPRoute attached to a Gateway of ours is served by
// both nginx on the ports of the fleet its Gateway's Service gives its
// listeners (never on nginx's own ports), over HTTP and HTTPS (the
// listener's certificate), with no reload: its paths, a change of its
// Gateway's hostname, and its delete. The test keeps the Gateway's Service
// as the watcher keeps it.
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
	fleet := gatewayPorts(t, edge, 80, 443)
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
	routesOn(t, nil, fleet[0], map[string]string{h + "/": "web", h + "/shop/cart": "web", h + "/api": "api", h + "/api/": "web"})
	routesOn(t, roots, fleet[1], map[string]string{"https://" + host + "/api": "api", "https://" + host + "/": "web"})
	routes(t, nil, map[string]string{h + "/": ""}) // not on nginx's own ports
	converged(t)
	before = reloads(t) // the listener ports reloaded nginx once
	// Two backends of weight 1: each takes about half of the requests.
	split := startLoopWith(t, func(i int) *http.Client { return clientOn(i, nil, fleet[0]) }, h+"/split", web.Name, api.Name)
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
	routesOn(t, nil, fleet[0], map[string]string{"http://" + ns + ".moved.example.com/api": "api", h + "/": ""})

	if err := gw.HTTPRoutes(ns).Delete(t.Context(), route.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	routesOn(t, nil, fleet[0], map[string]string{"http://" + ns + ".moved.example.com/": ""})
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

// TestGatewaysApart: three Gateways whose listeners are all on port 80
// with no hostname (as the conformance suite's) are each reached through
// their own port of the fleet, and a request on one never reaches another's
// routes nor an Ingress; a Gateway's Service (its listener port) reloads
// nginx once, its route nothing.
func TestGatewaysApart(t *testing.T) {
	ns := setup(t)
	gatewayapi.InstallT(t, w.CP.Config())
	gw := gatewayclient.NewForConfigOrDie(w.CP.Config()).GatewayV1()
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ingress-sync-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gateway.DefaultControllerName}}
	create(t, class, gw.GatewayClasses().Create, func(ctx context.Context) error {
		return gw.GatewayClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
	})
	ing := service(t, ns, "ing")
	applyIngress(t, ours(ns, "ing", fixtures.Rule(ns+".example.com", fixtures.Path(networkingv1.PathTypePrefix, "/", ing.Name, 80))))
	names := []string{"one", "two", "three"}
	fleet := make([]int, len(names))
	for i, name := range names {
		before := reloads(t)
		svc := service(t, ns, name)
		g := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(class.Name),
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
		create(t, g, gw.Gateways(ns).Create, func(ctx context.Context) error {
			return gw.Gateways(ns).Delete(ctx, g.Name, metav1.DeleteOptions{})
		})
		r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(name)}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc.Name), Port: ptr.To[gatewayv1.PortNumber](80)}}}}}}}}
		create(t, r, gw.HTTPRoutes(ns).Create, func(ctx context.Context) error {
			return gw.HTTPRoutes(ns).Delete(ctx, r.Name, metav1.DeleteOptions{})
		})
		fleet[i] = gatewayPorts(t, g, 80)[0]
		routesOn(t, nil, fleet[i], map[string]string{"http://any.example.com/": svc.Name})
		converged(t)
		after := reloads(t)
		for j := range after {
			if after[j] != before[j]+1 {
				t.Fatalf("Gateway %s's Service: reloads %v -> %v, want one each", name, before, after)
			}
		}
	}
	for i, name := range names {
		routesOn(t, nil, fleet[i], map[string]string{"http://any.example.com/x": name, "http://" + ns + ".example.com/": name})
	}
	routes(t, nil, map[string]string{"http://" + ns + ".example.com/": ing.Name, "http://any.example.com/": ""})
}

// gatewayPorts waits for the Service the watcher keeps for g
// (docs/gateway-api.md, "Each Gateway has an address of its own") and
// returns the ports of the fleet it gives listener ports ports.
func gatewayPorts(t *testing.T, g *gatewayv1.Gateway, ports ...int32) []int {
	t.Helper()
	name := gateway.ServiceName(g.Namespace, g.Name)
	out := make([]int, len(ports))
	eventually(t, waitTimeout, "the Service of Gateway "+g.Name, func() error {
		svc, err := w.Kube.CoreV1().Services(gatewayServiceNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := svc.Annotations[gateway.ServiceGatewayAnnotation]; got != g.Namespace+"/"+g.Name {
			return fmt.Errorf("Service %s is of Gateway %q", name, got)
		}
		for i, p := range ports {
			j := slices.IndexFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Port == p })
			if j < 0 || svc.Spec.Ports[j].TargetPort.IntValue() == 0 {
				return fmt.Errorf("Service %s has no targetPort for port %d: %+v", name, p, svc.Spec.Ports)
			}
			out[i] = svc.Spec.Ports[j].TargetPort.IntValue()
		}
		return nil
	})
	return out
}

// clientOn is syncer i's client sending every request to port of its
// address, whatever the URL's host (the Host header and SNI name).
func clientOn(i int, roots *x509.CertPool, port int) *http.Client {
	s := w.Syncers[i]
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, net.JoinHostPort(s.Address, strconv.Itoa(port)))
			},
			TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// routesOn is routes on port of every syncer (a Gateway listener's port of
// the fleet).
func routesOn(t *testing.T, roots *x509.CertPool, port int, want map[string]string) {
	t.Helper()
	for i := range w.Syncers {
		c := clientOn(i, roots, port)
		for url, backend := range want {
			eventually(t, waitTimeout, "route "+url, func() error {
				r, err := echo.Get(t.Context(), c, url)
				switch {
				case err != nil:
					return err
				case backend == "" && (r.Status != 404 || r.Reply.Backend != ""):
					return fmt.Errorf("syncer-%d port %d %s: status %d from %q, want the built-in 404", i, port, url, r.Status, r.Reply.Backend)
				case backend != "" && (r.Status != 200 || r.Reply.Backend != backend):
					return fmt.Errorf("syncer-%d port %d %s: status %d from %q, want 200 from %q", i, port, url, r.Status, r.Reply.Backend, backend)
				}
				return nil
			})
		}
	}
}
