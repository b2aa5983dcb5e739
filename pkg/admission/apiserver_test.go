package admission_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/admission"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// warnings collects the API server's warnings (rest.WarningHandler).
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.text
	w.text = nil
	return out
}

// serveWebhook starts the webhook on a free loopback port with a serving
// certificate signed by a CA of its own; it returns the URL, the CA's PEM
// and a function that stops the server and waits for it.
func serveWebhook(t *testing.T, client kubernetes.Interface) (string, []byte, func()) {
	t.Helper()
	ca, err := certs.Generate(certs.Options{CommonName: "admission test CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := certs.Generate(certs.Options{Hosts: []string{"127.0.0.1"}, Parent: ca.Cert, ParentKey: ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for f, b := range map[string][]byte{certFile: leaf.CertPEM, keyFile: leaf.KeyPEM} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	c, err := admission.NewCache(client, "")
	if err != nil {
		t.Fatal(err)
	}
	classes := intent.Classes{Controller: ingress.DefaultControllerClass, Class: ingress.DefaultIngressClass}
	srv := &admission.Server{Addr: addr, CertFile: certFile, KeyFile: keyFile, Logger: slog.New(slog.DiscardHandler),
		Handler: admission.NewHandler(admission.Options{Logger: slog.New(slog.DiscardHandler), Classes: classes,
			IngressClasses: c.IngressClasses, Neighbours: c.Neighbours})}
	if _, err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(c.Shutdown)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("webhook server: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return "https://" + addr + admission.Path, ca.CertPEM, stop
}

// registerWebhook makes the ValidatingWebhookConfiguration of the
// Ingresses of namespace ns, with failurePolicy Ignore as shipped.
func registerWebhook(t *testing.T, client kubernetes.Interface, ns, url string, caPEM []byte) {
	t.Helper()
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress-sync-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "validate.ingress-sync.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{ingressRule()},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "ingress-sync-class", Expression: classCondition}},
		}},
	}
	ctx := context.Background()
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), cfg.Name, metav1.DeleteOptions{})
	})
}

// waitRefused waits until a dry-run create of ing is refused with want.
func waitRefused(t *testing.T, client kubernetes.Interface, ing *networkingv1.Ingress, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // turns a hang into a failure; not an assertion on time
	for i := 0; ; i++ {
		_, err := client.NetworkingV1().Ingresses(ing.Namespace).Create(context.Background(), ing, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not refused with %q after %d tries: last error %v", want, i+1, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// classCondition is the matchCondition of the chart's and the overlay's
// webhook (deploy/helm/ingress-sync/templates/admission/webhook.yaml) for
// the class nginx: the API server evaluates it, so an error in it would
// skip the webhook (failurePolicy Ignore) without a word.
const classCondition = `has(object.spec.ingressClassName) ? object.spec.ingressClassName in ["nginx"] :
!has(object.metadata.annotations) || !('kubernetes.io/ingress.class' in object.metadata.annotations) ||
object.metadata.annotations['kubernetes.io/ingress.class'] in ["", "nginx"]`

func ingressRule() admissionregistrationv1.RuleWithOperations {
	scope := admissionregistrationv1.NamespacedScope
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"},
			Resources: []string{"ingresses"}, Scope: &scope},
	}
}

func testIngress(ns, name, host, path string, ann map[string]string) *networkingv1.Ingress {
	class := ingress.DefaultIngressClass
	impl := networkingv1.PathTypeImplementationSpecific
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &impl,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
			}},
		}}},
	}
}

