package model

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The Gateway API inputs (GatewayClass, Gateway, HTTPRoute and
// ReferenceGrant of gateway.networking.k8s.io/v1). The Store holds them so
// that the stream can carry them to every syncer, but nothing builds routes
// from them yet: CanChange says they cannot change the Configuration.
//
// The rules that decide which of them are ours are here, beside the
// Ingress class rule (class.go), so that the watcher (which publishes only
// the Secrets our Gateways may use) and, later, the builder apply the same
// ones:
//
//   - a GatewayClass is ours when its spec.controllerName equals the
//     controller name of the flags (DefaultGatewayControllerName);
//   - a Gateway is ours when its spec.gatewayClassName names a GatewayClass
//     of ours;
//   - a reference to another namespace holds only while a ReferenceGrant in
//     that namespace allows it (ReferenceGranted).

// DefaultGatewayControllerName is the spec.controllerName of the
// GatewayClasses ingress-sync serves, unless a flag says otherwise.
const DefaultGatewayControllerName = "ingress-sync.io/gateway-controller"

// gatewayStore holds the Gateway API objects of a Store. Its zero value is
// empty and ready to use.
type gatewayStore struct {
	classes  map[string]*gatewayv1.GatewayClass
	gateways map[intent.Key]*gatewayv1.Gateway
	routes   map[intent.Key]*gatewayv1.HTTPRoute
	grants   map[intent.Key]*gatewayv1.ReferenceGrant
}

// upsert stores obj, checking that its type is that of kind.
func (g *gatewayStore) upsert(kind events.Kind, key intent.Key, obj runtime.Object) error {
	switch kind {
	case events.KindGatewayClass:
		return put(kind, obj, func(o *gatewayv1.GatewayClass) { g.classes = set(g.classes, key.Name, o) })
	case events.KindGateway:
		return put(kind, obj, func(o *gatewayv1.Gateway) { g.gateways = set(g.gateways, key, o) })
	case events.KindHTTPRoute:
		return put(kind, obj, func(o *gatewayv1.HTTPRoute) { g.routes = set(g.routes, key, o) })
	case events.KindReferenceGrant:
		return put(kind, obj, func(o *gatewayv1.ReferenceGrant) { g.grants = set(g.grants, key, o) })
	}
	return fmt.Errorf("%w %q", intent.ErrUnknownKind, kind)
}

// set is m with m[k] = v, m made when nil.
func set[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	if m == nil {
		m = make(map[K]V)
	}
	m[k] = v
	return m
}

// delete removes the object of kind at key.
func (g *gatewayStore) delete(kind events.Kind, key intent.Key) error {
	switch kind {
	case events.KindGatewayClass:
		delete(g.classes, key.Name)
	case events.KindGateway:
		delete(g.gateways, key)
	case events.KindHTTPRoute:
		delete(g.routes, key)
	case events.KindReferenceGrant:
		delete(g.grants, key)
	default:
		return fmt.Errorf("%w %q", intent.ErrUnknownKind, kind)
	}
	return nil
}

// has reports whether the object of kind at key is held.
func (g *gatewayStore) has(kind events.Kind, key intent.Key) bool {
	var ok bool
	switch kind {
	case events.KindGatewayClass:
		_, ok = g.classes[key.Name]
	case events.KindGateway:
		_, ok = g.gateways[key]
	case events.KindHTTPRoute:
		_, ok = g.routes[key]
	case events.KindReferenceGrant:
		_, ok = g.grants[key]
	}
	return ok
}

// len is the number of objects held.
func (g *gatewayStore) len() int {
	return len(g.classes) + len(g.gateways) + len(g.routes) + len(g.grants)
}

// isNilGateway reports a typed nil pointer of a Gateway API kind.
func isNilGateway(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *gatewayv1.GatewayClass:
		return o == nil
	case *gatewayv1.Gateway:
		return o == nil
	case *gatewayv1.HTTPRoute:
		return o == nil
	case *gatewayv1.ReferenceGrant:
		return o == nil
	}
	return false
}

