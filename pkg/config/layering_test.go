package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ingress-sync/ingress-sync/"

// deps lists the packages of this module that pkg (a path relative to the
// module root) depends on, itself excluded, test files not included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "../../"+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	var own []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, module); ok && rel != pkg {
			own = append(own, rel)
		}
	}
	return own
}

// translators lists the source translators: the packages under pkg/ that
// import the route intents (pkg/intent) and declare NewSource, the
// constructor of their intent.Source (see CONTRIBUTING.md).
func translators(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Dir}}{{range .Imports}} {{.}}{{end}}`, "../../pkg/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var found []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 || !slices.Contains(f[2:], module+"pkg/intent") || !declaresNewSource(t, f[1]) {
			continue
		}
		found = append(found, strings.TrimPrefix(f[0], module))
	}
	if !slices.Contains(found, "pkg/ingress") {
		t.Fatalf("pkg/ingress is not among the translators %q: the check would see nothing", found)
	}
	return found
}

// declaresNewSource reports whether a non-test Go file of dir declares
// func NewSource.
func declaresNewSource(t *testing.T, dir string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nfunc NewSource(") {
			return true
		}
	}
	return false
}

// TestLayering: the contract imports nothing of this module, so no
// translator, annotation parser or builder can reach it; the route intents
// depend on the contract alone; the build reaches no translator, and a
// translator neither the build nor another translator; the data plane
// and the inspection tools depend on the contract, not on the builder.
func TestLayering(t *testing.T) {
	trs := translators(t)
	tests := map[string]struct {
		pkg     string
		denied  []string // path prefixes, relative to the module
		allowed []string // exceptions to denied, exact
	}{
		"contract imports nothing of the module": {pkg: "pkg/config", denied: []string{""}},
		"intents depend on the contract alone": {pkg: "pkg/intent", denied: []string{""},
			allowed: []string{"pkg/config", "pkg/events"}},
		"the build reaches no translator":             {pkg: "pkg/model", denied: trs},
		"data plane does not reach the builder":       {pkg: "pkg/nginx", denied: []string{"pkg/model", "pkg/intent", "pkg/events", "pkg/watch"}},
		"inspect does not reach the builder":          {pkg: "pkg/inspect", denied: []string{"pkg/model", "pkg/watch"}},
		"replay is given its builder":                 {pkg: "pkg/replay", denied: []string{"pkg/model", "pkg/watch"}},
		"migrate reads the registry, not the builder": {pkg: "pkg/migrate", denied: []string{"pkg/model"}},
	}
	for _, tr := range trs {
		tests["translator "+tr+" reaches neither the build nor another translator"] = struct {
			pkg     string
			denied  []string
			allowed []string
		}{pkg: tr, denied: append([]string{"pkg/model"}, slices.DeleteFunc(slices.Clone(trs), func(p string) bool { return p == tr })...)}
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, d := range deps(t, tc.pkg) {
				if slices.Contains(tc.allowed, d) {
					continue
				}
				for _, p := range tc.denied {
					if d == p || strings.HasPrefix(d, p+"/") || p == "" {
						t.Errorf("%s depends on %s", tc.pkg, d)
					}
				}
			}
		})
	}
}
