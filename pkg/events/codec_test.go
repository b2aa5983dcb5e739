package events_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, tc := range eventstest.Events() {
		t.Run(tc.Name, func(t *testing.T) {
			data, err := events.Encode(tc.Event)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			got, err := events.Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got.Object, tc.Event.Object) {
				t.Errorf("object differs after round trip:\n got %#v\nwant %#v", got.Object, tc.Event.Object)
			}
			if !equality.Semantic.DeepEqual(got.Object, tc.Event.Object) {
				t.Errorf("object not semantically equal after round trip")
			}
			assertEnvelope(t, got, tc.Event)
		})
	}
}

// assertEnvelope compares the envelope fields of a decoded event.
func assertEnvelope(t *testing.T, got, want events.Event) {
	t.Helper()
	if !got.ObservedAt.Equal(want.ObservedAt) {
		t.Errorf("ObservedAt = %v, want %v", got.ObservedAt, want.ObservedAt)
	}
	got.ObservedAt = want.ObservedAt
	got.Object, want.Object = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("envelope = %+v, want %+v", got, want)
	}
}

func TestEncodeIsDeterministic(t *testing.T) {
	ev := eventstest.Of(events.OpUpdate, eventstest.ConfigMap())
	first, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := events.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatal("two encodings of the same event differ")
		}
	}
}

// TestEncodeGolden pins the wire format, as a hex dump: a change of these
// bytes is a change of the schema that old syncers must be able to read.
func TestEncodeGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   events.Event
	}{
		{"service", eventstest.Of(events.OpCreate, eventstest.Service())},
		{"delete-bare", events.Event{Op: events.OpDelete, Kind: events.KindIngressClass, Name: "old", UID: "u1", ResourceVersion: "9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := events.Encode(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, []byte(hex.Dump(data)),
				"the encoding changed: keep old payloads decodable (or bump SchemaVersion).")
		})
	}
}

func TestEncodeRejectsInvalidEvents(t *testing.T) {
	svc := eventstest.Service()
	for _, tc := range []struct {
		name string
		ev   events.Event
	}{
		{"unknown op", events.Event{Op: "patch", Kind: events.KindService, Namespace: "a", Name: "b", Object: svc}},
		{"unknown kind", events.Event{Op: events.OpCreate, Kind: "Pod", Namespace: "a", Name: "b"}},
		{"no name", events.Event{Op: events.OpDelete, Kind: events.KindService, Namespace: "a"}},
		{"name with underscore", events.Event{Op: events.OpDelete, Kind: events.KindService, Namespace: "a", Name: "b_c"}},
		{"name with space", events.Event{Op: events.OpDelete, Kind: events.KindService, Namespace: "a", Name: "b c"}},
		{"wildcard namespace", events.Event{Op: events.OpDelete, Kind: events.KindService, Namespace: "*", Name: "b"}},
		{"create without object", events.Event{Op: events.OpCreate, Kind: events.KindService, Namespace: "a", Name: "b"}},
		{"typed nil object", events.Event{Op: events.OpUpdate, Kind: events.KindService, Namespace: "a", Name: "b", Object: (*corev1.Service)(nil)}},
		{"object of other kind", events.Event{Op: events.OpUpdate, Kind: events.KindSecret, Namespace: svc.Namespace, Name: svc.Name, Object: svc}},
		{"object of other name", events.Event{Op: events.OpUpdate, Kind: events.KindService, Namespace: svc.Namespace, Name: "other", Object: svc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := events.Encode(tc.ev); !errors.Is(err, events.ErrInvalidEvent) {
				t.Errorf("Encode error = %v, want ErrInvalidEvent", err)
			}
		})
	}
}

// envelope encodes a hand-made envelope map with the wire encoder settings.
func envelope(t *testing.T, m map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetCustomStructTag("json")
	enc.SetSortMapKeys(true)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeErrors(t *testing.T) {
	valid, err := events.Encode(eventstest.Of(events.OpUpdate, eventstest.Service()))
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]any{"schemaVersion": 1, "op": "delete", "kind": "Service", "namespace": "a", "name": "b"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, events.ErrMalformed},
		{"not a map", []byte{0x93, 1, 2, 3}, events.ErrMalformed},
		{"truncated", valid[:len(valid)-3], events.ErrMalformed},
		{"trailing bytes", append(bytes.Clone(valid), 0xc0), events.ErrMalformed},
		{"huge array header", []byte{0x81, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff}, events.ErrMalformed},
		{"invalid code", []byte{0xc1}, events.ErrMalformed},
		{"newer schema", envelope(t, with("schemaVersion", events.SchemaVersion+1)), events.ErrSchemaVersion},
		{"no schema version", envelope(t, with("schemaVersion", nil)), events.ErrMalformed},
		{"zero schema version", envelope(t, with("schemaVersion", 0)), events.ErrMalformed},
		{"unknown kind", envelope(t, with("kind", "Pod")), events.ErrMalformed},
		{"unknown op", envelope(t, with("op", "patch")), events.ErrMalformed},
		{"op of wrong type", envelope(t, with("op", 7)), events.ErrMalformed},
		{"create without object", envelope(t, with("op", "create")), events.ErrMalformed},
		{"object of wrong shape", envelope(t, with("object", "text")), events.ErrMalformed},
		{"object of other name", envelope(t, with("object", map[string]any{"metadata": map[string]any{"name": "x", "namespace": "a"}})), events.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := events.Decode(tc.data)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode error = %v, want %v", err, tc.want)
			}
			if !reflect.DeepEqual(ev, events.Event{}) {
				t.Errorf("Decode returned a non-zero event with its error: %+v", ev)
			}
		})
	}
}

func TestDecodeToleratesUnknownFields(t *testing.T) {
	data := envelope(t, map[string]any{
		"schemaVersion": 1, "op": "update", "kind": "ConfigMap", "namespace": "a", "name": "b",
		"futureField": map[string]any{"x": []int{1, 2}},
		"object":      map[string]any{"metadata": map[string]any{"name": "b", "namespace": "a"}, "data": map[string]string{"k": "v"}, "newApiField": true},
	})
	ev, err := events.Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if !ok || cm.Data["k"] != "v" {
		t.Errorf("object = %#v, want a ConfigMap with data k=v", ev.Object)
	}
}
