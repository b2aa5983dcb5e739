package deploy

import (
	"encoding/base64"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// TestHelmAdmission checks the objects of controller.admissionWebhooks as
// rendered: the configuration points at the Service of the watchers' webhook
// port, with the chart's CA or cert-manager's injection, and the watcher
// mounts the Secret the certificate is in. TestHelmApplyDryRun applies the
// chart's own certificate case (values admission) to a real kube-apiserver.
func TestHelmAdmission(t *testing.T) {
	tests := []struct {
		name        string
		set         []string
		certManager bool
	}{
		{name: "chart certificate", set: []string{"controller.admissionWebhooks.enabled=true"}},
		{name: "cert-manager", set: []string{"controller.admissionWebhooks.enabled=true", "controller.admissionWebhooks.certManager.enabled=true"}, certManager: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := helmTemplate(t, nil, tc.set...)
			if err != nil {
				t.Fatal(err)
			}
			vwcs := ofKind(objs, "ValidatingWebhookConfiguration")
			if len(vwcs) != 1 {
				t.Fatalf("%d ValidatingWebhookConfigurations, want 1", len(vwcs))
			}
			vwc := vwcs[0]
			hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
			paths := map[string]string{"ingresses": "/networking/v1/ingresses", "httproutes": "/gateway.networking.k8s.io/v1/httproutes"}
			if len(hooks) != len(paths) {
				t.Fatalf("%d webhooks, want one for Ingresses and one for HTTPRoutes", len(hooks))
			}
			inject := vwc.GetAnnotations()["cert-manager.io/inject-ca-from"]
			for _, h := range hooks {
				hook := h.(map[string]any)
				rules, _, _ := unstructured.NestedSlice(hook, "rules")
				resources, _, _ := unstructured.NestedStringSlice(rules[0].(map[string]any), "resources")
				policy, _, _ := unstructured.NestedString(hook, "failurePolicy")
				svc, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "name")
				path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
				ca, _, _ := unstructured.NestedString(hook, "clientConfig", "caBundle")
				if len(resources) != 1 || paths[resources[0]] != path {
					t.Errorf("webhook of %q at path %q, want %v", resources, path, paths)
				}
				if policy != "Ignore" {
					t.Errorf("failurePolicy %q, want Ignore by default", policy)
				}
				find(t, objs, "Service", svc)
				if tc.certManager != (inject != "") || tc.certManager == (ca != "") {
					t.Errorf("cert-manager %v: caBundle %d bytes, inject-ca-from %q", tc.certManager, len(ca), inject)
				}
			}
			secretKind := "Secret"
			if tc.certManager {
				secretKind = "Certificate"
			}
			find(t, objs, secretKind, helmRelease+"-admission")
		})
	}
}

// TestHelmAdmissionCertificateRenewal: with the Secret of the webhook's
// certificate in the cluster (helm's lookup, as on an upgrade), the chart
// keeps its pair while more than renewDays (30) are left of it, and makes a
// new one otherwise, the configuration trusting the CA of the pair it
// renders, and after a renewal the old CA too.
func TestHelmAdmissionCertificateRenewal(t *testing.T) {
	cp := testenv.Start(t)
	client := cp.Client(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	old := map[string][]byte{"ca.crt": []byte("old CA"), "tls.crt": []byte("old cert"), "tls.key": []byte("old key")}
	layout := "2006-01-02T15:04:05Z07:00"
	tests := []struct {
		name     string
		notAfter string
		kept     bool
	}{
		{name: "a year left: kept", notAfter: time.Now().AddDate(1, 0, 0).Format(layout), kept: true},
		{name: "ten days left: renewed", notAfter: time.Now().AddDate(0, 0, 10).Format(layout)},
		{name: "no date: renewed", notAfter: "soon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The Secret of an installed release, with helm's ownership marks.
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: helmRelease + "-admission",
				Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"},
				Annotations: map[string]string{"ingress-sync.io/not-after": tc.notAfter,
					"meta.helm.sh/release-name": helmRelease, "meta.helm.sh/release-namespace": namespace}},
				Type: corev1.SecretTypeTLS, Data: old}
			_ = client.CoreV1().Secrets(namespace).Delete(t.Context(), secret.Name, metav1.DeleteOptions{})
			if _, err := client.CoreV1().Secrets(namespace).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			out, err := runHelm(t, helmBinary(t), "template", helmRelease, chartDir, "--namespace", namespace, "--kubeconfig", kubeconfig,
				"--dry-run=server", "--set", "controller.admissionWebhooks.enabled=true")
			if err != nil {
				t.Fatal(err)
			}
			objs, err := DecodeObjects("helm template", []byte(out))
			if err != nil {
				t.Fatal(err)
			}
			got := typed[corev1.Secret](t, find(t, objs, "Secret", secret.Name))
			if kept := string(got.Data["tls.crt"]) == "old cert"; kept != tc.kept {
				t.Errorf("pair kept: %v, want %v (tls.crt %.40q)", kept, tc.kept, got.Data["tls.crt"])
			}
			vwc := ofKind(objs, "ValidatingWebhookConfiguration")[0]
			hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
			ca, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
			want := string(got.Data["ca.crt"])
			if !tc.kept {
				want += "old CA" // until the next upgrade
			}
			if b, _ := base64.StdEncoding.DecodeString(ca); string(b) != want {
				t.Errorf("caBundle %.60q, want the ca.crt of the Secret rendered, and the old CA after a renewal", b)
			}
		})
	}
}
