package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestGatewayAddresses(t *testing.T) {
	lb := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1"}}
	lbReady := lb.DeepCopy()
	lbReady.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.18.0.1"}, {Hostname: "lb.example.com"}}
	clusterIP := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.2"}}
	tests := []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{name: "no Service", svc: nil},
		{name: "load balancer not ready: no address, not its cluster IP", svc: lb},
		{name: "load balancer", svc: lbReady, want: []string{"IPAddress 198.18.0.1", "Hostname lb.example.com"}},
		{name: "cluster IP", svc: clusterIP, want: []string{"IPAddress 10.0.0.2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range gatewayAddresses(tc.svc) {
				got = append(got, string(*a.Type)+" "+a.Value)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("addresses %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("addresses %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestMergePorts(t *testing.T) {
	have := []corev1.ServicePort{{Name: "p80", Port: 80, NodePort: 31080}, {Name: "p81", Port: 81, NodePort: 31081}}
	want := []corev1.ServicePort{{Name: "p80", Port: 80}, {Name: "p80-udp", Port: 80, Protocol: corev1.ProtocolUDP}, {Name: "p90", Port: 90}}
	tests := []struct {
		name string
		typ  corev1.ServiceType
		want []int32
	}{
		{name: "load balancer keeps the nodePorts of ports kept", typ: corev1.ServiceTypeLoadBalancer, want: []int32{31080, 0, 0}},
		{name: "cluster IP has none", typ: corev1.ServiceTypeClusterIP, want: []int32{0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergePorts(have, want, tc.typ)
			for i, p := range got {
				if p.NodePort != tc.want[i] {
					t.Errorf("port %d: nodePort %d, want %d", p.Port, p.NodePort, tc.want[i])
				}
			}
		})
	}
}
