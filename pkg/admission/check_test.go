package admission

import (
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const prefix = ingress.AnnotationPrefix

// newIngress is an Ingress of class nginx with one Prefix path to svc:80
// on host, with the annotations given.
func newIngress(host, path string, ann map[string]string) *networkingv1.Ingress {
	class := ingress.DefaultIngressClass
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: ann},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: ptr(networkingv1.PathTypeImplementationSpecific),
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
			}},
		}}},
	}
}

func ptr[T any](v T) *T { return &v }

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		ing  *networkingv1.Ingress
		// refused and warned are substrings of the refusals and warnings
		// expected, in order; none means none.
		refused, warned []string
	}{
		{name: "plain", ing: newIngress("shop.example.com", "/", nil)},
		{name: "snippet refused", ing: newIngress("shop.example.com", "/", map[string]string{prefix + "configuration-snippet": "deny all;"}),
			refused: []string{"annotation " + prefix + "configuration-snippet: snippets are never applied"}},
		{name: "regex that does not compile", ing: newIngress("shop.example.com", "/(api", map[string]string{prefix + "use-regex": "true"}),
			refused: []string{`spec.rules[0].http.paths[0].path "/(api" (ImplementationSpecific)`}, warned: []string{"use-regex: supported with a documented difference"}},
		{name: "regex path is fine", ing: newIngress("shop.example.com", "/api/(v[12])/.*", map[string]string{prefix + "use-regex": "true"}),
			warned: []string{"use-regex: supported with a documented difference"}},
		{name: "invalid host", ing: newIngress("shop..example.com", "/", nil), refused: []string{`spec.rules[0].host "shop..example.com"`}},
		{name: "invalid path", ing: newIngress("shop.example.com", "/a b", nil), refused: []string{`spec.rules[0].http.paths[0].path "/a b"`}},
		{name: "source range fails closed", ing: newIngress("shop.example.com", "/", map[string]string{prefix + "whitelist-source-range": "10.0.0.0/8,not-a-cidr"}),
			refused: []string{"annotation " + prefix + "whitelist-source-range=", "routes answer 503"},
			warned:  []string{"whitelist-source-range: supported with a documented difference"}},
		{name: "value ignored is a warning", ing: newIngress("shop.example.com", "/", map[string]string{prefix + "proxy-body-size": "10 MB"}),
			warned: []string{"annotation " + prefix + `proxy-body-size="10 MB"`, "; ignored"}},
		{name: "not supported is a warning", ing: newIngress("shop.example.com", "/", map[string]string{prefix + "no-such-annotation": "x"}),
			warned: []string{"annotation " + prefix + "no-such-annotation", "not supported"}},
		{name: "documented difference is a warning", ing: newIngress("shop.example.com", "/", map[string]string{prefix + "proxy-read-timeout": "120"}),
			warned: []string{"annotation " + prefix + "proxy-read-timeout: supported with a documented difference"}},
		{name: "invalid tls host", ing: withTLS(newIngress("shop.example.com", "/", nil), "bad_host"),
			refused: []string{`spec.tls[0].hosts[0] "bad_host"`}},
		{name: "resource backend", ing: withResourceBackend(newIngress("shop.example.com", "/", nil)),
			refused: []string{"spec.rules[0].http.paths[0].backend: only Service backends"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Check(ingress.NewSource(), tc.ing)
			if err != nil {
				t.Fatal(err)
			}
			checkContains(t, "refusals", v.Refusals, tc.refused)
			checkContains(t, "warnings", v.Warnings, tc.warned)
			if v.Allowed() != (len(tc.refused) == 0) {
				t.Errorf("Allowed() = %v with refusals %q", v.Allowed(), v.Refusals)
			}
		})
	}
}

// checkContains checks that got has one item when want has any, and that
// it contains every string of want; none when want is empty.
func checkContains(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		if len(got) != 0 {
			t.Errorf("%s = %q, want none", what, got)
		}
		return
	}
	if len(got) != 1 {
		t.Fatalf("%s = %q, want one containing %q", what, got, want)
	}
	for _, w := range want {
		if !strings.Contains(got[0], w) {
			t.Errorf("%s = %q, want it to contain %q", what, got[0], w)
		}
	}
}

func withTLS(ing *networkingv1.Ingress, hosts ...string) *networkingv1.Ingress {
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: hosts, SecretName: "tls"}}
	return ing
}

func withResourceBackend(ing *networkingv1.Ingress) *networkingv1.Ingress {
	b := &ing.Spec.Rules[0].HTTP.Paths[0].Backend
	b.Service = nil
	b.Resource = &corev1.TypedLocalObjectReference{APIGroup: ptr("example.com"), Kind: "Bucket", Name: "b"}
	return ing
}
