package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// KustomizationFile is the file name Render reads in every directory.
const KustomizationFile = "kustomization.yaml"

// ErrUnsupported is returned for a kustomization that uses something Render
// does not implement (a field, a remote resource, a patch it cannot apply).
var ErrUnsupported = errors.New("deploy: unsupported kustomization")

// ErrPatchTarget is returned when a patch matches no object or several.
var ErrPatchTarget = errors.New("deploy: patch target")

// Kustomization is the subset of kustomize's Kustomization that deploy/
// uses. Decoding is strict: any other field is an error.
type Kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources,omitempty"`
	Images     []Image  `json:"images,omitempty"`
	Patches    []Patch  `json:"patches,omitempty"`
}

// Image is one entry of images: containers whose image name is Name get
// NewName and NewTag (or Digest) instead.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// Patch is one entry of patches: a file of strategic-merge patches, each a
// whole document naming its target by apiVersion, kind and name.
type Patch struct {
	Path string `json:"path"`
}

// Render builds the kustomization in dir and returns its objects in the
// order of its resources.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	k, err := readKustomization(dir)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, res := range k.Resources {
		more, err := loadResource(dir, res)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	for _, p := range k.Patches {
		if err := applyPatchFile(objs, filepath.Join(dir, p.Path)); err != nil {
			return nil, err
		}
	}
	if k.Namespace != "" {
		if err := setNamespace(objs, k.Namespace); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	for _, img := range k.Images {
		for _, o := range objs {
			setImage(o.Object, img)
		}
	}
	return objs, nil
}

func readKustomization(dir string) (*Kustomization, error) {
	path := filepath.Join(dir, KustomizationFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var k Kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnsupported, path, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		return nil, fmt.Errorf("%w: %s: %s %s", ErrUnsupported, path, k.APIVersion, k.Kind)
	}
	for _, img := range k.Images {
		if img.Name == "" || (img.NewTag != "" && img.Digest != "") {
			return nil, fmt.Errorf("%w: %s: image %+v", ErrUnsupported, path, img)
		}
	}
	return &k, nil
}

// loadResource reads a resource entry: a directory is rendered as a
// kustomization of its own, a file is read as YAML documents.
func loadResource(dir, res string) ([]*unstructured.Unstructured, error) {
	if strings.Contains(res, "://") || strings.HasPrefix(res, "github.com/") {
		return nil, fmt.Errorf("%w: remote resource %q", ErrUnsupported, res)
	}
	path := filepath.Join(dir, res)
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return Render(path)
	}
	return ReadObjects(path)
}

// ReadObjects reads every non-empty YAML document of a file as an object.
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return DecodeObjects(path, data)
}

// DecodeObjects decodes YAML documents; name is used in errors only.
func DecodeObjects(name string, data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufioReader(data))
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		// Strict: a key given twice is an error, as in kubectl apply
		// --validate=strict (the YAML decoders differ on which one wins).
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		objs = append(objs, u)
	}
}
