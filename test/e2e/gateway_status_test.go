package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayv1client "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/typed/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
)

// gwScene is a test's namespace with the Gateway API CRDs installed and a
// GatewayClass of ours.
type gwScene struct {
	ns    string
	api   gatewayv1client.GatewayV1Interface
	class string
}

func newGatewayScene(t *testing.T) *gwScene {
	t.Helper()
	s := &gwScene{ns: setup(t)}
	gatewayapi.InstallT(t, w.CP.Config())
	s.api = gatewayclient.NewForConfigOrDie(w.CP.Config()).GatewayV1()
	s.class = "ingress-sync-" + s.ns
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: s.class},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gateway.DefaultControllerName}}
	create(t, class, s.api.GatewayClasses().Create, func(ctx context.Context) error {
		return s.api.GatewayClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
	})
	return s
}

// httpListener is an HTTP listener on port for hostname host ("": any).
func httpListener(name string, port int32, host string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: gatewayv1.PortNumber(port), Protocol: gatewayv1.HTTPProtocolType}
	if host != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(host))
	}
	return l
}

// createGateway creates Gateway name of our class with listeners, deleted
// at the end of the test.
func (s *gwScene) createGateway(t *testing.T, name string, listeners ...gatewayv1.Listener) *gatewayv1.Gateway {
	t.Helper()
	g := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(s.class), Listeners: listeners}}
	create(t, g, s.api.Gateways(s.ns).Create, func(ctx context.Context) error {
		return s.api.Gateways(s.ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
	return g
}

// backendRule is a rule sending PathPrefix path (all paths for "") to
// Service ns/svc port 80 (ns "": the route's).
func backendRule(path, ns, svc string) gatewayv1.HTTPRouteRule {
	ref := gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}
	if ns != "" {
		ref.Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	r := gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: ref}}}}
	if path != "" {
		r.Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(path)}}}
	}
	return r
}

