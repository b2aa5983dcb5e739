package watch

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// digest is a hash of what matters in an object: two versions with the same
// digest publish as the same state, so the later one is a no-op update.
type digest [sha256.Size]byte

// sliceView is what matters in an EndpointSlice: its endpoints and ports,
// their address type and the Service it belongs to.
type sliceView struct {
	AddressType discoveryv1.AddressType
	Service     string
	Endpoints   []discoveryv1.Endpoint
	Ports       []discoveryv1.EndpointPort
}

// ingressView is everything of an Ingress but its status: status changes,
// our own writes included, are not published on their own (the published
// object still carries the status it had at the time).
type ingressView struct {
	Labels      map[string]string
	Annotations map[string]string
	Spec        networkingv1.IngressSpec
}

// specView is what matters in a GatewayClass, Gateway, route or
// BackendTLSPolicy: all but status and the metadata the API server
// maintains, as for an Ingress.
// Their status is written by controllers (ours, later, and those of other
// classes on shared routes): a status change is not published on its own.
type specView struct {
	Labels      map[string]string
	Annotations map[string]string
	Spec        any
}

// digestOf hashes the part of obj that matters (see sliceView, ingressView
// and specView); for other kinds it is the trimmed object without its
// resourceVersion. encoding/json sorts map keys, so the hash is stable.
func digestOf(obj runtime.Object) (digest, error) {
	trimmed := events.Trim(obj)
	var view any = trimmed
	switch o := trimmed.(type) {
	case *discoveryv1.EndpointSlice:
		view = sliceView{AddressType: o.AddressType, Service: o.Labels[discoveryv1.LabelServiceName],
			Endpoints: o.Endpoints, Ports: o.Ports}
	case *networkingv1.Ingress:
		view = ingressView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.GatewayClass:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.Gateway:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.HTTPRoute:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.GRPCRoute:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.BackendTLSPolicy:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.TLSRoute:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.TCPRoute:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	case *gatewayv1.UDPRoute:
		view = specView{Labels: o.Labels, Annotations: o.Annotations, Spec: o.Spec}
	default:
		m, err := meta.Accessor(trimmed)
		if err != nil {
			return digest{}, fmt.Errorf("digest: %w", err)
		}
		m.SetResourceVersion("")
	}
	b, err := json.Marshal(view)
	if err != nil {
		return digest{}, fmt.Errorf("digest: %w", err)
	}
	return sha256.Sum256(b), nil
}
