package admission

import (
	"context"
	"fmt"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// hostIndex indexes Ingresses by the hosts of their rules
// (config.DefaultServerName for a rule without host).
const hostIndex = "host"

// Cache is what the webhook reads of the cluster: the IngressClasses, for
// the class rule, and the Ingresses by host, for Conflicts. It is an
// informer of its own on each; Start runs them.
type Cache struct {
	factory   informers.SharedInformerFactory
	classes   cache.SharedIndexInformer
	ingresses cache.SharedIndexInformer
}

// NewCache makes the informers of client, on the Ingresses of namespace
// ("" for all, as the watcher's --watch-namespace); objects are kept
// without their managedFields.
func NewCache(client kubernetes.Interface, namespace string) (*Cache, error) {
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(dropManagedFields),
		informers.WithNamespace(namespace))
	c := &Cache{factory: f, classes: f.Networking().V1().IngressClasses().Informer(), ingresses: f.Networking().V1().Ingresses().Informer()}
	if err := c.ingresses.AddIndexers(cache.Indexers{hostIndex: ingressHosts}); err != nil {
		return nil, fmt.Errorf("admission: ingress index: %w", err)
	}
	return c, nil
}

// Start runs the informers until ctx ends and returns once they synced.
func (c *Cache) Start(ctx context.Context) error {
	c.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.classes.HasSynced, c.ingresses.HasSynced) {
		return ctx.Err()
	}
	return nil
}

// Shutdown stops the informers and waits for them.
func (c *Cache) Shutdown() { c.factory.Shutdown() }

// IngressClasses returns the IngressClasses by name (Options.IngressClasses).
func (c *Cache) IngressClasses() map[string]*networkingv1.IngressClass {
	list := c.classes.GetStore().List()
	m := make(map[string]*networkingv1.IngressClass, len(list))
	for _, o := range list {
		if ic, ok := o.(*networkingv1.IngressClass); ok {
			m[ic.Name] = ic
		}
	}
	return m
}

// ByHost returns the stored Ingresses with a rule for host
// (Options.Neighbours). They are the informer's: read-only.
func (c *Cache) ByHost(host string) []*networkingv1.Ingress {
	objs, err := c.ingresses.GetIndexer().ByIndex(hostIndex, host)
	if err != nil {
		return nil // only for an unknown index name
	}
	out := make([]*networkingv1.Ingress, 0, len(objs))
	for _, o := range objs {
		if ing, ok := o.(*networkingv1.Ingress); ok {
			out = append(out, ing)
		}
	}
	return out
}

func ingressHosts(obj any) ([]string, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil, nil
	}
	out := make([]string, 0, len(ing.Spec.Rules))
	for _, r := range ing.Spec.Rules {
		h := r.Host
		if h == "" {
			h = config.DefaultServerName
		}
		out = append(out, h)
	}
	return out, nil
}

func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
