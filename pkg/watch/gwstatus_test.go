package watch_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	gwapi "github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// statusConfig is gatewayConfig with the Gateways' Services kept in
// namespace svcNS, of type ClusterIP (the control plane runs no load
// balancer), with ports from 20000-20009.
func (e *gwEnv) statusConfig(id, svcNS string) watch.Config {
	cfg := e.gatewayConfig(id)
	cfg.ElectionNamespace = svcNS
	cfg.GatewayServiceSelector = "app.kubernetes.io/component=syncer"
	cfg.GatewayServiceType = corev1.ServiceTypeClusterIP
	cfg.GatewayPortRange = "20000-20009"
	return cfg
}

// condSummary is "Type=Status/Reason@generation" per condition.
func condSummary(cs []metav1.Condition) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s/%s@%d", c.Type, c.Status, c.Reason, c.ObservedGeneration))
	}
	return strings.Join(out, " ")
}

// routeParents is our parents of route ns/name, one summary each.
func (e *gwEnv) routeParents(t *testing.T, ns, name string) []string {
	t.Helper()
	r, err := e.gw.GatewayV1().HTTPRoutes(ns).Get(t.Context(), name, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range r.Status.Parents {
		if string(p.ControllerName) == e.gatewayController() {
			out = append(out, condSummary(p.Conditions))
		}
	}
	return out
}

// waitRoute waits until our parents of route ns/name are want.
func (e *gwEnv) waitRoute(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	var got []string
	eventually(t, fmt.Sprintf("HTTPRoute %s/%s parents %q", ns, name, want), func() bool {
		got = e.routeParents(t, ns, name)
		return slices.Equal(got, want)
	})
}

// gatewayCond returns condition typ of Gateway ns/name, as a summary.
func (e *gwEnv) gatewayCond(t *testing.T, ns, name, typ string) (string, *gatewayv1.Gateway) {
	t.Helper()
	gw, err := e.gw.GatewayV1().Gateways(ns).Get(t.Context(), name, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range gw.Status.Conditions {
		if c.Type == typ {
			return condSummary([]metav1.Condition{c}), gw
		}
	}
	return "", gw
}

// backendRoute is an HTTPRoute of ns to Gateway gwNS/edge with one
// backendRef.
func backendRoute(ns, name, gwNS string, ref gatewayv1.BackendObjectReference) *gatewayv1.HTTPRoute {
	r := httpRoute(ns, name, "edge")
	r.Spec.ParentRefs[0].Namespace = ptrTo(gatewayv1.Namespace(gwNS))
	r.Spec.Rules[0].BackendRefs[0].BackendObjectReference = ref
	return r
}

// serviceGrant, in ns, lets the HTTPRoutes of namespace from refer to the
// Services of ns.
func serviceGrant(ns, from string) *gatewayv1.ReferenceGrant {
	g := referenceGrant(ns, "routes", from)
	g.Spec.From[0].Kind = "HTTPRoute"
	g.Spec.To[0].Kind = "Service"
	return g
}

// updateRetrying changes HTTPRoute name of the test's namespace and
// updates it (its status with status), again after a conflict.
func (e *gwEnv) updateRetrying(t *testing.T, name string, status bool, change func(*gatewayv1.HTTPRoute)) {
	t.Helper()
	routes := e.gw.GatewayV1().HTTPRoutes(e.ns)
	eventually(t, "HTTPRoute "+name+" updated", func() bool {
		r, err := routes.Get(t.Context(), name, getOpts)
		if err != nil {
			t.Fatal(err)
		}
		change(r)
		if status {
			_, err = routes.UpdateStatus(t.Context(), r, updateOpts)
		} else {
			_, err = routes.Update(t.Context(), r, updateOpts)
		}
		if err != nil && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
		return err == nil
	})
}

// TestGatewayAPIStatus: the leader writes the status of our GatewayClass,
// of our Gateway (Programmed only once a syncer serves it) and of the
// HTTPRoutes attached to it, with the spec's reasons and observed
// generations; a grant given and revoked turns ResolvedRefs; the class of
// another controller and the parents of another controller are left
// alone.
func TestGatewayAPIStatus(t *testing.T) {
	e := newGatewayEnv(t, true)
	ctx, ns, v1 := t.Context(), e.ns, e.gw.GatewayV1()
	backends, svcNS := testenv.NewNamespace(t, e.client), testenv.NewNamespace(t, e.client)
	cfg := e.statusConfig("watcher-a", svcNS)
	cfg.WatchNamespace, cfg.ConfigMaps = "", nil
	w := start(t, cfg)
	e.createGateway(t, gatewayClass(e.class(), e.gatewayController()))
	e.createGateway(t, gatewayClass("foreign-"+ns, "example.com/other-"+ns))
	edge := gateway(ns, "edge", e.class())
	selector := gatewayv1.NamespacesFromSelector
	edge.Spec.Listeners = append(edge.Spec.Listeners, gatewayv1.Listener{Name: "picky", Port: 8080, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &selector,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}}}})
	e.createGateway(t, edge)
	e.create(t, service(ns, "web"))
	e.create(t, service(backends, "api"))
	svcRef := func(ns, name, kind string) gatewayv1.BackendObjectReference {
		ref := gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptrTo[gatewayv1.PortNumber](80)}
		if ns != "" {
			ref.Namespace = ptrTo(gatewayv1.Namespace(ns))
		}
		if kind != "" {
			ref.Kind = ptrTo(gatewayv1.Kind(kind))
		}
		return ref
	}
	e.createGateway(t, backendRoute(ns, "good", ns, svcRef("", "web", "")))
	e.createGateway(t, backendRoute(ns, "bad-kind", ns, svcRef("", "web", "ConfigMap")))
	e.createGateway(t, backendRoute(ns, "cross", ns, svcRef(backends, "api", "")))
	picky := backendRoute(ns, "picky", ns, svcRef("", "web", ""))
	picky.Spec.ParentRefs[0].SectionName = ptrTo[gatewayv1.SectionName]("picky")
	e.createGateway(t, picky)

	const accepted = "Accepted=True/Accepted@1"
	e.waitRoute(t, ns, "good", accepted+" ResolvedRefs=True/ResolvedRefs@1")
	e.waitRoute(t, ns, "bad-kind", accepted+" ResolvedRefs=False/InvalidKind@1")
	e.waitRoute(t, ns, "picky", "Accepted=False/NotAllowedByListeners@1 ResolvedRefs=True/ResolvedRefs@1")
	e.waitRoute(t, ns, "cross", accepted+" ResolvedRefs=False/RefNotPermitted@1")
	e.createGateway(t, serviceGrant(backends, ns))
	e.waitRoute(t, ns, "cross", accepted+" ResolvedRefs=True/ResolvedRefs@1")
	if err := v1.ReferenceGrants(backends).Delete(ctx, "routes", deleteOpts); err != nil {
		t.Fatal(err)
	}
	e.waitRoute(t, ns, "cross", accepted+" ResolvedRefs=False/RefNotPermitted@1")

	// A new generation of a route is observed; another controller's parent stays.
	// The watcher writes the route's status meanwhile: conflicts are retried.
	e.updateRetrying(t, "good", true, func(r *gatewayv1.HTTPRoute) {
		r.Status.Parents = append(r.Status.Parents, gatewayv1.RouteParentStatus{
			ParentRef: r.Spec.ParentRefs[0], ControllerName: "example.com/other",
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
				LastTransitionTime: metav1.Now(), ObservedGeneration: r.Generation}},
		})
	})
	e.updateRetrying(t, "good", false, func(r *gatewayv1.HTTPRoute) { r.Spec.Hostnames = []gatewayv1.Hostname{"shop.example.com"} })
	e.waitRoute(t, ns, "good", "Accepted=True/Accepted@2 ResolvedRefs=True/ResolvedRefs@2")
	if r, err := v1.HTTPRoutes(ns).Get(ctx, "good", getOpts); err != nil || !slices.ContainsFunc(r.Status.Parents, func(p gatewayv1.RouteParentStatus) bool {
		return p.ControllerName == "example.com/other"
	}) {
		t.Errorf("the parent of another controller is gone (%v): %+v", err, r.Status.Parents)
	}

	e.checkClasses(t)
	e.checkGatewayProgrammed(t, w, svcNS)
	for _, kind := range []string{"GatewayClass", "Gateway", "HTTPRoute"} {
		if n := w.metric(t, "ingress_sync_watcher_gateway_status_writes_total", "kind", kind, "result", "ok"); n < 1 {
			t.Errorf("%v %s status writes counted", n, kind)
		}
	}
	if n := w.metric(t, "ingress_sync_watcher_gateway_status_writes_total", "result", "error"); n != 0 {
		t.Errorf("%v status writes failed", n)
	}
}

