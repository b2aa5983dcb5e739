package model

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// gatewayService is the Service the watcher keeps for g: listener port P
// on port base+P of the fleet.
func gatewayService(g *gatewayv1.Gateway, base int32) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: gateway.ServiceName(g.Namespace, g.Name),
		Labels:      map[string]string{gateway.ServiceManagedByLabel: gateway.ServiceManagedBy},
		Annotations: map[string]string{gateway.ServiceGatewayAnnotation: g.Namespace + "/" + g.Name}}}
	for _, l := range g.Spec.Listeners {
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(l.Port) }) {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Port: int32(l.Port), TargetPort: intstr.FromInt32(base + int32(l.Port))})
		}
	}
	return svc
}

// TestBuildHTTPRoute: an HTTPRoute attached to a Gateway of ours is built
// beside the Ingresses, on the port of the fleet of its listener: an
// Ingress and a route on one host are apart (no conflict), and on one port
// the build's rules apply between routes (the older wins).
func TestBuildHTTPRoute(t *testing.T) {
	class := eventstest.GatewayClass()
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	route := func(ns, host string, created int) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta(ns, "r")}
		r.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(created) * time.Second))
		r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
		r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(host)}
		r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
		return r
	}
	s := newGatewayStore()
	younger := route("app3", "a.example.com", 40)
	younger.Name = "r3"
	for _, o := range []runtime.Object{class, edge, service("app", "web", svcPort("http", 80)), service("app2", "web", svcPort("http", 80)),
		service("app3", "web", svcPort("http", 80)), slice("app", "web-1", "web", "http", 80, ready("10.0.0.1")),
		route("app", "a.example.com", 10), route("app2", "b.example.com", 30), younger,
		newIngress("app2", "ing", created(20), rule("b.example.com", prefix("/", "web", 80)))} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	if p := problemStrings(cfg.Problems); len(p) != 3 || !strings.Contains(p[0], "waiting for its Service") {
		t.Fatalf("problems before the Gateway's Service: %q", p)
	}
	if a := serverAt(cfg, 0, "a.example.com"); a != nil {
		t.Fatalf("a route served before its Gateway's Service: %+v", a)
	}
	if _, err := s.Apply(upsertEvent(gatewayService(edge, 10000))); err != nil {
		t.Fatal(err)
	}
	cfg = Build(s, testOptions())
	a := serverAt(cfg, 10080, "a.example.com")
	if a == nil || len(a.Locations) == 0 || a.Locations[0].Backend != "app-web-80" || a.Locations[0].Ingress != "app/r" ||
		a.Locations[0].Kind != "HTTPRoute" {
		t.Fatalf("a.example.com: %+v", a)
	}
	if b := serverAt(cfg, 0, "b.example.com"); b == nil || b.Locations[0].Ingress != "app2/ing" {
		t.Fatalf("b.example.com on nginx's ports: %+v, want the Ingress's path", b)
	}
	if b := serverAt(cfg, 10080, "b.example.com"); b == nil || b.Locations[0].Ingress != "app2/r" {
		t.Fatalf("b.example.com on the listener's port: %+v, want the route's path", b)
	}
	if serverAt(cfg, 0, "a.example.com") != nil {
		t.Fatal("a route served on nginx's own ports")
	}
	want := "HTTPRoute app3/r3: host a.example.com path / (Prefix): conflicts with HTTPRoute app/r, which is older and is used"
	if got := problemStrings(cfg.Problems); len(got) != 1 || !strings.Contains(got[0], want) {
		t.Fatalf("problems:\n%s\nwant only one like %q", strings.Join(got, "\n"), want)
	}
	if !slices.Equal(cfg.Listeners, []config.Listener{{Port: 10080, Gateway: "shop/edge"}}) {
		t.Fatalf("listeners %+v", cfg.Listeners)
	}
}

// serverAt returns the Server of host on nginx port port (0: nginx's own).
func serverAt(cfg *config.Configuration, port int, host string) *config.Server {
	for i := range cfg.Servers {
		if cfg.Servers[i].Hostname == host && cfg.Servers[i].Port == port {
			return &cfg.Servers[i]
		}
	}
	return nil
}

