package watch_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// gwEnv is an env with a Gateway API client. The CRDs are cluster-scoped
// and shared by every test of the control plane: each test installs them
// (or removes them) first, and names its GatewayClasses and controller
// after its namespace.
type gwEnv struct {
	*env
	gw gatewayclient.Interface
}

func newGatewayEnv(t *testing.T, installCRDs bool) *gwEnv {
	t.Helper()
	e := newEnv(t)
	if installCRDs {
		gatewayapi.InstallT(t, controlPlane.Config())
	} else {
		gatewayapi.UninstallT(t, controlPlane.Config())
	}
	return &gwEnv{env: e, gw: gatewayclient.NewForConfigOrDie(controlPlane.Config())}
}

// gatewayController is the controllerName of this test's GatewayClasses.
func (e *gwEnv) gatewayController() string { return "example.com/gateway-" + e.ns }

// class is the name of this test's GatewayClass of ours.
func (e *gwEnv) class() string { return "ours-" + e.ns }

// gatewayConfig is config with the Gateway API watched, discovery polled
// every 200 ms, and only referenced TLS Secrets published.
func (e *gwEnv) gatewayConfig(id string) watch.Config {
	cfg := e.config(id)
	cfg.GatewayClient, cfg.GatewayControllerName = e.gw, e.gatewayController()
	cfg.GatewayAPIPollInterval = 200 * time.Millisecond
	cfg.PublishAllTLSSecrets = false
	return cfg
}

// gatewaySubject is the subject of a Gateway API object of this test.
func (e *gwEnv) gatewaySubject(kind events.Kind, ns, name string) string {
	if kind == events.KindGatewayClass {
		ns = ""
	}
	return events.Subject(prefix, kind, ns, name)
}

func gatewayClass(name, controller string) *gatewayv1.GatewayClass {
	return &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(controller)}}
}

// gateway has an HTTP listener and, with secrets, an HTTPS one naming them
// ("name" or "namespace/name").
func gateway(ns, name, class string, secrets ...gatewayv1.SecretObjectReference) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class),
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	if len(secrets) > 0 {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: secrets}})
	}
	return gw
}

// secretRef names a Secret; ns "" is the Gateway's namespace.
func secretRef(ns, name string) gatewayv1.SecretObjectReference {
	ref := gatewayv1.SecretObjectReference{Name: gatewayv1.ObjectName(name)}
	if ns != "" {
		ref.Namespace = ptrTo(gatewayv1.Namespace(ns))
	}
	return ref
}

func httpRoute(ns, name, gw string, hosts ...gatewayv1.Hostname) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gw)}}},
			Hostnames:       hosts,
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptrTo[gatewayv1.PortNumber](80)}}}}}},
		}}
}

// grpcRoute is a GRPCRoute of ns attached to Gateway gw, to Service
// "grpc".
func grpcRoute(ns, name, gw string) *gatewayv1.GRPCRoute {
	return &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gw)}}},
			Rules: []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "grpc", Port: new(gatewayv1.PortNumber(8080))}}}}}},
		}}
}

// referenceGrant, in ns, lets the Gateways of namespace from refer to the
// Secrets of ns.
func referenceGrant(ns, name, from string) *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: gatewayv1.Namespace(from)}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Secret"}},
		}}
}

// backendTLSPolicy targets Service svc of ns, trusting ConfigMap cm.
func backendTLSPolicy(ns, name, svc, cm string) *gatewayv1.BackendTLSPolicy {
	return &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
				Kind: "Service", Name: gatewayv1.ObjectName(svc)}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "web.example.com",
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: gatewayv1.ObjectName(cm)}}}}}
}

// createGateway creates a Gateway API object, or a core one through env.
func (e *gwEnv) createGateway(t *testing.T, obj runtime.Object) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	var err error
	v1 := e.gw.GatewayV1()
	switch o := obj.(type) {
	case *gatewayv1.GatewayClass:
		_, err = v1.GatewayClasses().Create(ctx, o, createOpts)
		t.Cleanup(func() { _ = v1.GatewayClasses().Delete(context.Background(), o.Name, deleteOpts) })
	case *gatewayv1.Gateway:
		_, err = v1.Gateways(o.Namespace).Create(ctx, o, createOpts)
	case *gatewayv1.HTTPRoute:
		_, err = v1.HTTPRoutes(o.Namespace).Create(ctx, o, createOpts)
	case *gatewayv1.GRPCRoute:
		_, err = v1.GRPCRoutes(o.Namespace).Create(ctx, o, createOpts)
	case *gatewayv1.ReferenceGrant:
		_, err = v1.ReferenceGrants(o.Namespace).Create(ctx, o, createOpts)
	case *gatewayv1.BackendTLSPolicy:
		_, err = v1.BackendTLSPolicies(o.Namespace).Create(ctx, o, createOpts)
	default:
		e.create(t, obj)
		return
	}
	if err != nil {
		t.Fatalf("create %T: %v", obj, err)
	}
}

