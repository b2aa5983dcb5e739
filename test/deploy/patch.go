package deploy

import (
	"bufio"
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
)

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

// applyPatchFile applies every document of path as a strategic-merge patch
// to the one object it names.
func applyPatchFile(objs []*unstructured.Unstructured, path string) error {
	patches, err := ReadObjects(path)
	if err != nil {
		return err
	}
	for _, p := range patches {
		target, err := patchTarget(objs, p)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := strategicMerge(target, p); err != nil {
			return fmt.Errorf("%s: %s %s: %w", path, p.GetKind(), p.GetName(), err)
		}
	}
	return nil
}

// patchTarget finds the single object with the patch's apiVersion, kind and
// name (and namespace, when the patch names one).
func patchTarget(objs []*unstructured.Unstructured, p *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetAPIVersion() != p.GetAPIVersion() || o.GetKind() != p.GetKind() || o.GetName() != p.GetName() {
			continue
		}
		if p.GetNamespace() != "" && o.GetNamespace() != "" && p.GetNamespace() != o.GetNamespace() {
			continue
		}
		found = append(found, o)
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%w: %s %s/%s matches %d objects", ErrPatchTarget,
			p.GetKind(), p.GetNamespace(), p.GetName(), len(found))
	}
	return found[0], nil
}

// strategicMerge applies p to target in place, with the patch strategies
// and merge keys of the Go type registered for the kind in client-go.
func strategicMerge(target, p *unstructured.Unstructured) error {
	typed, err := scheme.Scheme.New(target.GroupVersionKind())
	if err != nil {
		return fmt.Errorf("%w: no Go type for a strategic merge: %v", ErrUnsupported, err)
	}
	orig, err := target.MarshalJSON()
	if err != nil {
		return err
	}
	patch, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, patch, typed)
	if err != nil {
		return err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(merged); err != nil {
		return err
	}
	target.Object = out.Object
	return nil
}
