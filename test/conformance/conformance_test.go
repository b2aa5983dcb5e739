//go:build conformance

package conformance

import (
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
)

// TestConformance is the official suite, unchanged: its flags (after
// -args) choose the GatewayClass, the profiles and the report; the cluster
// is the one TestMain started.
func TestConformance(t *testing.T) {
	if !enabled {
		t.Skipf("needs root and the whole system: %s=1 (make conformance) runs it", EnvEnable)
	}
	conformance.RunConformance(t)
}
