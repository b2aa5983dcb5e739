package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// The status the watcher writes on our GatewayClasses, Gateways and the
// HTTPRoutes attached to them, computed from the objects alone (no I/O,
// no clock: conditions come without lastTransitionTime, which
// MergeConditions sets). Attachment follows the rules of attach.go, as
// the translator does. What only the watcher knows, the addresses of a
// Gateway and whether the syncers serve it, comes in as Programming.

// World is what status is computed from: the objects of the cluster, as
// the watcher's caches hold them. Each lookup returns nil for a missing
// object.
type World struct {
	// Controller is our spec.controllerName (--gateway-controller-name).
	Controller string
	Class      func(name string) *gatewayv1.GatewayClass
	Gateway    func(namespace, name string) *gatewayv1.Gateway
	Service    func(namespace, name string) *corev1.Service
	Secret     func(namespace, name string) *corev1.Secret
	// Namespace is read for its labels (listeners that select routes'
	// namespaces by label); nil reads no labels.
	Namespace func(name string) *corev1.Namespace
	// Routes are every HTTPRoute (the listeners count those attached);
	// Grants every ReferenceGrant.
	Routes []*gatewayv1.HTTPRoute
	Grants []*gatewayv1.ReferenceGrant
	// Policies are every BackendTLSPolicy (which takes a target: the
	// oldest); ConfigMap is read for the ca.crt they name (nil reads
	// none).
	Policies  []*gatewayv1.BackendTLSPolicy
	ConfigMap func(namespace, name string) *corev1.ConfigMap
	// StreamRoutes are every TLSRoute, TCPRoute and UDPRoute (as
	// *gatewayv1.TLSRoute, ...), which the listeners count too.
	StreamRoutes []runtime.Object
}

// Programming is what the watcher knows of a Gateway's data plane.
type Programming struct {
	// Addresses are those of the Gateway's own Service (none while it has
	// none).
	Addresses []gatewayv1.GatewayStatusAddress
	// Served is true once the syncers serve the Gateway as published; Why
	// says what is waited for while not.
	Served bool
	Why    string
}

// httpRouteKind is the one route kind our listeners take.
var httpRouteKind = gatewayv1.RouteGroupKind{Group: new(gatewayv1.Group(gatewayv1.GroupName)), Kind: "HTTPRoute"}

// cond is a condition of observedGeneration gen, without time.
func cond(typ string, ok bool, reason, message string, gen int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: gen}
}

// ClassStatus is the status of GatewayClass c of ours: Accepted, and the
// features we support.
func ClassStatus(c *gatewayv1.GatewayClass) gatewayv1.GatewayClassStatus {
	return gatewayv1.GatewayClassStatus{
		Conditions: []metav1.Condition{cond(string(gatewayv1.GatewayClassConditionStatusAccepted), true,
			string(gatewayv1.GatewayClassReasonAccepted), "Served by ingress-sync", c.Generation)},
		SupportedFeatures: SupportedFeatures(),
	}
}

// listenerView is what status says of one listener.
type listenerView struct {
	l          *gatewayv1.Listener
	protocolOK bool // HTTP or HTTPS: it takes HTTPRoutes
	// routeKind is the kind it takes (listenerRouteKind); unsupported
	// says why it is not served (a TLS listener of mode Terminate).
	routeKind   gatewayv1.Kind
	unsupported string
	kinds       []gatewayv1.RouteGroupKind
	badKinds    bool
	refs        error // the certificate's, nil when resolved
	selector    error // the namespace selector's (ErrInvalidSelector)
	conflict    gatewayv1.ListenerConditionReason
	attached    int32
}

