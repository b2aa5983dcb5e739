package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"
)

// TestFallbackCertificateContentNotInChecksum: every syncer and every
// replay generates its own fallback certificate; Configurations that differ
// only in it must have the same checksum, or replicas never agree.
func TestFallbackCertificateContentNotInChecksum(t *testing.T) {
	objs := goldenInputs(t)["full"]
	if objs == nil {
		t.Fatal("golden input full missing")
	}
	a := goldenOptions(t)
	b := goldenOptions(t)
	b.FallbackCertificate = &config.Certificate{Name: config.FallbackCertificateName, Cert: testdata(t, "example.crt"), Key: testdata(t, "example.key")}
	ca, cb := Build(newTestStore(t, objs...), a), Build(newTestStore(t, objs...), b)
	if ca.Checksum != cb.Checksum || ca.ComputeChecksum() != cb.ComputeChecksum() {
		t.Fatalf("checksums %s and %s differ by the fallback certificate only", ca.Checksum, cb.Checksum)
	}
	other := goldenOptions(t)
	other.DefaultBackendService = ""
	if Build(newTestStore(t, objs...), other).Checksum == ca.Checksum {
		t.Fatal("checksum ignores a real change")
	}
}
