package events

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The Gateway API kinds travel as the typed objects of
// sigs.k8s.io/gateway-api/apis/v1, encoded like every other object (json
// field names, empty fields left out). The watcher publishes them only
// when the cluster serves their CRDs.

// newGatewayObject returns a pointer to a zero object of the Gateway API
// kind k, or nil for any other kind.
func newGatewayObject(k Kind) runtime.Object {
	switch k {
	case KindGatewayClass:
		return &gatewayv1.GatewayClass{}
	case KindGateway:
		return &gatewayv1.Gateway{}
	case KindHTTPRoute:
		return &gatewayv1.HTTPRoute{}
	case KindGRPCRoute:
		return &gatewayv1.GRPCRoute{}
	case KindReferenceGrant:
		return &gatewayv1.ReferenceGrant{}
	case KindBackendTLSPolicy:
		return &gatewayv1.BackendTLSPolicy{}
	case KindTLSRoute:
		return &gatewayv1.TLSRoute{}
	case KindTCPRoute:
		return &gatewayv1.TCPRoute{}
	case KindUDPRoute:
		return &gatewayv1.UDPRoute{}
	}
	return nil
}

// typedGateway is typed for the Gateway API kinds: the kind of obj and its
// metadata (nil for a nil pointer), or "" and nil for any other object.
func typedGateway(obj runtime.Object) (Kind, *metav1.ObjectMeta) {
	switch o := obj.(type) {
	case *gatewayv1.GatewayClass:
		return KindGatewayClass, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.Gateway:
		return KindGateway, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.HTTPRoute:
		return KindHTTPRoute, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.GRPCRoute:
		return KindGRPCRoute, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.ReferenceGrant:
		return KindReferenceGrant, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.BackendTLSPolicy:
		return KindBackendTLSPolicy, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.TLSRoute:
		return KindTLSRoute, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.TCPRoute:
		return KindTCPRoute, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	case *gatewayv1.UDPRoute:
		return KindUDPRoute, metaOrNil(o, func() *metav1.ObjectMeta { return &o.ObjectMeta })
	}
	return "", nil
}

// metaOrNil is the metadata of a typed pointer, nil for a nil one.
func metaOrNil[T any](p *T, meta func() *metav1.ObjectMeta) *metav1.ObjectMeta {
	if p == nil {
		return nil
	}
	return meta()
}

// gatewayToken is KindToken for the Gateway API kinds, "" for any other.
func gatewayToken(k Kind) string {
	switch k {
	case KindGatewayClass:
		return "gatewayclass"
	case KindGateway:
		return "gateway"
	case KindHTTPRoute:
		return "httproute"
	case KindGRPCRoute:
		return "grpcroute"
	case KindReferenceGrant:
		return "referencegrant"
	case KindBackendTLSPolicy:
		return "backendtlspolicy"
	case KindTLSRoute:
		return "tlsroute"
	case KindTCPRoute:
		return "tcproute"
	case KindUDPRoute:
		return "udproute"
	}
	return ""
}
