package ingress

import (
	"errors"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// errAnnotationOperationName: ingress-nginx takes letters, digits, '_' and
// '-' in the annotation (the ConfigMap's key also takes variables).
var errAnnotationOperationName = errors.New("may only contain letters, digits, '_' and '-'")

// parseTracingAnnotation parses enable-opentelemetry,
// opentelemetry-trust-incoming-span and opentelemetry-operation-name into
// the Ingress's TracingSettings; the build applies them over the
// ConfigMap's (config.OpenTelemetry.LocationTracing).
func parseTracingAnnotation(a *intent.Settings, _ *parseState, name, v string) (err error) {
	t := &a.Tracing
	switch name {
	case "enable-opentelemetry":
		t.Enable, err = parseBoolPtr(v)
	case "opentelemetry-trust-incoming-span":
		t.TrustIncoming, err = parseBoolPtr(v)
	case "opentelemetry-operation-name":
		t.OperationName, err = parseAnnotationOperationName(v)
	default:
		return errUnsupported
	}
	return err
}

// parseAnnotationOperationName accepts ingress-nginx's annotation values:
// letters, digits, '_' and '-' (at most config.MaxOperationName).
func parseAnnotationOperationName(v string) (string, error) {
	if len(v) > config.MaxOperationName {
		return "", errAnnotationOperationName
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !intent.IsAlnum(c) && c != '_' && c != '-' {
			return "", errAnnotationOperationName
		}
	}
	return v, nil
}
