package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// routesConfig has a route with every setting the router applies, a regex
// route, a wildcard host, an HTTPRoute's host on a Gateway's port and the
// default server (last, as Build never
// sorts it: the view sorts by name).
func routesConfig() *config.Configuration {
	on := true
	api := config.Location{Path: "/api/(.*)", PathType: config.PathRegex, Backend: "shop-api-80", Ingress: "shop/api",
		Settings: config.LocationSettings{ProxyConnectTimeout: 3, ProxyReadTimeout: 30, ProxySendTimeout: 20, ProxyBodySize: "8m",
			BackendProtocol: "GRPC", RewriteTarget: "/$1", AllowSourceRange: []string{"10.0.0.0/8", "192.168.0.0/16"}, SSLRedirect: &on}}
	return &config.Configuration{Checksum: "c0ffee", Servers: []config.Server{
		{Hostname: "shop.example.com", TLS: true, SSLRedirect: true, Locations: []config.Location{
			{Path: "/healthz", PathType: config.PathExact, Backend: "shop-web-80", Ingress: "shop/web"},
			api,
			{Path: "/upload", PathType: config.PathPrefix, Backend: "shop-web-80", Ingress: "shop/upload",
				Settings: config.LocationSettings{ProxyBodySize: "0", BackendProtocol: "HTTP"}},
			{Path: "/", PathType: config.PathPrefix, Backend: "shop-web-80", Ingress: "shop/web"},
		}},
		{Hostname: "*.apps.example.com", Locations: []config.Location{{Path: "/", PathType: config.PathPrefix, Backend: "apps-router-8080", Ingress: "apps/router"}}},
		{Hostname: "gw.example.com", Port: 10080, Locations: []config.Location{
			{Path: "/", PathType: config.PathPrefix, Backend: "shop-web-80", Ingress: "shop/front", Kind: "HTTPRoute"}}},
		{Hostname: "_", Locations: []config.Location{{Path: "/", PathType: config.PathPrefix}}},
	}}
}

func TestRouteViewGolden(t *testing.T) {
	all, err := RoutesOf(routesConfig(), "")
	if err != nil {
		t.Fatal(err)
	}
	// A host the data plane refused exists only in a live view.
	all.Hosts = append(all.Hosts, nginx.Host{Name: "refused.example.com", Unavailable: true}, nginx.Host{Name: "empty.example.com"})
	all = NewRouteView(all.Checksum, all.Hosts)
	var text, js bytes.Buffer
	if err := all.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := all.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	golden(t, "routes.txt", text.Bytes())
	golden(t, "routes.json", js.Bytes())
}

func TestRoutesOf(t *testing.T) {
	cfg := routesConfig()
	tests := []struct {
		name, host string
		want       []string // host names of the view
		checksum   string
		err        error
	}{
		{"every host, sorted by name", "", []string{"*.apps.example.com", "10080:gw.example.com", "_", "shop.example.com"}, "c0ffee", nil},
		{"a host of a Gateway's port", "10080:gw.example.com", []string{"10080:gw.example.com"}, "", nil},
		{"one host", "shop.example.com", []string{"shop.example.com"}, "", nil},
		{"case-insensitive", "SHOP.example.com", []string{"shop.example.com"}, "", nil},
		{"wildcard", "*.apps.example.com", []string{"*.apps.example.com"}, "", nil},
		{"default server", "_", []string{"_"}, "", nil},
		{"unknown host", "nope.example.com", nil, "", ErrNoSuchHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := RoutesOf(cfg, tc.host)
			if !errors.Is(err, tc.err) {
				t.Fatalf("RoutesOf(%q) = %v; want %v", tc.host, err, tc.err)
			}
			var names []string
			for _, h := range v.Hosts {
				names = append(names, h.Name)
			}
			if !slices.Equal(names, tc.want) || v.Checksum != tc.checksum {
				t.Errorf("hosts %v checksum %q; want %v %q", names, v.Checksum, tc.want, tc.checksum)
			}
		})
	}
	if cfg.Servers[0].Hostname != "shop.example.com" {
		t.Error("RoutesOf reordered the Configuration's servers")
	}
}
