package deploy

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// deployDir is deploy/ seen from this package.
var deployDir = filepath.Join("..", "..", "deploy")

// kustomizations are the directories a user applies with kubectl apply -k.
var kustomizations = []string{"base", "overlays/dev", "overlays/tls", "overlays/encryption", "overlays/admission"}

// Names used across deploy/.
const (
	namespace      = "ingress-sync"
	watcherName    = "ingress-sync-watcher"
	syncerName     = "ingress-sync-syncer"
	natsName       = "nats"
	natsConfigName = "nats-config"
	authSecretName = "nats-auth"
)

// render renders deploy/<dir> or fails the test.
func render(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Render(filepath.Join(deployDir, dir))
	if err != nil {
		t.Fatalf("render %s: %v", dir, err)
	}
	if len(objs) == 0 {
		t.Fatalf("render %s: no objects", dir)
	}
	return objs
}

// find returns the object of kind and name, or fails the test.
func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// ofKind returns every object of kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// typed converts o into *T, failing on any field T does not know.
func typed[T any](t testing.TB, o *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
	return out
}

// workload is a named pod template of a Deployment or StatefulSet.
type workload struct {
	Kind, Namespace, Name string
	Template              corev1.PodTemplateSpec
	Claims                []corev1.PersistentVolumeClaim // StatefulSet volumeClaimTemplates
	Replicas              int32
}

func (w workload) String() string { return w.Kind + "/" + w.Name }

// workloads returns the pod templates of every workload in objs.
func workloads(t testing.TB, objs []*unstructured.Unstructured) []workload {
	t.Helper()
	var out []workload
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			d := typed[appsv1.Deployment](t, o)
			out = append(out, workload{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, Template: d.Spec.Template, Replicas: deref(d.Spec.Replicas, 1)})
		case "StatefulSet":
			s := typed[appsv1.StatefulSet](t, o)
			out = append(out, workload{Kind: "StatefulSet", Namespace: s.Namespace, Name: s.Name, Template: s.Spec.Template,
				Claims: s.Spec.VolumeClaimTemplates, Replicas: deref(s.Spec.Replicas, 1)})
		case "DaemonSet", "ReplicaSet", "Pod", "Job", "CronJob":
			t.Fatalf("%s %s: add this kind to workloads()", o.GetKind(), o.GetName())
		}
	}
	return out
}

// workloadNamed returns the workload name, or fails the test.
func workloadNamed(t testing.TB, objs []*unstructured.Unstructured, name string) workload {
	t.Helper()
	for _, w := range workloads(t, objs) {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no workload %s", name)
	return workload{}
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// container returns the container name of the pod template, or fails.
func container(t testing.TB, w workload, name string) corev1.Container {
	t.Helper()
	for _, c := range w.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s has no container %s", w, name)
	return corev1.Container{}
}

// flagValue returns the value of --name=value in args, with $(VAR)
// references expanded from the container's literal env values.
func flagValue(t testing.TB, c corev1.Container, name string) string {
	t.Helper()
	prefix := "--" + name + "="
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return expandEnv(c, v)
		}
	}
	t.Fatalf("container %s has no %s", c.Name, prefix)
	return ""
}

// expandEnv replaces $(VAR) with the literal value of env VAR, and
// $(POD_NAMESPACE) with the namespace of deploy/, as the kubelet would.
func expandEnv(c corev1.Container, v string) string {
	for _, e := range c.Env {
		val := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			val = namespace
		}
		if val != "" {
			v = strings.ReplaceAll(v, "$("+e.Name+")", val)
		}
	}
	return v
}

// envValue returns the literal value of env name, or fails.
func envValue(t testing.TB, c corev1.Container, name string) string {
	t.Helper()
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	t.Fatalf("container %s has no env %s", c.Name, name)
	return ""
}

func describe(o *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
}
