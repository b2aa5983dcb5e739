package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// fieldManager is the server-side apply manager of the test.
const fieldManager = "ingress-sync-deploy-test"

// apiTimeout bounds every call to the API server.
const apiTimeout = 30 * time.Second

// TestApplyDryRun applies every object of every kustomization and every
// example to a real kube-apiserver with server-side apply, dry-run All and
// strict field validation. Namespaces are created for real first, so that
// the namespaced dry-runs and Pod Security admission have them. Any error or
// warning (an unknown or duplicate field, a deprecated API, a Pod Security
// violation) fails the test. Each pod template is also dry-run created as a
// Pod, so that the restricted level is enforced, not only warned about.
// The Gateway API CRDs are installed first: the examples hold a Gateway.
func TestApplyDryRun(t *testing.T) {
	cp := testenv.Start(t)
	gatewayapi.InstallT(t, cp.Config())
	api := newAPI(t, cp)
	sets := map[string][]*unstructured.Unstructured{}
	for _, dir := range kustomizations {
		sets[dir] = render(t, dir)
	}
	sets["examples"] = readExamples(t)
	for _, name := range append(slices.Clone(kustomizations), "examples") {
		t.Run(name, func(t *testing.T) {
			objs := sets[name]
			for _, o := range objs {
				if o.GetKind() == "Namespace" {
					api.apply(t, o, false)
				}
			}
			for _, o := range objs {
				if o.GetKind() != "Namespace" {
					api.apply(t, o, true)
				}
			}
			for _, w := range workloads(t, objs) {
				api.dryRunPod(t, w)
			}
		})
	}
	t.Run("strict validation rejects an unknown field", func(t *testing.T) {
		o := find(t, sets["base"], "Deployment", syncerName).DeepCopy()
		if err := unstructured.SetNestedField(o.Object, "yes", "spec", "template", "spec", "automountToken"); err != nil {
			t.Fatal(err)
		}
		if err := api.applyErr(t, o, true); err == nil || !strings.Contains(err.Error(), "automountToken") {
			t.Fatalf("apply with an unknown field: %v, want a strict validation error", err)
		}
	})
}

// readExamples reads deploy/examples/*.yaml in file name order, as
// kubectl apply -f deploy/examples/ does.
func readExamples(t *testing.T) []*unstructured.Unstructured {
	files, err := filepath.Glob(filepath.Join(deployDir, "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v (%d files)", err, len(files))
	}
	slices.Sort(files)
	var objs []*unstructured.Unstructured
	for _, f := range files {
		more, err := ReadObjects(f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, more...)
	}
	return objs
}

// api is a dynamic client with a discovery REST mapper and a recorder of
// the warnings the API server returns.
type api struct {
	dyn      dynamic.Interface
	client   kubernetes.Interface
	mapper   meta.RESTMapper
	warnings *warnings
}

func newAPI(t *testing.T, cp *testenv.ControlPlane) *api {
	cfg := cp.Config()
	w := &warnings{}
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &api{dyn: dyn, client: client, mapper: mapper, warnings: w}
}

// apply server-side applies o (dry-run or for real) and fails the test on
// an error or a warning.
func (a *api) apply(t *testing.T, o *unstructured.Unstructured, dryRun bool) {
	t.Helper()
	if err := a.applyErr(t, o, dryRun); err != nil {
		t.Errorf("apply %s: %v", describe(o), err)
	}
}

func (a *api) applyErr(t *testing.T, o *unstructured.Unstructured, dryRun bool) error {
	t.Helper()
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("mapping: %w", err)
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	if namespaced == (o.GetNamespace() == "") || namespaced == IsClusterScoped(o.GetKind()) {
		return fmt.Errorf("namespace %q does not fit the scope %s", o.GetNamespace(), m.Scope.Name())
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: new(true), FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	ctx, cancel := context.WithTimeout(t.Context(), apiTimeout)
	defer cancel()
	a.warnings.reset()
	_, err = a.dyn.Resource(m.Resource).Namespace(o.GetNamespace()).Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
	return errors.Join(err, a.warnings.err())
}

// dryRunPod creates, dry-run, the Pod that the controller of w would
// create, so that Pod Security admission enforces its level on it.
func (a *api) dryRunPod(t *testing.T, w workload) {
	ns := w.Namespace
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: *w.Template.ObjectMeta.DeepCopy(),
		Spec:       *w.Template.Spec.DeepCopy(),
	}
	pod.Name, pod.Namespace = w.Name+"-0", ns
	for _, c := range w.Claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name + "-" + pod.Name},
		}})
	}
	ctx, cancel := context.WithTimeout(t.Context(), apiTimeout)
	defer cancel()
	a.warnings.reset()
	_, err := a.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{
		DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	if err = errors.Join(err, a.warnings.err()); err != nil {
		if apierrors.IsForbidden(err) {
			t.Errorf("pod of %s is refused by admission (Pod Security?): %v", w, err)
			return
		}
		t.Errorf("pod of %s: %v", w, err)
	}
}

// warnings records the Warning headers of API responses.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = nil
}

func (w *warnings) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.list) == 0 {
		return nil
	}
	return fmt.Errorf("warnings: %s", strings.Join(w.list, "; "))
}

// TestMain keeps the package's tests away from an operator's kubeconfig.
func TestMain(m *testing.M) {
	os.Unsetenv("KUBECONFIG")
	os.Exit(m.Run())
}
