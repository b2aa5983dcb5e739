package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// baseKinds are the kinds of conformance/base/manifests.yaml the harness
// serves (the Gateways are the product's).
var baseKinds = map[string]schema.GroupVersionResource{
	"Namespace":  {Version: "v1", Resource: "namespaces"},
	"Service":    {Version: "v1", Resource: "services"},
	"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
}

// baseObjects reads the suite's base manifests from the module's directory
// and keeps the baseKinds.
func baseObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api/conformance").Output()
	if err != nil {
		t.Fatalf("go list the conformance module: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "base", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var o map[string]any
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: o}
		if _, ok := baseKinds[u.GetKind()]; ok && o != nil {
			objs = append(objs, u)
		}
	}
}

// TestConformanceBaseBackends applies the suite's own backends (its three
// namespaces, Services and echo-basic Deployments), waits as the suite does
// for every Pod to be Ready, asks an echo Service through its ClusterIP,
// and deletes the namespaces to the end.
func TestConformanceBaseBackends(t *testing.T) {
	needCluster(t)
	var namespaces []string
	for _, o := range baseObjects(t) {
		gvr := baseKinds[o.GetKind()]
		_, err := cluster.dyn.Resource(gvr).Namespace(o.GetNamespace()).Create(t.Context(), o, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
		if o.GetKind() == "Namespace" {
			namespaces = append(namespaces, o.GetName())
		}
	}
	if len(namespaces) != 3 {
		t.Fatalf("namespaces %v, want the suite's three", namespaces)
	}
	for _, ns := range namespaces {
		eventually(t, waitTimeout, func() (bool, string) { return allPodsReady(t, ns) })
	}
	askEcho(t, "gateway-conformance-infra", "infra-backend-v1")
	for _, ns := range namespaces {
		if err := kube.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range namespaces {
		eventually(t, waitTimeout, func() (bool, string) {
			_, err := kube.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprintf("namespace %s still there: %v", ns, err)
		})
	}
}

// allPodsReady is the suite's wait on the Pods of a namespace.
func allPodsReady(t *testing.T, ns string) (bool, string) {
	pods, err := kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		return false, fmt.Sprintf("no pods in %s yet (%v)", ns, err)
	}
	for _, p := range pods.Items {
		if !podReady(&p) {
			return false, fmt.Sprintf("pod %s/%s not ready", ns, p.Name)
		}
	}
	return true, ""
}

// askEcho asks a Service on its ClusterIP's port 8080 and checks that one
// of its Pods answered, as echo-basic.
func askEcho(t *testing.T, ns, name string) {
	t.Helper()
	svc, err := kube.CoreV1().Services(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Fatalf("service %s/%s: %v", ns, name, err)
	}
	client := &http.Client{}
	eventually(t, waitTimeout, func() (bool, string) {
		resp, err := client.Get("http://" + svc.Spec.ClusterIP + ":8080/backend")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var got echoJSON
		body, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(body, &got); err != nil {
			return false, fmt.Sprintf("%s: %q", resp.Status, body)
		}
		ok := got.Namespace == ns && strings.HasPrefix(got.Pod, name+"-") && got.Path == "/backend"
		return ok, fmt.Sprintf("answer %+v, want a pod of %s/%s", got, ns, name)
	})
}
