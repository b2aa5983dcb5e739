package events_test

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// typicalIngress is an Ingress as most users write it: one host, two
// Prefix paths to one Service, TLS, a few annotations.
func typicalIngress() *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	path := func(p, svc string) networkingv1.HTTPIngressPath {
		return networkingv1.HTTPIngressPath{Path: p, PathType: &prefix,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "web", UID: "0b5f2a8e-9a1c-4f55-8f77-3c0d8c1e7a01", ResourceVersion: "48151",
			Generation: 1, CreationTimestamp: eventstest.Created(),
			Annotations: map[string]string{"nginx.ingress.kubernetes.io/ssl-redirect": "true", "nginx.ingress.kubernetes.io/proxy-body-size": "8m"},
		},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "shop-tls"}},
			Rules: []networkingv1.IngressRule{{Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{path("/", "web"), path("/api", "api")}},
			}}},
		},
	}
}

func benchEvents() []eventstest.Named {
	return []eventstest.Named{
		{Name: "EndpointSlice100", Event: eventstest.Of(events.OpUpdate, eventstest.EndpointSlice(100))},
		{Name: "Ingress", Event: eventstest.Of(events.OpUpdate, typicalIngress())},
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, tc := range benchEvents() {
		b.Run(tc.Name, func(b *testing.B) {
			var size int
			b.ReportAllocs()
			for b.Loop() {
				data, err := events.Encode(tc.Event)
				if err != nil {
					b.Fatal(err)
				}
				size = len(data)
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, tc := range benchEvents() {
		b.Run(tc.Name, func(b *testing.B) {
			data, err := events.Encode(tc.Event)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := events.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data)), "bytes")
		})
	}
}

func BenchmarkTrim(b *testing.B) {
	obj := untrimmed(eventstest.EndpointSlice(100))
	b.ReportAllocs()
	for b.Loop() {
		events.Trim(obj)
	}
}
