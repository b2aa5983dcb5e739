package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

func TestDigestOf(t *testing.T) {
	port := int32(8080)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", ResourceVersion: "1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"198.18.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Port: &port}},
	}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "1"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "a.example.com"}}}}
	route, gw := eventstest.HTTPRoute(), eventstest.Gateway()
	policy := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "btls", ResourceVersion: "1"},
		Spec: gatewayv1.BackendTLSPolicySpec{Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "web.example.com"}}}
	grpc := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "rpc", ResourceVersion: "1", Generation: 3},
		Spec:   gatewayv1.GRPCRouteSpec{Hostnames: []gatewayv1.Hostname{"rpc.example.com"}},
		Status: gatewayv1.GRPCRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{ControllerName: "x/y"}}}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", ResourceVersion: "1"}, Data: map[string]string{"k": "v"}}
	tests := []struct {
		name   string
		base   runtime.Object
		change func(runtime.Object)
		same   bool
	}{
		{name: "slice: labels and annotations", base: slice, same: true, change: func(o runtime.Object) {
			s := o.(*discoveryv1.EndpointSlice)
			s.Labels["team"], s.Annotations, s.ResourceVersion = "blue", map[string]string{"a": "b"}, "2"
		}},
		{name: "slice: endpoint", base: slice, change: func(o runtime.Object) {
			s := o.(*discoveryv1.EndpointSlice)
			s.Endpoints[0].Addresses[0] = "198.18.0.2"
		}},
		{name: "slice: ports", base: slice, change: func(o runtime.Object) { o.(*discoveryv1.EndpointSlice).Ports = nil }},
		{name: "slice: service label", base: slice, change: func(o runtime.Object) {
			o.(*discoveryv1.EndpointSlice).Labels[discoveryv1.LabelServiceName] = "other"
		}},
		{name: "ingress: status", base: ing, same: true, change: func(o runtime.Object) {
			i := o.(*networkingv1.Ingress)
			i.Status.LoadBalancer.Ingress, i.ResourceVersion = []networkingv1.IngressLoadBalancerIngress{{IP: "198.18.0.9"}}, "2"
		}},
		{name: "ingress: annotation", base: ing, change: func(o runtime.Object) {
			o.(*networkingv1.Ingress).Annotations = map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}
		}},
		{name: "ingress: spec", base: ing, change: func(o runtime.Object) { o.(*networkingv1.Ingress).Spec.Rules[0].Host = "b.example.com" }},
		{name: "configmap: version and managed fields", base: cm, same: true, change: func(o runtime.Object) {
			c := o.(*corev1.ConfigMap)
			c.ResourceVersion, c.ManagedFields = "2", []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		}},
		{name: "configmap: last-applied annotation", base: cm, same: true, change: func(o runtime.Object) {
			o.(*corev1.ConfigMap).Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}
		}},
		{name: "configmap: data", base: cm, change: func(o runtime.Object) { o.(*corev1.ConfigMap).Data["k"] = "w" }},
		{name: "httproute: status and generation", base: route, same: true, change: func(o runtime.Object) {
			r := o.(*gatewayv1.HTTPRoute)
			r.Status.Parents, r.ResourceVersion, r.Generation = nil, "2", 4
		}},
		{name: "httproute: spec", base: route, change: func(o runtime.Object) { o.(*gatewayv1.HTTPRoute).Spec.Hostnames = nil }},
		{name: "grpcroute: status and generation", base: grpc, same: true, change: func(o runtime.Object) {
			r := o.(*gatewayv1.GRPCRoute)
			r.Status.Parents, r.ResourceVersion, r.Generation = nil, "2", 4
		}},
		{name: "grpcroute: spec", base: grpc, change: func(o runtime.Object) { o.(*gatewayv1.GRPCRoute).Spec.Hostnames = nil }},
		{name: "gateway: status", base: gw, same: true, change: func(o runtime.Object) { o.(*gatewayv1.Gateway).Status.Addresses = nil }},
		{name: "gateway: listeners", base: gw, change: func(o runtime.Object) { o.(*gatewayv1.Gateway).Spec.Listeners[0].Port = 8080 }},
		{name: "gatewayclass: status", base: eventstest.GatewayClass(), same: true, change: func(o runtime.Object) {
			o.(*gatewayv1.GatewayClass).Status.SupportedFeatures = nil
		}},
		{name: "referencegrant: to", base: eventstest.ReferenceGrant(), change: func(o runtime.Object) {
			o.(*gatewayv1.ReferenceGrant).Spec.To = nil
		}},
		{name: "backendtlspolicy: status", base: policy, same: true, change: func(o runtime.Object) {
			p := o.(*gatewayv1.BackendTLSPolicy)
			p.Status.Ancestors, p.ResourceVersion = []gatewayv1.PolicyAncestorStatus{{ControllerName: "example.com/x"}}, "2"
		}},
		{name: "backendtlspolicy: hostname", base: policy, change: func(o runtime.Object) {
			o.(*gatewayv1.BackendTLSPolicy).Spec.Validation.Hostname = "other.example.com"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			changed := tc.base.DeepCopyObject()
			tc.change(changed)
			a, errA := digestOf(tc.base)
			b, errB := digestOf(changed)
			if errA != nil || errB != nil {
				t.Fatalf("digestOf: %v, %v", errA, errB)
			}
			if (a == b) != tc.same {
				t.Errorf("same digest = %v, want %v", a == b, tc.same)
			}
		})
	}
}