// GatewayStatus is the status of Gateway gw of ours: its conditions, its
// addresses (prog's) and each listener's.
func (w *World) GatewayStatus(gw *gatewayv1.Gateway, prog Programming) gatewayv1.GatewayStatus {
	views := w.listeners(gw)
	accepted, reason, msg := gatewayAccepted(gw, views)
	gen := gw.Generation
	progOK, progReason, progMsg := true, string(gatewayv1.GatewayReasonProgrammed), "Served by the syncers"
	switch {
	case !accepted:
		progOK, progReason, progMsg = false, string(gatewayv1.GatewayReasonInvalid), "The Gateway is not accepted"
	case len(prog.Addresses) == 0:
		progOK, progReason, progMsg = false, string(gatewayv1.GatewayReasonAddressNotAssigned), "Its Service has no address yet"
	case !prog.Served:
		progOK, progReason, progMsg = false, string(gatewayv1.GatewayReasonPending), "Waiting for the syncers: "+prog.Why
	}
	out := gatewayv1.GatewayStatus{
		Addresses: slices.Clone(prog.Addresses),
		Conditions: []metav1.Condition{
			cond(string(gatewayv1.GatewayConditionAccepted), accepted, reason, msg, gen),
			cond(string(gatewayv1.GatewayConditionProgrammed), progOK, progReason, progMsg, gen),
		},
	}
	for _, v := range views {
		out.Listeners = append(out.Listeners, v.status(gen, progOK))
	}
	return out
}

// gatewayAccepted is the Gateway's Accepted condition: static addresses
// are not supported; it is accepted while any of its listeners is.
func gatewayAccepted(gw *gatewayv1.Gateway, views []*listenerView) (bool, string, string) {
	if len(gw.Spec.Addresses) > 0 {
		return false, string(gatewayv1.GatewayReasonUnsupportedAddress), "spec.addresses is not supported: each Gateway gets the address of its own Service"
	}
	valid := 0
	for _, v := range views {
		if v.protocolOK && v.selector == nil && v.unsupported == "" {
			valid++
		}
	}
	switch {
	case valid == len(views):
		return true, string(gatewayv1.GatewayReasonAccepted), "Accepted"
	case valid > 0:
		return true, string(gatewayv1.GatewayReasonListenersNotValid), fmt.Sprintf("%d of %d listeners are not valid", len(views)-valid, len(views))
	}
	return false, string(gatewayv1.GatewayReasonListenersNotValid), "No listener is valid"
}

// listenerViews makes the view of every listener of gw, without the
// routes attached.
func (w *World) listenerViews(gw *gatewayv1.Gateway) []*listenerView {
	views := make([]*listenerView, len(gw.Spec.Listeners))
	for i := range gw.Spec.Listeners {
		views[i] = w.listener(gw, &gw.Spec.Listeners[i])
	}
	markConflicts(views)
	return views
}

// listeners makes the view of every listener of gw, with the number of
// routes attached to it: those a parentRef of which selects it and that
// it takes (and that hold no value the API does not know: those are not
// Accepted).
func (w *World) listeners(gw *gatewayv1.Gateway) []*listenerView {
	views := w.listenerViews(gw)
	for _, r := range w.Routes {
		if unknownValue(r) != "" {
			continue
		}
		for i := range r.Spec.ParentRefs {
			p := &r.Spec.ParentRefs[i]
			if ns, name, ok := ParentGateway(p, r.Namespace); !ok || ns != gw.Namespace || name != string(gw.Name) {
				continue
			}
			for _, v := range views {
				if selects(p, v.l) && v.takes(gw, r, w.namespaceLabels(r.Namespace)) == "" {
					v.attached++
				}
			}
		}
	}
	w.countStreamRoutes(gw, views)
	return views
}

// namespaceLabels returns the labels of Namespace name, nil when it is
// not known.
func (w *World) namespaceLabels(name string) map[string]string {
	if w.Namespace == nil {
		return nil
	}
	if ns := w.Namespace(name); ns != nil {
		return ns.Labels
	}
	return nil
}

