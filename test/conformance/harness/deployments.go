package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// templateHashLabel marks a Pod with the hash of the template it was made
// from, as the ReplicaSet of a Deployment does.
const templateHashLabel = "pod-template-hash"

// syncDeployments gives every Deployment spec.replicas Pods of its current
// template (no ReplicaSets: the Pods are owned by the Deployment), deletes
// the Pods of other templates and of deleted Deployments, and writes the
// Deployment's status.
func (c *Cluster) syncDeployments(ctx context.Context) error {
	deps, err := c.kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := c.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	owned := map[string][]corev1.Pod{}
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "Deployment" {
			owned[string(ref.UID)] = append(owned[string(ref.UID)], p)
		}
	}
	live := map[string]bool{}
	var errs []error
	for i := range deps.Items {
		d := &deps.Items[i]
		live[string(d.UID)] = true
		if d.DeletionTimestamp != nil {
			continue
		}
		errs = append(errs, c.syncDeployment(ctx, d, owned[string(d.UID)]))
	}
	for uid, ps := range owned {
		if !live[uid] {
			errs = append(errs, c.deletePods(ctx, ps))
		}
	}
	return errors.Join(errs...)
}

// syncDeployment makes one Deployment's Pods match it.
func (c *Cluster) syncDeployment(ctx context.Context, d *appsv1.Deployment, pods []corev1.Pod) error {
	hash := templateHash(&d.Spec.Template)
	var current, stale []corev1.Pod
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Labels[templateHashLabel] == hash:
			current = append(current, p)
		default:
			stale = append(stale, p)
		}
	}
	want := 1
	if d.Spec.Replicas != nil {
		want = int(*d.Spec.Replicas)
	}
	var errs []error
	if len(current) > want {
		stale = append(stale, current[want:]...)
		current = current[:want]
	}
	errs = append(errs, c.deletePods(ctx, stale))
	for range want - len(current) {
		p, err := c.kube.CoreV1().Pods(d.Namespace).Create(ctx, podFor(d, hash), metav1.CreateOptions{})
		if apierrors.IsForbidden(err) {
			break // the namespace is terminating
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("create pod of deployment %s/%s: %w", d.Namespace, d.Name, err))
			continue
		}
		current = append(current, *p)
	}
	errs = append(errs, c.writeDeploymentStatus(ctx, d, current))
	return errors.Join(errs...)
}

// podFor is a new Pod of the Deployment's template.
func podFor(d *appsv1.Deployment, hash string) *corev1.Pod {
	t := d.Spec.Template.DeepCopy()
	labels := map[string]string{templateHashLabel: hash}
	for k, v := range t.Labels {
		labels[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: d.Name + "-" + hash + "-", Namespace: d.Namespace,
			Labels: labels, Annotations: t.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: t.Spec,
	}
}

// writeDeploymentStatus reports the Deployment's Pods, Available when all
// the wanted ones are ready.
func (c *Cluster) writeDeploymentStatus(ctx context.Context, d *appsv1.Deployment, pods []corev1.Pod) error {
	ready := int32(0)
	for i := range pods {
		if podReady(&pods[i]) {
			ready++
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	available := corev1.ConditionFalse
	if ready >= want {
		available = corev1.ConditionTrue
	}
	st := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: int32(len(pods)), UpdatedReplicas: int32(len(pods)),
		ReadyReplicas: ready, AvailableReplicas: ready, UnavailableReplicas: max(0, want-ready),
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: available,
			Reason: "HarnessPodsReady", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	if old := d.Status; old.ObservedGeneration == st.ObservedGeneration && old.Replicas == st.Replicas &&
		old.ReadyReplicas == st.ReadyReplicas && len(old.Conditions) == 1 && old.Conditions[0].Status == available {
		return nil
	}
	d = d.DeepCopy()
	d.Status = st
	_, err := c.kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // the next round sees the newer object
	}
	return err
}

func (c *Cluster) deletePods(ctx context.Context, pods []corev1.Pod) error {
	var errs []error
	for _, p := range pods {
		err := c.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// templateHash names a Pod template by its content.
func templateHash(t *corev1.PodTemplateSpec) string {
	b, _ := json.Marshal(t)
	h := fnv.New32a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%08x", h.Sum32())[:8]
}
