package nginx

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

const btlsController = "example.com/btls"

// btlsConfig builds an HTTPRoute of namespace default on a Gateway whose
// listener 80 nginx serves on port: path "/<svc>" to each Service of
// backends (name to the port of an HTTPS backend on 127.0.0.1), with the
// BackendTLSPolicies and ConfigMaps given.
func btlsConfig(t *testing.T, port int, backends map[string]int, objs ...any) *config.Configuration {
	t.Helper()
	s := model.NewStore(gateway.NewSource(btlsController))
	apply := func(kind events.Kind, ns, name string, obj runtime.Object) {
		t.Helper()
		if _, err := s.Apply(upsertEventOf(obj, kind, ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "btls"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: btlsController}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "edge"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "btls",
		Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: gateway.ServiceName("default", "edge"),
		Labels:      map[string]string{gateway.ServiceManagedByLabel: gateway.ServiceManagedBy},
		Annotations: map[string]string{gateway.ServiceGatewayAnnotation: "default/edge"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(port)}}}}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"}}
	route.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "edge"}}
	for name, p := range backends {
		apply(events.KindService, "default", name, fixtures.Service("default", name, 80))
		apply(events.KindEndpointSlice, "default", name+"-1", fixtures.EndpointSlice("default", name+"-1", name, int32(p), "127.0.0.1"))
		route.Spec.Rules = append(route.Spec.Rules, gatewayv1.HTTPRouteRule{
			Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr(gatewayv1.PathMatchExact), Value: ptr("/" + name)}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(name), Port: ptr(gatewayv1.PortNumber(80))}}}}})
	}
	apply(events.KindGatewayClass, "", "btls", class)
	apply(events.KindGateway, "default", "edge", gw)
	apply(events.KindService, svc.Namespace, svc.Name, svc)
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			apply(events.KindConfigMap, o.Namespace, o.Name, o)
		case *gatewayv1.BackendTLSPolicy:
			apply(events.KindBackendTLSPolicy, o.Namespace, o.Name, o)
		}
	}
	apply(events.KindHTTPRoute, "default", "r", route)
	return hostileBuild(s)
}

// btlsPolicyFor is a policy of namespace default for Service svc, trusting
// ConfigMap cm for hostname.
func btlsPolicyFor(svc, cm, hostname string) *gatewayv1.BackendTLSPolicy {
	return &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: svc},
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
				Kind: "Service", Name: gatewayv1.ObjectName(svc)}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: gatewayv1.PreciseHostname(hostname),
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: gatewayv1.ObjectName(cm)}}}}}
}

// TestBackendTLSPolicy: a route's backend that a BackendTLSPolicy targets
// is reached over TLS, its certificate verified against the ConfigMap's CA
// for the policy's hostname, which it gets as SNI; a certificate of
// another CA or for another name fails (502), and a policy whose CA
// cannot be read answers 503: never in plaintext.
func TestBackendTLSPolicy(t *testing.T) {
	pki := newTestPKI(t)
	web := tlsBackend{name: "web"}.start(t, pki)
	port := freePorts(t, 1)[0]
	cm := func(name string, p []byte) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"ca.crt": string(p)}}
	}
	system := btlsPolicyFor("system", "", "backend.test")
	system.Spec.Validation.CACertificateRefs = nil
	system.Spec.Validation.WellKnownCACertificates = ptr(gatewayv1.WellKnownCACertificatesSystem)
	cfg := btlsConfig(t, port, map[string]int{"good": web, "wrongca": web, "wrongname": web, "noca": web, "system": web},
		cm("ca", pki.ca.CertPEM), cm("other", pki.other.CertPEM),
		btlsPolicyFor("good", "ca", "backend.test"), btlsPolicyFor("wrongca", "other", "backend.test"),
		btlsPolicyFor("wrongname", "ca", "other.test"), btlsPolicyFor("noca", "missing", "backend.test"), system)
	if len(cfg.Problems) != 1 || cfg.Problems[0].Kind != "BackendTLSPolicy" {
		t.Fatalf("problems: %+v, want the policy of the missing ConfigMap's", cfg.Problems)
	}
	// The system's CAs, here the test CA: wellKnownCACertificates System.
	systemCA := filepath.Join(t.TempDir(), "system-ca.crt")
	if err := os.WriteFile(systemCA, pki.ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	h := startNginx(t, cfg, func(o *Options) { o.WorkerProcesses, o.SystemCAFile = 1, systemCA })
	h.allowLuaErrors = true // nginx logs the refused handshakes
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"verified, the hostname as SNI", "/good", 200},
		{"a CA that did not sign the certificate: 502", "/wrongca", 502},
		{"a hostname the certificate is not for: 502", "/wrongname", 502},
		{"the CA's ConfigMap missing: 503", "/noca", 503},
		{"the system's CAs", "/system", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := echo.Get(t.Context(), onPort(port), "http://a.example.com"+tc.path)
			if err != nil || r.Status != tc.status {
				t.Fatalf("GET %s = %d (%v), want %d", tc.path, r.Status, err, tc.status)
			}
			if tc.status == 200 && r.Reply.Headers.Get(seenSNI) != "backend.test" {
				t.Errorf("backend saw SNI %q, want backend.test", r.Reply.Headers.Get(seenSNI))
			}
		})
	}
}