// listener makes the view of listener l of gw, without its routes.
func (w *World) listener(gw *gatewayv1.Gateway, l *gatewayv1.Listener) *listenerView {
	v := &listenerView{l: l, kinds: []gatewayv1.RouteGroupKind{}}
	v.routeKind, v.unsupported = listenerRouteKind(l)
	if v.routeKind == "" {
		return v
	}
	v.protocolOK = true
	if namespacesFrom(l) == gatewayv1.NamespacesFromSelector {
		_, v.selector = namespaceSelector(l)
	}
	if v.routeKind != "HTTPRoute" {
		w.streamKinds(v, l)
	} else {
		v.httpKinds(l)
	}
	if l.Protocol == gatewayv1.HTTPSProtocolType {
		v.refs = w.certificate(gw, l)
	}
	return v
}

// streamKinds sets the kinds of a TLS, TCP or UDP listener v: the one its
// protocol takes, unless allowedRoutes.kinds names none of it.
func (w *World) streamKinds(v *listenerView, l *gatewayv1.Listener) {
	own := gatewayv1.RouteGroupKind{Group: new(gatewayv1.Group(gatewayv1.GroupName)), Kind: v.routeKind}
	v.kinds = []gatewayv1.RouteGroupKind{own}
	if l.AllowedRoutes != nil && len(l.AllowedRoutes.Kinds) > 0 {
		v.kinds = []gatewayv1.RouteGroupKind{}
		for _, k := range l.AllowedRoutes.Kinds {
			if kindIs(k, v.routeKind) {
				v.kinds = []gatewayv1.RouteGroupKind{own}
			} else {
				v.badKinds = true
			}
		}
	}
}

// httpKinds sets the kinds of an HTTP or HTTPS listener v: HTTPRoute and
// GRPCRoute, or those of them allowedRoutes.kinds names.
func (v *listenerView) httpKinds(l *gatewayv1.Listener) {
	v.kinds = []gatewayv1.RouteGroupKind{httpRouteKind, grpcRouteKind}
	if l.AllowedRoutes != nil && len(l.AllowedRoutes.Kinds) > 0 {
		v.kinds = []gatewayv1.RouteGroupKind{}
		for _, k := range l.AllowedRoutes.Kinds {
			switch {
			case !routeKindAllowed(k, ""):
				v.badKinds = true
			case k.Kind == httpRouteKind.Kind && !slices.Contains(v.kinds, httpRouteKind):
				v.kinds = append(v.kinds, httpRouteKind)
			case k.Kind == grpcRouteKind.Kind && !slices.Contains(v.kinds, grpcRouteKind):
				v.kinds = append(v.kinds, grpcRouteKind)
			}
		}
	}
}

// certificate checks the certificate of an HTTPS listener: nil when its
// Secret may be used, exists and holds a certificate and a key.
func (w *World) certificate(gw *gatewayv1.Gateway, l *gatewayv1.Listener) error {
	ref, err := listenerCertificate(gw, l, w.Grants)
	if err != nil {
		return err
	}
	s := w.Secret(ref.Namespace, ref.Name)
	switch {
	case s == nil:
		return fmt.Errorf("Secret %s/%s %w", ref.Namespace, ref.Name, errMissing)
	case s.Type != corev1.SecretTypeTLS || !validPEMPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]):
		return fmt.Errorf("Secret %s/%s %w", ref.Namespace, ref.Name, errMalformed)
	}
	return nil
}

var (
	errMissing   = errors.New("does not exist")
	errMalformed = errors.New("is not a kubernetes.io/tls Secret with a valid certificate and key")
)

// markConflicts sets the conflict of listeners that share a port with a
// listener of another protocol, or a port, protocol and hostname.
func markConflicts(views []*listenerView) {
	for i, a := range views {
		for j, b := range views {
			if i == j || a.l.Port != b.l.Port {
				continue
			}
			switch {
			case a.l.Protocol != b.l.Protocol:
				a.conflict = gatewayv1.ListenerReasonProtocolConflict
			case hostnameOf(a.l) == hostnameOf(b.l) && a.conflict == "":
				a.conflict = gatewayv1.ListenerReasonHostnameConflict
			}
		}
	}
}