// lastApplied marks obj as `kubectl apply` does, for the trimming checks.
func lastApplied[T metav1.Object](obj T) T {
	obj.SetAnnotations(map[string]string{corev1.LastAppliedConfigAnnotation: `{"kind":"whatever"}`, "team": "shop"})
	return obj
}

// TestGatewayKindsArePublished: every Gateway API kind is published on
// create, update and delete, trimmed (no managedFields, no last-applied
// annotation), whatever its class.
func TestGatewayKindsArePublished(t *testing.T) {
	e := newGatewayEnv(t, true)
	ctx, ns, v1 := t.Context(), e.ns, e.gw.GatewayV1()
	start(t, e.gatewayConfig("watcher-a"))
	objs := []runtime.Object{
		lastApplied(gatewayClass(e.class(), e.gatewayController())),
		lastApplied(gateway(ns, "edge", "foreign-"+ns)), // of no class of ours: published all the same
		lastApplied(httpRoute(ns, "web", "edge", "shop.example.com")),
		lastApplied(grpcRoute(ns, "web", "edge")), // the name of the HTTPRoute: another kind, another subject
		lastApplied(referenceGrant(ns, "from-infra", "infra")),
		lastApplied(backendTLSPolicy(ns, "btls", "web", "ca")),
	}
	for _, o := range objs {
		e.createGateway(t, o)
	}
	subjects := map[events.Kind]string{}
	for _, o := range objs {
		m := o.(metav1.Object)
		kind := events.KindOf(o)
		subjects[kind] = e.gatewaySubject(kind, m.GetNamespace(), m.GetName())
		msg := e.waitMessage(t, subjects[kind], events.OpCreate)
		got := msg.Event.Object.(metav1.Object)
		if _, ok := got.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; ok || got.GetAnnotations()["team"] != "shop" || len(got.GetManagedFields()) > 0 {
			t.Errorf("%s not trimmed: annotations %v, %d managedFields", kind, got.GetAnnotations(), len(got.GetManagedFields()))
		}
		if msg.Header.Get(events.HeaderKind) != string(kind) {
			t.Errorf("%s: header %s = %q", msg, events.HeaderKind, msg.Header.Get(events.HeaderKind))
		}
	}

	updateRoute(t, e, "web", false, func(r *gatewayv1.HTTPRoute) {
		r.Spec.Hostnames = append(r.Spec.Hostnames, "www.shop.example.com")
	})
	if m := e.waitMessage(t, subjects[events.KindHTTPRoute], events.OpUpdate); len(m.Event.Object.(*gatewayv1.HTTPRoute).Spec.Hostnames) != 2 {
		t.Errorf("update %s does not carry the new hostname", m)
	}
	gw, err := v1.Gateways(ns).Get(ctx, "edge", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	gw.Spec.Listeners[0].Port = 8080
	if _, err := v1.Gateways(ns).Update(ctx, gw, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, subjects[events.KindGateway], events.OpUpdate)

	deletes := []func() error{
		func() error { return v1.HTTPRoutes(ns).Delete(ctx, "web", deleteOpts) },
		func() error { return v1.GRPCRoutes(ns).Delete(ctx, "web", deleteOpts) },
		func() error { return v1.Gateways(ns).Delete(ctx, "edge", deleteOpts) },
		func() error { return v1.ReferenceGrants(ns).Delete(ctx, "from-infra", deleteOpts) },
		func() error { return v1.BackendTLSPolicies(ns).Delete(ctx, "btls", deleteOpts) },
		func() error { return v1.GatewayClasses().Delete(ctx, e.class(), deleteOpts) },
	}
	for _, del := range deletes {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
	for kind := range subjects { // the kinds created above
		if m := e.waitMessage(t, subjects[kind], events.OpDelete); m.Event.Object == nil {
			t.Errorf("delete %s without the last state", m)
		}
	}
}

// TestGatewayCRDsInstalledLater: a watcher started in a cluster without the
// Gateway API CRDs is ready, picks them up once installed (no restart), and
// when they are removed publishes the deletes of what they held and goes
// on.
func TestGatewayCRDsInstalledLater(t *testing.T) {
	e := newGatewayEnv(t, false)
	w := start(t, e.gatewayConfig("watcher-a"))
	e.create(t, service(e.ns, "before"))
	e.waitMessage(t, e.subject(events.KindService, "before"), events.OpCreate)
	if n := w.metric(t, "ingress_sync_watcher_gateway_api_kinds_watched"); n != 0 {
		t.Errorf("%v Gateway API kinds watched without the CRDs", n)
	}

	gatewayapi.InstallT(t, controlPlane.Config())
	eventually(t, "the Gateway API kinds watched", func() bool {
		return w.metric(t, "ingress_sync_watcher_gateway_api_kinds_watched") == float64(len(events.GatewayKinds))
	})
	e.createGateway(t, gatewayClass(e.class(), e.gatewayController()))
	e.createGateway(t, httpRoute(e.ns, "web", "edge"))
	e.waitMessage(t, e.gatewaySubject(events.KindGatewayClass, "", e.class()), events.OpCreate)
	routeSubject := e.gatewaySubject(events.KindHTTPRoute, e.ns, "web")
	e.waitMessage(t, routeSubject, events.OpCreate)

	gatewayapi.UninstallT(t, controlPlane.Config())
	e.waitMessage(t, routeSubject, events.OpDelete)
	e.waitMessage(t, e.gatewaySubject(events.KindGatewayClass, "", e.class()), events.OpDelete)
	eventually(t, "no Gateway API kind watched", func() bool {
		return w.metric(t, "ingress_sync_watcher_gateway_api_kinds_watched") == 0
	})
	e.create(t, service(e.ns, "after"))
	e.waitMessage(t, e.subject(events.KindService, "after"), events.OpCreate)
}

// TestGatewayReconcileAfterDowntime: the Gateway API objects changed while
// no watcher ran are published on start (a delete for a deleted one), the
// others are not published again.
func TestGatewayReconcileAfterDowntime(t *testing.T) {
	e := newGatewayEnv(t, true)
	ctx, ns, v1 := t.Context(), e.ns, e.gw.GatewayV1()
	first := start(t, e.gatewayConfig("watcher-a"))
	for _, name := range []string{"keep", "changed", "gone"} {
		e.createGateway(t, httpRoute(ns, name, "edge"))
	}
	gone := e.waitMessage(t, e.gatewaySubject(events.KindHTTPRoute, ns, "gone"), events.OpCreate)
	e.waitMessage(t, e.gatewaySubject(events.KindHTTPRoute, ns, "changed"), events.OpCreate)
	e.waitMessage(t, e.gatewaySubject(events.KindHTTPRoute, ns, "keep"), events.OpCreate)
	first.stop(t)

	if err := v1.HTTPRoutes(ns).Delete(ctx, "gone", deleteOpts); err != nil {
		t.Fatal(err)
	}
	updateRoute(t, e, "changed", false, func(r *gatewayv1.HTTPRoute) { r.Spec.Hostnames = []gatewayv1.Hostname{"changed.example.com"} })
	setRouteStatus(t, e, "keep") // a new resourceVersion, nothing that matters
	e.createGateway(t, referenceGrant(ns, "new", "infra"))
	before := e.lastSeq(t)

	start(t, e.gatewayConfig("watcher-b"))
	deleted := e.waitMessage(t, e.gatewaySubject(events.KindHTTPRoute, ns, "gone"), events.OpDelete)
	if deleted.Event.UID != gone.Event.UID || deleted.Event.WatcherID != "watcher-b" {
		t.Errorf("delete %s (uid %s) does not match the create %s (uid %s)", deleted, deleted.Event.UID, gone, gone.Event.UID)
	}
	checkNewMessages(t, e.env, before, []string{
		e.gatewaySubject(events.KindHTTPRoute, ns, "changed") + " update",
		e.gatewaySubject(events.KindHTTPRoute, ns, "gone") + " delete",
		e.gatewaySubject(events.KindReferenceGrant, ns, "new") + " create",
		e.subject(events.KindService, "marker") + " create",
	})
}

// setRouteStatus writes a parent status on the HTTPRoute, as the
// controller of another class would.
func setRouteStatus(t *testing.T, e *gwEnv, name string) {
	t.Helper()
	updateRoute(t, e, name, true, func(r *gatewayv1.HTTPRoute) {
		r.Status.Parents = []gatewayv1.RouteParentStatus{{
			ParentRef: r.Spec.ParentRefs[0], ControllerName: "example.com/other",
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
				LastTransitionTime: metav1.Now(), ObservedGeneration: r.Generation}},
		}}
	})
}

