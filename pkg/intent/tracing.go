package intent

// TracingSettings are the OpenTelemetry annotations of one Ingress
// (enable-opentelemetry, opentelemetry-trust-incoming-span,
// opentelemetry-operation-name): nil and "" where the Ingress does not set
// them, so that the build takes the ConfigMap's (config.OpenTelemetry's
// LocationTracing).
type TracingSettings struct {
	Enable        *bool
	TrustIncoming *bool
	OperationName string
}
