package deploy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const testDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  minReadySeconds: 5
  template:
    spec:
      containers:
        - name: app
          image: registry.local:5000/app:1
          env:
            - name: A
              value: "1"
            - name: B
              value: "2"
        - name: side
          image: other@sha256:0000
`

const testRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: app
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: app}
subjects:
  - {kind: ServiceAccount, name: app, namespace: NS}
`

// writeTree writes files (path -> content) under a new folder.
func writeTree(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const kzHeader = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"

func TestRender(t *testing.T) {
	base := map[string]string{
		"base/kustomization.yaml": kzHeader + "namespace: ns\nresources: [app.yaml, crb.yaml]\n" +
			"images: [{name: registry.local:5000/app, newTag: \"2\"}]\n",
		"base/app.yaml": testDeployment,
		"base/crb.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: app}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: app}
subjects: [{kind: ServiceAccount, name: app, namespace: ns}]
`,
		"overlay/kustomization.yaml": kzHeader + "resources: [../base]\npatches: [{path: patch.yaml}]\n",
		"overlay/patch.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  minReadySeconds: null
  template:
    spec:
      containers:
        - name: app
          env:
            - {name: B, value: "3"}
`,
	}
	objs, err := Render(filepath.Join(writeTree(t, base), "overlay"))
	if err != nil {
		t.Fatal(err)
	}
	d := find(t, objs, "Deployment", "app")
	crb := find(t, objs, "ClusterRoleBinding", "app")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	app, side := containers[0].(map[string]any), containers[1].(map[string]any)
	env := app["env"].([]any)
	_, hasMinReady, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "minReadySeconds")
	for _, c := range []struct{ name, got, want string }{
		{"namespace", d.GetNamespace(), "ns"},
		{"cluster-scoped namespace", crb.GetNamespace(), ""},
		{"image by name keeps the registry port", app["image"].(string), "registry.local:5000/app:2"},
		{"other image", side["image"].(string), "other@sha256:0000"},
		{"env merged by name", env[0].(map[string]any)["value"].(string) + env[1].(map[string]any)["value"].(string), "13"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if hasMinReady || len(env) != 2 {
		t.Errorf("null must delete minReadySeconds (%t); env %v", hasMinReady, env)
	}
}

func TestRenderRefuses(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  error
	}{
		{"unknown kustomization field", map[string]string{
			"kustomization.yaml": kzHeader + "commonLabels: {a: b}\nresources: [app.yaml]\n", "app.yaml": testDeployment,
		}, ErrUnsupported},
		{"remote resource", map[string]string{
			"kustomization.yaml": kzHeader + "resources: [https://example.com/x.yaml]\n",
		}, ErrUnsupported},
		{"patch without target", map[string]string{
			"kustomization.yaml": kzHeader + "resources: [app.yaml]\npatches: [{path: p.yaml}]\n",
			"app.yaml":           testDeployment,
			"p.yaml":             "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nope}\n",
		}, ErrPatchTarget},
		{"patch with a target selector", map[string]string{
			"kustomization.yaml": kzHeader + "resources: [app.yaml]\npatches: [{path: p.yaml, target: {kind: Deployment}}]\n",
			"app.yaml":           testDeployment,
			"p.yaml":             "- op: remove\n  path: /spec\n",
		}, ErrUnsupported},
		{"subject in another namespace", map[string]string{
			"kustomization.yaml": kzHeader + "namespace: ns\nresources: [crb.yaml]\n", "crb.yaml": testRole,
		}, ErrUnsupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Render(writeTree(t, c.files))
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}
