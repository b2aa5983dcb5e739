package watch

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// BackendTLSPolicies are published like the other Gateway API kinds,
// every one of the watched namespaces. The ConfigMaps they name in
// validation.caCertificateRefs (of the policy's namespace, kind
// ConfigMap) are published while a policy names them, as the ConfigMaps
// Ingresses name (configmaps.go): a policy changed queues the ConfigMaps it
// names now and named before. The leader writes the policies' status
// (gateway.World.PolicyAncestors): again when the policy, a route to a
// Service it targets, or a ConfigMap it names changes.

// Indexes of the BackendTLSPolicy informer: policies by the
// "namespace/name" of the ConfigMaps they name and of the Services they
// target.
const (
	policyConfigMapIndex = "policyConfigMap"
	policyServiceIndex   = "policyService"
)

func policyIndexers() cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		policyConfigMapIndex: func(obj any) ([]string, error) {
			return policyConfigMapKeys(obj), nil
		},
		policyServiceIndex: func(obj any) ([]string, error) {
			p, ok := obj.(*gatewayv1.BackendTLSPolicy)
			if !ok {
				return nil, nil
			}
			var out []string
			for _, r := range p.Spec.TargetRefs {
				if r.Group == "" && r.Kind == "Service" {
					out = append(out, p.Namespace+"/"+string(r.Name))
				}
			}
			return out, nil
		},
	}
}

// policyConfigMapKeys returns the "namespace/name" of the ConfigMaps a
// BackendTLSPolicy names.
func policyConfigMapKeys(obj any) []string {
	p, ok := obj.(*gatewayv1.BackendTLSPolicy)
	if !ok {
		return nil
	}
	var out []string
	for _, r := range p.Spec.Validation.CACertificateRefs {
		if r.Group == "" && r.Kind == "ConfigMap" {
			out = append(out, p.Namespace+"/"+string(r.Name))
		}
	}
	return out
}

// policyNamesConfigMap reports whether a cached BackendTLSPolicy names
// ConfigMap k ("namespace/name").
func (s *informerSet) policyNamesConfigMap(k string) bool {
	src := s.sources[events.KindBackendTLSPolicy]
	return src != nil && len(src.byIndex(policyConfigMapIndex, k)) > 0
}

// addPolicies queues the BackendTLSPolicies index names value.
func (g *gatewayStatus) addPolicies(index, value string) {
	for _, obj := range g.w.informers.sources[events.KindBackendTLSPolicy].byIndex(index, value) {
		if k, err := keyOf(events.KindBackendTLSPolicy, obj); err == nil {
			g.queue.Add(k)
		}
	}
}

// routePolicies queues the policies that target a Service route r names.
func (g *gatewayStatus) routePolicies(r *gatewayv1.HTTPRoute) {
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			ns := r.Namespace
			if b.Namespace != nil {
				ns = string(*b.Namespace)
			}
			g.addPolicies(policyServiceIndex, ns+"/"+string(b.Name))
		}
	}
}

// policies returns the cached BackendTLSPolicies.
func (g *gatewayStatus) policies() []*gatewayv1.BackendTLSPolicy {
	var out []*gatewayv1.BackendTLSPolicy
	for _, obj := range g.w.informers.sources[events.KindBackendTLSPolicy].list() {
		if p, ok := obj.(*gatewayv1.BackendTLSPolicy); ok {
			out = append(out, p)
		}
	}
	return out
}

// configMap is the cached ConfigMap ns/name, or nil.
func (g *gatewayStatus) configMap(ns, name string) *corev1.ConfigMap {
	cm, _ := cached[*corev1.ConfigMap](g.w.informers.sources[events.KindConfigMap], ns, name)
	return cm
}

// writePolicy writes our ancestors of BackendTLSPolicy p's status.
func (g *gatewayStatus) writePolicy(ctx context.Context, p *gatewayv1.BackendTLSPolicy) error {
	client := g.w.cfg.GatewayClient.GatewayV1().BackendTLSPolicies(p.Namespace)
	w := g.world()
	var routes []*gatewayv1.HTTPRoute
	for _, obj := range g.w.informers.sources[events.KindHTTPRoute].list() {
		if r, ok := obj.(*gatewayv1.HTTPRoute); ok {
			routes = append(routes, r)
		}
	}
	w.Routes = routes
	controller := g.w.cfg.GatewayControllerName
	return g.writeRetrying(ctx, "BackendTLSPolicy "+p.Namespace+"/"+p.Name, func(ctx context.Context, fresh bool) error {
		if fresh {
			var err error
			if p, err = client.Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		want := gateway.MergePolicyAncestors(p.Status.Ancestors, w.PolicyAncestors(p), controller, transitionTime())
		if semanticEqual(p.Status.Ancestors, want) {
			return nil
		}
		update := p.DeepCopy()
		update.Status.Ancestors = want
		if _, err := client.UpdateStatus(ctx, update, metav1.UpdateOptions{}); g.count(events.KindBackendTLSPolicy, err) != nil {
			return err
		}
		g.w.log.Info("backendtlspolicy status updated", "namespace", p.Namespace, "name", p.Name, "generation", p.Generation,
			"ancestors", len(want))
		return nil
	})
}