func hostnameOf(l *gatewayv1.Listener) string {
	if l.Hostname == nil {
		return ""
	}
	return string(*l.Hostname)
}

// Why a listener does not take a route (takes).
const (
	notAllowed = gatewayv1.RouteReasonNotAllowedByListeners
	noHostname = gatewayv1.RouteReasonNoMatchingListenerHostname
)

// takes says why listener v of gw does not take route r, of a namespace
// labelled nsLabels, "" when it does: its protocol takes no HTTPRoute, its
// allowedRoutes do not allow r, or no hostname of r intersects its own.
func (v *listenerView) takes(gw *gatewayv1.Gateway, r *gatewayv1.HTTPRoute, nsLabels map[string]string) gatewayv1.RouteConditionReason {
	if !v.protocolOK || (v.routeKind != "HTTPRoute") || !allowsRoute(gw, v.l, r, nsLabels) {
		return notAllowed
	}
	if len(intersect(v.l.Hostname, r.Spec.Hostnames)) == 0 {
		return noHostname
	}
	return ""
}

// status is the listener's status; served says whether the Gateway is
// Programmed.
func (v *listenerView) status(gen int64, served bool) gatewayv1.ListenerStatus {
	accepted := cond(string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "Accepted", gen)
	if !v.protocolOK {
		accepted = cond(accepted.Type, false, string(gatewayv1.ListenerReasonUnsupportedProtocol),
			fmt.Sprintf("Protocol %s is not supported (HTTP, HTTPS, TLS, TCP and UDP are)", v.l.Protocol), gen)
	} else if v.unsupported != "" {
		accepted = cond(accepted.Type, false, string(gatewayv1.ListenerReasonUnsupportedValue), v.unsupported, gen)
	} else if v.selector != nil {
		accepted = cond(accepted.Type, false, string(gatewayv1.ListenerReasonUnsupportedValue), v.selector.Error(), gen)
	}
	resolved := cond(string(gatewayv1.ListenerConditionResolvedRefs), true, string(gatewayv1.ListenerReasonResolvedRefs), "Resolved", gen)
	switch {
	case v.badKinds:
		kinds := string(v.routeKind)
		if v.routeKind == "HTTPRoute" {
			kinds = "HTTPRoute and GRPCRoute are"
		} else {
			kinds += " is"
		}
		resolved = cond(resolved.Type, false, string(gatewayv1.ListenerReasonInvalidRouteKinds), fmt.Sprintf("Only %s supported on protocol %s", kinds, v.l.Protocol), gen)
	case errors.Is(v.refs, ErrRefNotPermitted):
		resolved = cond(resolved.Type, false, string(gatewayv1.ListenerReasonRefNotPermitted), v.refs.Error(), gen)
	case v.refs != nil:
		resolved = cond(resolved.Type, false, string(gatewayv1.ListenerReasonInvalidCertificateRef), v.refs.Error(), gen)
	}
	conflicted := cond(string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "No conflicts", gen)
	if v.conflict != "" {
		conflicted = cond(conflicted.Type, true, string(v.conflict), "Another listener has the same port and "+
			map[bool]string{true: "another protocol", false: "the same hostname"}[v.conflict == gatewayv1.ListenerReasonProtocolConflict], gen)
	}
	programmed := cond(string(gatewayv1.ListenerConditionProgrammed), true, string(gatewayv1.ListenerReasonProgrammed), "Served by the syncers", gen)
	switch {
	case accepted.Status != metav1.ConditionTrue || resolved.Status != metav1.ConditionTrue || v.conflict != "":
		programmed = cond(programmed.Type, false, string(gatewayv1.ListenerReasonInvalid), "The listener is not valid", gen)
	case !served:
		programmed = cond(programmed.Type, false, string(gatewayv1.ListenerReasonPending), "The Gateway is not programmed yet", gen)
	}
	return gatewayv1.ListenerStatus{
		Name: v.l.Name, SupportedKinds: v.kinds, AttachedRoutes: v.attached,
		Conditions: []metav1.Condition{accepted, programmed, resolved, conflicted},
	}
}

