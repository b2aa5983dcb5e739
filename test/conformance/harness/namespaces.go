package harness

import (
	"context"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// syncNamespaces is the namespace controller: a deleted Namespace is
// emptied (every namespaced resource that can be listed and deleted), then
// its "kubernetes" finalizer is removed, which ends its deletion. Objects
// with finalizers of their own hold it until their owners remove those.
func (c *Cluster) syncNamespaces(ctx context.Context) error {
	nss, err := c.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var resources []schema.GroupVersionResource
	var errs []error
	for i := range nss.Items {
		ns := &nss.Items[i]
		if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
			continue
		}
		if resources == nil {
			if resources, err = c.namespacedResources(); err != nil {
				return err
			}
		}
		errs = append(errs, c.finalizeNamespace(ctx, ns, resources))
	}
	return errors.Join(errs...)
}

// finalizeNamespace deletes what is left in ns, and finalizes it once
// nothing is.
func (c *Cluster) finalizeNamespace(ctx context.Context, ns *corev1.Namespace, resources []schema.GroupVersionResource) error {
	left := 0
	var errs []error
	for _, gvr := range resources {
		api := c.dyn.Resource(gvr).Namespace(ns.Name)
		list, err := api.List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			left++
			continue
		}
		left += len(list.Items)
		for _, o := range list.Items {
			if o.GetDeletionTimestamp() != nil {
				continue
			}
			if err := api.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	if left > 0 || len(errs) > 0 {
		return errors.Join(errs...)
	}
	ns = ns.DeepCopy()
	ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	_, err := c.kube.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// namespacedResources is every namespaced resource the API server serves
// that can be listed and deleted (its preferred version).
func (c *Cluster) namespacedResources() ([]schema.GroupVersionResource, error) {
	lists, err := c.kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists)
	gvrs, err := discovery.GroupVersionResources(lists)
	if err != nil {
		return nil, err
	}
	out := make([]schema.GroupVersionResource, 0, len(gvrs))
	for gvr := range gvrs {
		out = append(out, gvr)
	}
	return out, nil
}
