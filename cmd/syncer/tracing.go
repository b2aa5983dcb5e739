package main

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/tracing"
)

// newTracing returns the exporter of the spans nginx records (pkg/tracing),
// reading the running Configuration's OpenTelemetry keys.
func newTracing(reg prometheus.Registerer, ngx dataPlane, log *slog.Logger) (*tracing.Exporter, error) {
	return tracing.New(tracing.Options{
		Fetch: ngx.Client().Spans, Registerer: reg, Logger: log,
		Settings: func() config.OpenTelemetry {
			if c := ngx.Running(); c != nil {
				return c.Global.OpenTelemetry
			}
			return config.OpenTelemetry{}
		},
	})
}
