package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"strings"
	"testing"
)

// A host the data plane refuses (here a path type Lua does not know; Build
// never emits one) answers 503 instead of blocking the push or keeping an
// older version of its routes, and every other host is served.
func TestRefusedHostFailsClosedAlone(t *testing.T) {
	app := startEcho(t, "app")
	bogus := config.Location{Path: "/", PathType: "Bogus", Backend: "app"}
	cfg := configOf("refuse-1", []config.Server{
		serverOf("good.test", prefixLoc("/", "app")),
		serverOf("bad.test", bogus),
		serverOf("later.test", prefixLoc("/", "app")),
	}, backendOf("app", app))
	h := startNginx(t, cfg, nil)
	h.allowLuaErrors = true

	check := func(t *testing.T, want map[string]int) {
		t.Helper()
		for url, status := range want {
			if r := h.mustGet(url); r.Status != status {
				t.Errorf("GET %s = %d, want %d", url, r.Status, status)
			}
		}
	}
	check(t, map[string]int{"http://good.test/": 200, "http://bad.test/": 503, "http://later.test/": 200})

	next := configOf("refuse-2", []config.Server{
		serverOf("good.test", prefixLoc("/", "app")),
		serverOf("bad.test", bogus),
		serverOf("later.test", bogus),
	}, backendOf("app", app))
	if err := h.reload(t.Context(), next); err != nil {
		t.Fatalf("apply with a refused host: %v", err)
	}
	check(t, map[string]int{"http://good.test/": 200, "http://bad.test/": 503, "http://later.test/": 503})
}

// The longest certificate name Kubernetes allows ("<63-character
// namespace>/<253-character Secret>") is taken like any other.
func TestLongestCertificateName(t *testing.T) {
	app := startEcho(t, "app")
	h := startNginx(t, configOf("long-1", []config.Server{serverOf("long.test", prefixLoc("/", "app"))}, backendOf("app", app)), nil)
	name := strings.Repeat("n", 63) + "/" + strings.Repeat("s", 253)
	cert, _ := newTestCA(t).issue(t, name, "long.test")
	if err := h.update(t.Context(), config.Change{CertificatesUpserted: []config.Certificate{cert}}); err != nil {
		t.Fatalf("push a certificate named with %d characters: %v", len(name), err)
	}
	if r := h.mustGet("https://long.test/"); r.Status != 200 {
		t.Errorf("GET https://long.test/ = %d, want 200", r.Status)
	}
}
