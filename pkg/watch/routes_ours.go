package watch

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// RouteOurs reports whether HTTPRoute r names a Gateway of ours among its
// parentRefs, from the watcher's caches (the admission webhook's
// Options.RouteOurs). Before the Gateway API CRDs are served, or before
// the route's Gateway is cached, it is false.
func (w *Watcher) RouteOurs(r *gatewayv1.HTTPRoute) bool {
	return gateway.RouteOurs(r, w.cachedGateway, w.informers.gatewayClass, w.cfg.GatewayControllerName)
}

// cachedGateway is the cached Gateway ns/name, or nil.
func (w *Watcher) cachedGateway(ns, name string) *gatewayv1.Gateway {
	gw, _ := cached[*gatewayv1.Gateway](w.informers.sources[events.KindGateway], ns, name)
	return gw
}
