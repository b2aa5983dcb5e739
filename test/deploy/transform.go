package deploy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clusterScoped are the kinds that take no namespace, of those deploy/ and
// its users are likely to hold. The apply test checks every object's scope
// against the API server's discovery, so a kind missing here is caught.
var clusterScoped = map[string]bool{
	"Namespace":                      true,
	"ClusterRole":                    true,
	"ClusterRoleBinding":             true,
	"IngressClass":                   true,
	"GatewayClass":                   true,
	"PriorityClass":                  true,
	"StorageClass":                   true,
	"PersistentVolume":               true,
	"CustomResourceDefinition":       true,
	"ValidatingWebhookConfiguration": true,
	"MutatingWebhookConfiguration":   true,
}

// IsClusterScoped reports whether objects of kind have no namespace.
func IsClusterScoped(kind string) bool { return clusterScoped[kind] }

// setNamespace puts every namespaced object into ns. Like kustomize it
// overrides a namespace already set. Unlike kustomize it does not rewrite
// the namespace of ServiceAccount subjects in role bindings: one that
// differs from ns is an error, so the manifests must say it themselves.
func setNamespace(objs []*unstructured.Unstructured, ns string) error {
	for _, o := range objs {
		if !IsClusterScoped(o.GetKind()) {
			o.SetNamespace(ns)
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			m, _ := s.(map[string]any)
			if m["kind"] == "ServiceAccount" && m["namespace"] != ns {
				return fmt.Errorf("%w: %s %s: subject %v is not in namespace %s",
					ErrUnsupported, o.GetKind(), o.GetName(), m["name"], ns)
			}
		}
	}
	return nil
}

// setImage rewrites every container and init container image whose name is
// img.Name, anywhere in the object.
func setImage(node any, img Image) {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if k == "containers" || k == "initContainers" {
				setContainerImages(v, img)
				continue
			}
			setImage(v, img)
		}
	case []any:
		for _, v := range n {
			setImage(v, img)
		}
	}
}

func setContainerImages(list any, img Image) {
	items, _ := list.([]any)
	for _, item := range items {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		ref, _ := c["image"].(string)
		if name, tag := SplitImage(ref); name == img.Name {
			c["image"] = newImage(name, tag, img)
		}
	}
}

// SplitImage splits an image reference into its name and its tag or digest
// suffix (":tag" or "@sha256:...", "" when there is none).
func SplitImage(ref string) (name, suffix string) {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		return ref[:i], ref[i:]
	}
	slash := strings.LastIndexByte(ref, '/')
	if i := strings.LastIndexByte(ref, ':'); i > slash {
		return ref[:i], ref[i:]
	}
	return ref, ""
}

func newImage(name, suffix string, img Image) string {
	if img.NewName != "" {
		name = img.NewName
	}
	switch {
	case img.Digest != "":
		suffix = "@" + img.Digest
	case img.NewTag != "":
		suffix = ":" + img.NewTag
	}
	return name + suffix
}
