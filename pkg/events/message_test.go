package events_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// TestDecodeMessage: a message decodes with its stream fields when its
// subject names the object of its envelope, and is malformed otherwise.
func TestDecodeMessage(t *testing.T) {
	ev := eventstest.Of(events.OpUpdate, eventstest.Service())
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	subject := events.Subject("ingress", ev.Kind, ev.Namespace, ev.Name)
	at := time.Unix(1_767_225_800, 0)
	got, err := events.DecodeMessage("ingress", subject, data, 7, at)
	if err != nil || got.Sequence != 7 || got.Subject != subject || !got.PublishedAt.Equal(at) || got.Name != ev.Name {
		t.Fatalf("DecodeMessage = %+v, %v; want %s at seq 7", got, err, subject)
	}
	for _, tc := range []struct{ name, subject string }{
		{"other object", events.Subject("ingress", ev.Kind, ev.Namespace, "other")},
		{"other kind", events.Subject("ingress", events.KindConfigMap, ev.Namespace, ev.Name)},
		{"other prefix", events.Subject("other", ev.Kind, ev.Namespace, ev.Name)},
		{"not an object subject", "ingress.service.shop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := events.DecodeMessage("ingress", tc.subject, data, 7, at); !errors.Is(err, events.ErrMalformed) {
				t.Errorf("DecodeMessage on %s = %v, want ErrMalformed", tc.subject, err)
			}
		})
	}
}
