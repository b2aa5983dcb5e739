package config

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Samplers of otel-sampler: every request, none, or a ratio of the trace
// ids (otel-sampler-ratio).
const (
	SamplerAlwaysOn  = "AlwaysOn"
	SamplerAlwaysOff = "AlwaysOff"
	SamplerRatio     = "TraceIdRatioBased"
)

// Tracing is a location's OpenTelemetry tracing (enable-opentelemetry and
// its keys): a server span per request, its W3C traceparent sent to the
// backend. nil: the location is not traced. Lua decides and records each
// span (lua/tracing.lua); the syncer exports them (pkg/tracing). Every
// field is route data: a change pushes routes, never reloads nginx.
type Tracing struct {
	// TrustIncoming takes the request's traceparent as the parent span
	// (opentelemetry-trust-incoming-span); otherwise a new trace starts.
	TrustIncoming bool `json:"trustIncoming,omitempty"`
	// OperationName is the span name, validated by
	// intent.ParseOperationName: literal text and the variables it allows;
	// "" names the span after the location's path, as the nginx module
	// names it after its location.
	OperationName string `json:"operationName,omitempty"`
	// Sampler is one of the Sampler constants; Ratio its ratio (0 to 1)
	// for SamplerRatio; ParentBased follows a trusted parent's decision.
	Sampler     string  `json:"sampler"`
	Ratio       float64 `json:"ratio,omitempty"`
	ParentBased bool    `json:"parentBased,omitempty"`
}

// OpenTelemetry holds the controller ConfigMap's OpenTelemetry keys. The
// zero value is tracing off with nothing set; the first key a ConfigMap
// sets fills the others with ingress-nginx's defaults (DefaultOpenTelemetry),
// so that the checksums of Configurations without them stay as they were.
// Enable, TrustIncoming and OperationName are the defaults of the
// annotations of the same names, the sampler is every route's (routes
// only); the collector and its queue are the syncer's exporter's. None
// is in nginx.conf: no change of them reloads nginx.
type OpenTelemetry struct {
	Enable        bool   `json:"enable,omitempty"`
	TrustIncoming bool   `json:"trustIncoming,omitempty"`
	OperationName string `json:"operationName,omitempty"`
	Sampler       string `json:"sampler,omitempty"`
	// Ratio is otel-sampler-ratio, from 0 to 1.
	Ratio       float64 `json:"ratio,omitempty"`
	ParentBased bool    `json:"parentBased,omitempty"`
	// CollectorHost is otlp-collector-host (a DNS name or IP address, ""
	// exports nothing), CollectorPort otlp-collector-port: OTLP/gRPC.
	CollectorHost string `json:"collectorHost,omitempty"`
	CollectorPort int    `json:"collectorPort,omitempty"`
	// ServiceName is the service.name of the spans' resource.
	ServiceName string `json:"serviceName,omitempty"`
	// MaxQueueSize spans wait for export at most (more are dropped and
	// counted); ScheduleDelayMillis between two exports;
	// MaxExportBatchSize spans in one export.
	MaxQueueSize        int `json:"maxQueueSize,omitempty"`
	ScheduleDelayMillis int `json:"scheduleDelayMillis,omitempty"`
	MaxExportBatchSize  int `json:"maxExportBatchSize,omitempty"`
}

// DefaultOpenTelemetry returns ingress-nginx v1.15's defaults (tracing off).
func DefaultOpenTelemetry() OpenTelemetry {
	return OpenTelemetry{
		TrustIncoming: true, Sampler: SamplerAlwaysOn, Ratio: 0.01, ParentBased: true,
		CollectorPort: 4317, ServiceName: "nginx",
		MaxQueueSize: 2048, ScheduleDelayMillis: 5000, MaxExportBatchSize: 512,
	}
}

// LocationTracing returns the tracing of a location whose Ingress says
// enable (nil: not traced), trust and name (nil, "": the ConfigMap's).
func (o *OpenTelemetry) LocationTracing(enable, trust *bool, name string) *Tracing {
	on := o.Enable
	if enable != nil {
		on = *enable
	}
	if !on {
		return nil
	}
	d := *o
	if d == (OpenTelemetry{}) {
		d = DefaultOpenTelemetry()
	}
	t := &Tracing{TrustIncoming: d.TrustIncoming, OperationName: d.OperationName,
		Sampler: d.Sampler, ParentBased: d.ParentBased}
	if t.Sampler == SamplerRatio {
		t.Ratio = d.Ratio
	}
	if trust != nil {
		t.TrustIncoming = *trust
	}
	if name != "" {
		t.OperationName = name
	}
	return t
}

// canonical writes the OpenTelemetry keys for the checksum, only when set.
func (o *OpenTelemetry) canonical(w *canonicalWriter) {
	if *o == (OpenTelemetry{}) {
		return
	}
	w.str("opentelemetry")
	w.bool(o.Enable)
	w.bool(o.TrustIncoming)
	w.str(o.OperationName)
	w.str(o.Sampler)
	w.str(strconv.FormatFloat(o.Ratio, 'g', -1, 64))
	w.bool(o.ParentBased)
	w.str(o.CollectorHost)
	w.int(int64(o.CollectorPort))
	w.str(o.ServiceName)
	w.int(int64(o.MaxQueueSize))
	w.int(int64(o.ScheduleDelayMillis))
	w.int(int64(o.MaxExportBatchSize))
}

// tracing writes a location's Tracing: nothing when nil, so that the
// encodings of locations without it stay as they were.
func (w *canonicalWriter) tracing(t *Tracing) {
	if t == nil {
		return
	}
	w.str("tracing")
	w.bool(t.TrustIncoming)
	w.str(t.OperationName)
	w.str(t.Sampler)
	w.str(strconv.FormatFloat(t.Ratio, 'g', -1, 64))
	w.bool(t.ParentBased)
}

// OperationNameVariables are the nginx variables a span name may hold
// (opentelemetry-operation-name "HTTP $request_method $uri"): Lua reads
// them when the request ends.
var OperationNameVariables = []string{"host", "request_method", "request_uri", "scheme", "uri"}

// MaxOperationName bounds the length of a span name template.
const MaxOperationName = 256

// ErrOperationName is the error of a span name ParseOperationName refuses.
var ErrOperationName = errors.New("must be letters, digits, spaces and -_./: with $host, $request_method, $request_uri, $scheme or $uri")

// ParseOperationName validates a span name template: literal letters,
// digits, spaces and -_./: and the variables of OperationNameVariables
// written $name (lua/tracing.lua checks the same).
func ParseOperationName(v string) (string, error) {
	if len(v) > MaxOperationName {
		return "", ErrOperationName
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '$' {
			if !operationNameChar(c) {
				return "", ErrOperationName
			}
			continue
		}
		j := i + 1
		for j < len(v) && (v[j] == '_' || v[j] >= 'a' && v[j] <= 'z') {
			j++
		}
		if !slices.Contains(OperationNameVariables, v[i+1:j]) {
			return "", ErrOperationName
		}
		i = j - 1
	}
	return v, nil
}

func operationNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" -_./:", c) >= 0
}
