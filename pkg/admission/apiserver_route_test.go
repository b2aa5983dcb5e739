package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/admission"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// registerRouteWebhook makes the ValidatingWebhookConfiguration of the
// HTTPRoutes of namespace ns, as the chart's second webhook.
func registerRouteWebhook(t *testing.T, client kubernetes.Interface, ns, url string, caPEM []byte) {
	t.Helper()
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone
	scope := admissionregistrationv1.NamespacedScope
	timeout := int32(5)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress-sync-routes-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "validate-httproutes.ingress-sync.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{gatewayv1.GroupName}, APIVersions: []string{"v1"},
					Resources: []string{"httproutes"}, Scope: &scope},
			}},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
		}},
	}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(context.Background(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), cfg.Name, metav1.DeleteOptions{})
	})
}

// testRoute is HTTPRoute ns/name on Gateway gw, one rule matching path
// (RegularExpression when regex) to Service svc:80 of backend kind kind
// ("" for Service).
func testRoute(ns, name, path string, regex bool, kind string) *gatewayv1.HTTPRoute {
	typ := gatewayv1.PathMatchPathPrefix
	if regex {
		typ = gatewayv1.PathMatchRegularExpression
	}
	port := gatewayv1.PortNumber(80)
	ref := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "svc", Port: &port}}}
	if kind != "" {
		ref.Group, ref.Kind = (*gatewayv1.Group)(new("example.com")), (*gatewayv1.Kind)(&kind)
	}
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &typ, Value: &path}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{ref}}}}}
}

// TestRouteWebhookWithAPIServer: a real kube-apiserver with the Gateway
// API CRDs calls the webhook over TLS for HTTPRoutes: a route whose match
// the translator leaves out is refused with the reason, a good one is
// stored, one with a backendRef of another kind is stored with a warning,
// and with the webhook down (failurePolicy Ignore) a bad one is stored.
func TestRouteWebhookWithAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd (make controlplane); not run with -short")
	}
	cp := testenv.Start(t)
	seen := &warnings{}
	restCfg := cp.Config()
	restCfg.WarningHandler = seen
	gatewayapi.InstallT(t, restCfg)
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gatewayclient.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	routes := func(ns string) func(*gatewayv1.HTTPRoute, bool) error {
		return func(r *gatewayv1.HTTPRoute, dry bool) error {
			o := metav1.CreateOptions{}
			if dry {
				o.DryRun = []string{metav1.DryRunAll}
			}
			_, err := gw.GatewayV1().HTTPRoutes(ns).Create(context.Background(), r, o)
			return err
		}
	}
	ns := testenv.NewNamespace(t, client)
	create := routes(ns)
	url, caPEM, stop := serveWebhook(t, client)
	registerRouteWebhook(t, client, ns, strings.TrimSuffix(url, admission.Path)+admission.RoutePath, caPEM)
	bad := testRoute(ns, "bad", "/(api", true, "")
	// The API server reads webhook configurations through an informer.
	deadline := time.Now().Add(time.Minute) // turns a hang into a failure; not an assertion on time
	for i := 0; ; i++ {
		err := create(bad, true)
		if err != nil && strings.Contains(err.Error(), "match left out") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server did not call the webhook after %d tries: last error %v", i+1, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	err = create(bad, false)
	for _, w := range []string{`admission webhook "validate-httproutes.ingress-sync.io" denied the request`,
		"HTTPRoute " + ns + `/bad: rule 0 match 0: path "/(api"`, "missing closing )"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("create of a route with a bad regex: %v, want refused with %q", err, w)
		}
	}
	seen.take()
	if err := create(testRoute(ns, "good", "/api", false, ""), false); err != nil {
		t.Errorf("good route refused: %v", err)
	}
	if w := seen.take(); len(w) != 0 {
		t.Errorf("warnings %q for a good route, want none", w)
	}
	if err := create(testRoute(ns, "bucket", "/b", false, "Bucket"), false); err != nil {
		t.Errorf("route with a backendRef of another kind refused: %v", err)
	}
	if w := seen.take(); len(w) != 1 || !strings.Contains(w[0], "its share of the requests answers 500") {
		t.Errorf("warnings %q, want one about the backendRef's share answering 500", w)
	}
	stop()
	if err := create(bad, false); err != nil {
		t.Errorf("refused with the webhook down and failurePolicy Ignore: %v", err)
	}
}
