package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"errors"
	"reflect"
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
// format, is stored as it was published, replaced by an update and removed
// by a delete, and never changes the Configuration (nothing builds from
// them yet).
func TestStoreGatewayRoundTrip(t *testing.T) {
	objs := []runtime.Object{eventstest.GatewayClass(), eventstest.Gateway(), eventstest.HTTPRoute(), eventstest.ReferenceGrant()}
	s := NewStore(ingress.NewSource())
	before := Build(s, testOptions()).Checksum
	for _, o := range objs {
		eff, err := s.Apply(viaWire(t, eventstest.Of(events.OpCreate, o)))
		if err != nil {
			t.Fatalf("Apply %T: %v", o, err)
		}
		if s.CanChange(eff, testOptions()) {
			t.Errorf("CanChange(%s) = true, want false", eff.Kind)
		}
	}
	if s.Len() != len(objs) {
		t.Fatalf("Len() = %d, want %d", s.Len(), len(objs))
	}
	got := []runtime.Object{s.GatewayClass("ingress-sync"), s.Gateway("shop", "edge"), s.HTTPRoute("shop", "web"), s.ReferenceGrant("canary", "from-shop")}
	for i := range objs {
		if !reflect.DeepEqual(got[i], objs[i]) {
			t.Errorf("stored %T differs from the published one:\n got %#v\nwant %#v", objs[i], got[i], objs[i])
		}
	}
	if after := Build(s, testOptions()).Checksum; after != before {
		t.Errorf("Build checksum changed from %s to %s with Gateway API inputs only", before, after)
	}
	route := eventstest.HTTPRoute()
	route.Spec.Hostnames = []gatewayv1.Hostname{"other.example.com"}
	if _, err := s.Apply(viaWire(t, eventstest.Of(events.OpUpdate, route))); err != nil {
		t.Fatal(err)
	}
	if h := s.HTTPRoute("shop", "web").Spec.Hostnames; len(h) != 1 || h[0] != "other.example.com" {
		t.Errorf("hostnames after update = %v", h)
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

// TestStoreGatewayErrors: an object of another kind and a typed nil are
// refused, and leave the Store empty.
func TestStoreGatewayErrors(t *testing.T) {
	s := NewStore(ingress.NewSource())
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

func TestGatewayOurs(t *testing.T) {
	ours, foreign := eventstest.GatewayClass(), eventstest.GatewayClass()
	foreign.Name, foreign.Spec.ControllerName = "other", "example.com/other"
	classes := map[string]*gatewayv1.GatewayClass{ours.Name: ours, foreign.Name: foreign}
	class := func(name string) *gatewayv1.GatewayClass { return classes[name] }
	gw := eventstest.Gateway()
	for _, tc := range []struct {
		className, controller string
		want                  bool
	}{
		{"ingress-sync", eventstest.GatewayController, true},
		{"ingress-sync", "example.com/other", false},
		{"other", eventstest.GatewayController, false},
		{"missing", eventstest.GatewayController, false},
		{"ingress-sync", "", false},
	} {
		gw.Spec.GatewayClassName = gatewayv1.ObjectName(tc.className)
		if got := GatewayOurs(gw, class, tc.controller); got != tc.want {
			t.Errorf("GatewayOurs(class %q, controller %q) = %v, want %v", tc.className, tc.controller, got, tc.want)
		}
	}
}

func TestGatewaySecretRefs(t *testing.T) {
	gw := eventstest.Gateway()
	tls := gw.Spec.Listeners[1].TLS
	tls.CertificateRefs = append(tls.CertificateRefs,
		gatewayv1.SecretObjectReference{Name: "shop-tls"}, // twice
		gatewayv1.SecretObjectReference{Kind: new(gatewayv1.Kind("ConfigMap")), Name: "not-a-secret"},
		gatewayv1.SecretObjectReference{Group: new(gatewayv1.Group("example.com")), Kind: new(gatewayv1.Kind("Secret")), Name: "other-group"})
	want := []SecretRef{{"shop", "shop-tls"}, {"certs", "wildcard"}}
	if got := GatewaySecretRefs(gw); !reflect.DeepEqual(got, want) {
		t.Errorf("GatewaySecretRefs = %v, want %v", got, want)
	}
}

func TestReferenceGranted(t *testing.T) {
	grant := eventstest.ReferenceGrant() // in canary: Gateways and HTTPRoutes of shop to every Secret and Service api-canary
	grants := []*gatewayv1.ReferenceGrant{grant}
	gwFrom := GrantFrom{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: "shop"}
	secret := func(ns, name string) GrantTo { return GrantTo{Kind: "Secret", Namespace: ns, Name: name} }
	for _, tc := range []struct {
		name string
		from GrantFrom
		to   GrantTo
		want bool
	}{
		{"same namespace needs no grant", gwFrom, secret("shop", "x"), true},
		{"any Secret of canary", gwFrom, secret("canary", "x"), true},
		{"named Service", GrantFrom{gatewayv1.GroupName, "HTTPRoute", "shop"}, GrantTo{"", "Service", "canary", "api-canary"}, true},
		{"other Service", GrantFrom{gatewayv1.GroupName, "HTTPRoute", "shop"}, GrantTo{"", "Service", "canary", "db"}, false},
		{"other namespace refers", GrantFrom{gatewayv1.GroupName, "Gateway", "evil"}, secret("canary", "x"), false},
		{"grant of another namespace", gwFrom, secret("certs", "x"), false},
		{"other kind refers", GrantFrom{gatewayv1.GroupName, "GRPCRoute", "shop"}, secret("canary", "x"), false},
		{"other group referred", gwFrom, GrantTo{"example.com", "Secret", "canary", "x"}, false},
	} {
		if got := ReferenceGranted(grants, tc.from, tc.to); got != tc.want {
			t.Errorf("%s: ReferenceGranted = %v, want %v", tc.name, got, tc.want)
		}
	}
	if ReferenceGranted(nil, gwFrom, secret("canary", "x")) {
		t.Error("granted without any grant")
	}
}

// TestStoreGatewaySecretIsNotUsed: a Secret that only a Gateway names
// cannot change the Configuration while nothing builds from Gateways.
func TestStoreGatewaySecretIsNotUsed(t *testing.T) {
	s := newTestStore(t)
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
