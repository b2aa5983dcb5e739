package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// The rules of attachment and references, shared by the translator
// (translate.go: what is served) and the status (status.go: what is
// written), so that both say the same: which Gateway a parentRef names,
// which listeners it selects, which routes a listener allows, the
// hostnames a route gets on a listener, and whether a certificate or a
// backend may be referred to.

// Why a reference is not resolved; status.go turns each into the reason
// the specification names.
var (
	// ErrInvalidKind: the reference is not of a kind we resolve (a
	// backendRef that is not a core Service, a certificateRef that is not
	// a core Secret).
	ErrInvalidKind = errors.New("not of a supported kind")
	// ErrRefNotPermitted: a reference to another namespace that no
	// ReferenceGrant there allows.
	ErrRefNotPermitted = errors.New("in another namespace and no ReferenceGrant there allows it")
	// ErrNoCertificate: an HTTPS listener without a certificateRef, or
	// not terminating TLS.
	ErrNoCertificate = errors.New("no certificate to terminate TLS with")
	// ErrInvalidSelector: a listener's allowedRoutes.namespaces selector
	// that is missing or not a valid label selector.
	ErrInvalidSelector = errors.New("invalid allowedRoutes.namespaces selector")
)

// ParentGateway returns the namespace and name of the Gateway that parent
// ref p of a route of namespace routeNS names; false when p names another
// kind (another controller's parent).
func ParentGateway(p *gatewayv1.ParentReference, routeNS string) (ns, name string, ok bool) {
	if (p.Group != nil && *p.Group != gatewayv1.GroupName) || (p.Kind != nil && *p.Kind != "Gateway") {
		return "", "", false
	}
	ns = routeNS
	if p.Namespace != nil {
		ns = string(*p.Namespace)
	}
	return ns, string(p.Name), true
}

// selects reports whether parent ref p selects listener l: its
// sectionName and port, when set, are the listener's.
func selects(p *gatewayv1.ParentReference, l *gatewayv1.Listener) bool {
	return (p.SectionName == nil || *p.SectionName == l.Name) && (p.Port == nil || *p.Port == l.Port)
}

// routeKindAllowed reports whether allowedRoutes.kinds k names a kind
// of route we serve (HTTPRoute, GRPCRoute); kind, when not "", is the one
// it must name.
func routeKindAllowed(k gatewayv1.RouteGroupKind, kind events.Kind) bool {
	ok := k.Kind == gatewayv1.Kind(events.KindHTTPRoute) || k.Kind == gatewayv1.Kind(events.KindGRPCRoute)
	return ok && (kind == "" || string(k.Kind) == string(kind)) && (k.Group == nil || *k.Group == gatewayv1.GroupName)
}

// kindIs reports whether allowedRoutes.kinds k names route kind kind.
func kindIs(k gatewayv1.RouteGroupKind, kind gatewayv1.Kind) bool {
	return k.Kind == kind && (k.Group == nil || *k.Group == gatewayv1.GroupName)
}

// allowsRoute applies the listener's allowedRoutes to route r (an
// HTTPRoute or a GRPCRoute's HTTPView), whose namespace's labels are
// nsLabels (nil when the Namespace is not known): see allowsKind.
func allowsRoute(gw *gatewayv1.Gateway, l *gatewayv1.Listener, r *gatewayv1.HTTPRoute, nsLabels map[string]string) bool {
	return allowsKind(gw, l, gatewayv1.Kind(routeKind(r)), r.Namespace, nsLabels)
}

// allowsKind applies the listener's allowedRoutes to a route of kind kind
// and namespace ns, whose labels are nsLabels (nil when the Namespace is
// not known): namespaces Same (the default), All, or Selector (the
// Namespace's labels match the selector; an invalid selector admits no
// route), and kinds, when listed, including kind.
func allowsKind(gw *gatewayv1.Gateway, l *gatewayv1.Listener, kind gatewayv1.Kind, ns string, nsLabels map[string]string) bool {
	a := l.AllowedRoutes
	if a != nil && len(a.Kinds) > 0 && !slices.ContainsFunc(a.Kinds, func(k gatewayv1.RouteGroupKind) bool { return kindIs(k, kind) }) {
		return false
	}
	switch namespacesFrom(l) {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSame:
		return ns == gw.Namespace
	case gatewayv1.NamespacesFromSelector:
		sel, err := namespaceSelector(l)
		return err == nil && sel.Matches(labels.Set(nsLabels))
	}
	return false
}

// namespacesFrom is the listener's allowedRoutes.namespaces.from, Same
// when not set.
func namespacesFrom(l *gatewayv1.Listener) gatewayv1.FromNamespaces {
	if a := l.AllowedRoutes; a != nil && a.Namespaces != nil && a.Namespaces.From != nil {
		return *a.Namespaces.From
	}
	return gatewayv1.NamespacesFromSame
}

