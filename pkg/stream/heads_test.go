package stream_test

import (
	"reflect"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

func TestLastPerSubject(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t)

	heads, err := stream.LastPerSubject(ctx, js, "INGRESS", prefix)
	if err != nil || len(heads) != 0 {
		t.Fatalf("empty stream: %v, %v", heads, err)
	}

	p := newPublisher(t, js)
	ic := eventstest.Of(events.OpCreate, eventstest.IngressClass())
	gone := configMapEvent("b", 2)
	gone.Op, gone.Object = events.OpDelete, nil
	publishInOrder(t, ctx, p, configMapEvent("a", 1), configMapEvent("b", 1), configMapEvent("a", 2), ic, gone)
	if _, err := js.Publish(ctx, "ingress.secret.shop.raw_example_com", []byte("no headers")); err != nil {
		t.Fatal(err)
	}

	heads, err = stream.LastPerSubject(ctx, js, "INGRESS", prefix)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]stream.Head{
		"ingress.configmap.ingress.a": {Subject: "ingress.configmap.ingress.a", Sequence: 3, Op: events.OpUpdate,
			Kind: events.KindConfigMap, Namespace: "ingress", Name: "a", UID: "uid-a", ResourceVersion: "2"},
		"ingress.configmap.ingress.b": {Subject: "ingress.configmap.ingress.b", Sequence: 5, Op: events.OpDelete,
			Kind: events.KindConfigMap, Namespace: "ingress", Name: "b", UID: "uid-b", ResourceVersion: "2"},
		"ingress.ingressclass._.nginx": {Subject: "ingress.ingressclass._.nginx", Sequence: 4, Op: events.OpCreate,
			Kind: events.KindIngressClass, Name: "nginx", UID: ic.UID, ResourceVersion: ic.ResourceVersion},
		"ingress.secret.shop.raw_example_com": {Subject: "ingress.secret.shop.raw_example_com", Sequence: 6,
			Kind: events.KindSecret, Namespace: "shop", Name: "raw.example.com"},
	}
	if !reflect.DeepEqual(heads, want) {
		t.Errorf("LastPerSubject =\n%+v\nwant\n%+v", heads, want)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Errorf("%d consumers left on the stream, want 0", info.State.Consumers)
	}
	if _, err := stream.LastPerSubject(ctx, js, "MISSING", prefix); err == nil {
		t.Error("LastPerSubject of a missing stream succeeded")
	}
}