// TestBuildHTTPSRoute: a route on an HTTPS listener gets the listener's
// certificate for its hosts, from the Gateway's namespace; one on an HTTP
// listener as well is not redirected to HTTPS.
func TestBuildHTTPSRoute(t *testing.T) {
	edge := eventstest.Gateway()
	all := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}
	edge.Spec.Listeners = []gatewayv1.Listener{
		{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: all},
		{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, AllowedRoutes: all,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "edge-cert"}}}},
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), edge, tlsSecret(t, edge.Namespace, "edge-cert", "example"),
		service("app", "web", svcPort("http", 80)), r, gatewayService(edge, 10000)} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	if a := serverAt(cfg, 10443, "a.example.com"); a == nil || !a.TLS || a.SSLRedirect {
		t.Fatalf("a.example.com on the HTTPS listener: %+v, want TLS without a redirect", a)
	}
	if a := serverAt(cfg, 10080, "a.example.com"); a == nil || a.TLS {
		t.Fatalf("a.example.com on the HTTP listener: %+v, want plain HTTP", a)
	}
	if !slices.Equal(cfg.Listeners, []config.Listener{{Port: 10080, Gateway: "shop/edge"}, {Port: 10443, TLS: true, Gateway: "shop/edge"}}) {
		t.Fatalf("listeners %+v", cfg.Listeners)
	}
	var certHosts []string
	for _, c := range cfg.Certificates {
		certHosts = append(certHosts, c.Hosts...)
	}
	// The listener has no hostname: its certificate is also the port's
	// own default ("10443:_").
	if !slices.Equal(certHosts, []string{"10443:_", "10443:a.example.com"}) {
		t.Fatalf("certificates for %q, want a.example.com's and the port's default from %s/edge-cert (problems %q)", certHosts, edge.Namespace, problemStrings(cfg.Problems))
	}
	eff, err := s.Apply(upsertEvent(tlsSecret(t, edge.Namespace, "edge-cert", "other")))
	if err != nil || !s.CanChange(eff, testOptions()) {
		t.Fatalf("a change of the listener's Secret cannot change the Configuration (%v)", err)
	}
}

// TestBuildHTTPRouteWeights: a rule's backends share its requests by
// weight (Location.Backends); one that does not resolve answers its share
// 500 rather than sending it to the others.
func TestBuildHTTPRouteWeights(t *testing.T) {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	ref := func(svc string, w int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: ptr(w),
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr(gatewayv1.PortNumber(80))}}}
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{
		{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", 90), ref("canary", 10)}},
		{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr(gatewayv1.PathMatchExact), Value: ptr("/x")}}},
			BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", 1), ref("missing", 1)}},
	}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), edge, service("app", "web", svcPort("http", 80)),
		service("app", "canary", svcPort("http", 80)), r, gatewayService(edge, 10000)} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	a := serverAt(cfg, 10080, "a.example.com")
	if a == nil || len(a.Locations) != 2 {
		t.Fatalf("a.example.com: %+v, want two paths", a)
	}
	want := [][]config.WeightedBackend{{{Backend: "app-web-80", Weight: 1}, {Backend: "", Weight: 1}},
		{{Backend: "app-web-80", Weight: 90}, {Backend: "app-canary-80", Weight: 10}}}
	for i, w := range want {
		if l := a.Locations[i]; l.Backend != "" || !reflect.DeepEqual(l.Backends, w) {
			t.Errorf("location %s: backend %q, backends %+v, want %+v", l.Path, l.Backend, l.Backends, w)
		}
	}
	if got := strings.Join(problemStrings(cfg.Problems), "\n"); !strings.Contains(got, "path /x: backend missing: service app/missing not found; its share of the requests answers 500") {
		t.Fatalf("problems:\n%s", got)
	}
	checkDataPlane(t, cfg)
}

