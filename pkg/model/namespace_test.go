package model

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// labelledNamespace is Namespace name with labels kv (key, value, ...).
func labelledNamespace(name string, kv ...string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		ns.Labels[kv[i]] = kv[i+1]
	}
	return ns
}

// TestNamespaceLabelsMoveARoute: a route of a namespace a Gateway's
// listener selects by label is served while the Namespace's labels match
// and not once they do not; a change of another Namespace, or of one
// whose routes name no selecting Gateway, cannot change the
// Configuration (CanChange), and one that moves the route can.
func TestNamespaceLabelsMoveARoute(t *testing.T) {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromSelector),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}}}}}}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), edge, gatewayService(edge, 10000), service("app", "web", svcPort("http", 80)), r} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name      string
		ev        events.Event
		canChange bool
		served    bool
	}{
		{name: "labelled to match", ev: upsertEvent(labelledNamespace("app", "team", "web")), canChange: true, served: true},
		{name: "another namespace", ev: upsertEvent(labelledNamespace("other", "team", "db")), served: true},
		{name: "the Gateway's own namespace", ev: upsertEvent(labelledNamespace(edge.Namespace)), served: true},
		{name: "a label the selector does not read", ev: upsertEvent(labelledNamespace("app", "team", "web", "env", "prod")), canChange: true, served: true},
		{name: "labels that do not match", ev: upsertEvent(labelledNamespace("app", "team", "db")), canChange: true},
		{name: "labelled to match again", ev: upsertEvent(labelledNamespace("app", "team", "web")), canChange: true, served: true},
		{name: "deleted", ev: events.Event{Op: events.OpDelete, Kind: events.KindNamespace, Name: "app"}, canChange: true},
	}
	for _, st := range steps {
		eff, err := s.Apply(st.ev)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := s.CanChange(eff, testOptions()); got != st.canChange {
			t.Errorf("%s: CanChange = %v, want %v", st.name, got, st.canChange)
		}
		if got := serverAt(Build(s, testOptions()), 10080, "a.example.com") != nil; got != st.served {
			t.Errorf("%s: route served %v, want %v", st.name, got, st.served)
		}
	}
	if !s.Has(events.KindNamespace, "", "other") || s.Has(events.KindNamespace, "", "app") {
		t.Error("Has: the Namespaces kept")
	}
}
