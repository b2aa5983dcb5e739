package events_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFormatImportsNoNATS: the wire format, and the model built on it,
// depend on no NATS package (the transport is pkg/stream's).
func TestFormatImportsNoNATS(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not found on PATH: %v", err)
	}
	for _, pkg := range []string{"../model", "."} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for dep := range strings.FieldsSeq(string(out)) {
			if strings.HasPrefix(dep, "github.com/nats-io/") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
