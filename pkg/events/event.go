package events

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// SchemaVersion is the version of the envelope written by this build. Decoders
// refuse envelopes with a newer version than they know.
const SchemaVersion = 1

// Op is what happened to an object.
type Op string

// The operations an Event records.
const (
	OpCreate Op = "create"
	OpUpdate Op = "update"
	OpDelete Op = "delete"
)

// Valid reports whether o is one of the known operations.
func (o Op) Valid() bool { return o == OpCreate || o == OpUpdate || o == OpDelete }

// Kind is the Kubernetes kind of the object an Event carries.
type Kind string

// The kinds that are inputs of the ingress configuration.
const (
	KindIngress       Kind = "Ingress"
	KindIngressClass  Kind = "IngressClass"
	KindService       Kind = "Service"
	KindEndpointSlice Kind = "EndpointSlice"
	KindSecret        Kind = "Secret"
	KindConfigMap     Kind = "ConfigMap"
)

// The Gateway API kinds (gateway.networking.k8s.io/v1, standard channel),
// carried as the typed objects of sigs.k8s.io/gateway-api/apis/v1.
const (
	KindGatewayClass   Kind = "GatewayClass"
	KindGateway        Kind = "Gateway"
	KindHTTPRoute      Kind = "HTTPRoute"
	KindGRPCRoute      Kind = "GRPCRoute"
	KindReferenceGrant Kind = "ReferenceGrant"
	// KindBackendTLSPolicy: how Gateways connect to a Service over TLS.
	KindBackendTLSPolicy Kind = "BackendTLSPolicy"
	KindTLSRoute         Kind = "TLSRoute"
	KindTCPRoute         Kind = "TCPRoute"
	KindUDPRoute         Kind = "UDPRoute"
)

// KindNamespace carries a Namespace trimmed to its name and labels (Trim):
// what a Gateway listener's allowedRoutes.namespaces selector reads.
const KindNamespace Kind = "Namespace"

// Kinds lists every kind, in the order the builder depends on them.
var Kinds = []Kind{
	KindNamespace, KindIngressClass, KindGatewayClass, KindConfigMap, KindSecret, KindService, KindEndpointSlice,
	KindReferenceGrant, KindIngress, KindGateway, KindHTTPRoute, KindGRPCRoute, KindTLSRoute, KindTCPRoute, KindUDPRoute,
	KindBackendTLSPolicy,
}

// GatewayKinds lists the Gateway API kinds, in the order of Kinds.
var GatewayKinds = []Kind{KindGatewayClass, KindReferenceGrant, KindGateway, KindHTTPRoute, KindGRPCRoute,
	KindTLSRoute, KindTCPRoute, KindUDPRoute, KindBackendTLSPolicy}

// Event is one change of one object. Object holds the trimmed, typed object:
// *networkingv1.Ingress, *networkingv1.IngressClass, *corev1.Service,
// *discoveryv1.EndpointSlice, *corev1.Secret, *corev1.ConfigMap,
// *corev1.Namespace, or one of
// *gatewayv1.GatewayClass, *gatewayv1.Gateway, *gatewayv1.HTTPRoute,
// *gatewayv1.GRPCRoute, *gatewayv1.ReferenceGrant, *gatewayv1.TLSRoute,
// *gatewayv1.TCPRoute, *gatewayv1.UDPRoute and *gatewayv1.BackendTLSPolicy.
// On a delete
// it holds the last known state of the object (it may be nil when the watcher
// only knew the key, as after a delete found while reconciling).
type Event struct {
	Op              Op
	Kind            Kind
	Namespace       string // "" for cluster-scoped objects
	Name            string
	UID             string
	ResourceVersion string
	ObservedAt      time.Time // when the watcher saw the change
	WatcherID       string
	SchemaVersion   int
	Object          runtime.Object

	// Filled in by the consumer from the JetStream message metadata; zero
	// when the Event was built in memory.
	Sequence    uint64
	Subject     string
	PublishedAt time.Time
}

// Key is the identity of an object within its kind: "namespace/name", or
// "name" for cluster-scoped objects.
func (e Event) Key() string {
	if e.Namespace == "" {
		return e.Name
	}
	return e.Namespace + "/" + e.Name
}
