package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// DecodeOptions configure DecodePayload.
type DecodeOptions struct {
	// ShowSecrets prints Secret data (base64, as Kubernetes does) instead
	// of "<redacted N bytes>".
	ShowSecrets bool
}

// decodedEvent is the JSON form of an event envelope, in wire order.
type decodedEvent struct {
	SchemaVersion   int             `json:"schemaVersion"`
	Op              events.Op       `json:"op"`
	Kind            events.Kind     `json:"kind"`
	Namespace       string          `json:"namespace,omitempty"`
	Name            string          `json:"name"`
	UID             string          `json:"uid,omitempty"`
	ResourceVersion string          `json:"resourceVersion,omitempty"`
	ObservedAt      *time.Time      `json:"observedAt,omitempty"`
	WatcherID       string          `json:"watcherId,omitempty"`
	Object          json.RawMessage `json:"object"`
}

// redactedSecret is a Secret whose data values are replaced by their size.
// Its Data and StringData shadow those of the embedded Secret in JSON.
type redactedSecret struct {
	*corev1.Secret
	Data       map[string]string `json:"data,omitempty"`
	StringData map[string]string `json:"stringData,omitempty"`
}

// DecodePayload turns one message payload (an encoded event) into indented
// JSON: the envelope, and the object as Kubernetes writes it, with the
// values of a Secret's data redacted unless opts.ShowSecrets. A payload that
// is not an event is an error wrapping ErrMalformedPayload (and the events
// sentinel that says why); nothing is returned with it.
func DecodePayload(payload []byte, opts DecodeOptions) ([]byte, error) {
	if len(bytes.TrimSpace(payload)) == 0 {
		return nil, fmt.Errorf("%w: empty payload (a message body is expected on stdin)", ErrMalformedPayload)
	}
	ev, err := events.Decode(payload)
	if err != nil {
		return nil, fmt.Errorf("%w (not an ingress-sync event; the message body is expected on stdin): %w", ErrMalformedPayload, err)
	}
	obj, err := objectJSON(ev.Object, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %w", ErrMalformedPayload, ev.Kind, ev.Key(), err)
	}
	out := decodedEvent{
		SchemaVersion: ev.SchemaVersion, Op: ev.Op, Kind: ev.Kind, Namespace: ev.Namespace, Name: ev.Name,
		UID: ev.UID, ResourceVersion: ev.ResourceVersion, WatcherID: ev.WatcherID, Object: obj,
	}
	if !ev.ObservedAt.IsZero() {
		t := ev.ObservedAt.UTC()
		out.ObservedAt = &t
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// objectJSON is the JSON of obj ("null" for none), Secret data redacted.
func objectJSON(obj runtime.Object, opts DecodeOptions) (json.RawMessage, error) {
	if obj == nil {
		return json.RawMessage("null"), nil
	}
	var v any = obj
	if s, ok := obj.(*corev1.Secret); ok && !opts.ShowSecrets {
		v = redactedSecret{Secret: s, Data: redact(s.Data), StringData: redact(s.StringData)}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// redact replaces each value by its size.
func redact[V []byte | string](data map[string]V) map[string]string {
	if len(data) == 0 {
		return nil
	}
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[k] = fmt.Sprintf("<redacted %d bytes>", len(v))
	}
	return out
}
