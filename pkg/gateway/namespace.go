package gateway

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The labels of the Namespaces (the watcher publishes each trimmed to its
// name and labels) are what a listener's allowedRoutes.namespaces
// selector (from: Selector) reads of a route's namespace. A change of them
// can only change the routes of that Namespace that name a Gateway with
// such a listener: those alone are translated again, and a change that
// touches no route changes nothing (KeepsNarrowly).

// keepNamespace keeps the labels of Namespace name (obj nil: deleted) and
// translates again, when they changed, the routes they can change.
func (src *Source) keepNamespace(name string, obj runtime.Object) ([]*intent.Entry, error) {
	old, had := src.namespaces[name]
	var now map[string]string
	if obj != nil {
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return nil, fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, events.KindNamespace, obj)
		}
		now = ns.Labels
		src.namespaces[name] = now
	} else {
		delete(src.namespaces, name)
	}
	if had && maps.Equal(old, now) {
		return nil, nil
	}
	again := src.translateWhere(func(k intent.Key, r *gatewayv1.HTTPRoute) bool {
		return k.Namespace == name && src.namesSelectingGateway(r.Spec.ParentRefs, r.Namespace)
	})
	return append(again, src.translateStreams(func(k streamKey) bool {
		r, ok := l4RouteOf(src.streams[k])
		return ok && k.key.Namespace == name && src.namesSelectingGateway(r.parents, k.key.Namespace)
	})...), nil
}

// namesSelectingGateway reports whether a parentRef of parents (of a
// route of namespace routeNS) names a Gateway kept with a listener that
// selects namespaces by label.
func (src *Source) namesSelectingGateway(parents []gatewayv1.ParentReference, routeNS string) bool {
	for i := range parents {
		ns, name, ok := ParentGateway(&parents[i], routeNS)
		if gw := src.gateways[intent.Key{Namespace: ns, Name: name}]; ok && gw != nil && selectsNamespaces(gw) {
			return true
		}
	}
	return false
}

// KeepsNarrowly reports the Namespaces: their labels reach the
// Configuration only through the routes keepNamespace translates again
// (intent.NarrowKeeper).
func (src *Source) KeepsNarrowly(kind events.Kind) bool { return kind == events.KindNamespace }

var _ intent.NarrowKeeper = (*Source)(nil)