// RouteParents returns the status of route r for each of its parentRefs
// to a Gateway of ours, in parentRef order (a parentRef listed twice
// once): Accepted and ResolvedRefs, with our controllerName.
func (w *World) RouteParents(r *gatewayv1.HTTPRoute) []gatewayv1.RouteParentStatus {
	return w.parents(r.Spec.ParentRefs, r.Namespace, func() metav1.Condition { return w.routeRefs(r) },
		func(gw *gatewayv1.Gateway, p *gatewayv1.ParentReference) metav1.Condition {
			return w.routeAccepted(gw, r, p)
		})
}

// parents returns the status of a route of namespace ns for each of its
// parentRefs to a Gateway of ours, in order (a parentRef listed twice
// once): accepted's condition and refs' (computed once), with our
// controllerName.
func (w *World) parents(refs []gatewayv1.ParentReference, ns string, refsCond func() metav1.Condition,
	accepted func(*gatewayv1.Gateway, *gatewayv1.ParentReference) metav1.Condition) []gatewayv1.RouteParentStatus {
	var out []gatewayv1.RouteParentStatus
	var resolved *metav1.Condition
	for i := range refs {
		p := &refs[i]
		gns, name, ok := ParentGateway(p, ns)
		if !ok {
			continue
		}
		gw := w.Gateway(gns, name)
		if !Ours(gw, w.Class, w.Controller) || slices.ContainsFunc(out, func(s gatewayv1.RouteParentStatus) bool { return sameParent(s.ParentRef, *p, ns) }) {
			continue
		}
		if resolved == nil {
			c := refsCond()
			resolved = &c
		}
		out = append(out, gatewayv1.RouteParentStatus{
			ParentRef:      *p.DeepCopy(),
			ControllerName: gatewayv1.GatewayController(w.Controller),
			Conditions:     []metav1.Condition{accepted(gw, p), *resolved},
		})
	}
	return out
}

// routeAccepted is the Accepted condition of route r on parent ref p to
// gw: accepted when a listener p selects takes it, else why not (the
// reason of the listener that came closest); never for a route with a
// value the API does not know (UnsupportedValue).
func (w *World) routeAccepted(gw *gatewayv1.Gateway, r *gatewayv1.HTTPRoute, p *gatewayv1.ParentReference) metav1.Condition {
	gen := r.Generation
	typ := string(gatewayv1.RouteConditionAccepted)
	if unknown := unknownValue(r); unknown != "" {
		return cond(typ, false, string(gatewayv1.RouteReasonUnsupportedValue), unknown, gen)
	}
	var why gatewayv1.RouteConditionReason = gatewayv1.RouteReasonNoMatchingParent
	for _, v := range w.listenerViews(gw) {
		if !selects(p, v.l) {
			continue
		}
		switch v.takes(gw, r, w.namespaceLabels(r.Namespace)) {
		case "":
			return cond(typ, true, string(gatewayv1.RouteReasonAccepted), "Accepted", gen)
		case noHostname:
			why = noHostname
		case notAllowed:
			if why == gatewayv1.RouteReasonNoMatchingParent {
				why = notAllowed
			}
		}
	}
	msg := map[gatewayv1.RouteConditionReason]string{
		gatewayv1.RouteReasonNoMatchingParent: "No listener of the Gateway matches the parentRef's sectionName and port",
		notAllowed:                            "No listener the parentRef selects allows this route",
		noHostname:                            "No hostname of the route matches a listener the parentRef selects",
	}[why]
	return cond(typ, false, string(why), msg, gen)
}

