package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinariesDoNotLinkTestkit: what ships (cmd/syncer, cmd/watcher) does
// not depend on a package under internal/testkit.
func TestBinariesDoNotLinkTestkit(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not found on PATH: %v", err)
	}
	for _, cmd := range []string{"../../cmd/syncer", "../../cmd/watcher"} {
		out, err := exec.Command(goBin, "list", "-deps", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", cmd, err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			if strings.Contains(p, "/internal/testkit") {
				t.Errorf("%s depends on %s", cmd, p)
			}
		}
	}
}
