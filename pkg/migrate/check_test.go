package migrate

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
)

const corpusDir = "testdata/corpus"

// registryHint explains most golden differences: the reports follow the
// statuses of pkg/model/registry.go.
const registryHint = "a status in pkg/model/registry.go changed?"

func checkDir(t *testing.T, dir string, o Options) *Report {
	t.Helper()
	in, err := ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir: %v", err)
	}
	r, err := Check(in, o)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return r
}

// TestCorpus checks the corpus of realistic Ingresses; the golden files
// are the text and JSON reports.
func TestCorpus(t *testing.T) {
	r := checkDir(t, corpusDir, Options{IngressClass: "nginx", ConfigMap: DefaultConfigMap, NewBuilder: testBuilder})
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "corpus", text.Bytes(), registryHint)
	golden.Check(t, "corpus.json", js.Bytes(), registryHint)
	if err := r.Err(); !errors.Is(err, ErrDifferences) {
		t.Errorf("Err() = %v, want ErrDifferences", err)
	}
}

// TestCheckStatus checks what makes a report fail, one cause at a time.
func TestCheckStatus(t *testing.T) {
	tests := map[string]struct {
		files  map[string]string
		failed bool
	}{
		"supported annotations only":    {files: map[string]string{"a.yaml": ingressYAML("proxy-body-size: 8m")}},
		"no annotation at all":          {files: map[string]string{"a.yaml": ingressYAML("")}},
		"other prefixes are not read":   {files: map[string]string{"a.yaml": ingressYAML("")}},
		"a documented difference":       {files: map[string]string{"a.yaml": ingressYAML(`rewrite-target: /`)}, failed: true},
		"a snippet":                     {files: map[string]string{"a.yaml": ingressYAML(`server-snippet: "return 200;"`)}, failed: true},
		"not supported":                 {files: map[string]string{"a.yaml": ingressYAML(`relative-redirects: "true"`)}, failed: true},
		"unknown":                       {files: map[string]string{"a.yaml": ingressYAML("no-such-annotation: x")}, failed: true},
		"an invalid value":              {files: map[string]string{"a.yaml": ingressYAML(`proxy-body-size: "8 megabytes"`)}, failed: true},
		"a ConfigMap key not supported": {files: map[string]string{"a.yaml": ingressYAML(""), "cm.yaml": configMapYAML("use-geoip2", "true")}, failed: true},
		"a supported ConfigMap key":     {files: map[string]string{"a.yaml": ingressYAML(""), "cm.yaml": configMapYAML("proxy-body-size", "8m")}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := checkDir(t, dir, Options{IngressClass: "nginx", ConfigMap: DefaultConfigMap, NewBuilder: testBuilder})
			if failed := r.Err() != nil; failed != tc.failed {
				var b bytes.Buffer
				_ = r.WriteText(&b)
				t.Errorf("failed = %v, want %v; report:\n%s", failed, tc.failed, b.String())
			}
		})
	}
}

func ingressYAML(annotation string) string {
	s := "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: app\n  annotations:\n    example.com/owner: team-a\n"
	if annotation != "" {
		s += "    nginx.ingress.kubernetes.io/" + annotation + "\n"
	}
	return s + `spec:
  ingressClassName: nginx
  rules:
    - host: app.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: app
                port:
                  number: 80
`
}

// renamed gives the Ingress of ingressYAML another name and host.
func renamed(ingress, name string) string {
	return strings.NewReplacer("name: app", "name: "+name, "host: app.", "host: "+name+".").Replace(ingress)
}

func configMapYAML(k, v string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ingress-nginx-controller\n  namespace: ingress-nginx\ndata:\n  " + k + ": \"" + v + "\"\n"
}

// TestProblemsNotRepeated: the Problems Build reports for a name the
// findings already call refused, not supported or unknown are not listed
// again; an invalid value is.
func TestProblemsNotRepeated(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.yaml":  ingressYAML("server-snippet: x") + "---\n" + renamed(ingressYAML(`relative-redirects: "true"`), "b"),
		"c.yaml":  renamed(ingressYAML(`proxy-body-size: "8 megabytes"`), "c"),
		"cm.yaml": configMapYAML("http-snippet", "x") + "  no-such-key: \"1\"\n  use-geoip2: \"true\"\n",
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := checkDir(t, dir, Options{IngressClass: "nginx", ConfigMap: DefaultConfigMap, NewBuilder: testBuilder})
	if len(r.Problems) != 1 || r.Problems[0].Name != "c" {
		t.Errorf("problems %+v, want only the invalid proxy-body-size of default/c", r.Problems)
	}
	if len(r.Findings) != 6 {
		t.Errorf("%d findings, want 6: %+v", len(r.Findings), r.Findings)
	}
}

func TestCleanDirectory(t *testing.T) {
	r := checkDir(t, "testdata/clean", Options{IngressClass: "nginx", ConfigMap: DefaultConfigMap, NewBuilder: testBuilder})
	if err := r.Err(); err != nil {
		t.Errorf("Err() = %v", err)
	}
	if r.Ingresses != 1 || len(r.Findings) != 2 {
		t.Errorf("%d Ingresses, findings %v", r.Ingresses, r.Findings)
	}
}

func TestReadDirErrors(t *testing.T) {
	tests := map[string]map[string]string{
		"no manifest":            {"README.md": "# nothing"},
		"not YAML":               {"a.yaml": "kind: [unclosed"},
		"a typed field is wrong": {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports: 80\n"},
	}
	for name, files := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, content := range files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ReadDir(dir); !errors.Is(err, ErrInput) {
				t.Errorf("ReadDir = %v, want ErrInput", err)
			}
		})
	}
}

func TestCheckRejectsMalformedConfigMapName(t *testing.T) {
	if _, err := Check(&Input{}, Options{ConfigMap: "no-namespace", NewBuilder: testBuilder}); err == nil {
		t.Error("Check accepted ConfigMap \"no-namespace\"")
	}
}

// testBuilder is the syncer's builder, as `syncer migrate-check` gives it.
func testBuilder(o BuildOptions) Builder {
	return model.NewIncremental(model.NewStore(ingress.NewSource()), model.Options{ControllerClass: o.ControllerClass, IngressClass: o.IngressClass, ConfigMap: o.ConfigMap})
}

// TestCheckSkipsGatewayAPI: a stream that also carries Gateway API
// objects is checked for its Ingresses, the Gateway API objects named in a
// note, instead of failing the build with an unknown kind.
func TestCheckSkipsGatewayAPI(t *testing.T) {
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r"}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "gw"}}
	ing := fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80)))
	in := &Input{Source: "stream test", Objects: []runtime.Object{gw, ing, route, fixtures.Service("shop", "web", 80)}}
	r, err := Check(in, Options{NewBuilder: testBuilder})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if r.Ingresses != 1 {
		t.Errorf("%d Ingresses checked, want 1", r.Ingresses)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "2 Gateway API objects not checked") }) {
		t.Errorf("notes %q, want one naming the 2 Gateway API objects", r.Notes)
	}
}
