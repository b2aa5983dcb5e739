package gateway

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The status of the stream routes (TLSRoute, TCPRoute, UDPRoute), from
// the rules the translator follows (l4route.go, attach.go).

// countStreamRoutes adds the stream routes attached to each listener of
// gw to its count.
func (w *World) countStreamRoutes(gw *gatewayv1.Gateway, views []*listenerView) {
	for _, obj := range w.StreamRoutes {
		r, ok := l4RouteOf(obj)
		if !ok {
			continue
		}
		for i := range r.parents {
			p := &r.parents[i]
			if ns, name, ok := ParentGateway(p, r.meta.Namespace); !ok || ns != gw.Namespace || name != gw.Name {
				continue
			}
			for _, v := range views {
				if selects(p, v.l) && v.takesStream(gw, r, w.namespaceLabels(r.meta.Namespace)) == "" {
					v.attached++
				}
			}
		}
	}
}

// takesStream is takes for a stream route: the listener's protocol takes
// its kind (a TLS one in mode Passthrough), its allowedRoutes allow it,
// and on TLS a hostname of the route intersects the listener's.
func (v *listenerView) takesStream(gw *gatewayv1.Gateway, r *l4Route, nsLabels map[string]string) gatewayv1.RouteConditionReason {
	if !v.protocolOK || v.unsupported != "" || string(v.routeKind) != string(r.kind) ||
		!allowsKind(gw, v.l, v.routeKind, r.meta.Namespace, nsLabels) {
		return notAllowed
	}
	if v.l.Protocol == gatewayv1.TLSProtocolType && len(intersect(v.l.Hostname, r.hostnames)) == 0 {
		return noHostname
	}
	return ""
}

// StreamRouteParents is RouteParents for a TLSRoute, TCPRoute or
// UDPRoute (nil for another object).
func (w *World) StreamRouteParents(obj runtime.Object) []gatewayv1.RouteParentStatus {
	r, ok := l4RouteOf(obj)
	if !ok {
		return nil
	}
	return w.parents(r.parents, r.meta.Namespace, func() metav1.Condition { return w.streamRefs(r) },
		func(gw *gatewayv1.Gateway, p *gatewayv1.ParentReference) metav1.Condition {
			return w.streamAccepted(gw, r, p)
		})
}

// streamAccepted is the Accepted condition of r on parent ref p to gw.
func (w *World) streamAccepted(gw *gatewayv1.Gateway, r *l4Route, p *gatewayv1.ParentReference) metav1.Condition {
	gen := r.meta.Generation
	typ := string(gatewayv1.RouteConditionAccepted)
	var why gatewayv1.RouteConditionReason = gatewayv1.RouteReasonNoMatchingParent
	for _, v := range w.listenerViews(gw) {
		if !selects(p, v.l) {
			continue
		}
		switch v.takesStream(gw, r, w.namespaceLabels(r.meta.Namespace)) {
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
		notAllowed:                            fmt.Sprintf("No listener the parentRef selects takes a %s", r.kind),
		noHostname:                            "No hostname of the route matches a listener the parentRef selects",
	}[why]
	return cond(typ, false, string(why), msg, gen)
}

// streamRefs is the ResolvedRefs condition of r.
func (w *World) streamRefs(r *l4Route) metav1.Condition {
	var reason gatewayv1.RouteConditionReason
	var msgs []string
	for i := range r.backends {
		why, err := w.streamBackendRef(r, &r.backends[i].BackendObjectReference)
		if err == nil {
			continue
		}
		if reason == "" {
			reason = why
		}
		msgs = append(msgs, err.Error())
	}
	typ := string(gatewayv1.RouteConditionResolvedRefs)
	if reason == "" {
		return cond(typ, true, string(gatewayv1.RouteReasonResolvedRefs), "Resolved", r.meta.Generation)
	}
	return cond(typ, false, string(reason), strings.Join(msgs, "; "), r.meta.Generation)
}

// streamBackendRef checks one backendRef of r: its kind, its grant and
// that the Service exists.
func (w *World) streamBackendRef(r *l4Route, ref *gatewayv1.BackendObjectReference) (gatewayv1.RouteConditionReason, error) {
	ns, err := kindBackendService(string(r.kind), r.meta.Namespace, ref, w.Grants)
	switch {
	case errors.Is(err, ErrInvalidKind):
		return gatewayv1.RouteReasonInvalidKind, err
	case err != nil:
		return gatewayv1.RouteReasonRefNotPermitted, err
	case w.Service(ns, string(ref.Name)) == nil:
		return gatewayv1.RouteReasonBackendNotFound, fmt.Errorf("Service %s/%s %w", ns, ref.Name, errMissing)
	}
	return "", nil
}
