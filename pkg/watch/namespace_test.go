package watch_test

import (
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// updateNamespace changes Namespace name and updates it, again after a
// conflict.
func (e *env) updateNamespace(t *testing.T, name string, change func(*corev1.Namespace)) {
	t.Helper()
	namespaces := e.client.CoreV1().Namespaces()
	eventually(t, "Namespace "+name+" updated", func() bool {
		ns, err := namespaces.Get(t.Context(), name, getOpts)
		if err != nil {
			t.Fatal(err)
		}
		change(ns)
		_, err = namespaces.Update(t.Context(), ns, updateOpts)
		if err != nil && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
		return err == nil
	})
}

// namespaceMessages are the messages of Namespace name.
func (e *env) namespaceMessages(t *testing.T, name string) []message {
	return on(e.messages(t), events.Subject(prefix, events.KindNamespace, "", name))
}

// TestNamespacesPublished: the watched Namespace is published with its
// name and labels only; a change of its annotations alone is a no-op
// update, dropped; a change of its labels is published; a Namespace not
// watched is not published.
func TestNamespacesPublished(t *testing.T) {
	e := newEnv(t)
	w := start(t, e.config("watcher-a"))
	subject := events.Subject(prefix, events.KindNamespace, "", e.ns)
	created := e.waitMessage(t, subject, events.OpCreate)
	want := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns,
		Labels: map[string]string{corev1.LabelMetadataName: e.ns}}}
	if !reflect.DeepEqual(created.Event.Object, want) {
		t.Fatalf("published %#v, want %#v", created.Event.Object, want)
	}
	if created.Event.UID == "" || created.Event.ResourceVersion == "" {
		t.Errorf("envelope without uid or resourceVersion: %+v", created.Event)
	}

	e.updateNamespace(t, e.ns, func(ns *corev1.Namespace) {
		ns.Annotations = map[string]string{"owner": "web-team", corev1.LastAppliedConfigAnnotation: "{}"}
	})
	eventually(t, "the annotation change dropped", func() bool {
		return w.metric(t, "ingress_sync_watcher_noop_updates_dropped_total", "kind", string(events.KindNamespace)) >= 1
	})
	if msgs := e.namespaceMessages(t, e.ns); len(msgs) != 1 {
		t.Fatalf("%d messages after an annotation change, want the create alone: %v", len(msgs), msgs)
	}

	e.updateNamespace(t, e.ns, func(ns *corev1.Namespace) { ns.Labels["team"] = "web" })
	updated := e.waitMessage(t, subject, events.OpUpdate)
	got, ok := updated.Event.Object.(*corev1.Namespace)
	if !ok || !maps.Equal(got.Labels, map[string]string{corev1.LabelMetadataName: e.ns, "team": "web"}) || got.Annotations != nil {
		t.Fatalf("update published %#v", updated.Event.Object)
	}
	if msgs := e.namespaceMessages(t, "default"); len(msgs) != 0 {
		t.Errorf("a Namespace not watched published: %v", msgs)
	}
}

// TestGatewayStatusFollowsNamespaceSelector: a route of a namespace is
// attached to a listener that selects namespaces by label while its
// Namespace has the label, and NotAllowedByListeners otherwise: the
// route's Accepted and the listener's attachedRoutes follow the labels.
func TestGatewayStatusFollowsNamespaceSelector(t *testing.T) {
	e := newGatewayEnv(t, true)
	ns := e.ns
	start(t, e.statusConfig("watcher-a", ns))
	e.createGateway(t, gatewayClass(e.class(), e.gatewayController()))
	edge := gateway(ns, "edge", e.class())
	edge.Spec.Listeners[0].AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{
		From: ptrTo(gatewayv1.NamespacesFromSelector),
		Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}}}
	e.createGateway(t, edge)
	e.create(t, service(ns, "web"))
	e.createGateway(t, httpRoute(ns, "web", "edge"))

	const notAllowed = "Accepted=False/NotAllowedByListeners@1 ResolvedRefs=True/ResolvedRefs@1"
	const accepted = "Accepted=True/Accepted@1 ResolvedRefs=True/ResolvedRefs@1"
	e.waitRoute(t, ns, "web", notAllowed)
	e.waitAttached(t, "edge", 0)
	e.updateNamespace(t, ns, func(n *corev1.Namespace) { n.Labels["team"] = "web" })
	e.waitRoute(t, ns, "web", accepted)
	e.waitAttached(t, "edge", 1)
	e.updateNamespace(t, ns, func(n *corev1.Namespace) { n.Labels["team"] = "db" })
	e.waitRoute(t, ns, "web", notAllowed)
	e.waitAttached(t, "edge", 0)
}

// waitAttached waits until the first listener of Gateway name of the
// test's namespace counts n routes.
func (e *gwEnv) waitAttached(t *testing.T, name string, n int32) {
	t.Helper()
	eventually(t, "attachedRoutes of "+name, func() bool {
		_, gw := e.gatewayCond(t, e.ns, name, "Accepted")
		return len(gw.Status.Listeners) > 0 && gw.Status.Listeners[0].AttachedRoutes == n
	})
}
