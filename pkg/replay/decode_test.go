package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// decodedOf parses DecodePayload's output: the envelope, and the object
// into a fresh object of the event's kind.
func decodedOf(t *testing.T, out []byte, obj runtime.Object) (decodedEvent, runtime.Object) {
	t.Helper()
	var d decodedEvent
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if obj == nil {
		return d, nil
	}
	got := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(d.Object, got); err != nil {
		t.Fatalf("object: %v", err)
	}
	return d, got
}

// TestDecodeRoundTrip: Encode, then decode to JSON, gives back every field
// of the envelope and the object.
func TestDecodeRoundTrip(t *testing.T) {
	observed := time.Date(2026, 11, 1, 3, 12, 4, 123000000, time.UTC)
	objects := []runtime.Object{
		fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80)), fixtures.TLS("shop-tls", "shop.example.com"),
			fixtures.Annotation("nginx.ingress.kubernetes.io/load-balance", "ewma")),
		fixtures.IngressClass("nginx", testController, true),
		fixtures.Service("shop", "web", 80, 443),
		fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1", "10.0.0.2"),
		&corev1.ConfigMap{ObjectMeta: fixtures.Service("kube-system", "ingress-sync").ObjectMeta, Data: map[string]string{"ssl-redirect": "false"}},
	}
	for _, obj := range objects {
		ev := events.Event{Op: events.OpUpdate, Kind: events.KindOf(obj), UID: "uid-1", ResourceVersion: "42", ObservedAt: observed,
			WatcherID: "watcher-0", Object: obj}
		m := obj.(metav1.Object)
		ev.Namespace, ev.Name = m.GetNamespace(), m.GetName()
		t.Run(string(ev.Kind), func(t *testing.T) {
			out, err := DecodePayload(mustEncode(t, ev), DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			d, got := decodedOf(t, out, obj)
			if d.SchemaVersion != events.SchemaVersion || d.Op != ev.Op || d.Kind != ev.Kind || d.Namespace != ev.Namespace ||
				d.Name != ev.Name || d.UID != ev.UID || d.ResourceVersion != ev.ResourceVersion || d.WatcherID != ev.WatcherID ||
				d.ObservedAt == nil || !d.ObservedAt.Equal(observed) {
				t.Errorf("envelope %+v does not match %+v", d, ev)
			}
			if !apiequality.Semantic.DeepEqual(got, obj) {
				t.Errorf("object differs:\n got %#v\nwant %#v", got, obj)
			}
		})
	}
}

func TestDecodeSecret(t *testing.T) {
	secret := tlsSecret(t, "shop", "shop-tls")
	ev := events.Event{Op: events.OpCreate, Kind: events.KindSecret, Namespace: "shop", Name: "shop-tls", Object: secret}
	payload := mustEncode(t, ev)

	out, err := DecodePayload(payload, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var redacted struct {
		Object struct {
			Type string            `json:"type"`
			Data map[string]string `json:"data"`
		} `json:"object"`
	}
	if err := json.Unmarshal(out, &redacted); err != nil {
		t.Fatal(err)
	}
	for k, v := range secret.Data {
		if want := "<redacted " + strconv.Itoa(len(v)) + " bytes>"; redacted.Object.Data[k] != want {
			t.Errorf("data[%s] = %q, want %q", k, redacted.Object.Data[k], want)
		}
	}
	if redacted.Object.Type != string(corev1.SecretTypeTLS) {
		t.Errorf("type = %q: the rest of the Secret must stay", redacted.Object.Type)
	}
	golden(t, "decode-secret.json", out)

	out, err = DecodePayload(payload, DecodeOptions{ShowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	_, got := decodedOf(t, out, secret)
	if !apiequality.Semantic.DeepEqual(got, secret) {
		t.Errorf("with ShowSecrets the Secret must round-trip; got %#v", got)
	}
	if want := base64.StdEncoding.EncodeToString(secret.Data[corev1.TLSCertKey]); !json.Valid(out) || !bytes.Contains(out, []byte(want)) {
		t.Errorf("with ShowSecrets tls.crt is not shown in base64")
	}
}

func TestDecodeMalformed(t *testing.T) {
	valid := mustEncode(t, events.Event{Op: events.OpDelete, Kind: events.KindService, Namespace: "a", Name: "b"})
	tests := []struct {
		name    string
		payload []byte
	}{
		{"empty", nil},
		{"blank", []byte("\n")},
		{"text", []byte("hello")},
		{"json", []byte(`{"op":"create"}`)},
		{"truncated", valid[:len(valid)-3]},
		{"trailing bytes", append(append([]byte{}, valid...), 0xc0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecodePayload(tc.payload, DecodeOptions{})
			if !errors.Is(err, ErrMalformedPayload) || out != nil {
				t.Errorf("DecodePayload = %q, %v; want nothing and ErrMalformedPayload", out, err)
			}
		})
	}
	if out, err := DecodePayload(valid, DecodeOptions{}); err != nil || !bytes.Contains(out, []byte(`"object": null`)) {
		t.Errorf("a delete without object = %s, %v; want object null", out, err)
	}
}
