package gateway

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Source is the Gateway API translator as the Store and Build use it
// (intent.Source): HTTPRoutes and GRPCRoutes (as their HTTPView) are its
// route objects; it keeps the
// GatewayClasses, Gateways and ReferenceGrants they are translated
// against, and translates every route again when one of those changes;
// and the labels of the Namespaces, which only the routes of a Namespace
// whose Gateways select namespaces by label read (namespace.go).
type Source struct {
	controller string
	classes    map[string]*gatewayv1.GatewayClass
	gateways   map[intent.Key]*gatewayv1.Gateway
	grants     map[intent.Key]*gatewayv1.ReferenceGrant
	routes     map[routeKey]*gatewayv1.HTTPRoute
	// grpcRoutes counts the GRPCRoutes of routes (grpc_listeners.go).
	grpcRoutes int
	// streams are the TLSRoutes, TCPRoutes and UDPRoutes (l4route.go).
	streams map[streamKey]runtime.Object
	// services are the Gateways' Services (service.go), by their key.
	services map[intent.Key]serviceOf
	// namespaces are the labels of the Namespaces, by name.
	namespaces map[string]map[string]string
	// policies are the BackendTLSPolicies, backendTLS what they make of
	// each Service they target (backendtls.go).
	policies   map[intent.Key]*gatewayv1.BackendTLSPolicy
	backendTLS map[intent.Key]*intent.BackendTLS
}

// NewSource returns an empty Source serving the Gateways of the
// GatewayClasses whose spec.controllerName is controller (the
// --gateway-controller-name flag; DefaultControllerName).
func NewSource(controller string) *Source {
	return &Source{controller: controller, classes: map[string]*gatewayv1.GatewayClass{},
		gateways: map[intent.Key]*gatewayv1.Gateway{}, grants: map[intent.Key]*gatewayv1.ReferenceGrant{},
		routes: map[routeKey]*gatewayv1.HTTPRoute{}, streams: map[streamKey]runtime.Object{}, services: map[intent.Key]serviceOf{},
		namespaces: map[string]map[string]string{}, policies: map[intent.Key]*gatewayv1.BackendTLSPolicy{}}
}

// routeKey names a route: an HTTPRoute and a GRPCRoute may share a key.
type routeKey struct {
	kind events.Kind
	intent.Key
}

func (k routeKey) String() string { return string(k.kind) + " " + k.Key.String() }

// Takes reports the Gateway API kinds and Namespaces: HTTPRoutes and
// GRPCRoutes are routes.
func (src *Source) Takes(kind events.Kind) (ok, route bool) {
	switch kind {
	case events.KindHTTPRoute, events.KindGRPCRoute, events.KindTLSRoute, events.KindTCPRoute, events.KindUDPRoute:
		return true, true
	case events.KindGatewayClass, events.KindGateway, events.KindReferenceGrant, events.KindNamespace, events.KindBackendTLSPolicy:
		return true, false
	}
	return false, false
}

// Translate keeps the HTTPRoute, or the HTTPView of the GRPCRoute, and
// makes its entry (see translate.go).
func (src *Source) Translate(kind events.Kind, key intent.Key, obj runtime.Object) (*intent.Entry, error) {
	if isStreamKind(kind) {
		r, ok := l4RouteOf(obj)
		if !ok || string(r.kind) != string(kind) {
			return nil, fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, kind, obj)
		}
		src.streams[streamKey{kind, key}] = obj
		return src.translateL4(key, r, obj), nil
	}
	var r *gatewayv1.HTTPRoute
	switch o := obj.(type) {
	case *gatewayv1.HTTPRoute:
		r = o
	case *gatewayv1.GRPCRoute:
		r = HTTPView(o)
	}
	if r == nil || routeKind(r) != kind {
		return nil, fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, kind, obj)
	}
	k := routeKey{kind, key}
	if _, had := src.routes[k]; !had && kind == events.KindGRPCRoute {
		src.grpcRoutes++
	}
	src.routes[k] = r
	return src.translate(key, r), nil
}

