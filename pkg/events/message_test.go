package events_test

import (
	"bytes"
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

// TestDecodeMessageOfAKindNotKnown: a message of a kind this build does
// not know (as the Namespaces are to a syncer older than them) is an
// error wrapping ErrMalformed, which the consumer counts and skips.
func TestDecodeMessageOfAKindNotKnown(t *testing.T) {
	data, err := events.Encode(eventstest.Of(events.OpUpdate, eventstest.Namespace()))
	if err != nil {
		t.Fatal(err)
	}
	future := bytes.Replace(data, []byte(events.KindNamespace), []byte("Frobnicat"), 1)
	if bytes.Equal(future, data) {
		t.Fatal("the kind is not in the payload")
	}
	_, err = events.DecodeMessage("ingress", "ingress.frobnicat._.shop", future, 7, time.Unix(1_767_225_800, 0))
	if !errors.Is(err, events.ErrMalformed) {
		t.Errorf("DecodeMessage = %v, want ErrMalformed", err)
	}
}