// TestBuildGatewaysOnOnePort: two Gateways whose listeners are both on
// port 80 with no hostname each have their own default server, on the
// port of the fleet their Service gives them, and their routes stay apart;
// a port nginx or the syncer listens on already is not served.
func TestBuildGatewaysOnOnePort(t *testing.T) {
	all := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}
	gws := make([]*gatewayv1.Gateway, 3)
	objs := []runtime.Object{eventstest.GatewayClass(), service("app", "one", svcPort("http", 80)), service("app", "two", svcPort("http", 80)),
		service("app", "three", svcPort("http", 80))}
	for i, name := range []string{"one", "two", "three"} {
		g := eventstest.Gateway()
		g.Name = name
		g.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: all}}
		gws[i] = g
		r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", name)}
		r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(name), Namespace: ptr(gatewayv1.Namespace(g.Namespace))}}
		r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr(gatewayv1.PortNumber(80))}}}}}}
		objs = append(objs, g, r)
	}
	// one and two on ports of the fleet, three on nginx's status port.
	objs = append(objs, gatewayService(gws[0], 10000), gatewayService(gws[1], 10001), gatewayService(gws[2], 10246-80))
	s := newGatewayStore()
	for _, o := range objs {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	opts := testOptions()
	opts.ReservedPorts = []int{80, 443, 10246, 10254}
	cfg := Build(s, opts)
	for port, backend := range map[int]string{10080: "app-one-80", 10081: "app-two-80"} {
		d := serverAt(cfg, port, config.DefaultServerName)
		if d == nil || len(d.Locations) != 1 || d.Locations[0].Backend != backend {
			t.Fatalf("the default server of port %d: %+v, want %s's route alone", port, d, backend)
		}
	}
	if d := serverAt(cfg, 0, config.DefaultServerName); d == nil || d.Locations[0].Backend != "" {
		t.Fatalf("the default server of nginx's own ports: %+v, want the built-in 404", d)
	}
	if serverAt(cfg, 10246, config.DefaultServerName) != nil {
		t.Fatal("a route served on nginx's status port")
	}
	if !slices.Equal(cfg.Listeners, []config.Listener{{Port: 10080, Gateway: "shop/one"}, {Port: 10081, Gateway: "shop/two"}}) {
		t.Fatalf("listeners %+v", cfg.Listeners)
	}
	got := strings.Join(problemStrings(cfg.Problems), "\n")
	for _, want := range []string{"Gateway shop/three: listener port of the fleet: invalid listener port: 10246 is one of nginx's or the syncer's own ports",
		"HTTPRoute app/three: host _: its listener's port 10246 is not served; rule left out"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant one like %q", got, want)
		}
	}
	checkDataPlane(t, cfg)
}

// TestBuildGatewayWildcard: a route's wildcard hostname is a Server of
// its listener's port, beside an exact one of the same domain, and apart
// from an Ingress's wildcard of the same name on nginx's own ports.
func TestBuildGatewayWildcard(t *testing.T) {
	g := eventstest.Gateway()
	g.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "wild")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(g.Name), Namespace: ptr(gatewayv1.Namespace(g.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{"*.example.com", "a.example.com"}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Port: ptr(gatewayv1.PortNumber(80))}}}}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), g, gatewayService(g, 10000), service("app", "web", svcPort("http", 80)), r,
		newIngress("app", "ing", rule("*.example.com", prefix("/", "web", 80)))} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	for _, tc := range []struct {
		port       int
		host, from string
	}{{10080, "*.example.com", "app/wild"}, {10080, "a.example.com", "app/wild"}, {0, "*.example.com", "app/ing"}} {
		srv := serverAt(cfg, tc.port, tc.host)
		if srv == nil || len(srv.Locations) == 0 || srv.Locations[0].Ingress != tc.from {
			t.Errorf("port %d host %s: %+v, want the route of %s", tc.port, tc.host, srv, tc.from)
		}
	}
	if len(cfg.Problems) != 0 {
		t.Errorf("problems: %v", problemStrings(cfg.Problems))
	}
}

// TestBuildMissingServiceAnswers500: the one backendRef of a rule whose
// Service does not exist answers 500 (Gateway API), with a Problem; once
// the Service exists the path routes to it as a plain backend.
func TestBuildMissingServiceAnswers500(t *testing.T) {
	g := eventstest.Gateway()
	g.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta("app", "r")}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(g.Name), Namespace: ptr(gatewayv1.Namespace(g.Namespace))}}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: "nonexistent", Port: ptr(gatewayv1.PortNumber(8080))}}}}}}
	s := newGatewayStore()
	for _, o := range []runtime.Object{eventstest.GatewayClass(), g, gatewayService(g, 10000), r} {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Build(s, testOptions())
	d := serverAt(cfg, 10080, config.DefaultServerName)
	if d == nil || len(d.Locations) != 1 || d.Locations[0].Backend != "" ||
		!slices.Equal(d.Locations[0].Backends, []config.WeightedBackend{{Weight: 1}}) {
		t.Fatalf("default server of the Gateway's port: %+v, want / answering 500", d)
	}
	if got := strings.Join(problemStrings(cfg.Problems), "\n"); !strings.Contains(got, "answers 500") {
		t.Fatalf("problems:\n%s\nwant one saying the path answers 500", got)
	}
	if _, err := s.Apply(upsertEvent(service("app", "nonexistent", svcPort("http", 8080)))); err != nil {
		t.Fatal(err)
	}
	cfg = Build(s, testOptions())
	d = serverAt(cfg, 10080, config.DefaultServerName)
	if d == nil || len(d.Locations) != 1 || d.Locations[0].Backend != "app-nonexistent-8080" || d.Locations[0].Backends != nil {
		t.Fatalf("with the Service: %+v, want a plain backend", d)
	}
}
