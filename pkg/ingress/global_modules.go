package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// Setters of the ConfigMap keys of nginx's optional modules: brotli
// (enable-brotli, brotli-level, brotli-min-length, brotli-types) and GeoIP2
// (use-geoip2, geoip2-autoreload-in-minutes). Each value has one parser,
// the one of its kind (boolField, intField, parseGzipTypes). The first
// brotli key a ConfigMap sets fills the other brotli settings with
// ingress-nginx's defaults, so that a ConfigMap without them leaves the
// settings zero (config.NginxSettings.Brotli).

// Bounds of the modules' values.
const (
	maxBrotliMinLength = 1 << 30
	// maxGeoIP2Reload bounds geoip2-autoreload-in-minutes: a week.
	maxGeoIP2Reload = 7 * 24 * 60
)

// withBrotliDefaults makes set, a setter of a brotli setting, start from
// ingress-nginx's brotli defaults when the ConfigMap set none before; g is
// unchanged on error.
func withBrotliDefaults(set setter) setter {
	return func(g *config.Global, v string) error {
		before := g.Nginx.Brotli
		if before == (config.BrotliSettings{}) {
			g.Nginx.Brotli = config.DefaultBrotli()
		}
		if err := set(g, v); err != nil {
			g.Nginx.Brotli = before
			return err
		}
		return nil
	}
}

// moduleKeys are the ConfigMap keys of the optional modules (looked up
// after globalKeys). It is never modified.
var moduleKeys = map[string]setter{
	"enable-brotli":     withBrotliDefaults(boolField(func(g *config.Global) *bool { return &g.Nginx.Brotli.Enable })),
	"brotli-level":      withBrotliDefaults(intField(func(g *config.Global) *int { return &g.Nginx.Brotli.Level }, 0, 11)),
	"brotli-min-length": withBrotliDefaults(intField(func(g *config.Global) *int { return &g.Nginx.Brotli.MinLength }, 0, maxBrotliMinLength)),
	"brotli-types":      withBrotliDefaults(field(func(g *config.Global) *string { return &g.Nginx.Brotli.Types }, parseGzipTypes)),

	"use-geoip2":                   boolField(func(g *config.Global) *bool { return &g.Nginx.GeoIP2.Enable }),
	"geoip2-autoreload-in-minutes": intField(func(g *config.Global) *int { return &g.Nginx.GeoIP2.AutoReloadMinutes }, 0, maxGeoIP2Reload),

	// ModSecurity: the defaults of every route (annotations_modsecurity.go).
	"enable-modsecurity":           boolField(func(g *config.Global) *bool { return &g.ModSecurity.Enable }),
	"enable-owasp-modsecurity-crs": boolField(func(g *config.Global) *bool { return &g.ModSecurity.CRS }),
}
