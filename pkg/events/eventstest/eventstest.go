// Package eventstest holds the event fixtures of the tests of pkg/events and
// pkg/stream: one event of every kind with every field the configuration
// builder reads set (gateway.go for the Gateway API kinds), and the edge
// cases of the envelope.
package eventstest

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Created is the creation timestamp of the fixtures, as the API server
// sends it: whole seconds, local time zone (metav1.Time decodes JSON into
// local time).
func Created() metav1.Time { return metav1.NewTime(time.Unix(1_767_225_600, 0)) }

func objectMeta(ns, name, uid, rv string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace:         ns,
		Name:              name,
		UID:               types.UID(uid),
		ResourceVersion:   rv,
		Generation:        3,
		CreationTimestamp: Created(),
		Labels:            map[string]string{"app.kubernetes.io/name": "shop", "tier": ""},
	}
}

// Ingress sets every field the configuration builder reads.
func Ingress() *networkingv1.Ingress {
	prefix, exact := networkingv1.PathTypePrefix, networkingv1.PathTypeExact
	ing := &networkingv1.Ingress{
		ObjectMeta: objectMeta("shop", "web.v2", "0b5f2a8e-9a1c-4f55-8f77-3c0d8c1e7a01", "48151"),
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			DefaultBackend: &networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "fallback", Port: networkingv1.ServiceBackendPort{Number: 8080}},
			},
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com", "*.shop.example.com"}, SecretName: "shop-tls"}},
			Rules: []networkingv1.IngressRule{
				{Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{
						{Path: "/", PathType: &prefix, Backend: serviceBackend("web", networkingv1.ServiceBackendPort{Name: "http"})},
						{Path: "/api", PathType: &exact, Backend: serviceBackend("api", networkingv1.ServiceBackendPort{Number: 9000})},
						{Path: "/static", PathType: &prefix, Backend: networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{
							APIGroup: ptr.To("k8s.example.com"), Kind: "StorageBucket", Name: "static-assets",
						}}},
					},
				}}},
				{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/healthz", PathType: &exact, Backend: serviceBackend("web", networkingv1.ServiceBackendPort{Number: 80})}},
				}}},
			},
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10", Hostname: "lb.example.com",
				Ports: []networkingv1.IngressPortStatus{{Port: 443, Protocol: corev1.ProtocolTCP}}}},
		}},
	}
	ing.Annotations = map[string]string{
		"nginx.ingress.kubernetes.io/rewrite-target":  "/$2",
		"nginx.ingress.kubernetes.io/ssl-redirect":    "true",
		"nginx.ingress.kubernetes.io/proxy-body-size": "8m",
	}
	return ing
}

func serviceBackend(name string, port networkingv1.ServiceBackendPort) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: port}}
}

// IngressClass is the cluster-scoped default class, with parameters.
func IngressClass() *networkingv1.IngressClass {
	ic := &networkingv1.IngressClass{
		ObjectMeta: objectMeta("", "nginx", "9d4c7f3e-1b2a-4e6f-8a9b-0c1d2e3f4a5b", "77"),
		Spec: networkingv1.IngressClassSpec{
			Controller: "k8s.io/ingress-nginx",
			Parameters: &networkingv1.IngressClassParametersReference{
				APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb",
				Scope: ptr.To(networkingv1.IngressClassParametersReferenceScopeNamespace), Namespace: ptr.To("ingress"),
			},
		},
	}
	ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
	return ic
}

// Service is a ClusterIP Service with named, numbered and UDP ports.
func Service() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta("shop", "web", "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", "48100"),
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  "10.96.12.34",
			ClusterIPs: []string{"10.96.12.34"},
			Selector:   map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
				{Name: "https", Port: 443, TargetPort: intstr.FromString("https"), Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("https")},
				{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(0), Protocol: corev1.ProtocolUDP},
			},
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
}

// ExternalNameService is a Service of type ExternalName.
func ExternalNameService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta("shop", "payments", "6f7a8b9c-0d1e-4f2a-b3c4-d5e6f7a8b9c0", "48101"),
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "payments.example.net",
			Ports:        []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(443), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// EndpointSlice has n endpoints in every condition combination.
