package migrate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ErrInput marks input that cannot be read (a file that is not YAML or
// JSON, a directory without manifests, an unreachable cluster or stream).
var ErrInput = errors.New("migrate: input")

// Input is what Check reads: the objects, and where they come from.
type Input struct {
	// Source describes where the objects come from, for the report.
	Source string
	// Objects are Ingresses, IngressClasses, Services, EndpointSlices,
	// Secrets and ConfigMaps, as typed objects.
	Objects []runtime.Object
	// Manifests is true for a directory of manifests: Services the
	// Ingresses name but the directory lacks are then assumed to exist
	// (applications often keep them elsewhere).
	Manifests bool
	// Notes are remarks for the report (documents skipped, ...).
	Notes []string
}

// typeMeta is what tells a document's type.
type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// newObject returns an empty typed object for the kinds Check reads, or
// nil.
func newObject(apiVersion, kind string) runtime.Object {
	switch apiVersion + " " + kind {
	case "networking.k8s.io/v1 Ingress":
		return &networkingv1.Ingress{}
	case "networking.k8s.io/v1 IngressClass":
		return &networkingv1.IngressClass{}
	case "v1 Service":
		return &corev1.Service{}
	case "v1 Secret":
		return &corev1.Secret{}
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}
	case "discovery.k8s.io/v1 EndpointSlice":
		return &discoveryv1.EndpointSlice{}
	}
	return nil
}

// ReadDir reads every *.yaml, *.yml and *.json file under dir (multi-document
// YAML, JSON, and List kinds). Documents of other kinds are skipped; an
// Ingress of another API version than networking.k8s.io/v1 is skipped
// with a note. Objects without a namespace get "default", as kubectl apply
// gives them.
func ReadDir(dir string) (*Input, error) {
	in := &Input{Source: "directory " + dir, Manifests: true}
	var files int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isManifest(path) {
			return err
		}
		files++
		return in.readFile(path)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if files == 0 {
		return nil, fmt.Errorf("%w: no .yaml, .yml or .json file under %s", ErrInput, dir)
	}
	sortObjects(in.Objects)
	return in, nil
}

func isManifest(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func (in *Input) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		if err := in.addDocument(raw, fmt.Sprintf("%s: document %d", path, doc)); err != nil {
			return err
		}
	}
}

// addDocument decodes one document (or the items of a List) into Objects.
func (in *Input) addDocument(raw json.RawMessage, where string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil // an empty document between two ---
	}
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if strings.HasSuffix(tm.Kind, "List") {
		for i, item := range tm.Items {
			if err := in.addDocument(item, fmt.Sprintf("%s item %d", where, i+1)); err != nil {
				return err
			}
		}
		return nil
	}
	obj := newObject(tm.APIVersion, tm.Kind)
	if obj == nil {
		if tm.Kind == "Ingress" {
			in.Notes = append(in.Notes, fmt.Sprintf("%s: %s Ingress skipped: only networking.k8s.io/v1 is read", where, tm.APIVersion))
		}
		return nil
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return fmt.Errorf("%s: %s: %w", where, tm.Kind, err)
	}
	if m := obj.(metav1.Object); m.GetNamespace() == "" && tm.Kind != "IngressClass" {
		m.SetNamespace("default")
	}
	in.Objects = append(in.Objects, obj)
	return nil
}

// sortObjects orders objects by kind, namespace and name, so that the
// report does not depend on file or list order.
func sortObjects(objs []runtime.Object) {
	slices.SortStableFunc(objs, func(a, b runtime.Object) int {
		ma, mb := a.(metav1.Object), b.(metav1.Object)
		return cmp.Or(cmp.Compare(kindName(a), kindName(b)),
			cmp.Compare(ma.GetNamespace(), mb.GetNamespace()), cmp.Compare(ma.GetName(), mb.GetName()))
	})
}

func kindName(obj runtime.Object) string { return fmt.Sprintf("%T", obj) }
