package gateway

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

const testController = "example.com/gateway"

func class(name, controller string) *gatewayv1.GatewayClass {
	return &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(controller)}}
}

func gw(ns, name, class string, listeners ...gatewayv1.Listener) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class), Listeners: listeners}}
}

func listener(name string, port int32, host string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: gatewayv1.PortNumber(port), Protocol: gatewayv1.HTTPProtocolType}
	if host != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(host))
	}
	return l
}

func backend(svc string, port int32) gatewayv1.HTTPBackendRef {
	return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(svc), Port: ptr.To(gatewayv1.PortNumber(port))}}}
}

func pathMatch(typ gatewayv1.PathMatchType, v string) gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(typ), Value: ptr.To(v)}}
}

// httpRoute is a route of namespace "app" to gateway infra/edge (or the
// parents given), with hostnames and rules.
func httpRoute(hosts []string, rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web"}}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "edge", Namespace: ptr.To[gatewayv1.Namespace]("infra")}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

func rule(matches []gatewayv1.HTTPRouteMatch, refs ...gatewayv1.HTTPBackendRef) gatewayv1.HTTPRouteRule {
	return gatewayv1.HTTPRouteRule{Matches: matches, BackendRefs: refs}
}

// https is an HTTPS listener on 443 for routes of every namespace,
// terminating TLS with Secret ns/name.
func https(ns, name string) gatewayv1.Listener {
	l := allNamespaces(listener("https", 443, ""))
	l.Protocol = gatewayv1.HTTPSProtocolType
	l.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{
		Name: gatewayv1.ObjectName(name), Namespace: ptr.To(gatewayv1.Namespace(ns))}}}
	return l
}

// grant lets the Gateways of namespace from refer to the Secrets of ns.
func grant(ns, from string) *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "certs"}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: gatewayv1.Namespace(from)}},
		To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Secret"}}}}
}

// allNamespaces lets routes of every namespace attach to l.
func allNamespaces(l gatewayv1.Listener) gatewayv1.Listener {
	l.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	return l
}

// noServices in the objects of translated keeps it from giving each
// Gateway its Service.
type noServices struct{}

// gatewayService is the Service the watcher keeps for g: listener port P
// on port 10000+P of the fleet.
func gatewayService(g *gatewayv1.Gateway) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: ServiceName(g.Namespace, g.Name),
		Labels:      map[string]string{ServiceManagedByLabel: ServiceManagedBy},
		Annotations: map[string]string{ServiceGatewayAnnotation: g.Namespace + "/" + g.Name}}}
	for _, l := range g.Spec.Listeners {
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(l.Port) }) {
			sp := corev1.ServicePort{Name: fmt.Sprintf("p%d", l.Port), Port: int32(l.Port),
				TargetPort: intstr.FromInt32(10000 + int32(l.Port))}
			if l.Protocol == gatewayv1.UDPProtocolType {
				sp.Protocol = corev1.ProtocolUDP
			}
			svc.Spec.Ports = append(svc.Spec.Ports, sp)
		}
	}
	return svc
}

// observe hands svc to src as the Store does.
func observe(t *testing.T, src *Source, svc *corev1.Service) []*intent.Entry {
	t.Helper()
	again, _, err := src.Observe(events.KindService, intent.Key{Namespace: svc.Namespace, Name: svc.Name}, svc)
	if err != nil {
		t.Fatal(err)
	}
	return again
}