func EndpointSlice(n int) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  objectMeta("shop", "web-x7k2p", "7a8b9c0d-1e2f-4a3b-c4d5-e6f7a8b9c0d1", "48160"),
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)},
			{Name: ptr.To("https"), Port: ptr.To[int32](8443), Protocol: ptr.To(corev1.ProtocolTCP), AppProtocol: ptr.To("https")},
		},
	}
	es.Labels[discoveryv1.LabelServiceName] = "web"
	es.Labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
	for i := range n {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.244.%d.%d", i/250, i%250+2)},
			Conditions: discoveryv1.EndpointConditions{
				Ready: ptr.To(i%3 != 0), Serving: ptr.To(i%5 != 0), Terminating: ptr.To(i%7 == 0),
			},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: fmt.Sprintf("web-%d", i),
				UID: types.UID(fmt.Sprintf("pod-uid-%04d", i))},
			NodeName: ptr.To(fmt.Sprintf("node-%d", i%4)),
			Zone:     ptr.To(fmt.Sprintf("zone-%c", 'a'+i%3)),
		})
	}
	return es
}

// Secret is a TLS Secret with a CA bundle.
func Secret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta("shop", "shop-tls", "8b9c0d1e-2f3a-4b4c-d5e6-f7a8b9c0d1e2", "48120"),
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       []byte("-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"),
			corev1.TLSPrivateKeyKey: []byte("-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----\n"),
			"ca.crt":                []byte("-----BEGIN CERTIFICATE-----\nMIIC...\n-----END CERTIFICATE-----\n"),
		},
	}
}

// ConfigMap is the controller ConfigMap, with an empty value.
func ConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: objectMeta("ingress", "ingress-sync-controller", "9c0d1e2f-3a4b-4c5d-e6f7-a8b9c0d1e2f3", "48130"),
		Data: map[string]string{
			"proxy-body-size":       "16m",
			"use-forwarded-headers": "true",
			"log-format-upstream":   `$remote_addr - [$time_local] "$request" $status`,
			"empty":                 "",
		},
	}
}

// Namespace is a Namespace as published: its name and labels only.
func Namespace() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop",
		Labels: map[string]string{"kubernetes.io/metadata.name": "shop", "team": "web"}}}
}

// Observed is the time the fixture events were seen by the watcher.
func Observed() time.Time { return time.Unix(1_767_225_700, 123_456_789) }

// Of wraps obj in an event whose envelope is taken from obj.
func Of(op events.Op, obj runtime.Object) events.Event {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return events.Event{
		Op: op, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(),
		UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion(),
		ObservedAt: Observed(), WatcherID: "watcher-0", SchemaVersion: events.SchemaVersion,
		Object: obj,
	}
}

// Named is one case of the fixture events.
type Named struct {
	Name  string
	Event events.Event
}

// Events has one event of every kind with every builder-read field
// set, plus the edge cases of the envelope.
func Events() []Named {
	bare := events.Event{Op: events.OpDelete, Kind: events.KindService, Namespace: "shop", Name: "gone", SchemaVersion: events.SchemaVersion}
	return []Named{
		{"ingress", Of(events.OpCreate, Ingress())},
		{"ingressclass cluster-scoped", Of(events.OpUpdate, IngressClass())},
		{"service", Of(events.OpUpdate, Service())},
		{"service externalname", Of(events.OpCreate, ExternalNameService())},
		{"endpointslice", Of(events.OpUpdate, EndpointSlice(12))},
		{"endpointslice empty", Of(events.OpUpdate, EndpointSlice(0))},
		{"secret", Of(events.OpCreate, Secret())},
		{"configmap", Of(events.OpUpdate, ConfigMap())},
		{"namespace cluster-scoped", Of(events.OpUpdate, Namespace())},
		{"delete namespace with last state", Of(events.OpDelete, Namespace())},
		{"gatewayclass cluster-scoped", Of(events.OpCreate, GatewayClass())},
		{"gateway", Of(events.OpUpdate, Gateway())},
		{"httproute", Of(events.OpCreate, HTTPRoute())},
		{"referencegrant", Of(events.OpUpdate, ReferenceGrant())},
		{"delete httproute with last state", Of(events.OpDelete, HTTPRoute())},
		{"delete with last state", Of(events.OpDelete, Ingress())},
		{"delete without object", bare},
	}
}
