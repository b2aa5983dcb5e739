package deploy

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
			if len(hooks) != 1 {
				t.Fatalf("%d webhooks, want 1", len(hooks))
			}
			hook := hooks[0].(map[string]any)
			policy, _, _ := unstructured.NestedString(hook, "failurePolicy")
			svc, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "name")
			ca, _, _ := unstructured.NestedString(hook, "clientConfig", "caBundle")
			if policy != "Ignore" {
				t.Errorf("failurePolicy %q, want Ignore by default", policy)
			}
			find(t, objs, "Service", svc)
			inject := vwc.GetAnnotations()["cert-manager.io/inject-ca-from"]
			if tc.certManager != (inject != "") || tc.certManager == (ca != "") {
				t.Errorf("cert-manager %v: caBundle %d bytes, inject-ca-from %q", tc.certManager, len(ca), inject)
			}
			secretKind := "Secret"
			if tc.certManager {
				secretKind = "Certificate"
			}
			find(t, objs, secretKind, helmRelease+"-admission")
		})
	}
}
