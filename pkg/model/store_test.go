package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

func deleteEvent(kind events.Kind, ns, name string) events.Event {
	return events.Event{Op: events.OpDelete, Kind: kind, Namespace: ns, Name: name}
}

func TestStoreApplyErrors(t *testing.T) {
	svc := service("default", "web")
	tests := map[string]struct {
		ev   events.Event
		want error
	}{
		"invalid op": {events.Event{Op: "patch", Kind: events.KindService, Namespace: "default", Name: "web", Object: svc}, intent.ErrInvalidOp},
		"unknown kind": {events.Event{Op: events.OpCreate, Kind: "Pod", Namespace: "default", Name: "web", Object: svc},
			intent.ErrUnknownKind},
		"unknown kind on delete": {deleteEvent("Pod", "default", "web"), intent.ErrUnknownKind},
		"wrong type": {events.Event{Op: events.OpUpdate, Kind: events.KindIngress, Namespace: "default", Name: "web", Object: svc},
			intent.ErrWrongType},
		"create without object": {events.Event{Op: events.OpCreate, Kind: events.KindService, Namespace: "default", Name: "web"},
			intent.ErrMissingObject},
		"create with a typed nil": {events.Event{Op: events.OpCreate, Kind: events.KindService, Namespace: "default", Name: "web",
			Object: (*corev1.Service)(nil)}, intent.ErrMissingObject},
		"delete without name or object": {deleteEvent(events.KindService, "", ""), intent.ErrMissingObject},
		"key mismatch": {events.Event{Op: events.OpCreate, Kind: events.KindService, Namespace: "default", Name: "other", Object: svc},
			intent.ErrKeyMismatch},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewStore(ingress.NewSource())
			if _, err := s.Apply(tc.ev); !errors.Is(err, tc.want) {
				t.Fatalf("Apply() = %v, want %v", err, tc.want)
			}
			if s.Len() != 0 {
				t.Errorf("Len() = %d after a failed Apply", s.Len())
			}
		})
	}
}

