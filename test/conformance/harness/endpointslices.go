package harness

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// sliceManager is the endpointslice.kubernetes.io/managed-by of the
// harness's EndpointSlices.
const sliceManager = "harness.ingress-sync.io"

// syncEndpointSlices keeps one EndpointSlice per Service with a selector,
// named after it, listing its ready Pods, and deletes those of Services
// that are gone.
func (c *Cluster) syncEndpointSlices(ctx context.Context) error {
	svcs, err := c.kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := c.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	slices, err := c.kube.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelManagedBy + "=" + sliceManager})
	if err != nil {
		return err
	}
	have := map[string]*discoveryv1.EndpointSlice{}
	for i := range slices.Items {
		s := &slices.Items[i]
		have[s.Namespace+"/"+s.Name] = s
	}
	var errs []error
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		want := sliceFor(svc, pods.Items)
		key := svc.Namespace + "/" + svc.Name
		errs = append(errs, c.writeSlice(ctx, have[key], want))
		delete(have, key)
	}
	for _, s := range have {
		err := c.kube.DiscoveryV1().EndpointSlices(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeSlice creates the slice, or updates it when it differs.
func (c *Cluster) writeSlice(ctx context.Context, old, want *discoveryv1.EndpointSlice) error {
	api := c.kube.DiscoveryV1().EndpointSlices(want.Namespace)
	var err error
	switch {
	case old == nil:
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
	case !equality.Semantic.DeepEqual(old.Endpoints, want.Endpoints) || !equality.Semantic.DeepEqual(old.Ports, want.Ports):
		old = old.DeepCopy()
		old.Endpoints, old.Ports = want.Endpoints, want.Ports
		_, err = api.Update(ctx, old, metav1.UpdateOptions{})
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil // a newer object, or a terminating namespace: the next round
	}
	return err
}

// sliceFor is the EndpointSlice of svc: its ready Pods with IPs, in Pod
// order, and its ports resolved against the first of them.
func sliceFor(svc *corev1.Service, pods []corev1.Pod) *discoveryv1.EndpointSlice {
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: sliceManager}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	var first *corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Namespace != svc.Namespace || !sel.Matches(labels.Set(p.Labels)) || !podReady(p) ||
			p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		if first == nil {
			first = p
		}
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: new(true), Serving: new(true), Terminating: new(false)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
			NodeName:   new(p.Spec.NodeName),
		})
	}
	for _, sp := range svc.Spec.Ports {
		if port, ok := targetPort(sp, first); ok {
			s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: new(sp.Name), Protocol: new(sp.Protocol),
				Port: new(port), AppProtocol: sp.AppProtocol})
		}
	}
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
		Controller: new(true), BlockOwnerDeletion: new(true)}}
	return s
}

// targetPort resolves a Service port's targetPort: a number (default: the
// port), or a container port's name in pod.
func targetPort(sp corev1.ServicePort, pod *corev1.Pod) (int32, bool) {
	tp := sp.TargetPort
	switch {
	case tp.Type == intstr.Int && tp.IntVal == 0:
		return sp.Port, true
	case tp.Type == intstr.Int:
		return tp.IntVal, true
	case pod == nil:
		return 0, false
	}
	for _, ct := range pod.Spec.Containers {
		for _, cp := range ct.Ports {
			if cp.Name == tp.StrVal {
				return cp.ContainerPort, true
			}
		}
	}
	return 0, false
}
