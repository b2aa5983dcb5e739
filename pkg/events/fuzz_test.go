package events_test

import (
	"errors"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// FuzzDecode: any input decodes to an event or to an error of one of the
// two decode classes, and never panics. A decoded event encodes again to an
// event that decodes to the same envelope.
func FuzzDecode(f *testing.F) {
	for _, tc := range eventstest.Events() {
		data, err := events.Encode(tc.Event)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte{0x81, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := events.Decode(data)
		if err != nil {
			if !errors.Is(err, events.ErrMalformed) && !errors.Is(err, events.ErrSchemaVersion) {
				t.Fatalf("Decode error %v wraps neither ErrMalformed nor ErrSchemaVersion", err)
			}
			return
		}
		again, err := events.Encode(ev)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		if _, err := events.Decode(again); err != nil {
			t.Fatalf("re-encoded event does not decode: %v", err)
		}
	})
}

// FuzzSubject: every valid namespace and name survives Subject and
// ParseSubject unchanged.
func FuzzSubject(f *testing.F) {
	f.Add("shop", "www.example.com")
	f.Add("", "nginx")
	f.Fuzz(func(t *testing.T, ns, name string) {
		ev := events.Event{Op: events.OpDelete, Kind: events.KindSecret, Namespace: ns, Name: name}
		if ev.Validate() != nil {
			return
		}
		subj := events.Subject("ingress", ev.Kind, ns, name)
		k, gotNS, gotName, err := events.ParseSubject("ingress", subj)
		if err != nil || k != ev.Kind || gotNS != ns || gotName != name {
			t.Fatalf("ParseSubject(%q) = %q, %q, %q, %v; want %q, %q", subj, k, gotNS, gotName, err, ns, name)
		}
	})
}
