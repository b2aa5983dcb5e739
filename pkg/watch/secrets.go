package watch

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Only the TLS Secrets that an Ingress references in spec.tls (and the
// default certificate) are published: a Secret's private key goes into the
// stream only when ingress-sync may serve it, not every TLS Secret of the
// watched namespaces (webhook serving certificates, for example). When an
// Ingress starts or stops referencing a Secret, the Secret's key is queued,
// and the usual decision publishes it or its delete.

// tlsSecretIndex indexes Ingresses by the "namespace/name" of the Secrets
// their spec.tls names.
const tlsSecretIndex = "tlsSecret"

func tlsSecretKeys(obj any) ([]string, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" {
			keys = append(keys, ing.Namespace+"/"+t.SecretName)
		}
	}
	return keys, nil
}

// secretReferenced returns the keep rule of the Secret source: a TLS
// Secret named in spec.tls (any with allTLS, and the default certificate)
// or by a listener of a Gateway of ours (gateway_secrets.go), a Secret of
// either type named by auth-secret, auth-tls-secret or proxy-ssl-secret
// (auth_secrets.go).
func (s *informerSet) secretReferenced(defaultCert string, allTLS bool) func(runtime.Object) bool {
	return func(obj runtime.Object) bool {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		k := m.GetNamespace() + "/" + m.GetName()
		indexes := []string{authSecretIndex} // an Opaque Secret: only annotations name it
		if !authSecret(obj) {
			if allTLS || k == defaultCert {
				return true
			}
			indexes = append(indexes, tlsSecretIndex)
		}
		for _, inf := range s.sources[events.KindIngress].informers {
			for _, index := range indexes {
				if refs, err := inf.GetIndexer().ByIndex(index, k); err == nil && len(refs) > 0 {
					return true
				}
			}
		}
		return !authSecret(obj) && s.gatewaySecretReferenced(m.GetNamespace(), m.GetName())
	}
}

// secretsOf queues the Secrets an Ingress or a Gateway names, so that a
// Secret is published when its first reference appears and deleted from the
// stream when its last one goes.
func (t *term) secretsOf(item any) {
	keys, _ := tlsSecretKeys(item)
	auth, _ := authSecretKeys(item)
	gw, _ := gatewaySecretKeys(item)
	for _, k := range append(append(keys, auth...), gw...) {
		ns, name, err := splitNamespacedName(k)
		if err == nil {
			t.notify(key{Kind: events.KindSecret, Namespace: ns, Name: name}, nil)
		}
	}
}
