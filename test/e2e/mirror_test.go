package e2e

import (
	"fmt"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestIngressMirror: a request to an Ingress with mirror-target is
// answered by its backend, and a copy reaches the mirror (an address of
// the test range, outside the cluster's Services), through both syncers.
func TestIngressMirror(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	shadow := backend(t, "shadow")
	applyIngress(t, ours(ns, "mirrored",
		fixtures.Annotation("nginx.ingress.kubernetes.io/mirror-target", "http://"+shadow.Addr+"/copy$request_uri"),
		fixtures.Rule(ns+".example.com", fixtures.Prefix("/", "web", 80))))
	routes(t, nil, map[string]string{"http://" + ns + ".example.com/hello": "web"})
	eventually(t, waitTimeout, "a copy at the mirror", func() error {
		if n := shadow.Requests(); n < int64(len(w.Syncers)) {
			return fmt.Errorf("the mirror got %d requests, want at least %d (one per syncer)", n, len(w.Syncers))
		}
		return nil
	})
	converged(t)
}
