package image

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/ingress-sync/ingress-sync/test/deploy"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// The release: its name and namespace give the chart deploy/base's names.
const (
	release   = "ingress-sync"
	namespace = "ingress-sync"
)

// chartValues are the --set values of the render: one NATS server (the
// chart's single-node setting), which makes the streams R1.
var chartValues = []string{"nats.replicas=1"}

// chart is the rendered chart.
type chart struct {
	objs []*unstructured.Unstructured
}

// renderChart runs `helm template` on deploy/helm/ingress-sync with the
// helm that make helm builds ($INGRESS_SYNC_HELM).
func renderChart(t *testing.T) *chart {
	t.Helper()
	root, err := testenv.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("INGRESS_SYNC_HELM")
	if bin == "" {
		bin = filepath.Join(root, ".cache", "bin", "helm")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm not found at %s (%v): run make helm", bin, err)
	}
	args := []string{"template", release, filepath.Join(root, "deploy", "helm", "ingress-sync"), "--namespace", namespace}
	for _, v := range chartValues {
		args = append(args, "--set", v)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %v: %v\n%s", args, err, stderr.String())
	}
	objs, err := deploy.DecodeObjects("helm template", stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return &chart{objs: objs}
}

// object returns the object of kind and name, converted into T, failing on
// a field T does not know.
func object[T any](t *testing.T, c *chart, kind, name string) *T {
	t.Helper()
	for _, o := range c.objs {
		if o.GetKind() == kind && o.GetName() == name {
			out := new(T)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			return out
		}
	}
	t.Fatalf("the chart renders no %s %s", kind, name)
	return nil
}

func (c *chart) deployment(t *testing.T, name string) *appsv1.Deployment {
	return object[appsv1.Deployment](t, c, "Deployment", name)
}

// apply creates the release's namespace, the Secrets the chart expects to
// exist (docs/deploy.md: the NATS passwords), and every object the chart
// renders, with server-side apply. No controller-manager or kubelet runs:
// the Deployments are stored, the test runs their pods.
func (c *chart) apply(t *testing.T, cp *testenv.ControlPlane, secrets map[string]map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := cp.Client(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for name, data := range secrets {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, StringData: data}
		if _, err := client.CoreV1().Secrets(namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dyn, err := dynamic.NewForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	for _, o := range c.objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			r = dyn.Resource(m.Resource).Namespace(namespace)
		}
		force := true
		if _, err := r.Patch(ctx, o.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "image-test", Force: &force}); err != nil {
			t.Fatalf("apply %s %s: %v", gvk.Kind, o.GetName(), err)
		}
	}
}