// namespaceSelector returns the selector of a listener's
// allowedRoutes.namespaces (from: Selector); the error wraps
// ErrInvalidSelector when there is none or it is not valid.
func namespaceSelector(l *gatewayv1.Listener) (labels.Selector, error) {
	a := l.AllowedRoutes
	if a == nil || a.Namespaces == nil || a.Namespaces.Selector == nil {
		return nil, fmt.Errorf("%w: from is Selector and no selector is set", ErrInvalidSelector)
	}
	sel, err := metav1.LabelSelectorAsSelector(a.Namespaces.Selector)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSelector, err)
	}
	return sel, nil
}

// selectsNamespaces reports whether any listener of gw takes routes by
// their Namespace's labels (from: Selector).
func selectsNamespaces(gw *gatewayv1.Gateway) bool {
	return slices.ContainsFunc(gw.Spec.Listeners, func(l gatewayv1.Listener) bool {
		return namespacesFrom(&l) == gatewayv1.NamespacesFromSelector
	})
}

// intersect returns the hostnames a route with hostnames serves on a
// listener of hostname listener (nil: any): every hostname of the route
// the listener's matches, or the listener's when the route lists none or
// the listener's is more specific than a wildcard of the route's; the
// default server for neither.
func intersect(listener *gatewayv1.Hostname, hostnames []gatewayv1.Hostname) []string {
	if len(hostnames) == 0 {
		if listener == nil {
			return []string{config.DefaultServerName}
		}
		return []string{string(*listener)}
	}
	var out []string
	for _, h := range hostnames {
		switch {
		case listener == nil || matches(string(*listener), string(h)):
			out = append(out, string(h))
		case matches(string(h), string(*listener)):
			out = append(out, string(*listener))
		}
	}
	return out
}

// matches reports whether pattern (a name, or "*." and a name: any name
// of one or more labels more) matches host, which may itself be a
// wildcard narrower than pattern.
func matches(pattern, host string) bool {
	suffix, ok := strings.CutPrefix(pattern, "*")
	if !ok {
		return pattern == host
	}
	return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
}

// listenerCertificate returns the Secret an HTTPS listener of gw
// terminates TLS with: its first certificateRef, a Secret of the
// Gateway's namespace or of one whose ReferenceGrant (of grants) allows
// it. The error wraps ErrNoCertificate, ErrInvalidKind or
// ErrRefNotPermitted.
func listenerCertificate(gw *gatewayv1.Gateway, l *gatewayv1.Listener, grants []*gatewayv1.ReferenceGrant) (SecretRef, error) {
	if l.TLS == nil || (l.TLS.Mode != nil && *l.TLS.Mode != gatewayv1.TLSModeTerminate) {
		return SecretRef{}, fmt.Errorf("%w: only TLS mode Terminate is served on HTTPS", ErrNoCertificate)
	}
	if len(l.TLS.CertificateRefs) == 0 {
		return SecretRef{}, fmt.Errorf("%w: no certificateRefs", ErrNoCertificate)
	}
	ref, ok := secretRefOf(gw.Namespace, l.TLS.CertificateRefs[0])
	if !ok {
		return SecretRef{}, fmt.Errorf("certificateRefs[0] is not a Secret: %w", ErrInvalidKind)
	}
	from := GrantFrom{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: gw.Namespace}
	if !ReferenceGranted(grants, from, GrantTo{Kind: "Secret", Namespace: ref.Namespace, Name: ref.Name}) {
		return ref, fmt.Errorf("Secret %s/%s is %w", ref.Namespace, ref.Name, ErrRefNotPermitted)
	}
	return ref, nil
}

// backendService returns the namespace of the Service a backendRef of a
// route of kind and namespace routeNS refers to; the error wraps
// ErrInvalidKind (not a core Service) or ErrRefNotPermitted.
func backendService(kind events.Kind, routeNS string, ref *gatewayv1.BackendObjectReference, grants []*gatewayv1.ReferenceGrant) (string, error) {
	if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Service") {
		return "", fmt.Errorf("backendRef %s is %w", ref.Name, ErrInvalidKind)
	}
	if ref.Namespace == nil || string(*ref.Namespace) == routeNS {
		return routeNS, nil
	}
	ns := string(*ref.Namespace)
	from := GrantFrom{Group: gatewayv1.GroupName, Kind: string(kind), Namespace: routeNS}
	if !ReferenceGranted(grants, from, GrantTo{Kind: "Service", Namespace: ns, Name: string(ref.Name)}) {
		return ns, fmt.Errorf("backendRef %s/%s is %w", ns, ref.Name, ErrRefNotPermitted)
	}
	return ns, nil
}

// kindBackendService is backendService for a route of kind kind (the
// kind a ReferenceGrant must name).
func kindBackendService(kind, routeNS string, ref *gatewayv1.BackendObjectReference, grants []*gatewayv1.ReferenceGrant) (string, error) {
	return backendService(events.Kind(kind), routeNS, ref, grants)
}
