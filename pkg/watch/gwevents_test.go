package watch_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	gwapi "github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
)

// runGatewaySyncer runs a real syncer (recording Applier) that translates
// the Gateway API objects of this test's controller, with reserved as
// nginx's own ports.
func runGatewaySyncer(t *testing.T, e *gwEnv, pod string, reserved ...int) {
	t.Helper()
	runSyncerOptions(t, e.env, syncer.Options{Pod: pod,
		Model: model.Options{ControllerClass: e.controller(), IngressClass: "nginx", ReservedPorts: reserved},
		Sources: func() []intent.Source {
			return []intent.Source{ingress.NewSource(), gwapi.NewSource(e.gatewayController())}
		}})
}

// warned reports whether evs hold a Warning of a Problem whose message has
// every one of parts.
func warned(evs []corev1.Event, parts ...string) bool {
	for _, ev := range ofReason(evs, watch.ReasonProblem) {
		match := ev.Type == corev1.EventTypeWarning
		for _, p := range parts {
			match = match && strings.Contains(ev.Message, p)
		}
		if match {
			return true
		}
	}
	return false
}

// waitEventsOn waits until the Events on object kind/name satisfy cond.
func waitEventsOn(t *testing.T, e *gwEnv, kind, name string, cond func([]corev1.Event) bool) []corev1.Event {
	t.Helper()
	var evs []corev1.Event
	eventually(t, "events on "+kind+" "+name, func() bool {
		evs = listEventsOn(t, e.env, kind, name)
		return cond(evs)
	})
	return evs
}

// TestGatewayAPIEventsFromSyncerReports runs the watcher (keeping the
// Gateways' Services) and a real syncer whose reserved ports are the whole
// port range: the Gateway's listener port cannot be served, which gives a
// Warning on the Gateway; an HTTPRoute with a backendRef of an unknown kind
// gets a Warning with the Problem's reason; a good HTTPRoute gets a Normal
// Sync event once applied; and a Problem reported on an HTTPRoute whose
// Gateway is another controller's gets no Event.
func TestGatewayAPIEventsFromSyncerReports(t *testing.T) {
	e := newGatewayEnv(t, true)
	ns := e.ns
	start(t, e.statusConfig("watcher-a", ns))
	reserved := make([]int, 0, 10)
	for p := 20000; p <= 20009; p++ {
		reserved = append(reserved, p)
	}

	e.createGateway(t, gatewayClass(e.class(), e.gatewayController()))
	e.createGateway(t, gatewayClass("theirs-"+ns, "example.com/other-"+ns))
	e.createGateway(t, gateway(ns, "edge", e.class()))
	e.createGateway(t, gateway(ns, "foreign", "theirs-"+ns))
	e.createGateway(t, service(ns, "web"))
	e.createGateway(t, httpRoute(ns, "good", "edge", "good.example.com"))
	bad := httpRoute(ns, "bad-kind", "edge", "bad.example.com")
	bad.Spec.Rules[0].BackendRefs[0].Kind = ptrTo[gatewayv1.Kind]("Bucket")
	bad.Spec.Rules[0].BackendRefs[0].Group = ptrTo[gatewayv1.Group]("storage.example.com")
	e.createGateway(t, bad)
	e.createGateway(t, httpRoute(ns, "theirs", "foreign", "theirs.example.com"))
	runGatewaySyncer(t, e, "syncer-a", reserved...)

	evs := waitEventsOn(t, e, "HTTPRoute", "bad-kind", func(evs []corev1.Event) bool { return warned(evs, "not of a supported kind") })
	if w := ofReason(evs, watch.ReasonProblem)[0]; w.Source.Component != watch.EventComponent || w.InvolvedObject.Kind != "HTTPRoute" ||
		w.InvolvedObject.APIVersion != gatewayv1.GroupVersion.String() {
		t.Errorf("Warning from %+v on %+v", w.Source, w.InvolvedObject)
	}
	waitEventsOn(t, e, "HTTPRoute", "good", func(evs []corev1.Event) bool {
		for _, s := range ofReason(evs, watch.ReasonSync) {
			if s.Type == corev1.EventTypeNormal && strings.HasPrefix(s.Message, "Applied by all 1 syncer") {
				return true
			}
		}
		return false
	})
	waitEventsOn(t, e, "Gateway", "edge", func(evs []corev1.Event) bool { return warned(evs, "listener port of the fleet", "own ports") })

	// A report (of a second syncer) with a Problem on the other
	// controller's route, and one on ours after it as a barrier.
	rep := reportOf("syncer-b", e.lastSeq(t),
		events.ReportedProblem{Kind: string(events.KindHTTPRoute), Namespace: ns, Name: "theirs", Reason: "not ours to report"},
		events.ReportedProblem{Kind: string(events.KindHTTPRoute), Namespace: ns, Name: "good", Reason: "barrier"})
	publishReport(t, e.env, rep)
	waitEventsOn(t, e, "HTTPRoute", "good", func(evs []corev1.Event) bool { return warned(evs, "barrier") })
	if evs := listEventsOn(t, e.env, "HTTPRoute", "theirs"); len(evs) != 0 {
		t.Errorf("events on another controller's HTTPRoute: %s", describeEvents(evs))
	}
	if evs := listEventsOn(t, e.env, "Gateway", "foreign"); len(evs) != 0 {
		t.Errorf("events on another controller's Gateway: %s", describeEvents(evs))
	}
}
