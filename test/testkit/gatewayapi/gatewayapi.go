// Package gatewayapi installs and removes the Gateway API CRDs (standard
// channel of the sigs.k8s.io/gateway-api module the project requires, read
// from the module's directory) in a test kube-apiserver, and waits until
// the API server serves them, or no longer does.
//
// CRDs are cluster-scoped: tests that need them call Install (idempotent);
// a test that needs a cluster without them calls Uninstall first. Neither
// runs in parallel with another test of the same control plane that uses
// Gateway API objects.
package gatewayapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Module is the Go module whose CRDs are installed.
const Module = "sigs.k8s.io/gateway-api"

// GroupVersion is the API the CRDs serve.
const GroupVersion = "gateway.networking.k8s.io/v1"

// waitTimeout bounds each wait for the API server.
const waitTimeout = time.Minute

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ErrNoCRDs: the module directory holds no CRD of the standard channel.
var ErrNoCRDs = errors.New("gatewayapi: no CRDs found")

var (
	loadOnce sync.Once
	loaded   []*unstructured.Unstructured
	loadErr  error
)

// CRDs returns the CustomResourceDefinitions of the standard channel, from
// config/crd/standard in the module's directory (go list -m), read once.
func CRDs() ([]*unstructured.Unstructured, error) {
	loadOnce.Do(func() { loaded, loadErr = readCRDs() })
	return loaded, loadErr
}

func readCRDs() ([]*unstructured.Unstructured, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Module).Output()
	if err != nil {
		return nil, fmt.Errorf("gatewayapi: go list -m %s: %w", Module, err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "*.yaml"))
	if err != nil {
		return nil, err
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		docs, err := readYAML(f)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, d)
			}
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoCRDs, strings.TrimSpace(string(out)))
	}
	return crds, nil
}

// readYAML returns every document of a YAML file.
func readYAML(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("gatewayapi: %s: %w", path, err)
		}
		if obj != nil {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// Install creates (or updates) every CRD and waits until discovery serves
// all their resources of GroupVersion.
func Install(ctx context.Context, cfg *rest.Config) error {
	crds, client, err := crdsAndClient(cfg)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := apply(ctx, client, crd.DeepCopy()); err != nil {
			return err
		}
	}
	if err := waitServed(ctx, cfg, true); err != nil {
		return err
	}
	return waitListable(ctx, client, crds)
}

// waitListable waits until every CRD's objects can be listed: until then
// the API server's storage of the resource is still initializing, and a
// delete of the CRD then can leave it Terminating for minutes
// ("could not list instances: storage is (re)initializing").
func waitListable(ctx context.Context, client dynamic.Interface, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		gvr := storageResource(crd)
		err := poll(ctx, "listing "+gvr.Resource, func() (bool, error) {
			_, err := client.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// storageResource is the resource of crd at its storage version.
func storageResource(crd *unstructured.Unstructured) schema.GroupVersionResource {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	gvr := schema.GroupVersionResource{Group: group, Resource: plural}
	for _, v := range versions {
		if m, _ := v.(map[string]any); m["storage"] == true {
			gvr.Version, _ = m["name"].(string)
		}
	}
	return gvr
}

// crdsAndClient returns the CRDs and a dynamic client of cfg.
func crdsAndClient(cfg *rest.Config) ([]*unstructured.Unstructured, dynamic.Interface, error) {
	crds, err := CRDs()
	if err != nil {
		return nil, nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	return crds, client, err
}

// apply creates crd, or updates the one of its name.
func apply(ctx context.Context, client dynamic.Interface, crd *unstructured.Unstructured) error {
	crds := client.Resource(crdResource)
	_, err := crds.Create(ctx, crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return wrap("create", crd.GetName(), err)
	}
	cur, err := crds.Get(ctx, crd.GetName(), metav1.GetOptions{})
	if err != nil {
		return wrap("get", crd.GetName(), err)
	}
	crd.SetResourceVersion(cur.GetResourceVersion())
	_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
	return wrap("update", crd.GetName(), err)
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("gatewayapi: %s CRD %s: %w", op, name, err)
}

// Uninstall deletes every CRD (the API server deletes their objects first)
// and waits until they are gone and discovery no longer serves GroupVersion.
func Uninstall(ctx context.Context, cfg *rest.Config) error {
	crds, client, err := crdsAndClient(cfg)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		err := client.Resource(crdResource).Delete(ctx, crd.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return wrap("delete", crd.GetName(), err)
		}
	}
	if err := waitGone(ctx, client, crds); err != nil {
		return err
	}
	return waitServed(ctx, cfg, false)
}

// waitGone waits until none of crds exists. On a timeout the error names
// the CRDs left and their conditions (the API server deletes their objects
// first).
func waitGone(ctx context.Context, client dynamic.Interface, crds []*unstructured.Unstructured) error {
	var left []string
	err := poll(ctx, "CRDs deleted", func() (bool, error) {
		left = left[:0]
		for _, crd := range crds {
			cur, err := client.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err == nil {
				conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
				left = append(left, fmt.Sprintf("%s %v", crd.GetName(), conds))
				continue
			}
			if !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return len(left) == 0, nil
	})
	if err != nil && len(left) > 0 {
		return fmt.Errorf("%w; left: %s", err, strings.Join(left, "; "))
	}
	return err
}

// waitServed waits until discovery serves every resource of the CRDs in
// GroupVersion (served) or none of them (!served).
func waitServed(ctx context.Context, cfg *rest.Config, served bool) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	want, err := resources()
	if err != nil {
		return err
	}
	what := map[bool]string{true: "Gateway API served", false: "Gateway API no longer served"}[served]
	return poll(ctx, what, func() (bool, error) {
		list, err := dc.ServerResourcesForGroupVersion(GroupVersion)
		if apierrors.IsNotFound(err) {
			return !served, nil
		}
		if err != nil {
			return false, err
		}
		have := map[string]bool{}
		for _, r := range list.APIResources {
			have[r.Name] = true
		}
		for _, r := range want {
			if have[r] != served {
				return false, nil
			}
		}
		return true, nil
	})
}

// resources lists the plural names of the CRDs that serve GroupVersion.
func resources() ([]string, error) {
	crds, err := CRDs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, crd := range crds {
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			m, _ := v.(map[string]any)
			if m["name"] == "v1" && m["served"] == true {
				plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
				out = append(out, plural)
			}
		}
	}
	return out, nil
}

// poll calls cond every 100 ms until it is true, fails, or waitTimeout or
// ctx ends.
func poll(ctx context.Context, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		switch {
		case err != nil:
			return fmt.Errorf("gatewayapi: waiting for %s: %w", what, err)
		case ok:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gatewayapi: waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// InstallT is Install for a test, failing it on error.
func InstallT(t testing.TB, cfg *rest.Config) {
	t.Helper()
	if err := Install(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
}

// UninstallT is Uninstall for a test, failing it on error.
func UninstallT(t testing.TB, cfg *rest.Config) {
	t.Helper()
	if err := Uninstall(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
}
