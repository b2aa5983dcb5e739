package config

import (
	"os/exec"
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

// TestLayering: the contract imports nothing of this module, so no
// translator, annotation parser or builder can reach it; the data plane
// and the inspection tools depend on the contract, not on the builder.
func TestLayering(t *testing.T) {
	tests := map[string]struct {
		pkg    string
		denied []string // path prefixes, relative to the module
	}{
		"contract imports nothing of the module": {pkg: "pkg/config", denied: []string{""}},
		"data plane does not reach the builder":  {pkg: "pkg/nginx", denied: []string{"pkg/model", "pkg/events", "pkg/watch"}},
		"inspect does not reach the builder":     {pkg: "pkg/inspect", denied: []string{"pkg/model", "pkg/watch"}},
		"replay is given its builder":            {pkg: "pkg/replay", denied: []string{"pkg/model", "pkg/watch"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, d := range deps(t, tc.pkg) {
				for _, p := range tc.denied {
					if strings.HasPrefix(d, p) {
						t.Errorf("%s depends on %s", tc.pkg, d)
					}
				}
			}
		})
	}
}
