package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The indexes of the Ingresses: by host and path of each of their rules'
// paths (pathKey), and by host for those that set the regex mode of their
// hosts (use-regex, rewrite-target). A rule without host has the host
// config.DefaultServerName.
const (
	pathIndex  = "path"
	regexIndex = "regex"
)

// pathKey is the key of a host and a path without trailing slashes.
func pathKey(host, path string) string { return host + "\x00" + strings.TrimRight(path, "/") }

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
	if err := c.ingresses.AddIndexers(cache.Indexers{pathIndex: ingressPaths, regexIndex: regexHosts}); err != nil {
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

// Neighbours returns the stored Ingresses that may hold one of paths on
// host (Options.Neighbours): those with one of these paths there but for
// trailing slashes, and those that set the regex mode of host. They are
// the informer's: read-only, and an Ingress may come more than once.
func (c *Cache) Neighbours(host string, paths []string) []*networkingv1.Ingress {
	var out []*networkingv1.Ingress
	add := func(index, key string) {
		objs, _ := c.ingresses.GetIndexer().ByIndex(index, key) // errors only for an unknown index
		for _, o := range objs {
			if ing, ok := o.(*networkingv1.Ingress); ok {
				out = append(out, ing)
			}
		}
	}
	for _, p := range paths {
		add(pathIndex, pathKey(host, p))
	}
	add(regexIndex, host)
	return out
}

func ingressPaths(obj any) ([]string, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil, nil
	}
	var out []string
	for i := range ing.Spec.Rules {
		r := &ing.Spec.Rules[i]
		if r.HTTP == nil {
			continue
		}
		for j := range r.HTTP.Paths {
			out = append(out, pathKey(hostOf(r), r.HTTP.Paths[j].Path))
		}
	}
	return out, nil
}

func regexHosts(obj any) ([]string, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok || !regexMode(ing) {
		return nil, nil
	}
	return hostsOf(ing), nil
}

// hostOf is a rule's host, config.DefaultServerName for none.
func hostOf(r *networkingv1.IngressRule) string {
	if r.Host == "" {
		return config.DefaultServerName
	}
	return r.Host
}

// hostsOf are the hosts of ing's rules, sorted, unique.
func hostsOf(ing *networkingv1.Ingress) []string {
	out := make([]string, len(ing.Spec.Rules))
	for i := range ing.Spec.Rules {
		out[i] = hostOf(&ing.Spec.Rules[i])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
