package deploy

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestHelmMatchesKustomize: the chart, with the defaults and with the values
// files that stand for the overlays, renders the objects of deploy/base and
// of each overlay, less the Namespace (created before the install): the same
// kinds and names, and the same specs, RBAC rules, container flags, env,
// ports, probes, volumes and security contexts. What may differ is only
// what normalize removes. So the chart and the kustomize manifests cannot
// drift apart.
func TestHelmMatchesKustomize(t *testing.T) {
	for values, dir := range map[string]string{
		"": "base", "dev": "overlays/dev", "tls": "overlays/tls", "encryption": "overlays/encryption",
	} {
		t.Run(dir, func(t *testing.T) {
			want := byKey(t, withoutNamespace(t, render(t, dir)))
			got := byKey(t, renderChart(t, values))
			for _, k := range sortedKeys(want) {
				g, ok := got[k]
				if !ok {
					t.Errorf("chart lacks %s", k)
					continue
				}
				for _, d := range diffValues(k, want[k], g) {
					if !slices.ContainsFunc(knownDifferences[dir], func(p string) bool { return strings.HasPrefix(d, p+":") }) {
						t.Errorf("%s", d)
					}
				}
			}
			for _, k := range sortedKeys(got) {
				if _, ok := want[k]; !ok {
					t.Errorf("chart has %s, %s does not", k, dir)
				}
			}
		})
	}
}

// knownDifferences are the paths where the chart may differ from an overlay,
// each for a reason given here.
var knownDifferences = map[string][]string{
	// The overlay's patch replaces the whole list (it has no merge key),
	// which drops the labels of deploy/base; the chart keeps them.
	"overlays/dev": {"StatefulSet ingress-sync/nats.spec.volumeClaimTemplates[0].metadata.labels"},
}

// TestHelmRBAC: with the values of an ingress-nginx user the chart grants
// the watcher exactly deploy/base's privileges (under its election ID).
func TestHelmRBAC(t *testing.T) {
	base := strings.ReplaceAll(rbacSummary(t, render(t, "base")), "[ingress-sync-watcher]", "[ingress-sync-leader]")
	if got := rbacSummary(t, renderChart(t, "ingress-nginx")); got != base {
		t.Errorf("chart RBAC:\n%s\nwant (deploy/base, lease ingress-sync-leader):\n%s", got, base)
	}
}

// withoutNamespace removes the one Namespace of a kustomization's objects.
func withoutNamespace(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.DeleteFunc(slices.Clone(objs), func(o *unstructured.Unstructured) bool { return o.GetKind() == "Namespace" })
	if len(out) != len(objs)-1 {
		t.Fatalf("want exactly one Namespace, found %d", len(objs)-len(out))
	}
	return out
}

// byKey indexes normalized objects by "Kind namespace/name".
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for _, o := range objs {
		k := describe(o)
		if _, dup := out[k]; dup {
			t.Errorf("two objects %s", k)
		}
		out[k] = normalize(o)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// releaseLabels are the labels the chart adds to deploy/base's, everywhere.
var releaseLabels = []string{"app.kubernetes.io/instance", "app.kubernetes.io/managed-by",
	"app.kubernetes.io/version", "helm.sh/chart"}

// normalize returns a copy of o without what may differ between the chart
// and kustomize: the release labels, checksum/ annotations, the order of
// lists of named items (env, volumes, ports...) and, in the NATS ConfigMap,
// comment and blank lines.
func normalize(o *unstructured.Unstructured) any {
	obj := o.DeepCopy().Object
	if o.GetKind() == "ConfigMap" && o.GetName() == natsConfigName {
		data, _ := obj["data"].(map[string]any)
		for k, v := range data {
			data[k] = stripComments(v.(string))
		}
	}
	return normalizeValue(obj)
}

func normalizeValue(v any) any {
	switch n := v.(type) {
	case map[string]any:
		for _, l := range releaseLabels {
			delete(n, l)
		}
		for k, x := range n {
			n[k] = normalizeValue(x)
		}
		if ann, ok := n["annotations"].(map[string]any); ok {
			for k := range ann {
				if strings.HasPrefix(k, "checksum/") {
					delete(ann, k)
				}
			}
			if len(ann) == 0 {
				delete(n, "annotations")
			}
		}
		return n
	case []any:
		for i, x := range n {
			n[i] = normalizeValue(x)
		}
		if len(n) > 0 && !slices.ContainsFunc(n, func(x any) bool { return itemName(x) == "" }) {
			sort.SliceStable(n, func(i, j int) bool { return itemName(n[i]) < itemName(n[j]) })
		}
		return n
	}
	return v
}

// itemName is the name of a list item that is a map with a name, or "".
func itemName(x any) string {
	m, _ := x.(map[string]any)
	s, _ := m["name"].(string)
	return s
}

// stripComments drops the lines of a NATS configuration that are blank or
// only a comment.
func stripComments(conf string) string {
	var keep []string
	for _, line := range strings.Split(conf, "\n") {
		if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// diffValues describes where want and got differ, one line per path.
func diffValues(path string, want, got any) []string {
	wm, wIsMap := want.(map[string]any)
	gm, gIsMap := got.(map[string]any)
	if wIsMap && gIsMap {
		var out []string
		keys := map[string]any{}
		for k := range wm {
			keys[k] = nil
		}
		for k := range gm {
			keys[k] = nil
		}
		for _, k := range sortedKeys(keys) {
			out = append(out, diffValues(path+"."+k, wm[k], gm[k])...)
		}
		return out
	}
	wl, wIsList := want.([]any)
	gl, gIsList := got.([]any)
	if wIsList && gIsList && len(wl) == len(gl) {
		var out []string
		for i := range wl {
			out = append(out, diffValues(fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: chart %v, kustomize %v", path, got, want)}
	}
	return nil
}
