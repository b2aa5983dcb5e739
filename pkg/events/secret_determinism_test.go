package events_test

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestEncodeSecretIsDeterministic: map[string][]byte (Secret data) must be
// written in sorted key order, or equal Secrets give different bytes (and
// digests and dedup ids built on them flap).
func TestEncodeSecretIsDeterministic(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tls", UID: "u", ResourceVersion: "1"},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey: []byte("cert"), corev1.TLSPrivateKeyKey: []byte("key"), "ca.crt": []byte("ca"),
		},
	}
	ev := events.Event{Op: events.OpCreate, Kind: events.KindSecret, Namespace: "ns", Name: "tls", UID: "u",
		ResourceVersion: "1", SchemaVersion: events.SchemaVersion, Object: s}
	first, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		got, err := events.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("encoding %d differs from the first", i)
		}
	}
}
