package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSyncerLinksNoNATSServer: the syncer is a NATS client only; the
// in-process server (pkg/stream/embedded) is the watcher's and the tests'.
func TestSyncerLinksNoNATSServer(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not found on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(dep, "github.com/nats-io/nats-server") {
			t.Errorf("cmd/syncer depends on %s", dep)
		}
	}
}
