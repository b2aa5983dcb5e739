package gateway

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The status of a BackendTLSPolicy: one ancestor per Gateway of ours that
// an HTTPRoute with a backendRef to a Service the policy targets has as
// parent, each with Accepted and ResolvedRefs:
//
//   - Accepted is False with Conflicted when an older policy takes one of
//     its targets, Invalid when it asks what is not supported (see
//     checkPolicy), NoValidCACertificate when none of its
//     caCertificateRefs resolves; else True (Accepted).
//   - ResolvedRefs is False with InvalidKind for a reference to another
//     kind than ConfigMap, InvalidCACertificateRef for a ConfigMap that is
//     missing or whose ca.crt is missing or malformed; else True.

// PolicyAncestors returns the ancestors of p's status that are ours, in
// the order of the Gateways' namespace/name.
func (w *World) PolicyAncestors(p *gatewayv1.BackendTLSPolicy) []gatewayv1.PolicyAncestorStatus {
	gws := w.policyGateways(p)
	if len(gws) == 0 {
		return nil
	}
	conds := w.policyConditions(p)
	out := make([]gatewayv1.PolicyAncestorStatus, len(gws))
	for i, gw := range gws {
		out[i] = gatewayv1.PolicyAncestorStatus{
			AncestorRef: gatewayv1.ParentReference{Group: new(gatewayv1.Group(gatewayv1.GroupName)), Kind: new(gatewayv1.Kind("Gateway")),
				Namespace: new(gatewayv1.Namespace(gw.Namespace)), Name: gatewayv1.ObjectName(gw.Name)},
			ControllerName: gatewayv1.GatewayController(w.Controller),
			Conditions:     slices.Clone(conds),
		}
	}
	return out
}

// policyGateways returns the Gateways of ours, sorted, that are parents of
// a route with a backendRef to a target of p.
func (w *World) policyGateways(p *gatewayv1.BackendTLSPolicy) []*gatewayv1.Gateway {
	targets := map[string]bool{}
	for _, t := range policyTargets(p) {
		targets[t.service] = true
	}
	seen := map[intent.Key]*gatewayv1.Gateway{}
	for _, r := range w.Routes {
		if !routeTargets(r, p.Namespace, targets) {
			continue
		}
		for i := range r.Spec.ParentRefs {
			ns, name, ok := ParentGateway(&r.Spec.ParentRefs[i], r.Namespace)
			if gw := w.Gateway(ns, name); ok && Ours(gw, w.Class, w.Controller) {
				seen[intent.Key{Namespace: ns, Name: name}] = gw
			}
		}
	}
	out := make([]*gatewayv1.Gateway, 0, len(seen))
	for _, gw := range seen {
		out = append(out, gw)
	}
	slices.SortFunc(out, func(a, b *gatewayv1.Gateway) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// routeTargets reports whether a backendRef of r names a Service of
// namespace ns that services holds.
func routeTargets(r *gatewayv1.HTTPRoute, ns string, services map[string]bool) bool {
	for i := range r.Spec.Rules {
		for j := range r.Spec.Rules[i].BackendRefs {
			ref := &r.Spec.Rules[i].BackendRefs[j].BackendObjectReference
			refNS := r.Namespace
			if ref.Namespace != nil {
				refNS = string(*ref.Namespace)
			}
			if (ref.Group == nil || *ref.Group == "") && (ref.Kind == nil || *ref.Kind == "Service") && refNS == ns && services[string(ref.Name)] {
				return true
			}
		}
	}
	return false
}

// policyConditions are p's Accepted and ResolvedRefs conditions.
func (w *World) policyConditions(p *gatewayv1.BackendTLSPolicy) []metav1.Condition {
	gen := p.Generation
	c := checkPolicy(p)
	bad := slices.Clone(c.badKinds)
	resolvedReason := gatewayv1.BackendTLSPolicyReasonInvalidKind
	if len(bad) == 0 {
		resolvedReason = gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef
	}
	valid := 0
	for _, name := range c.configMaps {
		if err := w.policyCA(p.Namespace, name); err != "" {
			bad = append(bad, err)
			continue
		}
		valid++
	}
	resolved := cond(string(gatewayv1.BackendTLSPolicyConditionResolvedRefs), true, string(gatewayv1.BackendTLSPolicyReasonResolvedRefs), "Resolved", gen)
	if len(bad) > 0 {
		resolved = cond(resolved.Type, false, string(resolvedReason), strings.Join(bad, "; "), gen)
	}
	typ := string(gatewayv1.PolicyConditionAccepted)
	accepted := cond(typ, true, string(gatewayv1.PolicyReasonAccepted), "Accepted", gen)
	switch {
	case w.conflicted(p):
		accepted = cond(typ, false, string(gatewayv1.PolicyReasonConflicted), "An older BackendTLSPolicy targets the same Service and sectionName", gen)
	case c.invalid != "":
		accepted = cond(typ, false, string(gatewayv1.PolicyReasonInvalid), c.invalid, gen)
	case valid == 0 && !c.system:
		accepted = cond(typ, false, string(gatewayv1.BackendTLSPolicyReasonNoValidCACertificate), "No caCertificateRef resolves to a valid CA certificate", gen)
	}
	return []metav1.Condition{accepted, resolved}
}

// policyCA says why ConfigMap ns/name holds no valid ca.crt, "" when it
// does.
func (w *World) policyCA(ns, name string) string {
	var cm *corev1.ConfigMap
	if w.ConfigMap != nil {
		cm = w.ConfigMap(ns, name)
	}
	switch {
	case cm == nil:
		return fmt.Sprintf("ConfigMap %s/%s %v", ns, name, errMissing)
	case cm.Data["ca.crt"] == "":
		return fmt.Sprintf("ConfigMap %s/%s has no ca.crt", ns, name)
	}
	if _, err := intent.ParseCAPEM([]byte(cm.Data["ca.crt"])); err != nil {
		return fmt.Sprintf("ConfigMap %s/%s: ca.crt %v", ns, name, err)
	}
	return ""
}

// conflicted reports whether an older policy takes a target of p.
func (w *World) conflicted(p *gatewayv1.BackendTLSPolicy) bool {
	winners := policyWinners(w.Policies)
	for _, t := range policyTargets(p) {
		if win := winners[t]; win != nil && (win.Namespace != p.Namespace || win.Name != p.Name) {
			return true
		}
	}
	return false
}

// MergePolicyAncestors returns the ancestors of a policy's status with
// ours replaced by desired, as MergeRouteParents does for a route's
// parents; never nil (status.ancestors is required).
func MergePolicyAncestors(existing, desired []gatewayv1.PolicyAncestorStatus, controller string, now metav1.Time) []gatewayv1.PolicyAncestorStatus {
	out := mergeOurs(existing, desired, now, func(a *gatewayv1.PolicyAncestorStatus) statusEntry {
		return statusEntry{string(a.ControllerName) == controller, a.AncestorRef, &a.Conditions}
	})
	if out == nil {
		out = []gatewayv1.PolicyAncestorStatus{}
	}
	return out
}
