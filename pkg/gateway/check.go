package gateway

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// CheckRoute returns the Problems of HTTPRoute r that depend on r alone:
// those of its rules (matches, filters, timeouts, backendRefs), worded as
// the translation words them on any listener that accepts the route. It
// is what the admission webhook checks, with the translator's own rules.
//
// What depends on other objects is left to the syncers and the status:
// which Gateways accept the route, whether a Service exists, and whether a
// ReferenceGrant permits a reference to another namespace (one may be
// created after the route; CheckRoute takes every such reference as
// permitted). It is pure.
func CheckRoute(r *gatewayv1.HTTPRoute) []string {
	src := NewSource(DefaultControllerName)
	for _, g := range grantsFor(r) {
		src.grants[intent.Key{Namespace: g.Namespace, Name: "admission"}] = g
	}
	t := &route{src: src, r: r, e: &intent.Entry{}}
	t.paths()
	return t.e.Problems
}

// grantsFor returns a ReferenceGrant in each namespace other than r's
// that one of r's backendRefs (of a rule or of a filter) names, permitting
// r's namespace every Service there.
func grantsFor(r *gatewayv1.HTTPRoute) []*gatewayv1.ReferenceGrant {
	seen := map[string]bool{r.Namespace: true}
	var out []*gatewayv1.ReferenceGrant
	add := func(ns *gatewayv1.Namespace) {
		if ns == nil || seen[string(*ns)] {
			return
		}
		seen[string(*ns)] = true
		g := &gatewayv1.ReferenceGrant{Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: gatewayv1.Namespace(r.Namespace)}},
			To:   []gatewayv1.ReferenceGrantTo{{Kind: "Service"}},
		}}
		g.Namespace = string(*ns)
		out = append(out, g)
	}
	for i := range r.Spec.Rules {
		rule := &r.Spec.Rules[i]
		for j := range rule.BackendRefs {
			add(rule.BackendRefs[j].Namespace)
		}
		for j := range rule.Filters {
			if m := rule.Filters[j].RequestMirror; m != nil {
				add(m.BackendRef.Namespace)
			}
		}
	}
	return out
}