// translated stores objs in a new Source (each Gateway with its Service,
// unless objs has noServices{}), then r, and returns r's entry.
func translated(t *testing.T, r *gatewayv1.HTTPRoute, objs ...any) *intent.Entry {
	t.Helper()
	src := sourceOf(t, objs...)
	e, err := src.Translate(routeKind(r), intent.Key{Namespace: r.Namespace, Name: r.Name}, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// sourceOf stores objs in a new Source, each Gateway with its Service
// unless objs has noServices{}.
func sourceOf(t *testing.T, objs ...any) *Source {
	t.Helper()
	src := NewSource(testController)
	services := !slices.Contains(objs, any(noServices{}))
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Service:
			observe(t, src, o)
		case *gatewayv1.GatewayClass:
			_, err = src.Keep(events.KindGatewayClass, intent.Key{Name: o.Name}, o)
		case *gatewayv1.Gateway:
			_, err = src.Keep(events.KindGateway, intent.Key{Namespace: o.Namespace, Name: o.Name}, o)
			if services {
				observe(t, src, gatewayService(o))
			}
		case *gatewayv1.ReferenceGrant:
			_, err = src.Keep(events.KindReferenceGrant, intent.Key{Namespace: o.Namespace, Name: o.Name}, o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// summary is "port:host path type service:port" per path of e. One
// backend that can be served, which the build routes as a plain backend
// when its Service exists, is written as one.
func summary(e *intent.Entry) []string {
	var out []string
	for _, h := range e.Rules {
		for _, p := range h.Paths {
			backend, weighted := p.Backend, p.Weighted
			if len(weighted) == 1 && !weighted[0].Invalid {
				backend, weighted = weighted[0].Backend, nil
			}
			svc := backend.Service
			if backend.Namespace != "" {
				svc = backend.Namespace + "/" + svc
			}
			s := config.ServerKey(h.Port, h.Host) + " " + p.Path + " " + string(p.PathType) + " " + svc + ":" + strconv.Itoa(int(backend.PortNumber))
			if weighted != nil {
				s += " ="
			}
			for _, w := range weighted {
				if w.Invalid {
					s += fmt.Sprintf(" 500*%d", w.Weight)
					continue
				}
				s += fmt.Sprintf(" %s:%d*%d", w.Backend.Service, w.Backend.PortNumber, w.Weight)
			}
			s += matchText(p.Match)
			out = append(out, s)
		}
	}
	return out
}

func TestTranslate(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	web := backend("web", 8)
	prefix := []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/")}
	tests := []struct {
		name     string
		route    *gatewayv1.HTTPRoute
		objs     []any
		want     []string
		tls      []string // "port:hosts namespace/secret"
		problems []string // substrings, in order
	}{
		{name: "attached, hostname of the route", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, edge}, want: []string{"10080:a.example.com / Prefix web:8"}},
		{name: "no hostname anywhere: the default server", route: httpRoute(nil, rule(nil, web)),
			objs: []any{ours, edge}, want: []string{"10080:_ / Prefix web:8"}},
		{name: "not our class", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{class("ours", "example.com/other"), edge}},
		{name: "no Gateway yet", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)), objs: []any{ours}},
		{name: "same namespace only by default", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", listener("http", 80, ""))}},
		{name: "listener hostname narrows a wildcard", route: httpRoute([]string{"*.example.com"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "a.example.com")))},
			want: []string{"10080:a.example.com / Prefix web:8"}},
		{name: "hostnames that do not intersect", route: httpRoute([]string{"b.example.org"}, rule(prefix, web)),
			objs:     []any{ours, gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "*.example.com")))},
			problems: []string{"no hostname of the route matches the listener's"}},
		{name: "a wildcard hostname of the route", route: httpRoute([]string{"*.example.com"}, rule(prefix, web)),
			objs: []any{ours, edge}, want: []string{"10080:*.example.com / Prefix web:8"}},
		{name: "a listener's wildcard narrows the route's", route: httpRoute([]string{"*.example.com", "a.example.org"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "*.shop.example.com")))},
			want: []string{"10080:*.shop.example.com / Prefix web:8"}, problems: nil},
		{name: "HTTPS: the listener's certificate", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", https("infra", "cert"))},
			want: []string{"10443:a.example.com / Prefix web:8"}, tls: []string{"10443:a.example.com,_ infra/cert"}},
		{name: "HTTPS: a certificate of another namespace needs a grant", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs:     []any{ours, gw("infra", "edge", "ours", https("certs", "cert"))},
			problems: []string{"Secret certs/cert is in another namespace and no ReferenceGrant there allows it"}},
		{name: "HTTPS: a granted certificate of another namespace", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", https("certs", "cert")), grant("certs", "infra")},
			want: []string{"10443:a.example.com / Prefix web:8"}, tls: []string{"10443:a.example.com,_ certs/cert"}},
		{name: "HTTPS: passthrough is not served", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", func() gatewayv1.Listener {
				l := https("infra", "cert")
				l.TLS.Mode = ptr.To(gatewayv1.TLSModePassthrough)
				return l
			}())}, problems: []string{"only TLS mode Terminate is served on HTTPS"}},
		{name: "any port, on its port of the fleet", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", allNamespaces(listener("alt", 8080, "")))}, want: []string{"18080:a.example.com / Prefix web:8"}},
		{name: "no Service yet: not served", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, edge, noServices{}}, problems: []string{"Gateway infra/edge listener http: waiting for its Service; not served yet"}},
		{name: "a Service without the listener's port", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, edge, noServices{}, func() *corev1.Service {
				svc := gatewayService(edge)
				svc.Spec.Ports[0].Port = 81
				return svc
			}()}, problems: []string{"waiting for port 80 of its Service ingress/gw-"}},
		{name: "a Service with a named targetPort", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, edge, noServices{}, func() *corev1.Service {
				svc := gatewayService(edge)
				svc.Spec.Ports[0].TargetPort = intstr.FromString("http")
				return svc
			}()}, problems: []string{"has no targetPort number"}},
		{name: "a Service not named after the Gateway is not its", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, edge, noServices{}, func() *corev1.Service {
				svc := gatewayService(edge)
				svc.Name = "mine"
				return svc
			}()}, problems: []string{"waiting for its Service"}},
		{name: "two Services claiming one Gateway: neither is used", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, edge, func() *corev1.Service {
				svc := gatewayService(edge)
				svc.Namespace = "elsewhere"
				return svc
			}()}, problems: []string{"2 Services claim it ([elsewhere/gw-"}},
		{name: "other protocol not served yet", route: httpRoute([]string{"a.example.com"}, rule(prefix, web)),
			objs: []any{ours, gw("infra", "edge", "ours", func() gatewayv1.Listener {
				l := allNamespaces(listener("tcp", 9000, ""))
				l.Protocol = gatewayv1.TCPProtocolType
				return l
			}())}, problems: []string{"protocol TCP is not served yet"}},
		{name: "path types", route: httpRoute([]string{"a.example.com"}, rule([]gatewayv1.HTTPRouteMatch{
			pathMatch(gatewayv1.PathMatchExact, "/x"), pathMatch(gatewayv1.PathMatchPathPrefix, "/p/"), pathMatch(gatewayv1.PathMatchRegularExpression, "/r/[0-9]+")}, web)),
			objs: []any{ours, edge}, want: []string{"10080:a.example.com /x Exact web:8", "10080:a.example.com /p Prefix web:8", "10080:a.example.com /r/[0-9]+ Regex web:8"}},
		{name: "invalid path", route: httpRoute([]string{"a.example.com"}, rule([]gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/a;b")}, web)),
			objs: []any{ours, edge}, problems: []string{`path "/a;b" may only contain`}},
		{name: "filter not served yet", route: httpRoute([]string{"a.example.com"}, gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{web},
			Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef}}}),
			objs: []any{ours, edge}, problems: []string{"filter ExtensionRef is not served yet"}},
		{name: "two backends: the second takes its weight", route: httpRoute([]string{"a.example.com"}, rule(prefix, web, func() gatewayv1.HTTPBackendRef {
			b := backend("api", 9)
			b.Weight = ptr.To[int32](3)
			return b
		}())), objs: []any{ours, edge}, want: []string{"10080:a.example.com / Prefix :0 = web:8*1 api:9*3"}},
		{name: "three backends", route: httpRoute([]string{"a.example.com"}, rule(prefix, web, backend("api", 9), backend("v2", 9))),
			objs: []any{ours, edge}, want: []string{"10080:a.example.com / Prefix :0 = web:8*1 api:9*1 v2:9*1"}},
		{name: "no backendRefs: 500", route: httpRoute([]string{"a.example.com"}, rule(prefix)),
			objs: []any{ours, edge}, want: []string{"10080:a.example.com / Prefix :0 = 500*1"}, problems: []string{"no backendRef with a weight above 0; every request answers 500"}},
		{name: "a reference of another kind answers 500 for its share", route: httpRoute([]string{"a.example.com"}, rule(prefix, web, func() gatewayv1.HTTPBackendRef {
			b := backend("api", 9)
			b.Kind = ptr.To[gatewayv1.Kind]("Unknown")
			return b
		}())), objs: []any{ours, edge}, want: []string{"10080:a.example.com / Prefix :0 = web:8*1 500*1"},
			problems: []string{"backendRef api is not of a supported kind; its share of the requests answers 500"}},
		{name: "a backend of weight 0 takes nothing", route: httpRoute([]string{"a.example.com"}, rule(prefix, web, func() gatewayv1.HTTPBackendRef {
			b := backend("api", 9)
			b.Weight = ptr.To[int32](0)
			return b
		}())), objs: []any{ours, edge}, want: []string{"10080:a.example.com / Prefix web:8"}},
		{name: "backend in another namespace not served yet", route: httpRoute([]string{"a.example.com"}, rule(prefix, func() gatewayv1.HTTPBackendRef {
			b := backend("web", 8)
			b.Namespace = ptr.To[gatewayv1.Namespace]("other")
			return b
		}())), objs: []any{ours, edge}, want: []string{"10080:a.example.com / Prefix :0 = 500*1"},
			problems: []string{"backendRef other/web is in another namespace and no ReferenceGrant there allows it; its share of the requests answers 500"}},
		{name: "backend in another namespace with a grant", route: httpRoute([]string{"a.example.com"}, rule(prefix, func() gatewayv1.HTTPBackendRef {
			b := backend("web", 8)
			b.Namespace = ptr.To[gatewayv1.Namespace]("other")
			return b
		}())), objs: []any{ours, edge, &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "routes"},
			Spec: gatewayv1.ReferenceGrantSpec{
				From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "app"}},
				To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service"}}}}},
			want: []string{"10080:a.example.com / Prefix other/web:8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := translated(t, tc.route, tc.objs...)
			if got := summary(e); !slices.Equal(got, tc.want) {
				t.Errorf("paths %q, want %q", got, tc.want)
			}
			var tls []string
			for _, c := range e.TLS {
				tls = append(tls, config.ServerKey(c.Port, strings.Join(c.Hosts, ","))+" "+c.Namespace+"/"+c.Secret)
			}
			if !slices.Equal(tls, tc.tls) {
				t.Errorf("tls %q, want %q", tls, tc.tls)
			}
			if len(tc.tls) > 0 && len(e.Secrets) != 1 {
				t.Errorf("an HTTPS route: secrets %v", e.Secrets)
			}
			if len(tc.want) > 0 && (e.Settings.SSLRedirect == nil || *e.Settings.SSLRedirect) {
				t.Error("a route of a Gateway is redirected to HTTPS")
			}
			if len(e.Problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %d like %q", e.Problems, len(tc.problems), tc.problems)
			}
			for i, p := range tc.problems {
				if !strings.Contains(e.Problems[i], p) {
					t.Errorf("problem %q, want it to contain %q", e.Problems[i], p)
				}
			}
			if e.Origin.Kind != "HTTPRoute" || e.Key != (intent.Key{Namespace: "app", Name: "web"}) {
				t.Errorf("origin %+v key %v", e.Origin, e.Key)
			}
		})
	}
}