// createRoute creates HTTPRoute name on Gateway edge with hostnames and
// rules, deleted at the end of the test.
func (s *gwScene) createRoute(t *testing.T, name string, hostnames []string, rules ...gatewayv1.HTTPRouteRule) {
	t.Helper()
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
		Rules:           rules}}
	for _, h := range hostnames {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	create(t, r, s.api.HTTPRoutes(s.ns).Create, func(ctx context.Context) error {
		return s.api.HTTPRoutes(s.ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// updateRoute changes HTTPRoute name and updates it, again after a
// conflict (the watcher writes its status).
func (s *gwScene) updateRoute(t *testing.T, name string, change func(*gatewayv1.HTTPRoute)) {
	t.Helper()
	routes := s.api.HTTPRoutes(s.ns)
	updateRetrying(t, "HTTPRoute "+name, func(ctx context.Context) (*gatewayv1.HTTPRoute, error) {
		return routes.Get(ctx, name, metav1.GetOptions{})
	}, change, routes.Update)
}

// updateGateway is updateRoute for Gateway name.
func (s *gwScene) updateGateway(t *testing.T, name string, change func(*gatewayv1.Gateway)) {
	t.Helper()
	gws := s.api.Gateways(s.ns)
	updateRetrying(t, "Gateway "+name, func(ctx context.Context) (*gatewayv1.Gateway, error) {
		return gws.Get(ctx, name, metav1.GetOptions{})
	}, change, gws.Update)
}

// updateRetrying reads an object with get, changes it and writes it with
// update, again after a conflict.
func updateRetrying[T any](t *testing.T, what string, get func(context.Context) (T, error), change func(T),
	update func(context.Context, T, metav1.UpdateOptions) (T, error)) {
	t.Helper()
	eventually(t, waitTimeout, what+" updated", func() error {
		obj, err := get(t.Context())
		if err != nil {
			return err
		}
		change(obj)
		_, err = update(t.Context(), obj, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
		return err
	})
}

// conds is "Type=Status/Reason@observedGeneration" per condition.
func conds(cs []metav1.Condition) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s=%s/%s@%d", c.Type, c.Status, c.Reason, c.ObservedGeneration)
	}
	return strings.Join(out, " ")
}

// condOf is conds of condition typ of cs, "" when there is none.
func condOf(cs []metav1.Condition, typ string) string {
	if c := metaCondition(cs, typ); c != nil {
		return conds([]metav1.Condition{*c})
	}
	return ""
}

func metaCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// waitRouteParent waits until our parent status of HTTPRoute name is
// want (conds).
func (s *gwScene) waitRouteParent(t *testing.T, name, want string) {
	t.Helper()
	eventually(t, waitTimeout, "HTTPRoute "+name+" status "+want, func() error {
		r, err := s.api.HTTPRoutes(s.ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var got []string
		for _, p := range r.Status.Parents {
			if p.ControllerName == gateway.DefaultControllerName {
				got = append(got, conds(p.Conditions))
			}
		}
		if !slices.Equal(got, []string{want}) {
			return fmt.Errorf("our parents %q", got)
		}
		return nil
	})
}

// waitGateway waits until Gateway name's status passes check.
func (s *gwScene) waitGateway(t *testing.T, name, what string, check func(*gatewayv1.Gateway) error) *gatewayv1.Gateway {
	t.Helper()
	var g *gatewayv1.Gateway
	eventually(t, waitTimeout, "Gateway "+name+" "+what, func() error {
		var err error
		if g, err = s.api.Gateways(s.ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if err := check(g); err != nil {
			return fmt.Errorf("%w (status %s)", err, conds(g.Status.Conditions))
		}
		return nil
	})
	return g
}

// programmed checks that g is Accepted and Programmed at generation gen,
// with the address of its Service and attached routes on each listener.
func programmed(gen int64, address string, attached ...int32) func(*gatewayv1.Gateway) error {
	return func(g *gatewayv1.Gateway) error {
		want := fmt.Sprintf("Accepted=True/Accepted@%d Programmed=True/Programmed@%d", gen, gen)
		if got := condOf(g.Status.Conditions, "Accepted") + " " + condOf(g.Status.Conditions, "Programmed"); got != want {
			return fmt.Errorf("conditions %q, want %q", got, want)
		}
		if len(g.Status.Addresses) != 1 || g.Status.Addresses[0].Value != address {
			return fmt.Errorf("addresses %+v, want %s", g.Status.Addresses, address)
		}
		var got []int32
		for _, l := range g.Status.Listeners {
			if c := condOf(l.Conditions, "Programmed"); c != fmt.Sprintf("Programmed=True/Programmed@%d", gen) {
				return fmt.Errorf("listener %s: %s", l.Name, c)
			}
			got = append(got, l.AttachedRoutes)
		}
		if !slices.Equal(got, attached) {
			return fmt.Errorf("attachedRoutes %v, want %v", got, attached)
		}
		return nil
	}
}

// serviceAddress is the cluster IP of the Service the watcher keeps for
// Gateway g.
func serviceAddress(t *testing.T, g *gatewayv1.Gateway) string {
	t.Helper()
	svc, err := w.Kube.CoreV1().Services(gatewayServiceNamespace).Get(t.Context(), gateway.ServiceName(g.Namespace, g.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

// problemEvents are the Warnings the watcher posted on HTTPRoute name.
func (s *gwScene) problemEvents(t *testing.T, name string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": "HTTPRoute", "involvedObject.name": name, "reason": watch.ReasonProblem}.AsSelector().String()
	list, err := w.Kube.CoreV1().Events(s.ns).List(t.Context(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// waitProblem waits for a Warning on HTTPRoute name whose message has
// part.
func (s *gwScene) waitProblem(t *testing.T, name, part string) {
	t.Helper()
	eventually(t, waitTimeout, "a Warning on HTTPRoute "+name, func() error {
		var msgs []string
		for _, ev := range s.problemEvents(t, name) {
			if ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, part) {
				return nil
			}
			msgs = append(msgs, ev.Message)
		}
		return fmt.Errorf("no Warning with %q among %q", part, msgs)
	})
}

// TestGatewayStatusThroughTheSystem: a Gateway of ours gets its Service
// from the watcher and becomes Accepted and Programmed with the Service's
// address once the syncers serve it; an HTTPRoute attached to it is
// served on the Service's port of the fleet, counted in attachedRoutes,
// and Accepted with resolved refs at its generation; changing it serves
// the change and moves the observedGeneration; the route's create and
// change reload nothing.
func TestGatewayStatusThroughTheSystem(t *testing.T) {
	s := newGatewayScene(t)
	host := s.ns + ".status.example.com"
	web, api := service(t, s.ns, "web"), service(t, s.ns, "api")
	edge := s.createGateway(t, "edge", httpListener("http", 80, host))
	port := gatewayPorts(t, edge, 80)[0]
	addr := serviceAddress(t, edge)
	s.waitGateway(t, "edge", "programmed without routes", programmed(1, addr, 0))
	converged(t)
	before := reloads(t)

	s.createRoute(t, "shop", nil, backendRule("", "", web.Name))
	h := "http://" + host
	routesOn(t, nil, port, map[string]string{h + "/": web.Name, h + "/api": web.Name})
	s.waitRouteParent(t, "shop", "Accepted=True/Accepted@1 ResolvedRefs=True/ResolvedRefs@1")
	s.waitGateway(t, "edge", "with the route attached", programmed(1, addr, 1))

	s.updateRoute(t, "shop", func(r *gatewayv1.HTTPRoute) {
		r.Spec.Rules = append(r.Spec.Rules, backendRule("/api", "", api.Name))
	})
	routesOn(t, nil, port, map[string]string{h + "/api/x": api.Name, h + "/": web.Name})
	s.waitRouteParent(t, "shop", "Accepted=True/Accepted@2 ResolvedRefs=True/ResolvedRefs@2")
	converged(t)
	if after := reloads(t); !slices.Equal(after, before) {
		t.Fatalf("reloads %v -> %v: an HTTPRoute's create and change must reload nothing", before, after)
	}
}

// TestReferenceGrantRevoked: a rule of an HTTPRoute whose backendRef is a
// Service of another namespace is served while a ReferenceGrant there
// allows it; once the grant is deleted the rule is served no more (its
// requests never reach that Service) and the route's ResolvedRefs turns
// False with RefNotPermitted.
func TestReferenceGrantRevoked(t *testing.T) {
	s := newGatewayScene(t)
	other := setup(t)
	host := s.ns + ".grant.example.com"
	web, shared := service(t, s.ns, "web"), service(t, other, "shared")
	grant := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "routes"},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: gatewayv1.Namespace(s.ns)}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service"}}}}
	grants := s.api.ReferenceGrants(other)
	create(t, grant, grants.Create, func(ctx context.Context) error { return grants.Delete(ctx, grant.Name, metav1.DeleteOptions{}) })
	edge := s.createGateway(t, "edge", httpListener("http", 80, host))
	port := gatewayPorts(t, edge, 80)[0]
	s.createRoute(t, "cross", nil, backendRule("", "", web.Name), backendRule("/shared", other, shared.Name))
	h := "http://" + host
	routesOn(t, nil, port, map[string]string{h + "/shared/x": shared.Name, h + "/": web.Name})
	s.waitRouteParent(t, "cross", "Accepted=True/Accepted@1 ResolvedRefs=True/ResolvedRefs@1")

	if err := grants.Delete(t.Context(), grant.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitRouteParent(t, "cross", "Accepted=True/Accepted@1 ResolvedRefs=False/RefNotPermitted@1")
	for i := range w.Syncers {
		c := clientOn(i, nil, port)
		eventually(t, waitTimeout, "the revoked rule answering 500", func() error {
			r, err := echo.Get(t.Context(), c, h+"/shared/x")
			switch {
			case err != nil:
				return err
			case r.Reply.Backend == shared.Name:
				return fmt.Errorf("syncer-%d: still answered by %s", i, shared.Name)
			case r.Status != http.StatusInternalServerError:
				// The share of a reference no longer permitted answers
				// 500 (the rule is not left out to "/").
				return fmt.Errorf("syncer-%d: status %d from %q, want 500", i, r.Status, r.Reply.Backend)
			}
			return nil
		})
	}
	routesOn(t, nil, port, map[string]string{h + "/": web.Name})
}

// TestBadHTTPRouteBesideGood: an HTTPRoute with a backendRef of a kind we
// do not resolve and one with a RegularExpression path nginx's PCRE
// would not take do not keep a good route created after them from being
// served; the first's status says InvalidKind, and a Warning Event on each
// says why.
func TestBadHTTPRouteBesideGood(t *testing.T) {
	s := newGatewayScene(t)
	web := service(t, s.ns, "web")
	edge := s.createGateway(t, "edge", httpListener("http", 80, ""))
	port := gatewayPorts(t, edge, 80)[0]
	badKind := backendRule("", "", "bucket")
	badKind.BackendRefs[0].Group = ptr.To[gatewayv1.Group]("storage.example.com")
	badKind.BackendRefs[0].Kind = ptr.To[gatewayv1.Kind]("Bucket")
	s.createRoute(t, "bad-kind", []string{"kind." + s.ns + ".example.com"}, badKind)
	badPath := backendRule("", "", web.Name)
	badPath.Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
		Type: ptr.To(gatewayv1.PathMatchRegularExpression), Value: ptr.To("/(unclosed")}}}
	s.createRoute(t, "bad-path", []string{"path." + s.ns + ".example.com"}, badPath)
	s.createRoute(t, "good", []string{"good." + s.ns + ".example.com"}, backendRule("", "", web.Name))

	routesOn(t, nil, port, map[string]string{"http://good." + s.ns + ".example.com/": web.Name})
	s.waitRouteParent(t, "good", "Accepted=True/Accepted@1 ResolvedRefs=True/ResolvedRefs@1")
	s.waitRouteParent(t, "bad-kind", "Accepted=True/Accepted@1 ResolvedRefs=False/InvalidKind@1")
	s.waitProblem(t, "bad-kind", "not of a supported kind")
	s.waitProblem(t, "bad-path", "(unclosed")
	if evs := s.problemEvents(t, "good"); len(evs) != 0 {
		t.Errorf("Warnings on the good route: %+v", evs)
	}
}

// TestGatewayStatusAfterSyncerRestart: with syncer-1 stopped (SIGSTOP),
// a change of the Gateway (a new listener) and of its route is served by
// syncer-0, but the Gateway is not Programmed at its new generation until
// syncer-1 runs again and serves it. Then with syncer-1 restarted (a new
// process, bootstrapping from the stream) after a route change made while
// it was down, both serve the change and the Gateway stays Programmed.
func TestGatewayStatusAfterSyncerRestart(t *testing.T) {
	s := newGatewayScene(t)
	host := s.ns + ".restart.example.com"
	web, api := service(t, s.ns, "web"), service(t, s.ns, "api")
	edge := s.createGateway(t, "edge", httpListener("http", 80, host))
	s.createRoute(t, "shop", nil, backendRule("", "", web.Name))
	port := gatewayPorts(t, edge, 80)[0]
	addr := serviceAddress(t, edge)
	h := "http://" + host
	routesOn(t, nil, port, map[string]string{h + "/": web.Name})
	s.waitGateway(t, "edge", "programmed", programmed(1, addr, 1))
	converged(t)

	stopped := w.Syncers[1]
	resume := pause(t, stopped)
	s.updateGateway(t, "edge", func(g *gatewayv1.Gateway) {
		g.Spec.Listeners = append(g.Spec.Listeners, httpListener("alt", 8080, host))
	})
	s.updateRoute(t, "shop", func(r *gatewayv1.HTTPRoute) {
		r.Spec.Rules = append(r.Spec.Rules, backendRule("/api", "", api.Name))
	})
	alt := gatewayPorts(t, edge, 8080)[0]
	c := clientOn(0, nil, alt)
	eventually(t, waitTimeout, "syncer-0 serves the new listener", func() error {
		r, err := echo.Get(t.Context(), c, h+"/api/x")
		if err == nil && (r.Status != http.StatusOK || r.Reply.Backend != api.Name) {
			err = fmt.Errorf("status %d from %q", r.Status, r.Reply.Backend)
		}
		return err
	})
	s.waitGateway(t, "edge", "pending on the stopped syncer", func(g *gatewayv1.Gateway) error {
		if got := condOf(g.Status.Conditions, "Programmed"); got != "Programmed=False/Pending@2" {
			return fmt.Errorf("Programmed %q", got)
		}
		return nil
	})
	resume()
	s.waitGateway(t, "edge", "programmed once both serve it", programmed(2, addr, 1, 1))
	routesOn(t, nil, alt, map[string]string{h + "/api/x": api.Name, h + "/": web.Name})
	s.waitRouteParent(t, "shop", "Accepted=True/Accepted@2 ResolvedRefs=True/ResolvedRefs@2")

	if err := stopped.Stop(); err != nil {
		t.Fatalf("stop %s: %v", stopped.Name, err)
	}
	s.updateRoute(t, "shop", func(r *gatewayv1.HTTPRoute) {
		r.Spec.Rules = append(r.Spec.Rules, backendRule("/v2", "", api.Name))
	})
	if err := stopped.Start(); err != nil {
		t.Fatal(err)
	}
	converged(t)
	routesOn(t, nil, port, map[string]string{h + "/v2/x": api.Name, h + "/api/x": api.Name, h + "/": web.Name})
	s.waitRouteParent(t, "shop", "Accepted=True/Accepted@3 ResolvedRefs=True/ResolvedRefs@3")
	s.waitGateway(t, "edge", "programmed after the restart", programmed(2, addr, 1, 1))
}
