package watch

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// The rule of TLS Secrets (secrets.go), extended to basic auth: an Opaque
// Secret is published only while an Ingress of its namespace names it in
// its auth-secret annotation ("name" or "namespace/name"; the model refuses
// other namespaces). One more informer watches the Opaque Secrets of the
// watched namespaces (type=Opaque: service account tokens, Helm releases
// and the other Secret types are never read); the keep rule hides those no
// Ingress names, whatever --publish-all-tls-secrets says.

// authSecretIndex indexes Ingresses by the "namespace/name" of the Secret
// their auth-secret annotation names.
const authSecretIndex = "authSecret"

const authSecretAnnotation = model.AnnotationPrefix + "auth-secret"

func authSecretKeys(obj any) ([]string, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil, nil
	}
	ref := ing.Annotations[authSecretAnnotation]
	if ref == "" {
		return nil, nil
	}
	ns, name, found := strings.Cut(ref, "/")
	if !found {
		return []string{ing.Namespace + "/" + ref}, nil
	}
	if ns == ing.Namespace && name != "" {
		return []string{ref}, nil
	}
	return nil, nil
}

// authSecret reports whether obj is a Secret of the type auth-secret reads.
func authSecret(obj any) bool {
	s, ok := obj.(*corev1.Secret)
	return ok && s.Type == corev1.SecretTypeOpaque
}
