package watch

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// The rule of TLS Secrets (secrets.go), extended to the annotations that
// name a Secret: auth-secret (basic auth), auth-tls-secret (the CA of
// client certificates) and proxy-ssl-secret (backend TLS). A Secret is
// published only while an Ingress of its namespace names it in one of them
// ("name" or "namespace/name"; the model refuses other namespaces). One more informer watches the Opaque Secrets of the
// watched namespaces (type=Opaque: service account tokens, Helm releases
// and the other Secret types are never read); the keep rule hides those no
// Ingress names, whatever --publish-all-tls-secrets says.

// authSecretIndex indexes Ingresses by the "namespace/name" of the Secrets
// their secretAnnotations name.
const authSecretIndex = "authSecret"

// secretAnnotations are the annotations whose value names a Secret.
var secretAnnotations = [...]string{
	ingress.AnnotationPrefix + "auth-secret",
	ingress.AnnotationPrefix + "auth-tls-secret",
	ingress.AnnotationPrefix + "proxy-ssl-secret",
}

func authSecretKeys(obj any) ([]string, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, a := range secretAnnotations {
		if k := secretKeyOf(ing.Namespace, ing.Annotations[a]); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// secretKeyOf is the "namespace/name" a reference of an Ingress in ns
// names; "" for none, or another namespace's.
func secretKeyOf(ns, ref string) string {
	if ref == "" {
		return ""
	}
	refNS, name, found := strings.Cut(ref, "/")
	switch {
	case !found:
		return ns + "/" + ref
	case refNS == ns && name != "":
		return ref
	}
	return ""
}

// authSecret reports whether obj is an Opaque Secret (the type an
// annotation names, when it is not a kubernetes.io/tls one).
func authSecret(obj any) bool {
	s, ok := obj.(*corev1.Secret)
	return ok && s.Type == corev1.SecretTypeOpaque
}
