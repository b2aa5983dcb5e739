package gateway

import (
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// DefaultControllerName is the spec.controllerName of the GatewayClasses
// ingress-sync serves, unless a flag says otherwise.
const DefaultControllerName = "ingress-sync.io/gateway-controller"

// ClassOurs reports whether c is served by the controller named
// controllerName (never for an empty name).
func ClassOurs(c *gatewayv1.GatewayClass, controllerName string) bool {
	return c != nil && controllerName != "" && string(c.Spec.ControllerName) == controllerName
}

// Ours reports whether gw's class, looked up by name with class
// (nil when there is none), is ours.
func Ours(gw *gatewayv1.Gateway, class func(name string) *gatewayv1.GatewayClass, controllerName string) bool {
	return gw != nil && ClassOurs(class(string(gw.Spec.GatewayClassName)), controllerName)
}

// RouteOurs reports whether one of r's parentRefs names a Gateway of
// ours: gateway looks a Gateway up by namespace and name (nil when there
// is none), class a GatewayClass by name.
func RouteOurs(r *gatewayv1.HTTPRoute, gateway func(ns, name string) *gatewayv1.Gateway,
	class func(name string) *gatewayv1.GatewayClass, controllerName string) bool {
	if r == nil {
		return false
	}
	for i := range r.Spec.ParentRefs {
		if ns, name, ok := ParentGateway(&r.Spec.ParentRefs[i], r.Namespace); ok && Ours(gateway(ns, name), class, controllerName) {
			return true
		}
	}
	return false
}

// SecretRef names a Secret.
type SecretRef struct{ Namespace, Name string }

// SecretRefs returns the Secrets the listeners of gw name in
// tls.certificateRefs (group "" and kind Secret, the defaults; refs of
// other kinds are not Secrets), in the Gateway's namespace unless the ref
// names another, each once, in listener order.
func SecretRefs(gw *gatewayv1.Gateway) []SecretRef {
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
