package watch

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// The status of TLSRoutes, TCPRoutes and UDPRoutes (the stream routes):
// indexed, queued and written as the HTTPRoutes' are (gwstatus.go), from
// gateway.World.StreamRouteParents.

// streamRouteKinds are the stream route kinds.
var streamRouteKinds = map[events.Kind]bool{events.KindTLSRoute: true, events.KindTCPRoute: true, events.KindUDPRoute: true}

// streamRouteParents is the routeParentIndex of a stream route.
func streamRouteParents(obj any) []string {
	o, ok := obj.(runtime.Object)
	if !ok {
		return nil
	}
	parents, _, ok := gateway.StreamRouteRefs(o)
	ns := namespaceOf(o)
	if !ok {
		return nil
	}
	var out []string
	for i := range parents {
		if pns, name, ok := gateway.ParentGateway(&parents[i], ns); ok {
			out = append(out, pns+"/"+name)
		}
	}
	return out
}

// streamRouteBackends is the routeBackendIndex of a stream route.
func streamRouteBackends(obj any) []string {
	o, ok := obj.(runtime.Object)
	if !ok {
		return nil
	}
	_, refs, ok := gateway.StreamRouteRefs(o)
	if !ok {
		return nil
	}
	var out []string
	for _, b := range refs {
		ns := namespaceOf(o)
		if b.Namespace != nil {
			ns = string(*b.Namespace)
		}
		out = append(out, ns+"/"+string(b.Name))
	}
	return out
}

func namespaceOf(o runtime.Object) string {
	if m, ok := o.(metav1.Object); ok {
		return m.GetNamespace()
	}
	return ""
}

// streamRouteChanged queues stream route o and the Gateways it names.
func (g *gatewayStatus) streamRouteChanged(kind events.Kind, o runtime.Object) {
	k, err := keyOf(kind, o)
	if err != nil {
		return
	}
	g.queue.Add(k)
	for _, gk := range streamRouteParents(o) {
		g.addGateway(gk)
	}
}

// streamRoutesOf returns the cached stream routes that name Gateway k.
func (g *gatewayStatus) streamRoutesOf(k key) []runtime.Object {
	var out []runtime.Object
	for kind := range streamRouteKinds {
		for _, obj := range g.w.informers.sources[kind].byIndex(routeParentIndex, k.cacheKey()) {
			if o, ok := obj.(runtime.Object); ok {
				out = append(out, o)
			}
		}
	}
	return out
}

// writeStreamRoute writes our parents of stream route obj's status.
func (g *gatewayStatus) writeStreamRoute(ctx context.Context, obj runtime.Object) error {
	w := g.world()
	switch r := obj.(type) {
	case *gatewayv1.TLSRoute:
		c := g.w.cfg.GatewayClient.GatewayV1().TLSRoutes(r.Namespace)
		return writeParents(ctx, g, w, events.KindTLSRoute, r, c.Get, c.UpdateStatus,
			func(r *gatewayv1.TLSRoute) *[]gatewayv1.RouteParentStatus { return &r.Status.Parents })
	case *gatewayv1.TCPRoute:
		c := g.w.cfg.GatewayClient.GatewayV1().TCPRoutes(r.Namespace)
		return writeParents(ctx, g, w, events.KindTCPRoute, r, c.Get, c.UpdateStatus,
			func(r *gatewayv1.TCPRoute) *[]gatewayv1.RouteParentStatus { return &r.Status.Parents })
	case *gatewayv1.UDPRoute:
		c := g.w.cfg.GatewayClient.GatewayV1().UDPRoutes(r.Namespace)
		return writeParents(ctx, g, w, events.KindUDPRoute, r, c.Get, c.UpdateStatus,
			func(r *gatewayv1.UDPRoute) *[]gatewayv1.RouteParentStatus { return &r.Status.Parents })
	}
	return nil
}

// routeObject is a stream route's pointer type.
type routeObject interface {
	runtime.Object
	metav1.Object
}

// writeParents writes the parents of route r through get and update,
// parents pointing at its status's.
func writeParents[T routeObject](ctx context.Context, g *gatewayStatus, w *gateway.World, kind events.Kind, r T,
	get func(context.Context, string, metav1.GetOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error),
	parents func(T) *[]gatewayv1.RouteParentStatus) error {
	controller := g.w.cfg.GatewayControllerName
	name := fmt.Sprintf("%s %s/%s", kind, r.GetNamespace(), r.GetName())
	return g.writeRetrying(ctx, name, func(ctx context.Context, fresh bool) error {
		if fresh {
			var err error
			if r, err = get(ctx, r.GetName(), metav1.GetOptions{}); err != nil {
				return err
			}
		}
		want := gateway.MergeRouteParents(*parents(r), w.StreamRouteParents(r), controller, transitionTime())
		if semanticEqual(*parents(r), want) {
			return nil
		}
		up, ok := r.DeepCopyObject().(T)
		if !ok {
			return fmt.Errorf("%s: copy of %T", name, r)
		}
		*parents(up) = want
		if _, err := update(ctx, up, metav1.UpdateOptions{}); g.count(kind, err) != nil {
			return err
		}
		g.w.log.Info("route status updated", "kind", kind, "namespace", r.GetNamespace(), "name", r.GetName(),
			"generation", r.GetGeneration(), "parents", len(want))
		return nil
	})
}
