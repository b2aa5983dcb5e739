package deploy

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// TestHelmApplyDryRun applies every object the chart renders, with the
// defaults and with every values file of testdata/helm, to a real
// kube-apiserver as TestApplyDryRun does for the kustomizations: server-side
// apply, dry-run All, strict field validation, any warning an error, and
// each pod template dry-run created as a Pod in the namespace of
// deploy/base/namespace.yaml, which enforces the restricted Pod Security
// level. The ServiceMonitor and PrometheusRule are checked against the CRDs
// of testdata/helm/monitoring-crds.yaml.
func TestHelmApplyDryRun(t *testing.T) {
	sets := map[string][]*unstructured.Unstructured{}
	for _, v := range helmValues {
		sets[v] = renderChart(t, v)
	}
	cp := testenv.Start(t)
	api := newAPI(t, cp)
	api.apply(t, withNamespace(t, nil)[0], false)
	installCRDs(t, api)
	for _, v := range helmValues {
		t.Run("values="+v, func(t *testing.T) {
			for _, o := range sets[v] {
				api.apply(t, o, true)
			}
			for _, w := range workloads(t, sets[v]) {
				api.dryRunPod(t, w)
			}
		})
	}
}

// TestHelmInvariants runs TestInvariants' checks on the chart, rendered with
// the defaults and every values file, in the namespace of deploy/base. The
// checks of the chart's own NATS do not apply to an external NATS
// (TestHelmExternalNATS checks that case).
func TestHelmInvariants(t *testing.T) {
	ownNATS := []string{"watcher and syncer agree", "nats network policy", "nats statefulset"}
	for _, v := range helmValues {
		objs := withNamespace(t, renderChart(t, v))
		for _, c := range invariantChecks() {
			if v == "external-nats" && slices.Contains(ownNATS, c.name) {
				continue
			}
			t.Run("values="+v+"/"+c.name, func(t *testing.T) { c.check(t, objs) })
		}
	}
}

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs creates the monitoring CRDs, waits until the API server
// serves them, and resets the client's REST mapper.
func installCRDs(t *testing.T, a *api) {
	t.Helper()
	crds, err := ReadObjects(filepath.Join("testdata", "helm", "monitoring-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		a.apply(t, crd, false)
	}
	for _, crd := range crds {
		waitEstablished(t, a, crd.GetName())
	}
	if r, ok := a.mapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}

// waitEstablished polls the CRD name until its Established condition is
// True, or fails the test after apiTimeout.
func waitEstablished(t *testing.T, a *api, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), apiTimeout)
	defer cancel()
	for {
		crd, err := a.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err == nil && established(crd) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("CRD %s not established: %v", name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