// TestKeepTranslatesAgain: a route stored before its Gateway is translated
// again, with the Gateway's hostnames, when the Gateway comes, and loses
// them when it goes; a deleted route is not made again.
func TestKeepTranslatesAgain(t *testing.T) {
	src := NewSource(testController)
	r := httpRoute(nil, rule(nil, backend("web", 8)))
	key := intent.Key{Namespace: "app", Name: "web"}
	if e, _ := src.Translate(events.KindHTTPRoute, key, r); len(e.Hosts) != 0 {
		t.Fatalf("hosts %q before any Gateway", e.Hosts)
	}
	if again, _ := src.Keep(events.KindGatewayClass, intent.Key{Name: "ours"}, class("ours", testController)); len(again) != 1 || len(again[0].Hosts) != 0 {
		t.Fatalf("after the class: %d entries", len(again))
	}
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "a.example.com")))
	again, err := src.Keep(events.KindGateway, intent.Key{Namespace: "infra", Name: "edge"}, edge)
	if err != nil || len(again) != 1 || len(again[0].Hosts) != 0 {
		t.Fatalf("after the Gateway, before its Service: %v %+v", err, again)
	}
	if again := observe(t, src, gatewayService(edge)); len(again) != 1 || !slices.Equal(again[0].Hosts, []string{"10080:a.example.com"}) {
		t.Fatalf("after the Service: %+v", again)
	}
	withStatus := gatewayService(edge)
	withStatus.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.18.0.250"}}
	if again, changed, err := src.Observe(events.KindService, intent.Key{Namespace: withStatus.Namespace, Name: withStatus.Name}, withStatus); err != nil || changed || len(again) != 0 {
		t.Fatalf("a change of the Service's status: changed %v, %d entries, %v; want nothing", changed, len(again), err)
	}
	if again, changed, _ := src.Observe(events.KindService, intent.Key{Namespace: "app", Name: "other"}, &corev1.Service{}); changed || len(again) != 0 {
		t.Fatal("a Service of no Gateway made routes again")
	}
	if again, _ := src.Keep(events.KindGateway, intent.Key{Namespace: "infra", Name: "edge"}, nil); len(again) != 1 || len(again[0].Hosts) != 0 {
		t.Fatalf("after the Gateway's delete: %+v", again)
	}
	if _, err := src.Keep(events.KindHTTPRoute, key, nil); err != nil {
		t.Fatal(err)
	}
	if again, _ := src.Keep(events.KindGateway, intent.Key{Namespace: "infra", Name: "edge"}, edge); len(again) != 0 {
		t.Fatalf("a deleted route made again: %+v", again)
	}
	if _, err := src.Keep(events.KindGateway, intent.Key{Namespace: "infra", Name: "x"}, r); err == nil {
		t.Fatal("an HTTPRoute kept as a Gateway")
	}
}

