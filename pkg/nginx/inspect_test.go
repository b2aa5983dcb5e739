package nginx

import (
	"os"
	"testing"
)

// TestInspectEndpoints: GET /configuration/general answers the settings
// nginx.conf gave init, and the checksum in nginx.conf's header is the one
// the workers report, on a real nginx.
func TestInspectEndpoints(t *testing.T) {
	h := startNginx(t, hostTable(1, endpointOf(startEcho(t, "web"))), nil)
	v := h.mustVersion()
	conf, err := os.ReadFile(ConfPath(h.opts.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if got := ConfChecksum(conf); got == "" || got != v.Checksum {
		t.Errorf("nginx.conf names checksum %q; the workers serve %q", got, v.Checksum)
	}
	g, err := h.lua.GetGeneral(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if g["checksum"] != v.Checksum || g["https_port"] != float64(h.opts.HTTPSPort) || g["max_tries"] == nil {
		t.Errorf("general = %v", g)
	}
	if ConfChecksum([]byte("events {}\n")) != "" {
		t.Error("a file without the header has a checksum")
	}
}
