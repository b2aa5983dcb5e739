package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
)

// TestTLSAndTCPRoute: a TLSRoute on a TLS listener of mode Passthrough and
// a TCPRoute on a TCP listener are served by both nginx on their ports of
// the fleet: the TLS connection reaches its backend unterminated (the
// backend's own certificate), the TCP connection its backend. The new
// listener ports reload nginx once; a TCP endpoint change and a second
// TLSRoute reload nothing. The watcher writes the routes Accepted.
func TestTLSAndTCPRoute(t *testing.T) {
	ns := setup(t)
	ca, err := certs.Generate(certs.Options{CommonName: "e2e TLSRoute CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	host, other := "pt."+ns+".example.com", "other."+ns+".example.com"
	own, otherOwn := leaf(t, ca, host), leaf(t, ca, other)
	argo, second := startLineServer(t, "argo", own), startLineServer(t, "second", otherOwn)
	dbA, dbB := startLineServer(t, "db-a", nil), startLineServer(t, "db-b", nil)
	for name, addr := range map[string]string{"argo": argo.host(), "second": second.host(), "db": dbA.host()} {
		createService(t, ns, name)
		setEndpointAddrs(t, ns, name, addr)
	}
	gatewayapi.InstallT(t, w.CP.Config())
	gw := gatewayclient.NewForConfigOrDie(w.CP.Config()).GatewayV1()
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ingress-sync-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gateway.DefaultControllerName}}
	create(t, class, gw.GatewayClasses().Create, func(ctx context.Context) error {
		return gw.GatewayClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
	})
	edge := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners: []gatewayv1.Listener{
			{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("*." + ns + ".example.com")),
				TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}},
			{Name: "tcp", Port: 5432, Protocol: gatewayv1.TCPProtocolType},
		}}}
	create(t, edge, gw.Gateways(ns).Create, func(ctx context.Context) error {
		return gw.Gateways(ns).Delete(ctx, edge.Name, metav1.DeleteOptions{})
	})
	fleet := gatewayPorts(t, edge, 443, 5432)
	ref := func(svc string) []gatewayv1.BackendRef {
		return []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}
	}
	parent := func(section string) gatewayv1.CommonRouteSpec {
		return gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge", SectionName: ptr.To(gatewayv1.SectionName(section))}}}
	}
	tlsRoute := &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argo"}, Spec: gatewayv1.TLSRouteSpec{
		CommonRouteSpec: parent("tls"), Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(host)},
		Rules: []gatewayv1.TLSRouteRule{{BackendRefs: ref("argo")}}}}
	create(t, tlsRoute, gw.TLSRoutes(ns).Create, func(ctx context.Context) error {
		return gw.TLSRoutes(ns).Delete(ctx, tlsRoute.Name, metav1.DeleteOptions{})
	})
	tcpRoute := &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Spec: gatewayv1.TCPRouteSpec{
		CommonRouteSpec: parent("tcp"), Rules: []gatewayv1.TCPRouteRule{{BackendRefs: ref("db")}}}}
	create(t, tcpRoute, gw.TCPRoutes(ns).Create, func(ctx context.Context) error {
		return gw.TCPRoutes(ns).Delete(ctx, tcpRoute.Name, metav1.DeleteOptions{})
	})
	passthroughOn(t, fleet[0], host, roots, "argo", own)
	tcpAnswers(t, fleet[1], "db-a")
	converged(t)
	before := snapshot(t)

	setEndpointAddrs(t, ns, "db", dbB.host())
	tcpAnswers(t, fleet[1], "db-b")
	second2 := &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "second"}, Spec: gatewayv1.TLSRouteSpec{
		CommonRouteSpec: parent("tls"), Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(other)},
		Rules: []gatewayv1.TLSRouteRule{{BackendRefs: ref("second")}}}}
	create(t, second2, gw.TLSRoutes(ns).Create, func(ctx context.Context) error {
		return gw.TLSRoutes(ns).Delete(ctx, second2.Name, metav1.DeleteOptions{})
	})
	passthroughOn(t, fleet[0], other, roots, "second", otherOwn)
	passthroughOn(t, fleet[0], host, roots, "argo", own)
	converged(t)
	before.unchanged(t, "a TCP endpoint change and a second TLSRoute")

	eventually(t, waitTimeout, "TLSRoute and TCPRoute Accepted", func() error {
		tr, err := gw.TLSRoutes(ns).Get(t.Context(), tlsRoute.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cr, err := gw.TCPRoutes(ns).Get(t.Context(), tcpRoute.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for what, parents := range map[string][]gatewayv1.RouteParentStatus{"TLSRoute": tr.Status.Parents, "TCPRoute": cr.Status.Parents} {
			if len(parents) != 1 || !slices.ContainsFunc(parents[0].Conditions, func(c metav1.Condition) bool {
				return c.Type == string(gatewayv1.RouteConditionAccepted) && c.Status == metav1.ConditionTrue
			}) {
				return fmt.Errorf("%s parents %+v: want one Accepted", what, parents)
			}
		}
		return nil
	})
}

// passthroughOn waits until a TLS connection for sni to port of every
// syncer reaches want, unterminated: the certificate is the backend's own.
func passthroughOn(t *testing.T, port int, sni string, roots *x509.CertPool, want string, own *certs.Pair) {
	t.Helper()
	for _, s := range w.Syncers {
		addr := net.JoinHostPort(s.Address, strconv.Itoa(port))
		eventually(t, waitTimeout, "TLSRoute "+sni+" at "+addr, func() error {
			got, peer, err := readLine(t.Context(), addr, &tls.Config{ServerName: sni, RootCAs: roots, MinVersion: tls.VersionTLS12})
			switch {
			case err != nil:
				return err
			case got != want || peer.SerialNumber.Cmp(own.Cert.SerialNumber) != 0:
				return fmt.Errorf("%s answered %q with certificate %v, want %s's own", addr, got, peer.Subject, want)
			}
			return nil
		})
	}
}
