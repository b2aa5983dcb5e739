package watch

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

func TestServiceAddresses(t *testing.T) {
	tests := []struct {
		name string
		svc  corev1.Service
		want []string
	}{
		{name: "load balancer", want: []string{"198.18.0.1", "lb.example.com"}, svc: corev1.Service{
			Spec:   corev1.ServiceSpec{ClusterIP: "10.96.0.10", ExternalIPs: []string{"198.18.0.2"}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "198.18.0.1"}, {Hostname: "lb.example.com"}}}},
		}},
		{name: "external IPs", want: []string{"198.18.0.2"}, svc: corev1.Service{
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", ExternalIPs: []string{"198.18.0.2"}}}},
		{name: "cluster IP", want: []string{"10.96.0.10"}, svc: corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10"}}},
		{name: "headless", svc: corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := flat(serviceAddresses(&tc.svc)); !slices.Equal(got, tc.want) {
				t.Errorf("serviceAddresses() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStatusAddressesFromFlag(t *testing.T) {
	s := &statusWriter{w: &Watcher{cfg: Config{PublishStatusAddress: []string{"lb.example.com", "198.18.0.1", "2001:db8::1", "198.18.0.1"}}}}
	got := s.addresses()
	want := []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "198.18.0.1"}, {IP: "2001:db8::1"}}
	if !slices.EqualFunc(got, want, sameAddress) {
		t.Errorf("addresses() = %v, want %v (IPs as ip, names as hostname, sorted, no duplicates)", got, want)
	}
}

func flat(as []networkingv1.IngressLoadBalancerIngress) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.IP+a.Hostname)
	}
	return out
}
