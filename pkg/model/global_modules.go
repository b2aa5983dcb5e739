package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// Setters of the ConfigMap keys of nginx's optional modules: brotli
// (enable-brotli, brotli-level, brotli-min-length, brotli-types) and GeoIP2
// (use-geoip2, geoip2-autoreload-in-minutes). Each value has one parser
// (parseBool, parseIntRange, parseGzipTypes); the first key of a module
// that a ConfigMap sets fills the module's other settings with
// ingress-nginx's defaults, so that a ConfigMap without them leaves the
// settings zero (config.NginxSettings.Brotli).

// brotliField makes the setter of the brotli setting that f points to.
func brotliField[T any](f func(*config.BrotliSettings) *T, parse func(string) (T, error)) setter {
	return func(g *config.Global, v string) error {
		x, err := parse(v)
		if err != nil {
			return err
		}
		if g.Nginx.Brotli == (config.BrotliSettings{}) {
			g.Nginx.Brotli = config.DefaultBrotli()
		}
		*f(&g.Nginx.Brotli) = x
		return nil
	}
}

// geoIP2Field makes the setter of the GeoIP2 setting that f points to.
func geoIP2Field[T any](f func(*config.GeoIP2Settings) *T, parse func(string) (T, error)) setter {
	return func(g *config.Global, v string) error {
		x, err := parse(v)
		if err == nil {
			*f(&g.Nginx.GeoIP2) = x
		}
		return err
	}
}

// intRange returns the parser of integers from lo to hi.
func intRange(lo, hi int) func(string) (int, error) {
	return func(v string) (int, error) { return parseIntRange(v, lo, hi) }
}

// maxGeoIP2Reload bounds geoip2-autoreload-in-minutes: a week.
const maxGeoIP2Reload = 7 * 24 * 60

// moduleKeys are the keys of globalKeys that this file sets.
var moduleKeys = map[string]setter{
	"enable-brotli":     brotliField(func(b *config.BrotliSettings) *bool { return &b.Enable }, parseBool),
	"brotli-level":      brotliField(func(b *config.BrotliSettings) *int { return &b.Level }, intRange(0, 11)),
	"brotli-min-length": brotliField(func(b *config.BrotliSettings) *int { return &b.MinLength }, intRange(0, maxGlobalCount)),
	"brotli-types":      brotliField(func(b *config.BrotliSettings) *string { return &b.Types }, parseGzipTypes),

	"use-geoip2":                   geoIP2Field(func(g *config.GeoIP2Settings) *bool { return &g.Enable }, parseBool),
	"geoip2-autoreload-in-minutes": geoIP2Field(func(g *config.GeoIP2Settings) *int { return &g.AutoReloadMinutes }, intRange(0, maxGeoIP2Reload)),
}