// TestGrantRevoked: removing the ReferenceGrant of a backend in another
// namespace revokes it at once (its entry is made again): the rule answers
// 500.
func TestGrantRevoked(t *testing.T) {
	src := NewSource(testController)
	for _, o := range []struct {
		kind events.Kind
		key  intent.Key
		obj  runtime.Object
	}{
		{events.KindGatewayClass, intent.Key{Name: "ours"}, class("ours", testController)},
		{events.KindGateway, intent.Key{Namespace: "infra", Name: "edge"}, gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))},
		{events.KindReferenceGrant, intent.Key{Namespace: "other", Name: "routes"}, &gatewayv1.ReferenceGrant{
			ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "routes"}, Spec: gatewayv1.ReferenceGrantSpec{
				From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "app"}},
				To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service"}}}}},
	} {
		if _, err := src.Keep(o.kind, o.key, o.obj); err != nil {
			t.Fatal(err)
		}
	}
	observe(t, src, gatewayService(gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))))
	ref := backend("web", 8)
	ref.Namespace = ptr.To[gatewayv1.Namespace]("other")
	r := httpRoute([]string{"a.example.com"}, rule(nil, ref))
	e, err := src.Translate(events.KindHTTPRoute, intent.Key{Namespace: "app", Name: "web"}, r)
	if err != nil || len(summary(e)) != 1 || !slices.Contains(e.Services, intent.Key{Namespace: "other", Name: "web"}) {
		t.Fatalf("granted: %v %q services %v", err, summary(e), e.Services)
	}
	again, err := src.Keep(events.KindReferenceGrant, intent.Key{Namespace: "other", Name: "routes"}, nil)
	if err != nil || len(again) != 1 || !slices.Equal(summary(again[0]), []string{"10080:a.example.com / Prefix :0 = 500*1"}) || len(again[0].Problems) != 1 {
		t.Fatalf("after the grant's delete: %v %+v", err, again)
	}
}

