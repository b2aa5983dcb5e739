package testkit

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path of ingress-sync, with the slash that follows.
const module = "github.com/ingress-sync/ingress-sync/"

// TestImportsRunOneWay: the product (cmd/, pkg/, internal/, lua/) imports
// nothing of the harness (test/) or of the tools built on it (hack/) but
// from _test.go files, so that the syncer and the watcher (cmd/) link none
// of it; and the shipped helpers of internal/ import nothing of pkg/ or
// cmd/, since the product's packages sit on them. Direct imports are
// enough: every package a product package links is a product package too.
func TestImportsRunOneWay(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not found on PATH: %v", err)
	}
	// .Imports are those of the non-test files only.
	out, err := exec.Command(goBin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	for _, p := range []string{"cmd/syncer", "internal/retry", "pkg/stream", "test/testkit/world"} {
		if _, ok := imports[module+p]; !ok {
			t.Fatalf("go list did not list %s: the check would see nothing", p)
		}
	}
	for _, v := range layeringViolations(imports) {
		t.Error(v)
	}
}

func TestLayeringViolations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		imports map[string][]string
		want    int
	}{
		{"product on product and third parties", map[string][]string{
			module + "pkg/nginx":   {module + "pkg/model", "net/http"},
			module + "cmd/syncer":  {module + "pkg/nginx", module + "internal/group"},
			module + "internal/ok": {"github.com/nats-io/nats.go", module + "internal/retry"},
		}, 0},
		{"harness and tools on the product", map[string][]string{
			module + "test/testkit/world": {module + "pkg/nginx", module + "internal/certs", module + "test/testkit/netns"},
			module + "hack/churn":         {module + "test/testkit/churn", module + "pkg/stream"},
		}, 0},
		{"product on the harness", map[string][]string{module + "pkg/stream": {module + "test/testkit/natstest"}}, 1},
		{"binary on the harness", map[string][]string{module + "cmd/watcher": {module + "test/testkit/netns"}}, 1},
		{"helper on the harness", map[string][]string{module + "internal/retry": {module + "test/testkit/freeport"}}, 1},
		{"product on a tool", map[string][]string{module + "lua": {module + "hack/demo"}}, 1},
		{"helper on pkg", map[string][]string{module + "internal/certs": {module + "pkg/model"}}, 1},
		{"helper on a binary", map[string][]string{module + "internal/group": {module + "cmd/syncer"}}, 1},
		{"a module whose name extends ours", map[string][]string{module + "pkg/model": {strings.TrimSuffix(module, "/") + "-test/x"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := layeringViolations(tc.imports); len(got) != tc.want {
				t.Errorf("violations %q, want %d", got, tc.want)
			}
		})
	}
}

// layeringViolations names the imports, among those of each package
// (import path to the paths it imports), that run against the layering.
func layeringViolations(imports map[string][]string) []string {
	var out []string
	for pkg, deps := range imports {
		from, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		for _, dep := range deps {
			to, ok := strings.CutPrefix(dep, module)
			switch {
			case !ok:
			case !under(from, "test", "hack") && under(to, "test", "hack"):
				out = append(out, fmt.Sprintf("%s imports %s: only the product's _test.go files may use the harness", from, to))
			case under(from, "internal") && under(to, "pkg", "cmd"):
				out = append(out, fmt.Sprintf("%s imports %s: the helpers of internal/ sit below pkg/ and cmd/", from, to))
			}
		}
	}
	slices.Sort(out)
	return out
}

// under reports whether the module-relative path rel is one of the top
// directories tops or below one.
func under(rel string, tops ...string) bool {
	for _, top := range tops {
		if rel == top || strings.HasPrefix(rel, top+"/") {
			return true
		}
	}
	return false
}