// routeRefs is the ResolvedRefs condition of route r: the reason of the
// first backendRef that does not resolve, with every such ref in the
// message.
func (w *World) routeRefs(r *gatewayv1.HTTPRoute) metav1.Condition {
	var reason gatewayv1.RouteConditionReason
	var msgs []string
	for i := range r.Spec.Rules {
		for j := range r.Spec.Rules[i].BackendRefs {
			why, err := w.backendRef(routeKind(r), r.Namespace, &r.Spec.Rules[i].BackendRefs[j].BackendObjectReference)
			if err == nil {
				continue
			}
			if reason == "" {
				reason = why
			}
			msgs = append(msgs, fmt.Sprintf("rule %d: %v", i, err))
		}
		for _, ref := range mirrorRefs(&r.Spec.Rules[i]) {
			why, err := w.backendRef(routeKind(r), r.Namespace, ref)
			if err == nil {
				continue
			}
			if reason == "" {
				reason = why
			}
			msgs = append(msgs, fmt.Sprintf("rule %d: mirror %v", i, err))
		}
	}
	typ := string(gatewayv1.RouteConditionResolvedRefs)
	if reason == "" {
		return cond(typ, true, string(gatewayv1.RouteReasonResolvedRefs), "Resolved", r.Generation)
	}
	return cond(typ, false, string(reason), strings.Join(msgs, "; "), r.Generation)
}

// unsupportedAppProtocols are the appProtocols of Service ports the data
// plane does not speak to backends yet. kubernetes.io/ws is spoken: every
// route proxies a WebSocket upgrade (HTTP/1.1 with Upgrade and
// Connection passed on) to a plain HTTP backend.
// The backends of a GRPCRoute are spoken to in gRPC over HTTP/2 without
// TLS (kubernetes.io/h2c, grpc, or no appProtocol): not over WebSocket.
var (
	unsupportedAppProtocols     = []string{"kubernetes.io/h2c", "kubernetes.io/wss", "grpc"}
	unsupportedGRPCAppProtocols = []string{"kubernetes.io/ws", "kubernetes.io/wss"}
)

// backendRef checks one backendRef of a route of kind and namespace
// routeNS: its kind, its grant, that the Service exists and that the data
// plane speaks its port's appProtocol.
func (w *World) backendRef(kind events.Kind, routeNS string, ref *gatewayv1.BackendObjectReference) (gatewayv1.RouteConditionReason, error) {
	ns, err := backendService(kind, routeNS, ref, w.Grants)
	switch {
	case errors.Is(err, ErrInvalidKind):
		return gatewayv1.RouteReasonInvalidKind, err
	case err != nil:
		return gatewayv1.RouteReasonRefNotPermitted, err
	}
	svc := w.Service(ns, string(ref.Name))
	if svc == nil {
		return gatewayv1.RouteReasonBackendNotFound, fmt.Errorf("Service %s/%s %w", ns, ref.Name, errMissing)
	}
	unsupported := unsupportedAppProtocols
	if kind == events.KindGRPCRoute {
		unsupported = unsupportedGRPCAppProtocols
	}
	for _, p := range svc.Spec.Ports {
		if ref.Port != nil && p.Port == *ref.Port && p.AppProtocol != nil && slices.Contains(unsupported, *p.AppProtocol) {
			return gatewayv1.RouteReasonUnsupportedProtocol, fmt.Errorf("Service %s/%s port %d: appProtocol %s is not supported", ns, ref.Name, p.Port, *p.AppProtocol)
		}
	}
	return "", nil
}

// sameParent reports whether two parentRefs of a route of namespace ns
// name the same parent and section.
func sameParent(a, b gatewayv1.ParentReference, ns string) bool {
	aNS, aName, aOK := ParentGateway(&a, ns)
	bNS, bName, bOK := ParentGateway(&b, ns)
	return aOK == bOK && aNS == bNS && aName == bName &&
		ptrEqual(a.SectionName, b.SectionName) && ptrEqual(a.Port, b.Port)
}

func ptrEqual[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
