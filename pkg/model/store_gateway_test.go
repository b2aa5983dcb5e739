package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// viaWire encodes ev and decodes it again, as the stream carries it.
func viaWire(t *testing.T, ev events.Event) events.Event {
	t.Helper()
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatalf("Encode %s: %v", ev.Kind, err)
	}
	got, err := events.Decode(data)
	if err != nil {
		t.Fatalf("Decode %s: %v", ev.Kind, err)
	}
	return got
}

// TestStoreGatewayRoundTrip: every Gateway API kind, through the wire
// format, is held by the Store (the Gateway API source keeps its objects)
// until its delete.
func TestStoreGatewayRoundTrip(t *testing.T) {
	objs := []runtime.Object{eventstest.GatewayClass(), eventstest.Gateway(), eventstest.HTTPRoute(), eventstest.ReferenceGrant()}
	s := newGatewayStore()
	for _, o := range objs {
		if _, err := s.Apply(viaWire(t, eventstest.Of(events.OpCreate, o))); err != nil {
			t.Fatalf("Apply %T: %v", o, err)
		}
		if ev := eventstest.Of(events.OpCreate, o); !s.Has(ev.Kind, ev.Namespace, ev.Name) {
			t.Errorf("%s %s not held", ev.Kind, ev.Key())
		}
	}
	if s.Len() != len(objs) {
		t.Fatalf("Len() = %d, want %d", s.Len(), len(objs))
	}
	for _, o := range objs {
		ev := eventstest.Of(events.OpDelete, o)
		ev.Object = nil
		if _, err := s.Apply(viaWire(t, ev)); err != nil {
			t.Fatal(err)
		}
		if s.Has(ev.Kind, ev.Namespace, ev.Name) {
			t.Errorf("%s %s still held after its delete", ev.Kind, ev.Key())
		}
	}
	if s.Len() != 0 {
		t.Errorf("Len() = %d after every delete", s.Len())
	}
}

// newGatewayStore is a Store with the Ingress and Gateway API sources.
func newGatewayStore() *Store {
	return NewStore(ingress.NewSource(), gateway.NewSource(eventstest.GatewayController))
}

// TestStoreGatewayErrors: an object of another kind and a typed nil are
// refused, and leave the Store empty.
func TestStoreGatewayErrors(t *testing.T) {
	s := newGatewayStore()
	wrong := events.Event{Op: events.OpCreate, Kind: events.KindHTTPRoute, Namespace: "shop", Name: "edge", Object: eventstest.Gateway()}
	if _, err := s.Apply(wrong); !errors.Is(err, intent.ErrWrongType) {
		t.Errorf("Apply(a Gateway as HTTPRoute) = %v, want ErrWrongType", err)
	}
	typedNil := events.Event{Op: events.OpUpdate, Kind: events.KindGateway, Namespace: "shop", Name: "edge", Object: (*gatewayv1.Gateway)(nil)}
	if _, err := s.Apply(typedNil); !errors.Is(err, intent.ErrMissingObject) {
		t.Errorf("Apply(a typed nil Gateway) = %v, want ErrMissingObject", err)
	}
	if s.Len() != 0 {
		t.Errorf("Len() = %d after failed Applies", s.Len())
	}
}

// TestStoreGatewaySecretIsNotUsed: a Secret that only a Gateway names
// cannot change the Configuration while HTTPS listeners are not served.
func TestStoreGatewaySecretIsNotUsed(t *testing.T) {
	s := newGatewayStore()
	if _, err := s.Apply(eventstest.Of(events.OpCreate, eventstest.Gateway())); err != nil {
		t.Fatal(err)
	}
	eff, err := s.Apply(upsertEvent(&corev1.Secret{ObjectMeta: eventstest.Secret().ObjectMeta, Type: corev1.SecretTypeTLS}))
	if err != nil {
		t.Fatal(err)
	}
	if s.CanChange(eff, testOptions()) {
		t.Error("CanChange = true for a Secret only a Gateway names")
	}
}