// TestListeners: the ports of the fleet a Gateway's HTTP and HTTPS
// listeners are served on, once per port, only for a Gateway of ours with
// its Service.
func TestListeners(t *testing.T) {
	tcp := allNamespaces(listener("tcp", 9000, ""))
	tcp.Protocol = gatewayv1.TCPProtocolType
	edge := gw("infra", "edge", "ours", listener("http", 80, "a.example.com"), listener("http2", 80, "b.example.com"), https("infra", "cert"), tcp)
	origin := intent.Origin{Kind: "Gateway", Namespace: "infra", Name: "edge"}
	for _, tc := range []struct {
		name  string
		class *gatewayv1.GatewayClass
		svc   bool
		want  []intent.Listener
	}{
		{name: "ours, with its Service", class: class("ours", testController), svc: true,
			want: []intent.Listener{{Port: 10080, Origin: origin}, {Port: 10443, TLS: true, Origin: origin}}},
		{name: "ours, no Service yet", class: class("ours", testController)},
		{name: "not ours", class: class("ours", "example.com/other"), svc: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := NewSource(testController)
			if _, err := src.Keep(events.KindGatewayClass, intent.Key{Name: "ours"}, tc.class); err != nil {
				t.Fatal(err)
			}
			if _, err := src.Keep(events.KindGateway, intent.Key{Namespace: "infra", Name: "edge"}, edge); err != nil {
				t.Fatal(err)
			}
			if tc.svc {
				observe(t, src, gatewayService(edge))
			}
			got := src.Listeners()
			slices.SortFunc(got, func(a, b intent.Listener) int { return a.Port - b.Port })
			if !slices.Equal(got, tc.want) {
				t.Fatalf("listeners %+v, want %+v", got, tc.want)
			}
		})
	}
}