func TestStoreApplyEveryKind(t *testing.T) {
	objs := one(newIngress("default", "ing"), ingressClass("nginx", testController, false), service("default", "web"),
		slice("default", "web-1", "web", "", 80), tlsSecret(t, "default", "cert", "example"), fixtures.ConfigMap("ingress", "cfg"))
	s := newTestStore(t, objs...)
	if s.Len() != len(objs) {
		t.Fatalf("Len() = %d, want %d", s.Len(), len(objs))
	}
	present := func() []bool {
		return []bool{s.Has(events.KindIngress, "default", "ing"), s.Has(events.KindIngressClass, "", "nginx"),
			s.Has(events.KindService, "default", "web"), s.Has(events.KindEndpointSlice, "default", "web-1"),
			s.Has(events.KindSecret, "default", "cert"), s.Has(events.KindConfigMap, "ingress", "cfg")}
	}
	check.Equal(t, "present after create", present(), []bool{true, true, true, true, true, true})
	// Updates replace; a second create of the same key is an upsert too.
	for _, o := range objs {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != len(objs) {
		t.Fatalf("Len() = %d after updates, want %d", s.Len(), len(objs))
	}
	for _, o := range objs {
		ev := upsertEvent(o)
		ev.Op, ev.Object = events.OpDelete, nil
		if _, err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Apply(ev); err != nil {
			t.Fatalf("deleting twice: %v", err)
		}
	}
	check.Equal(t, "present after delete", present(), []bool{false, false, false, false, false, false})
	if s.Len() != 0 {
		t.Errorf("Len() = %d after deleting all", s.Len())
	}
}

func TestStoreKeyFromObject(t *testing.T) {
	s := NewStore(ingress.NewSource())
	if _, err := s.Apply(events.Event{Op: events.OpCreate, Kind: events.KindService, Object: service("default", "web")}); err != nil {
		t.Fatal(err)
	}
	if !s.Has(events.KindService, "default", "web") {
		t.Fatal("service not stored under its own namespace/name")
	}
	if _, err := s.Apply(events.Event{Op: events.OpDelete, Kind: events.KindService, Object: service("default", "web")}); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 0 {
		t.Fatal("delete by the object's key did not delete")
	}
}

// sliceNames lists the names of the slices the Store links to the Service.
func sliceNames(s *Store, namespace, name string) []string {
	out := []string{}
	for _, e := range s.slicesByService[intent.Key{Namespace: namespace, Name: name}] {
		out = append(out, e.name)
	}
	return out
}

// entryNames returns the names of the entries s holds, sorted.
func entryNames(s *Store) []string {
	out := []string{}
	for _, e := range s.entries {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

func TestStoreSliceIndex(t *testing.T) {
	s := newTestStore(t, slice("default", "b", "web", "", 80), slice("default", "a", "web", "", 80),
		slice("default", "c", "api", "", 80), slice("other", "d", "web", "", 80))
	check.Equal(t, "web", sliceNames(s, "default", "web"), []string{"a", "b"})
	// Relabelled: moves to the other Service.
	if _, err := s.Apply(upsertEvent(slice("default", "b", "api", "", 80))); err != nil {
		t.Fatal(err)
	}
	check.Equal(t, "web after relabel", sliceNames(s, "default", "web"), []string{"a"})
	check.Equal(t, "api after relabel", sliceNames(s, "default", "api"), []string{"b", "c"})
	if _, err := s.Apply(deleteEvent(events.KindEndpointSlice, "default", "a")); err != nil {
		t.Fatal(err)
	}
	check.Equal(t, "web after delete", sliceNames(s, "default", "web"), []string{})
	check.Equal(t, "other namespace", sliceNames(s, "other", "web"), []string{"d"})
}

func TestStoreIngressIndex(t *testing.T) {
	s := newTestStore(t,
		newIngress("default", "a", rule("a.com", prefix("/", "web", 80), prefix("/x", "api", 80)), tlsFor("cert", "a.com")),
		newIngress("default", "b", defaultBackend("web", 80), tlsFor("cert"), tlsFor("")),
		newIngress("other", "c", rule("c.com", prefix("/", "web", 80))))
	check.Equal(t, "web", s.referrers(s.entriesByService, "default", "web"), []string{"default/a", "default/b"})
	check.Equal(t, "api", s.referrers(s.entriesByService, "default", "api"), []string{"default/a"})
	check.Equal(t, "cert", s.referrers(s.entriesBySecret, "default", "cert"), []string{"default/a", "default/b"})
	// Update a: it no longer references api nor cert.
	if _, err := s.Apply(upsertEvent(newIngress("default", "a", rule("a.com", prefix("/", "web", 80))))); err != nil {
		t.Fatal(err)
	}
	check.Equal(t, "api after update", s.referrers(s.entriesByService, "default", "api"), []string{})
	check.Equal(t, "cert after update", s.referrers(s.entriesBySecret, "default", "cert"), []string{"default/b"})
	if _, err := s.Apply(deleteEvent(events.KindIngress, "default", "b")); err != nil {
		t.Fatal(err)
	}
	check.Equal(t, "web after delete", s.referrers(s.entriesByService, "default", "web"), []string{"default/a"})
	check.Equal(t, "all", entryNames(s), []string{"default/a", "other/c"})
}

func TestSliceEntry(t *testing.T) {
	fqdn := slice("default", "f", "web", "", 80, ready("example.org"))
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	v6 := slice("default", "v6", "web", "", 80, ready("2001:db8::1"), ready("2001:0db8::1"), ready("not-an-ip"))
	noPort := slice("default", "np", "web", "", 80, ready("10.0.0.1"))
	noPort.Ports[0].Port = nil
	multi := slice("default", "m", "web", "", 80, ready("10.0.0.1"))
	multi.Endpoints[0].Addresses = append(multi.Endpoints[0].Addresses, "10.0.0.2")
	tests := map[string]struct {
		slice *discoveryv1.EndpointSlice
		want  []config.Endpoint
	}{
		"fqdn slices are ignored":            {fqdn, nil},
		"ipv6 canonical, invalid ignored":    {v6, []config.Endpoint{ep("2001:db8::1", 80)}},
		"a port without number is ignored":   {noPort, nil},
		"only the first address is used":     {multi, []config.Endpoint{ep("10.0.0.1", 80)}},
		"no endpoints":                       {slice("default", "e", "web", "", 80), []config.Endpoint{}},
		"unready excluded, unknown included": {slice("default", "u", "web", "", 80, notReady("10.0.0.1"), readyUnknown("10.0.0.2")), []config.Endpoint{ep("10.0.0.2", 80)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []config.Endpoint
			if p := newSliceEntry(intent.Key{Namespace: "default", Name: tc.slice.Name}, tc.slice).port(""); p != nil {
				got = p.endpoints
				if p.sum != config.SumEndpoints(got) {
					t.Error("stored endpoints sum differs")
				}
			}
			check.Equal(t, "endpoints", got, tc.want)
		})
	}
}

func TestCanonicalAddr(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1": "10.0.0.1", "2001:db8::1": "2001:db8::1", "2001:DB8:0::1": "2001:db8::1", "::ffff:10.0.0.1": "::ffff:10.0.0.1",
	} {
		if got := canonicalAddr(in, netip.MustParseAddr(in)); got != want {
			t.Errorf("canonicalAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