// GatewayClass returns the stored GatewayClass, or nil.
func (s *Store) GatewayClass(name string) *gatewayv1.GatewayClass { return s.gateway.classes[name] }

// Gateway returns the stored Gateway, or nil.
func (s *Store) Gateway(namespace, name string) *gatewayv1.Gateway {
	return s.gateway.gateways[intent.Key{Namespace: namespace, Name: name}]
}

// HTTPRoute returns the stored HTTPRoute, or nil.
func (s *Store) HTTPRoute(namespace, name string) *gatewayv1.HTTPRoute {
	return s.gateway.routes[intent.Key{Namespace: namespace, Name: name}]
}

// ReferenceGrant returns the stored ReferenceGrant, or nil.
func (s *Store) ReferenceGrant(namespace, name string) *gatewayv1.ReferenceGrant {
	return s.gateway.grants[intent.Key{Namespace: namespace, Name: name}]
}

// GatewayClassOurs reports whether c is served by the controller named
// controllerName (never for an empty name).
func GatewayClassOurs(c *gatewayv1.GatewayClass, controllerName string) bool {
	return c != nil && controllerName != "" && string(c.Spec.ControllerName) == controllerName
}

// GatewayOurs reports whether gw's class, looked up by name with class
// (nil when there is none), is ours.
func GatewayOurs(gw *gatewayv1.Gateway, class func(name string) *gatewayv1.GatewayClass, controllerName string) bool {
	return gw != nil && GatewayClassOurs(class(string(gw.Spec.GatewayClassName)), controllerName)
}

// SecretRef names a Secret.
type SecretRef struct{ Namespace, Name string }

// GatewaySecretRefs returns the Secrets the listeners of gw name in
// tls.certificateRefs (group "" and kind Secret, the defaults; refs of
// other kinds are not Secrets), in the Gateway's namespace unless the ref
// names another, each once, in listener order.
func GatewaySecretRefs(gw *gatewayv1.Gateway) []SecretRef {
	var out []SecretRef
	for _, l := range gw.Spec.Listeners {
		if l.TLS == nil {
			continue
		}
		for _, ref := range l.TLS.CertificateRefs {
			if r, ok := secretRefOf(gw.Namespace, ref); ok && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

func secretRefOf(ns string, ref gatewayv1.SecretObjectReference) (SecretRef, bool) {
	if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Secret") || ref.Name == "" {
		return SecretRef{}, false
	}
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return SecretRef{Namespace: ns, Name: string(ref.Name)}, true
}

// GrantFrom is the referring side of a cross-namespace reference: the
// group, kind and namespace of the object that refers.
type GrantFrom struct{ Group, Kind, Namespace string }

// GrantTo is the referred side: the group, kind, namespace and name of the
// object referred to.
type GrantTo struct{ Group, Kind, Namespace, Name string }

// ReferenceGranted reports whether a reference from `from` to `to` is
// allowed: always within one namespace; across namespaces only when one of
// grants in to's namespace has a from entry matching `from` exactly and a
// to entry of to's group and kind whose name is unset or to's name. Grants
// of other namespaces are ignored, so callers may pass any superset.
func ReferenceGranted(grants []*gatewayv1.ReferenceGrant, from GrantFrom, to GrantTo) bool {
	if from.Namespace == to.Namespace {
		return true
	}
	for _, g := range grants {
		if g != nil && g.Namespace == to.Namespace && grantsFrom(g, from) && grantsTo(g, to) {
			return true
		}
	}
	return false
}

func grantsFrom(g *gatewayv1.ReferenceGrant, from GrantFrom) bool {
	for _, f := range g.Spec.From {
		if string(f.Group) == from.Group && string(f.Kind) == from.Kind && string(f.Namespace) == from.Namespace {
			return true
		}
	}
	return false
}

func grantsTo(g *gatewayv1.ReferenceGrant, to GrantTo) bool {
	for _, t := range g.Spec.To {
		if string(t.Group) == to.Group && string(t.Kind) == to.Kind && (t.Name == nil || string(*t.Name) == to.Name) {
			return true
		}
	}
	return false
}
