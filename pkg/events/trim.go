package events

import (
	"bytes"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// LastAppliedAnnotation is the annotation `kubectl apply` stores the whole
// applied object in; Trim drops it.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// Secret data keys that Trim keeps: the certificate, key, CA bundle and
// the CA's revocation list (auth-tls-secret).
const (
	SecretKeyTLSCert = corev1.TLSCertKey       // "tls.crt"
	SecretKeyTLSKey  = corev1.TLSPrivateKeyKey // "tls.key"
	SecretKeyCACert  = "ca.crt"
	SecretKeyCACRL   = "ca.crl"
)

// Trim returns a copy of obj without what the configuration builder never
// reads: managedFields and the kubectl last-applied annotation on every
// object, and for Secrets every data key but tls.crt, tls.key, ca.crt and
// ca.crl (and stringData, which the API never returns); of a Namespace
// only its name and labels (what a listener's namespace selector reads:
// no annotations, spec or status, and no uid or resourceVersion, which the
// envelope carries); an Opaque Secret
// (only published when an Ingress's annotation names it) keeps all its
// data: auth-file reads the key "auth", auth-map every key. Everything else, spec,
// status, labels, other annotations, owner references, is kept. obj itself
// is not modified, so Trim is safe on objects from an informer cache. Trim of
// nil is nil; objects of other kinds are trimmed of their metadata only.
func Trim(obj runtime.Object) runtime.Object {
	if isNil(obj) {
		return nil
	}
	switch o := obj.(type) {
	case *corev1.Secret:
		return trimSecret(o)
	case *corev1.Namespace:
		return trimNamespace(o)
	}
	out := obj.DeepCopyObject()
	if m, err := meta.Accessor(out); err == nil {
		trimMeta(m)
	}
	return out
}

// trimMeta drops managedFields and the last-applied annotation in place.
func trimMeta(m metav1.Object) {
	m.SetManagedFields(nil)
	ann := m.GetAnnotations()
	if _, ok := ann[LastAppliedAnnotation]; !ok {
		return
	}
	delete(ann, LastAppliedAnnotation)
	if len(ann) == 0 {
		ann = nil
	}
	m.SetAnnotations(ann)
}

// trimSecret copies only the kept data keys, so that the dropped values are
// never copied at all.
func trimSecret(s *corev1.Secret) *corev1.Secret {
	out := &corev1.Secret{
		TypeMeta:   s.TypeMeta,
		ObjectMeta: *s.ObjectMeta.DeepCopy(),
		Type:       s.Type,
	}
	if s.Immutable != nil {
		immutable := *s.Immutable
		out.Immutable = &immutable
	}
	trimMeta(&out.ObjectMeta)
	if s.Type == corev1.SecretTypeOpaque {
		out.Data = make(map[string][]byte, len(s.Data))
		for k, v := range s.Data {
			out.Data[k] = bytes.Clone(v)
		}
		return out
	}
	for _, k := range [...]string{SecretKeyTLSCert, SecretKeyTLSKey, SecretKeyCACert, SecretKeyCACRL} {
		v, ok := s.Data[k]
		if !ok {
			continue
		}
		if out.Data == nil {
			out.Data = make(map[string][]byte, 3)
		}
		out.Data[k] = bytes.Clone(v)
	}
	return out
}

// trimNamespace copies a Namespace's name and labels, nothing else.
func trimNamespace(ns *corev1.Namespace) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: ns.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: maps.Clone(ns.Labels)}}
}
