package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// TestRouteViewClientAuth: the routes table shows a host's client
// certificate settings, never the CA's certificates.
func TestRouteViewClientAuth(t *testing.T) {
	ca := "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"
	v := NewRouteView("", []nginx.Host{{Name: "mtls.example.com", ClientAuth: &config.ClientAuth{Ingress: "shop/web", Secret: "shop/ca",
		CA: ca + ca, Revoked: []string{"01"}, Verify: "optional", Depth: 2, ErrorPage: "/error", PassCertificate: true, MatchCN: "CN=(a|b)"}}})
	var text bytes.Buffer
	if err := v.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "mtls.example.com  -     -     -        shop/web  clientAuth secret=shop/ca verify=optional depth=2 cas=2 revoked=1 errorPage=/error passCertificate=true matchCN=CN=(a|b)"
	if !strings.Contains(text.String(), want) || strings.Contains(text.String(), "BEGIN") {
		t.Fatalf("routes table:\n%s\nwant a line %q", text.String(), want)
	}
}
