package watch

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// Bounds of one status write: its attempts after conflicts (each reading
// the object again) back off from conflictBackoff.Base, all within
// statusWriteBudget; each API call within natsTimeout.
var conflictBackoff = retry.Backoff{Base: 50 * time.Millisecond, Max: time.Second}

const statusWriteBudget = 15 * time.Second

// writeRetrying calls write with the cached object first, then, after
// each conflict, with the object read again from the API (fresh true),
// until it succeeds, fails otherwise, or statusWriteBudget is spent.
func (g *gatewayStatus) writeRetrying(ctx context.Context, what string, write func(ctx context.Context, fresh bool) error) error {
	ctx, cancel := context.WithTimeout(ctx, statusWriteBudget)
	defer cancel()
	var last error
	fresh := false
	err := retry.Until(ctx, conflictBackoff, func() error {
		callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
		defer cancel()
		last = write(callCtx, fresh)
		if apierrors.IsNotFound(last) {
			last = nil // deleted: nothing to write
		}
		if apierrors.IsConflict(last) {
			fresh = true
			return last
		}
		return nil
	}, func(attempt int, wait time.Duration, err error) {
		g.w.log.Debug("status write conflicted, reading the object again", "object", what, "attempt", attempt, "retryIn", wait)
	})
	if err != nil || last != nil {
		return fmt.Errorf("%s: %w", what, last)
	}
	return nil
}

// count counts one status write of kind that reached the API, and
// returns its error.
func (g *gatewayStatus) count(kind events.Kind, err error) error {
	result := "error"
	switch {
	case err == nil:
		result = "ok"
	case apierrors.IsConflict(err):
		result = "conflict"
	}
	g.w.metrics.gatewayStatusWrites.WithLabelValues(string(kind), result).Inc()
	return err
}

// writeClass writes the status of GatewayClass c of ours.
func (g *gatewayStatus) writeClass(ctx context.Context, c *gatewayv1.GatewayClass) error {
	client := g.w.cfg.GatewayClient.GatewayV1().GatewayClasses()
	return g.writeRetrying(ctx, "GatewayClass "+c.Name, func(ctx context.Context, fresh bool) error {
		if fresh {
			var err error
			if c, err = client.Get(ctx, c.Name, metav1.GetOptions{}); err != nil {
				return err
			}
			if !gateway.ClassOurs(c, g.w.cfg.GatewayControllerName) {
				return nil
			}
		}
		want := gateway.ClassStatus(c)
		want.Conditions = mergeKeeping(c.Status.Conditions, want.Conditions)
		if semanticEqual(c.Status, want) {
			return nil
		}
		update := c.DeepCopy()
		update.Status = want
		if _, err := client.UpdateStatus(ctx, update, metav1.UpdateOptions{}); g.count(events.KindGatewayClass, err) != nil {
			return err
		}
		g.w.log.Info("gatewayclass status updated", "name", c.Name, "generation", c.Generation)
		return nil
	})
}

// mergeKeeping is gateway.MergeConditions as of now, with the conditions
// other controllers set on the object (types we do not write) kept after
// ours.
func mergeKeeping(have, want []metav1.Condition) []metav1.Condition {
	out := gateway.MergeConditions(have, want, transitionTime())
	for _, c := range have {
		if !hasType(want, c.Type) {
			out = append(out, c)
		}
	}
	return out
}

func hasType(cs []metav1.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// writeGateway writes the status of Gateway gw of ours, given what w and
// prog say of it.
func (g *gatewayStatus) writeGateway(ctx context.Context, w *gateway.World, gw *gatewayv1.Gateway, prog gateway.Programming) error {
	client := g.w.cfg.GatewayClient.GatewayV1().Gateways(gw.Namespace)
	return g.writeRetrying(ctx, "Gateway "+gw.Namespace+"/"+gw.Name, func(ctx context.Context, fresh bool) error {
		if fresh {
			var err error
			if gw, err = client.Get(ctx, gw.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		want := gateway.MergeGatewayStatus(gw.Status, w.GatewayStatus(gw, prog), transitionTime())
		if semanticEqual(gw.Status, want) {
			return nil
		}
		update := gw.DeepCopy()
		update.Status = want
		if _, err := client.UpdateStatus(ctx, update, metav1.UpdateOptions{}); g.count(events.KindGateway, err) != nil {
			return err
		}
		g.w.log.Info("gateway status updated", "namespace", gw.Namespace, "name", gw.Name, "generation", gw.Generation,
			"programmed", prog.Served && len(prog.Addresses) > 0, "addresses", len(prog.Addresses))
		return nil
	})
}

// writeRoute writes our parents of HTTPRoute r's status.
func (g *gatewayStatus) writeRoute(ctx context.Context, r *gatewayv1.HTTPRoute) error {
	client := g.w.cfg.GatewayClient.GatewayV1().HTTPRoutes(r.Namespace)
	w := g.world()
	controller := g.w.cfg.GatewayControllerName
	return g.writeRetrying(ctx, "HTTPRoute "+r.Namespace+"/"+r.Name, func(ctx context.Context, fresh bool) error {
		if fresh {
			var err error
			if r, err = client.Get(ctx, r.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		want := gateway.MergeRouteParents(r.Status.Parents, w.RouteParents(r), controller, transitionTime())
		if semanticEqual(r.Status.Parents, want) {
			return nil
		}
		update := r.DeepCopy()
		update.Status.Parents = want
		if _, err := client.UpdateStatus(ctx, update, metav1.UpdateOptions{}); g.count(events.KindHTTPRoute, err) != nil {
			return err
		}
		g.w.log.Info("httproute status updated", "namespace", r.Namespace, "name", r.Name, "generation", r.Generation,
			"parents", len(want))
		return nil
	})
}

// writeGRPCRoute writes our parents of GRPCRoute r's status, computed on
// its HTTPView as the translator serves it.
func (g *gatewayStatus) writeGRPCRoute(ctx context.Context, r *gatewayv1.GRPCRoute) error {
	client := g.w.cfg.GatewayClient.GatewayV1().GRPCRoutes(r.Namespace)
	w := g.world()
	controller := g.w.cfg.GatewayControllerName
	return g.writeRetrying(ctx, "GRPCRoute "+r.Namespace+"/"+r.Name, func(ctx context.Context, fresh bool) error {
		if fresh {
			var err error
			if r, err = client.Get(ctx, r.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		want := gateway.MergeRouteParents(r.Status.Parents, w.RouteParents(gateway.HTTPView(r)), controller, transitionTime())
		if semanticEqual(r.Status.Parents, want) {
			return nil
		}
		update := r.DeepCopy()
		update.Status.Parents = want
		if _, err := client.UpdateStatus(ctx, update, metav1.UpdateOptions{}); g.count(events.KindGRPCRoute, err) != nil {
			return err
		}
		g.w.log.Info("grpcroute status updated", "namespace", r.Namespace, "name", r.Name, "generation", r.Generation,
			"parents", len(want))
		return nil
	})
}