// waitForWebhook waits until the API server calls the webhook: a dry-run
// create of a snippet Ingress is refused. The API server reads webhook
// configurations through an informer, so they apply a little later.
func waitForWebhook(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	ing := testIngress(ns, "probe", "probe.example.com", "/", map[string]string{ingress.AnnotationPrefix + "server-snippet": "x"})
	deadline := time.Now().Add(time.Minute) // turns a hang into a failure; not an assertion on time
	for i := 0; ; i++ {
		_, err := client.NetworkingV1().Ingresses(ns).Create(context.Background(), ing, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "server-snippet") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server did not call the webhook after %d tries: last error %v", i+1, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// create creates ing and returns nil when it was stored.
func create(client kubernetes.Interface, ing *networkingv1.Ingress) error {
	_, err := client.NetworkingV1().Ingresses(ing.Namespace).Create(context.Background(), ing, metav1.CreateOptions{})
	return err
}

func TestWebhookWithAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd (make controlplane); not run with -short")
	}
	cp := testenv.Start(t)
	seen := &warnings{}
	restCfg := cp.Config()
	restCfg.WarningHandler = seen
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.NewNamespace(t, client)
	url, caPEM, stop := serveWebhook(t, client)
	registerWebhook(t, client, ns, url, caPEM)
	waitForWebhook(t, client, ns)
	p := ingress.AnnotationPrefix
	refused := []struct {
		name string
		ing  *networkingv1.Ingress
		want []string
	}{
		{name: "snippet", ing: testIngress(ns, "snippet", "a.example.com", "/", map[string]string{p + "configuration-snippet": "deny all;"}),
			want: []string{`admission webhook "validate.ingress-sync.io" denied the request`, p + "configuration-snippet", "snippets are never applied"}},
		{name: "regex", ing: testIngress(ns, "regex", "a.example.com", "/(api", map[string]string{p + "use-regex": "true"}),
			want: []string{`spec.rules[0].http.paths[0].path "/(api"`, "missing closing )"}},
		{name: "fail closed", ing: testIngress(ns, "acl", "a.example.com", "/", map[string]string{p + "denylist-source-range": "10.0.0.0/33"}),
			want: []string{p + "denylist-source-range", "routes answer 503"}},
	}
	legacy := testIngress(ns, "legacy", "a.example.com", "/", map[string]string{p + "server-snippet": "x", ingress.LegacyClassAnnotation: "nginx"})
	legacy.Spec.IngressClassName = nil
	refused = append(refused, struct {
		name string
		ing  *networkingv1.Ingress
		want []string
	}{name: "legacy class annotation", ing: legacy, want: []string{p + "server-snippet"}})
	for _, tc := range refused {
		t.Run("refused "+tc.name, func(t *testing.T) {
			err := create(client, tc.ing)
			if err == nil {
				t.Fatalf("stored, want refused with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to contain %q", err, w)
				}
			}
		})
	}
	t.Run("another class stored", func(t *testing.T) {
		ing := testIngress(ns, "other-class", "a.example.com", "/", map[string]string{p + "server-snippet": "x"})
		other := "other"
		ing.Spec.IngressClassName = &other
		if err := create(client, ing); err != nil {
			t.Fatalf("refused: %v", err)
		}
	})
	t.Run("good one stored", func(t *testing.T) {
		seen.take()
		if err := create(client, testIngress(ns, "good", "b.example.com", "/", nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := client.NetworkingV1().Ingresses(ns).Get(context.Background(), "good", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if w := seen.take(); len(w) != 0 {
			t.Errorf("warnings %q, want none", w)
		}
	})
	t.Run("conflict with a stored Ingress refused", func(t *testing.T) {
		// The webhook's informer sees the good Ingress a little after it is
		// stored: a dry run waits for that, then the create is refused.
		ing := testIngress(ns, "same-path", "b.example.com", "/", nil)
		waitRefused(t, client, ing, "conflicts with Ingress "+ns+"/good")
		err := create(client, ing)
		if err == nil || !strings.Contains(err.Error(), `host b.example.com path / (Prefix): conflicts with Ingress `+ns+"/good, which is older") {
			t.Errorf("create: %v, want refused for the conflict with %s/good", err, ns)
		}
	})
	t.Run("documented difference warned", func(t *testing.T) {
		seen.take()
		if err := create(client, testIngress(ns, "differs", "c.example.com", "/", map[string]string{p + "proxy-read-timeout": "120"})); err != nil {
			t.Fatal(err)
		}
		w := seen.take()
		if len(w) != 1 || !strings.Contains(w[0], p+"proxy-read-timeout: supported with a documented difference") {
			t.Errorf("warnings %q, want one about proxy-read-timeout", w)
		}
	})
	t.Run("webhook down, failurePolicy Ignore: stored", func(t *testing.T) {
		stop()
		ing := testIngress(ns, "while-down", "d.example.com", "/", map[string]string{p + "server-snippet": "x"})
		if err := create(client, ing); err != nil {
			t.Fatalf("refused with the webhook down and failurePolicy Ignore: %v", err)
		}
	})
}