// checkClasses: ours is Accepted with our features; the foreign one keeps
// the API server's defaults.
func (e *gwEnv) checkClasses(t *testing.T) {
	t.Helper()
	classes := e.gw.GatewayV1().GatewayClasses()
	eventually(t, "our GatewayClass accepted", func() bool {
		c, err := classes.Get(t.Context(), e.class(), getOpts)
		return err == nil && condSummary(c.Status.Conditions) == "Accepted=True/Accepted@1" && len(c.Status.SupportedFeatures) == len(gwapi.SupportedFeatures())
	})
	foreign, err := classes.Get(t.Context(), "foreign-"+e.ns, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range foreign.Status.Conditions {
		if c.Status == metav1.ConditionTrue || len(foreign.Status.SupportedFeatures) > 0 {
			t.Errorf("the GatewayClass of another controller was written: %+v", foreign.Status)
		}
	}
}

// checkGatewayProgrammed: Gateway edge is Accepted, has its Service's
// address and counts its routes, and is Programmed only once a syncer
// reports having applied it and serving it.
func (e *gwEnv) checkGatewayProgrammed(t *testing.T, w *runningWatcher, svcNS string) {
	t.Helper()
	eventually(t, "Gateway edge accepted, waiting for the syncers", func() bool {
		acc, _ := e.gatewayCond(t, e.ns, "edge", "Accepted")
		prog, _ := e.gatewayCond(t, e.ns, "edge", "Programmed")
		return acc == "Accepted=True/Accepted@1" && prog == "Programmed=False/Pending@1"
	})
	_, gw := e.gatewayCond(t, e.ns, "edge", "Accepted")
	if len(gw.Status.Listeners) != 2 || gw.Status.Listeners[0].AttachedRoutes != 3 || gw.Status.Listeners[1].AttachedRoutes != 0 {
		t.Errorf("listeners %+v, want http with 3 routes (good, bad-kind, cross), picky with none", gw.Status.Listeners)
	}
	svc, err := e.client.CoreV1().Services(svcNS).Get(t.Context(), serviceName(t, e, "edge"), getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(gw.Status.Addresses) != 1 || gw.Status.Addresses[0].Value != svc.Spec.ClusterIP {
		t.Errorf("addresses %+v, want the cluster IP %s of the Service", gw.Status.Addresses, svc.Spec.ClusterIP)
	}
	e.waitMessage(t, events.Subject(prefix, events.KindService, svcNS, svc.Name), events.OpCreate)
	// A syncer that has applied it all but reports the Gateway unserved
	// holds Programmed back; the message says so.
	seq := e.lastSeq(t)
	unserved := reportOf("syncer-0", seq)
	unserved.Unserved = []events.UnservedIngress{{Kind: string(events.KindGateway), Namespace: e.ns, Name: "edge", Why: events.UnservedRoutes}}
	publishReport(t, e.env, unserved)
	eventually(t, "Gateway edge pending on the syncer's report", func() bool {
		_, gw := e.gatewayCond(t, e.ns, "edge", "Programmed")
		return slices.ContainsFunc(gw.Status.Conditions, func(c metav1.Condition) bool {
			return c.Type == "Programmed" && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "0 of 1 syncers serve it")
		})
	})
	if n := w.metric(t, "ingress_sync_watcher_status_waiting_gateways"); n != 1 {
		t.Errorf("%v Gateways waiting for the syncers, want 1", n)
	}
	publishReport(t, e.env, reportOf("syncer-0", seq))
	eventually(t, "Gateway edge programmed", func() bool {
		prog, _ := e.gatewayCond(t, e.ns, "edge", "Programmed")
		return prog == "Programmed=True/Programmed@1"
	})
	if n := w.metric(t, "ingress_sync_watcher_status_waiting_gateways"); n != 0 {
		t.Errorf("%v Gateways waiting for the syncers once programmed, want 0", n)
	}
}

// serviceName finds the Service of Gateway name of the test's namespace
// by its annotation.
func serviceName(t *testing.T, e *gwEnv, name string) string {
	t.Helper()
	var found string
	eventually(t, "the Service of Gateway "+name, func() bool {
		found = ""
		list, err := e.client.CoreV1().Services(metav1.NamespaceAll).List(t.Context(), metav1.ListOptions{
			LabelSelector: gwapi.ServiceManagedByLabel + "=" + gwapi.ServiceManagedBy})
		if err != nil {
			return false
		}
		for _, s := range list.Items {
			if s.Annotations[gwapi.ServiceGatewayAnnotation] == e.ns+"/"+name {
				found = s.Name
			}
		}
		return found != ""
	})
	return found
}

// targetPorts is "port->targetPort" per port of Service ns/name.
func targetPorts(t *testing.T, e *gwEnv, ns, name string) []string {
	t.Helper()
	svc, err := e.client.CoreV1().Services(ns).Get(t.Context(), name, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range svc.Spec.Ports {
		out = append(out, fmt.Sprintf("%s:%d->%d", p.Name, p.Port, p.TargetPort.IntVal))
	}
	return out
}

// TestGatewayServices: each Gateway of ours gets a Service in the
// watcher's namespace (outside the watched one, published all the same),
// with a port per listener port and targetPorts allocated lowest-free and
// unique; a restart keeps them, a listener changed keeps the ports of the
// others, a Service deleted by hand is made again, and the Service goes
// with its Gateway, or when the Gateway leaves our class.
func TestGatewayServices(t *testing.T) {
	e := newGatewayEnv(t, true)
	ctx, ns, v1 := t.Context(), e.ns, e.gw.GatewayV1()
	svcNS := testenv.NewNamespace(t, e.client)
	first := start(t, e.statusConfig("watcher-a", svcNS))
	e.createGateway(t, gatewayClass(e.class(), e.gatewayController()))
	a := gateway(ns, "a", e.class())
	a.Spec.Listeners = append(a.Spec.Listeners, gatewayv1.Listener{Name: "alt", Port: 8080, Protocol: gatewayv1.HTTPProtocolType},
		gatewayv1.Listener{Name: "alt-host", Port: 8080, Protocol: gatewayv1.HTTPProtocolType, Hostname: ptrTo[gatewayv1.Hostname]("a.example.com")})
	e.createGateway(t, a)
	nameA := serviceName(t, e, "a")
	eventually(t, "ports of a", func() bool {
		return slices.Equal(targetPorts(t, e, svcNS, nameA), []string{"p80:80->20000", "p8080:8080->20001"})
	})
	e.createGateway(t, gateway(ns, "b", e.class()))
	e.createGateway(t, gateway(ns, "foreign", "foreign-"+ns))
	nameB := serviceName(t, e, "b")
	eventually(t, "ports of b", func() bool { return slices.Equal(targetPorts(t, e, svcNS, nameB), []string{"p80:80->20002"}) })
	e.waitMessage(t, events.Subject(prefix, events.KindService, svcNS, nameA), events.OpCreate)
	e.waitMessage(t, events.Subject(prefix, events.KindService, svcNS, nameB), events.OpCreate)
	svcA, err := e.client.CoreV1().Services(svcNS).Get(ctx, nameA, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if svcA.Spec.Selector["app.kubernetes.io/component"] != "syncer" || svcA.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service of a: selector %v, type %s", svcA.Spec.Selector, svcA.Spec.Type)
	}

	first.stop(t)
	second := start(t, e.statusConfig("watcher-b", svcNS))
	eventually(t, "the second watcher's Gateway status", func() bool {
		acc, _ := e.gatewayCond(t, ns, "b", "Accepted")
		return acc != ""
	})
	if again, err := e.client.CoreV1().Services(svcNS).Get(ctx, nameA, getOpts); err != nil || again.ResourceVersion != svcA.ResourceVersion {
		t.Errorf("the Service of a changed across a restart (%v)", err)
	}

	gw, err := v1.Gateways(ns).Get(ctx, "a", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	gw.Spec.Listeners = []gatewayv1.Listener{gw.Spec.Listeners[0], {Name: "other", Port: 9090, Protocol: gatewayv1.HTTPProtocolType}}
	if _, err := v1.Gateways(ns).Update(ctx, gw, updateOpts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ports of a after its listeners changed", func() bool {
		return slices.Equal(targetPorts(t, e, svcNS, nameA), []string{"p80:80->20000", "p9090:9090->20001"})
	})

	// Deleted behind the watcher's back (after this term wrote it): made again.
	written, err := e.client.CoreV1().Services(svcNS).Get(ctx, nameA, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.CoreV1().Services(svcNS).Delete(ctx, nameA, deleteOpts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Service of a made again", func() bool {
		svc, err := e.client.CoreV1().Services(svcNS).Get(ctx, nameA, getOpts)
		return err == nil && svc.UID != written.UID
	})

	if err := v1.Gateways(ns).Delete(ctx, "a", deleteOpts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Service of a deleted", func() bool {
		_, err := e.client.CoreV1().Services(svcNS).Get(ctx, nameA, getOpts)
		return apierrors.IsNotFound(err)
	})
	e.waitMessage(t, events.Subject(prefix, events.KindService, svcNS, nameA), events.OpDelete)

	b, err := v1.Gateways(ns).Get(ctx, "b", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.GatewayClassName = gatewayv1.ObjectName("foreign-" + ns)
	if _, err := v1.Gateways(ns).Update(ctx, b, updateOpts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Service of b deleted once b left our class", func() bool {
		_, err := e.client.CoreV1().Services(svcNS).Get(ctx, nameB, getOpts)
		return apierrors.IsNotFound(err)
	})
	second.stop(t)
}
