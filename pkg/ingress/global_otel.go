package ingress

import (
	"errors"
	"net/netip"
	"strconv"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Setters of the controller ConfigMap's OpenTelemetry keys
// (config.OpenTelemetry). Each value has one parser; each parser accepts
// the whole value it keeps (setGlobalKey calls them before its generic
// character check, as the operation name holds '$'). The first key a
// ConfigMap sets fills the others with ingress-nginx's defaults.

// Bounds of the exporter's values.
const (
	maxOtelQueue   = 1 << 20
	maxOtelDelayMS = 3600 * 1000
)

var errSampler = errors.New("must be AlwaysOn, AlwaysOff or TraceIdRatioBased")

// withOtelDefaults makes set start from ingress-nginx's OpenTelemetry
// defaults when the ConfigMap set none of its keys before; g is unchanged
// on error.
func withOtelDefaults(set setter) setter {
	return func(g *config.Global, v string) error {
		before := g.OpenTelemetry
		if before == (config.OpenTelemetry{}) {
			g.OpenTelemetry = config.DefaultOpenTelemetry()
		}
		if err := set(g, v); err != nil {
			g.OpenTelemetry = before
			return err
		}
		return nil
	}
}

func otelField[T any](f func(*config.OpenTelemetry) *T, parse func(string) (T, error)) setter {
	return withOtelDefaults(field(func(g *config.Global) *T { return f(&g.OpenTelemetry) }, parse))
}

func otelInt(f func(*config.OpenTelemetry) *int, lo, hi int) setter {
	return otelField(f, func(v string) (int, error) { return intent.ParseIntRange(v, lo, hi) })
}

// otelKeys are the OpenTelemetry keys (looked up before globalKeys). It is
// never modified.
var otelKeys = map[string]setter{
	"enable-opentelemetry":              otelField(func(o *config.OpenTelemetry) *bool { return &o.Enable }, parseBool),
	"opentelemetry-trust-incoming-span": otelField(func(o *config.OpenTelemetry) *bool { return &o.TrustIncoming }, parseBool),
	"opentelemetry-operation-name":      otelField(func(o *config.OpenTelemetry) *string { return &o.OperationName }, config.ParseOperationName),
	"otlp-collector-host":               otelField(func(o *config.OpenTelemetry) *string { return &o.CollectorHost }, parseCollectorHost),
	"otlp-collector-port":               otelInt(func(o *config.OpenTelemetry) *int { return &o.CollectorPort }, 1, 65535),
	"otel-service-name":                 otelField(func(o *config.OpenTelemetry) *string { return &o.ServiceName }, parseServiceName),
	"otel-sampler":                      otelField(func(o *config.OpenTelemetry) *string { return &o.Sampler }, parseSampler),
	"otel-sampler-ratio":                otelField(func(o *config.OpenTelemetry) *float64 { return &o.Ratio }, parseRatio),
	"otel-sampler-parent-based":         otelField(func(o *config.OpenTelemetry) *bool { return &o.ParentBased }, parseBool),
	"otel-max-queuesize":                otelInt(func(o *config.OpenTelemetry) *int { return &o.MaxQueueSize }, 1, maxOtelQueue),
	"otel-schedule-delay-millis":        otelInt(func(o *config.OpenTelemetry) *int { return &o.ScheduleDelayMillis }, 1, maxOtelDelayMS),
	"otel-max-export-batch-size":        otelInt(func(o *config.OpenTelemetry) *int { return &o.MaxExportBatchSize }, 1, maxOtelQueue),
}

// parseCollectorHost accepts a DNS name or an IP address ("" exports
// nothing); ingress-nginx's URL form with a scheme is refused.
func parseCollectorHost(v string) (string, error) {
	if v == "" || intent.IsDNSSubdomain(v) || isIP(v) {
		return v, nil
	}
	return "", errors.New("must be a DNS name or an IP address, without scheme or port")
}

// parseServiceName accepts printable text without quotes or backslashes.
func parseServiceName(v string) (string, error) {
	if v == "" || checkForbidden(v, false) != nil {
		return "", errors.New("must be non-empty printable text without ;{}'\"`\\ or $")
	}
	return v, nil
}

func parseSampler(v string) (string, error) {
	switch v {
	case config.SamplerAlwaysOn, config.SamplerAlwaysOff, config.SamplerRatio:
		return v, nil
	}
	return "", errSampler
}

// parseRatio accepts a decimal number from 0 to 1.
func parseRatio(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || len(v) > 20 || !(f >= 0 && f <= 1) {
		return 0, errors.New("must be a number from 0 to 1")
	}
	return f, nil
}

func isIP(v string) bool {
	a, err := netip.ParseAddr(v)
	return err == nil && a.Zone() == ""
}