// updateRoute changes the HTTPRoute name of the test's namespace with
// change, then updates it (its status subresource with status).
func updateRoute(t *testing.T, e *gwEnv, name string, status bool, change func(*gatewayv1.HTTPRoute)) {
	t.Helper()
	ctx, routes := t.Context(), e.gw.GatewayV1().HTTPRoutes(e.ns)
	route, err := routes.Get(ctx, name, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	change(route)
	if status {
		_, err = routes.UpdateStatus(ctx, route, updateOpts)
	} else {
		_, err = routes.Update(ctx, route, updateOpts)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestGatewayNoopUpdateIsDropped: an HTTPRoute update of its status only
// publishes nothing; a change of its spec does, with the status.
func TestGatewayNoopUpdateIsDropped(t *testing.T) {
	e := newGatewayEnv(t, true)
	ns := e.ns
	w := start(t, e.gatewayConfig("watcher-a"))
	e.createGateway(t, httpRoute(ns, "web", "edge", "shop.example.com"))
	subject := e.gatewaySubject(events.KindHTTPRoute, ns, "web")
	e.waitMessage(t, subject, events.OpCreate)

	setRouteStatus(t, e, "web")
	eventually(t, "a dropped HTTPRoute update", func() bool {
		return w.metric(t, "ingress_sync_watcher_noop_updates_dropped_total", "kind", "HTTPRoute") >= 1
	})
	if msgs := on(e.messages(t), subject); len(msgs) != 1 {
		t.Errorf("messages on %s: %v, want only the create", subject, msgs)
	}
	updateRoute(t, e, "web", false, func(r *gatewayv1.HTTPRoute) { r.Spec.Hostnames = []gatewayv1.Hostname{"other.example.com"} })
	m := e.waitMessage(t, subject, events.OpUpdate)
	if got := m.Event.Object.(*gatewayv1.HTTPRoute).Status.Parents; len(got) != 1 || got[0].ControllerName != "example.com/other" {
		t.Errorf("published HTTPRoute lost its status: %v", got)
	}
}

// TestGatewaySecretsOnlyOfOurClass: a TLS Secret is published while a
// listener of a Gateway of our class names it: not for a Gateway of a
// foreign class (until the Gateway moves to ours), and in another
// namespace only while a ReferenceGrant allows it. The watcher watches
// every namespace here, to see two.
func TestGatewaySecretsOnlyOfOurClass(t *testing.T) {
	e := newGatewayEnv(t, true)
	ctx, ns, v1 := t.Context(), e.ns, e.gw.GatewayV1()
	other := testenv.NewNamespace(t, e.client)
	cfg := e.gatewayConfig("watcher-a")
	cfg.WatchNamespace, cfg.ConfigMaps = "", nil
	start(t, cfg)
	e.createGateway(t, gatewayClass(e.class(), e.gatewayController()))
	e.createGateway(t, gatewayClass("foreign-"+ns, "example.com/other-"+ns))
	for _, s := range []*corev1.Secret{tlsSecret(ns, "foreign"), tlsSecret(ns, "ours"), tlsSecret(other, "cross")} {
		e.create(t, s)
	}
	secret := func(ns, name string) string { return events.Subject(prefix, events.KindSecret, ns, name) }
	none := func(subject string) {
		t.Helper()
		if msgs := on(e.messages(t), subject); len(msgs) > 0 {
			t.Fatalf("published: %v", msgs)
		}
	}

	// One worker publishes keys in the order they were queued: once the
	// Secret of ours is in the stream, the decisions queued before it
	// have been made.
	e.createGateway(t, gateway(ns, "foreign", "foreign-"+ns, secretRef("", "foreign")))
	e.createGateway(t, gateway(ns, "cross", e.class(), secretRef(other, "cross")))
	e.createGateway(t, gateway(ns, "ours", e.class(), secretRef("", "ours")))
	e.waitMessage(t, secret(ns, "ours"), events.OpCreate)
	none(secret(ns, "foreign"))
	none(secret(other, "cross"))

	e.createGateway(t, referenceGrant(other, "from-gateways", ns))
	e.waitMessage(t, secret(other, "cross"), events.OpCreate)
	if err := v1.ReferenceGrants(other).Delete(ctx, "from-gateways", deleteOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, secret(other, "cross"), events.OpDelete)

	gw, err := v1.Gateways(ns).Get(ctx, "foreign", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	gw.Spec.GatewayClassName = gatewayv1.ObjectName(e.class())
	if _, err := v1.Gateways(ns).Update(ctx, gw, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, secret(ns, "foreign"), events.OpCreate)
	if err := v1.Gateways(ns).Delete(ctx, "ours", deleteOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, secret(ns, "ours"), events.OpDelete)
}
