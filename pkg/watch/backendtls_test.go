package watch_test

import (
	"fmt"
	"slices"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// policyAncestors is our ancestors of BackendTLSPolicy ns/name, one
// "namespace/name: conditions" each.
func (e *gwEnv) policyAncestors(t *testing.T, ns, name string) []string {
	t.Helper()
	p, err := e.gw.GatewayV1().BackendTLSPolicies(ns).Get(t.Context(), name, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range p.Status.Ancestors {
		if string(a.ControllerName) == e.gatewayController() && a.AncestorRef.Namespace != nil {
			out = append(out, fmt.Sprintf("%s/%s: %s", *a.AncestorRef.Namespace, a.AncestorRef.Name, condSummary(a.Conditions)))
		}
	}
	return out
}

// waitPolicy waits until our ancestors of policy ns/name are want.
func (e *gwEnv) waitPolicy(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	var got []string
	eventually(t, fmt.Sprintf("BackendTLSPolicy %s/%s ancestors %q", ns, name, want), func() bool {
		got = e.policyAncestors(t, ns, name)
		return slices.Equal(got, want)
	})
}

// TestBackendTLSPolicyWatched: a BackendTLSPolicy is published with the
// ConfigMap it names (and that ConfigMap only while it does); the leader
// writes its status on the Gateway of the route to the Service it
// targets, and again when its ConfigMap goes.
func TestBackendTLSPolicyWatched(t *testing.T) {
	e := newGatewayEnv(t, true)
	ns := e.ns
	cfg := e.statusConfig("watcher-a", testenv.NewNamespace(t, e.client))
	start(t, cfg)
	pair, err := certs.Generate(certs.Options{CommonName: "test CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	e.createGateway(t, gatewayClass(e.class(), e.gatewayController()))
	e.createGateway(t, gateway(ns, "edge", e.class()))
	e.create(t, service(ns, "web"))
	e.createGateway(t, backendRoute(ns, "web", ns, gatewayv1.BackendObjectReference{Name: "web", Port: ptrTo[gatewayv1.PortNumber](80)}))
	e.create(t, configMap(ns, "ca", map[string]string{"ca.crt": string(pair.CertPEM)}))
	e.createGateway(t, backendTLSPolicy(ns, "btls", "web", "ca"))

	e.waitMessage(t, e.gatewaySubject(events.KindBackendTLSPolicy, ns, "btls"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindConfigMap, "ca"), events.OpCreate)
	e.waitPolicy(t, ns, "btls", ns+"/edge: Accepted=True/Accepted@1 ResolvedRefs=True/ResolvedRefs@1")

	if err := e.client.CoreV1().ConfigMaps(ns).Delete(t.Context(), "ca", deleteOpts); err != nil {
		t.Fatal(err)
	}
	e.waitPolicy(t, ns, "btls", ns+"/edge: Accepted=False/NoValidCACertificate@1 ResolvedRefs=False/InvalidCACertificateRef@1")
	e.waitMessage(t, e.subject(events.KindConfigMap, "ca"), events.OpDelete)
}
