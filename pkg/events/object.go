package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// newObject returns a pointer to a zero object of the Go type that carries
// kind k, or nil for an unknown kind.
func newObject(k Kind) runtime.Object {
	switch k {
	case KindIngress:
		return &networkingv1.Ingress{}
	case KindIngressClass:
		return &networkingv1.IngressClass{}
	case KindService:
		return &corev1.Service{}
	case KindEndpointSlice:
		return &discoveryv1.EndpointSlice{}
	case KindSecret:
		return &corev1.Secret{}
	case KindConfigMap:
		return &corev1.ConfigMap{}
	case KindNamespace:
		return &corev1.Namespace{}
	}
	return newGatewayObject(k)
}

// KindOf is the Kind of a typed object this package carries, or "" for any
// other object (and for nil).
func KindOf(obj runtime.Object) Kind {
	k, _ := typed(obj)
	return k
}

// isNil reports whether obj is nil or a typed nil pointer of a known kind.
func isNil(obj runtime.Object) bool {
	k, m := typed(obj)
	return obj == nil || (k != "" && m == nil)
}

// objectMeta is the metadata of a non-nil object of a known kind.
func objectMeta(obj runtime.Object) *metav1.ObjectMeta {
	_, m := typed(obj)
	return m
}

// typed returns the kind of obj and its metadata (nil for a nil pointer),
// or "" and nil for an object of another kind.
func typed(obj runtime.Object) (Kind, *metav1.ObjectMeta) {
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		if o != nil {
			return KindIngress, &o.ObjectMeta
		}
		return KindIngress, nil
	case *networkingv1.IngressClass:
		if o != nil {
			return KindIngressClass, &o.ObjectMeta
		}
		return KindIngressClass, nil
	case *corev1.Service:
		if o != nil {
			return KindService, &o.ObjectMeta
		}
		return KindService, nil
	case *discoveryv1.EndpointSlice:
		if o != nil {
			return KindEndpointSlice, &o.ObjectMeta
		}
		return KindEndpointSlice, nil
	case *corev1.Secret:
		if o != nil {
			return KindSecret, &o.ObjectMeta
		}
		return KindSecret, nil
	case *corev1.ConfigMap:
		if o != nil {
			return KindConfigMap, &o.ObjectMeta
		}
		return KindConfigMap, nil
	case *corev1.Namespace:
		return KindNamespace, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	}
	return typedGateway(obj)
}

// checkObject verifies that a non-nil object has the Go type of kind k and
// the namespace and name of the envelope.
func checkObject(k Kind, namespace, name string, obj runtime.Object) error {
	if got := KindOf(obj); got != k {
		return fmt.Errorf("object of type %T for kind %s", obj, k)
	}
	m := objectMeta(obj)
	if m.Namespace != namespace || m.Name != name {
		return fmt.Errorf("object %s/%s does not match envelope %s/%s", m.Namespace, m.Name, namespace, name)
	}
	return nil
}
