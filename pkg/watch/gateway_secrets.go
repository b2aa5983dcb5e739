package watch

import (
	"github.com/ingress-sync/ingress-sync/pkg/gateway"

	"strings"

	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// The rule of TLS Secrets (secrets.go), extended to Gateways: a
// kubernetes.io/tls Secret is also published while a listener of a Gateway
// of ours names it in tls.certificateRefs. Ours: the Gateway's
// gatewayClassName names a GatewayClass whose controllerName is
// Config.GatewayControllerName (gateway.Ours). A Secret in another
// namespace than the Gateway's counts only while a ReferenceGrant of the
// Secret's namespace allows Gateways of the Gateway's namespace to refer to
// it (gateway.ReferenceGranted): a grant removed takes the Secret out of the
// stream. A Gateway of another controller's class never publishes a
// Secret, whereas every Gateway, HTTPRoute, GatewayClass and ReferenceGrant
// of the watched namespaces is published, whatever its class, as every
// Ingress and IngressClass is: which of them are ours is the syncers'
// decision, with the same model rules.
//
// Whenever a change can turn that rule for a Secret, the Secret's key is
// queued and the usual decision publishes it or its delete: a Gateway
// changed (the Secrets it names now and named before), a GatewayClass
// changed (the Secrets of its Gateways), a ReferenceGrant changed (the
// Secrets of its namespace that Gateways of other namespaces name).

// Indexes of the Gateway informer: Gateways by the "namespace/name" of the
// Secrets their listeners name, and by their gatewayClassName.
const (
	gatewaySecretIndex = "gatewaySecret"
	gatewayClassIndex  = "gatewayClass"
)

func gatewaySecretKeys(obj any) ([]string, error) {
	gw, ok := obj.(*gatewayv1.Gateway)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, r := range gateway.SecretRefs(gw) {
		keys = append(keys, r.Namespace+"/"+r.Name)
	}
	return keys, nil
}

func gatewayClassKeys(obj any) ([]string, error) {
	if gw, ok := obj.(*gatewayv1.Gateway); ok {
		return []string{string(gw.Spec.GatewayClassName)}, nil
	}
	return nil, nil
}

// gatewaySecretReferenced reports whether a Gateway of ours names the
// Secret ns/name, with a ReferenceGrant when it is of another namespace.
func (s *informerSet) gatewaySecretReferenced(ns, name string) bool {
	to := gateway.GrantTo{Kind: "Secret", Namespace: ns, Name: name}
	for _, obj := range s.sources[events.KindGateway].byIndex(gatewaySecretIndex, ns+"/"+name) {
		gw, ok := obj.(*gatewayv1.Gateway)
		if !ok || !gateway.Ours(gw, s.gatewayClass, s.gatewayController) {
			continue
		}
		from := gateway.GrantFrom{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: gw.Namespace}
		if from.Namespace == ns || gateway.ReferenceGranted(s.grantsIn(ns), from, to) {
			return true
		}
	}
	return false
}

// gatewayClass is the cached GatewayClass of that name, or nil.
func (s *informerSet) gatewayClass(name string) *gatewayv1.GatewayClass {
	obj, ok := s.sources[events.KindGatewayClass].get(key{Kind: events.KindGatewayClass, Name: name})
	if !ok {
		return nil
	}
	c, _ := obj.(*gatewayv1.GatewayClass)
	return c
}

// grantsIn returns the cached ReferenceGrants of namespace ns.
func (s *informerSet) grantsIn(ns string) []*gatewayv1.ReferenceGrant {
	var out []*gatewayv1.ReferenceGrant
	for _, obj := range s.sources[events.KindReferenceGrant].byIndex(cache.NamespaceIndex, ns) {
		if g, ok := obj.(*gatewayv1.ReferenceGrant); ok {
			out = append(out, g)
		}
	}
	return out
}

// gatewayRefsChanged queues the Secrets whose rule a change of item (a
// GatewayClass or a ReferenceGrant) may have turned; a Gateway's own are
// secretsOf's.
func (t *term) gatewayRefsChanged(item any) {
	switch o := item.(type) {
	case *gatewayv1.GatewayClass:
		for _, gw := range t.w.informers.sources[events.KindGateway].byIndex(gatewayClassIndex, o.Name) {
			t.secretsOf(gw)
		}
	case *gatewayv1.ReferenceGrant:
		t.crossNamespaceSecrets(o.Namespace)
	}
}

// crossNamespaceSecrets queues the Secrets of namespace ns that Gateways
// name: a ReferenceGrant of ns changed.
func (t *term) crossNamespaceSecrets(ns string) {
	for _, k := range t.w.informers.sources[events.KindGateway].indexValues(gatewaySecretIndex) {
		secretNS, name, ok := strings.Cut(k, "/")
		if ok && secretNS == ns {
			t.notify(key{Kind: events.KindSecret, Namespace: ns, Name: name}, nil)
		}
	}
}