// Keep stores or removes a GatewayClass, Gateway, ReferenceGrant or
// BackendTLSPolicy, and
// translates every route again: each may attach to or refer through it.
// An HTTPRoute's delete removes it. A Namespace's labels are kept apart
// (keepNamespace).
func (src *Source) Keep(kind events.Kind, key intent.Key, obj runtime.Object) ([]*intent.Entry, error) {
	var err error
	switch kind {
	case events.KindHTTPRoute, events.KindGRPCRoute:
		k := routeKey{kind, key}
		if _, had := src.routes[k]; had && kind == events.KindGRPCRoute {
			src.grpcRoutes--
		}
		delete(src.routes, k) // the Store removes its entry
		return nil, nil
	case events.KindTLSRoute, events.KindTCPRoute, events.KindUDPRoute:
		delete(src.streams, streamKey{kind, key})
		return nil, nil
	case events.KindGatewayClass:
		err = keep(src.classes, key.Name, kind, obj)
	case events.KindGateway:
		err = keep(src.gateways, key, kind, obj)
	case events.KindReferenceGrant:
		err = keep(src.grants, key, kind, obj)
	case events.KindNamespace:
		return src.keepNamespace(key.Name, obj)
	case events.KindBackendTLSPolicy:
		err = src.keepPolicy(key, obj)
	default:
		return nil, fmt.Errorf("%w %q", intent.ErrUnknownKind, kind)
	}
	if err != nil {
		return nil, err
	}
	return src.translateAll(), nil
}

// keep stores obj in m at k (removes k for nil), checking its type.
func keep[K comparable, T runtime.Object](m map[K]T, k K, kind events.Kind, obj runtime.Object) error {
	if obj == nil {
		delete(m, k)
		return nil
	}
	o, ok := obj.(T)
	if !ok {
		return fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, kind, obj)
	}
	m[k] = o
	return nil
}

// translateAll makes the entry of every route again, in key order (the
// stream routes after the HTTPRoutes).
func (src *Source) translateAll() []*intent.Entry {
	return append(src.translateWhere(func(intent.Key, *gatewayv1.HTTPRoute) bool { return true }),
		src.translateStreams(func(streamKey) bool { return true })...)
}

// streamKey is a stream route's kind and key.
type streamKey struct {
	kind events.Kind
	key  intent.Key
}

// translateStreams makes the entry of every stream route which selects
// again, in kind and key order.
func (src *Source) translateStreams(which func(streamKey) bool) []*intent.Entry {
	keys := make([]streamKey, 0, len(src.streams))
	for k := range src.streams {
		if which(k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].kind != keys[j].kind {
			return keys[i].kind < keys[j].kind
		}
		return keys[i].key.String() < keys[j].key.String()
	})
	out := make([]*intent.Entry, 0, len(keys))
	for _, k := range keys {
		r, _ := l4RouteOf(src.streams[k])
		out = append(out, src.translateL4(k.key, r, src.streams[k]))
	}
	return out
}

// translateWhere makes the entry of every route that which selects again,
// in key order.
func (src *Source) translateWhere(which func(intent.Key, *gatewayv1.HTTPRoute) bool) []*intent.Entry {
	keys := make([]routeKey, 0, len(src.routes))
	for k, r := range src.routes {
		if which(k.Key, r) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	out := make([]*intent.Entry, len(keys))
	for i, k := range keys {
		out[i] = src.translate(k.Key, src.routes[k])
	}
	return out
}

// Has reports whether the object of kind at key is kept.
func (src *Source) Has(kind events.Kind, key intent.Key) bool {
	var ok bool
	switch kind {
	case events.KindGatewayClass:
		_, ok = src.classes[key.Name]
	case events.KindGateway:
		_, ok = src.gateways[key]
	case events.KindReferenceGrant:
		_, ok = src.grants[key]
	case events.KindNamespace:
		_, ok = src.namespaces[key.Name]
	case events.KindBackendTLSPolicy:
		_, ok = src.policies[key]
	}
	return ok
}

// Len is the number of GatewayClasses, Gateways, ReferenceGrants,
// BackendTLSPolicies and Namespaces kept (the Services are the Store's).
func (src *Source) Len() int {
	return len(src.classes) + len(src.gateways) + len(src.grants) + len(src.namespaces) + len(src.policies)
}

// Serving serves every entry: which Gateways a route attaches to was
// decided when it was translated (a route attached to none has no hosts).
func (src *Source) Serving(intent.Classes) func(*intent.Entry) bool {
	return func(*intent.Entry) bool { return true }
}

// grantList returns the ReferenceGrants kept.
func (src *Source) grantList() []*gatewayv1.ReferenceGrant {
	out := make([]*gatewayv1.ReferenceGrant, 0, len(src.grants))
	for _, g := range src.grants {
		out = append(out, g)
	}
	return out
}
