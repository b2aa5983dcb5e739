package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// world makes the World of objs, of controller testController.
func world(objs ...any) *World {
	classes := map[string]*gatewayv1.GatewayClass{}
	gateways := map[string]*gatewayv1.Gateway{}
	services := map[string]*corev1.Service{}
	secrets := map[string]*corev1.Secret{}
	w := &World{Controller: testController}
	for _, o := range objs {
		switch o := o.(type) {
		case *gatewayv1.GatewayClass:
			classes[o.Name] = o
		case *gatewayv1.Gateway:
			gateways[o.Namespace+"/"+o.Name] = o
		case *corev1.Service:
			services[o.Namespace+"/"+o.Name] = o
		case *corev1.Secret:
			secrets[o.Namespace+"/"+o.Name] = o
		case *gatewayv1.HTTPRoute:
			w.Routes = append(w.Routes, o)
		case *gatewayv1.ReferenceGrant:
			w.Grants = append(w.Grants, o)
		case *gatewayv1.TLSRoute:
			w.StreamRoutes = append(w.StreamRoutes, o)
		case *gatewayv1.TCPRoute:
			w.StreamRoutes = append(w.StreamRoutes, o)
		case *gatewayv1.UDPRoute:
			w.StreamRoutes = append(w.StreamRoutes, o)
		default:
			panic(fmt.Sprintf("world: %T", o))
		}
	}
	w.Class = func(name string) *gatewayv1.GatewayClass { return classes[name] }
	w.Gateway = func(ns, name string) *gatewayv1.Gateway { return gateways[ns+"/"+name] }
	w.Service = func(ns, name string) *corev1.Service { return services[ns+"/"+name] }
	w.Secret = func(ns, name string) *corev1.Secret { return secrets[ns+"/"+name] }
	return w
}

// conds is "Type=Status/Reason" per condition.
func conds(cs []metav1.Condition) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(out, " ")
}

// gatewaySummary is one line for the Gateway, one per listener.
func gatewaySummary(st gatewayv1.GatewayStatus) []string {
	out := []string{conds(st.Conditions)}
	for _, l := range st.Listeners {
		var kinds []string
		for _, k := range l.SupportedKinds {
			kinds = append(kinds, string(k.Kind))
		}
		out = append(out, fmt.Sprintf("%s kinds=[%s] attached=%d %s", l.Name, strings.Join(kinds, ","), l.AttachedRoutes, conds(l.Conditions)))
	}
	return out
}

func testPair(t *testing.T) *certs.Pair {
	t.Helper()
	p, err := certs.Generate(certs.Options{CommonName: "example.com", Hosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withKinds sets the allowedRoutes kinds of l.
func withKinds(l gatewayv1.Listener, kinds ...string) gatewayv1.Listener {
	if l.AllowedRoutes == nil {
		l.AllowedRoutes = &gatewayv1.AllowedRoutes{}
	}
	for _, k := range kinds {
		l.AllowedRoutes.Kinds = append(l.AllowedRoutes.Kinds, gatewayv1.RouteGroupKind{Kind: gatewayv1.Kind(k)})
	}
	return l
}

func withProtocol(l gatewayv1.Listener, p gatewayv1.ProtocolType) gatewayv1.Listener {
	l.Protocol = p
	return l
}

func TestGatewayStatus(t *testing.T) {
	pair := testPair(t)
	ours := class("ours", testController)
	served := Programming{Addresses: []gatewayv1.GatewayStatusAddress{{Value: "198.18.0.1"}}, Served: true}
	route := httpRoute([]string{"a.example.com"}, rule(nil, backend("web", 80)))
	const ok = "Accepted=True/Accepted Programmed=True/Programmed"
	const listenerOK = "Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"
	badSecret := fixtures.TLSSecret("infra", "bad", pair)
	badSecret.Data[corev1.TLSPrivateKeyKey] = []byte("not a key")
	wrongKind := https("infra", "cert")
	wrongKind.TLS.CertificateRefs[0].Kind = ptr.To[gatewayv1.Kind]("ConfigMap")
	static := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	static.Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Value: "198.18.0.9"}}
	tests := []struct {
		name string
		gw   *gatewayv1.Gateway
		prog Programming
		objs []any
		want []string
	}{
		{name: "served, one route attached", gw: gw("infra", "edge", "ours", allNamespaces(listener("http", 80, ""))), prog: served,
			objs: []any{route}, want: []string{ok, "http kinds=[HTTPRoute,GRPCRoute] attached=1 " + listenerOK}},
		{name: "route with a value the API does not know: not attached", gw: gw("infra", "edge", "ours", allNamespaces(listener("http", 80, ""))), prog: served,
			objs: []any{httpRoute([]string{"a.example.com"}, rule([]gatewayv1.HTTPRouteMatch{pathMatch("Glob", "/*")}, backend("web", 80)))},
			want: []string{ok, "http kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK}},
		{name: "route of another namespace not allowed: not attached", gw: gw("infra", "edge", "ours", listener("http", 80, "")), prog: served,
			objs: []any{route}, want: []string{ok, "http kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK}},
		{name: "route with no matching hostname not attached", gw: gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "b.example.com"))), prog: served,
			objs: []any{route}, want: []string{ok, "http kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK}},
		{name: "no address yet", gw: gw("infra", "edge", "ours", allNamespaces(listener("http", 80, ""))),
			want: []string{"Accepted=True/Accepted Programmed=False/AddressNotAssigned",
				"http kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Pending ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"}},
		{name: "address, not served yet", gw: gw("infra", "edge", "ours", allNamespaces(listener("http", 80, ""))), prog: Programming{Addresses: served.Addresses},
			want: []string{"Accepted=True/Accepted Programmed=False/Pending",
				"http kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Pending ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"}},
		{name: "only an unsupported protocol", gw: gw("infra", "edge", "ours", withProtocol(listener("tcp", 1111, ""), "INVALID")), prog: served,
			want: []string{"Accepted=False/ListenersNotValid Programmed=False/Invalid",
				"tcp kinds=[] attached=0 Accepted=False/UnsupportedProtocol Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"}},
		{name: "a supported and an unsupported protocol", gw: gw("infra", "edge", "ours", listener("http", 80, ""), withProtocol(listener("sctp", 1111, ""), "example.com/SCTP")), prog: served,
			want: []string{"Accepted=True/ListenersNotValid Programmed=True/Programmed",
				"http kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK,
				"sctp kinds=[] attached=0 Accepted=False/UnsupportedProtocol Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"}},
		{name: "only an invalid route kind", gw: gw("infra", "edge", "ours", withKinds(allNamespaces(listener("http", 80, "")), "InvalidRoute")), prog: served,
			objs: []any{route}, want: []string{ok,
				"http kinds=[] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=False/InvalidRouteKinds Conflicted=False/NoConflicts"}},
		{name: "a supported and an invalid route kind", gw: gw("infra", "edge", "ours", withKinds(allNamespaces(listener("http", 80, "")), "InvalidRoute", "HTTPRoute")), prog: served,
			objs: []any{route}, want: []string{ok,
				"http kinds=[HTTPRoute] attached=1 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=False/InvalidRouteKinds Conflicted=False/NoConflicts"}},
		{name: "HTTPS with its Secret", gw: gw("infra", "edge", "ours", https("infra", "cert")), prog: served,
			objs: []any{fixtures.TLSSecret("infra", "cert", pair), route}, want: []string{ok, "https kinds=[HTTPRoute,GRPCRoute] attached=1 " + listenerOK}},
		{name: "HTTPS with a missing Secret still counts its routes", gw: gw("infra", "edge", "ours", https("infra", "cert")), prog: served,
			objs: []any{route}, want: []string{ok,
				"https kinds=[HTTPRoute,GRPCRoute] attached=1 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef Conflicted=False/NoConflicts"}},
		{name: "HTTPS with a malformed Secret", gw: gw("infra", "edge", "ours", https("infra", "bad")), prog: served,
			objs: []any{badSecret}, want: []string{ok,
				"https kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef Conflicted=False/NoConflicts"}},
		{name: "HTTPS with a certificateRef of another kind", gw: gw("infra", "edge", "ours", wrongKind), prog: served,
			objs: []any{fixtures.TLSSecret("infra", "cert", pair)}, want: []string{ok,
				"https kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef Conflicted=False/NoConflicts"}},
		{name: "HTTPS with a Secret of another namespace, no grant", gw: gw("infra", "edge", "ours", https("certs", "cert")), prog: served,
			objs: []any{fixtures.TLSSecret("certs", "cert", pair)}, want: []string{ok,
				"https kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=False/RefNotPermitted Conflicted=False/NoConflicts"}},
		{name: "HTTPS with a Secret of another namespace, granted", gw: gw("infra", "edge", "ours", https("certs", "cert")), prog: served,
			objs: []any{fixtures.TLSSecret("certs", "cert", pair), grant("certs", "infra")}, want: []string{ok, "https kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK}},
		{name: "HTTP and HTTPS on one port conflict", gw: gw("infra", "edge", "ours", listener("http", 443, ""), https("infra", "cert")), prog: served,
			objs: []any{fixtures.TLSSecret("infra", "cert", pair)}, want: []string{ok,
				"http kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=True/ProtocolConflict",
				"https kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=True/ProtocolConflict"}},
		{name: "two HTTP listeners with one port and hostname conflict", gw: gw("infra", "edge", "ours", listener("a", 80, "a.example.com"), listener("b", 80, "a.example.com"), listener("c", 80, "c.example.com")), prog: served,
			want: []string{ok,
				"a kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=True/HostnameConflict",
				"b kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=True/HostnameConflict",
				"c kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK}},
		{name: "static addresses are not supported", gw: static, prog: served,
			want: []string{"Accepted=False/UnsupportedAddress Programmed=False/Invalid",
				"http kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=True/Accepted Programmed=False/Pending ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.gw.Generation = 7
			w := world(append([]any{ours, tc.gw}, tc.objs...)...)
			st := w.GatewayStatus(tc.gw, tc.prog)
			if got := gatewaySummary(st); !slices.Equal(got, tc.want) {
				t.Errorf("status\n got %q\nwant %q", got, tc.want)
			}
			for _, c := range st.Conditions {
				if c.ObservedGeneration != 7 {
					t.Errorf("condition %s: observedGeneration %d, want 7", c.Type, c.ObservedGeneration)
				}
			}
			if !slices.Equal(st.Addresses, tc.prog.Addresses) {
				t.Errorf("addresses %v, want %v", st.Addresses, tc.prog.Addresses)
			}
		})
	}
}

func TestClassStatus(t *testing.T) {
	c := class("ours", testController)
	c.Generation = 3
	st := ClassStatus(c)
	if got := conds(st.Conditions); got != "Accepted=True/Accepted" || st.Conditions[0].ObservedGeneration != 3 {
		t.Errorf("conditions %s (generation %d)", got, st.Conditions[0].ObservedGeneration)
	}
	var names []string
	for _, f := range st.SupportedFeatures {
		names = append(names, string(f.Name))
	}
	// The list itself is features.go's (the conformance report checks
	// it): here its form, sorted and unique names the suite knows, with
	// the core features of GATEWAY-HTTP.
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("supportedFeatures %v: not sorted, or repeated", names)
	}
	for _, n := range names {
		if features.GetFeature(features.FeatureName(n)).Name == "" {
			t.Errorf("supportedFeatures: %s is not a feature of the conformance suite", n)
		}
	}
	for _, core := range []string{"Gateway", "HTTPRoute", "ReferenceGrant"} {
		if !slices.Contains(names, core) {
			t.Errorf("supportedFeatures %v: no %s", names, core)
		}
	}
}

// backendGrant lets the HTTPRoutes of namespace from refer to the Services
// of ns.
func backendGrant(ns, from string) *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backends"}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: gatewayv1.Namespace(from)}},
		To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service"}}}}
}

func TestRouteParents(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "*.example.com")), listener("local", 8080, ""))
	other := gw("infra", "theirs", "theirs", allNamespaces(listener("http", 80, "")))
	web := fixtures.Service("app", "web", 80)
	remote := fixtures.Service("backends", "api", 80)
	h2c := fixtures.Service("app", "h2c", 80)
	h2c.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c")
	ws := fixtures.Service("app", "ws", 80)
	ws.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/ws")
	kind := backend("web", 80)
	kind.Kind = ptr.To[gatewayv1.Kind]("ConfigMap")
	cross := backend("api", 80)
	cross.Namespace = ptr.To[gatewayv1.Namespace]("backends")
	parent := func(name, section string, port int32) gatewayv1.ParentReference {
		p := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name), Namespace: ptr.To[gatewayv1.Namespace]("infra")}
		if section != "" {
			p.SectionName = ptr.To(gatewayv1.SectionName(section))
		}
		if port != 0 {
			p.Port = ptr.To(gatewayv1.PortNumber(port))
		}
		return p
	}
	const resolved = "ResolvedRefs=True/ResolvedRefs"
	tests := []struct {
		name    string
		hosts   []string
		parents []gatewayv1.ParentReference
		refs    []gatewayv1.HTTPBackendRef
		objs    []any
		unknown bool // a match with a path type the API does not know
		filters []gatewayv1.HTTPRouteFilter
		want    []string // conditions per parent of ours
	}{
		{name: "mirror resolved", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "web", nil)},
			want: []string{"Accepted=True/Accepted " + resolved}},
		{name: "mirror Service missing: the route stays accepted", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("", "gone", nil)},
			want: []string{"Accepted=True/Accepted ResolvedRefs=False/BackendNotFound"}},
		{name: "mirror of another namespace without a grant", filters: []gatewayv1.HTTPRouteFilter{mirrorFilter("backends", "api", nil)},
			want: []string{"Accepted=True/Accepted ResolvedRefs=False/RefNotPermitted"}},
		{name: "accepted and resolved", refs: []gatewayv1.HTTPBackendRef{backend("web", 80)},
			want: []string{"Accepted=True/Accepted " + resolved}},
		{name: "backend of another kind", refs: []gatewayv1.HTTPBackendRef{kind},
			want: []string{"Accepted=True/Accepted ResolvedRefs=False/InvalidKind"}},
		{name: "backend Service missing", refs: []gatewayv1.HTTPBackendRef{backend("gone", 80)},
			want: []string{"Accepted=True/Accepted ResolvedRefs=False/BackendNotFound"}},
		{name: "backend of another namespace without a grant", refs: []gatewayv1.HTTPBackendRef{backend("web", 80), cross},
			want: []string{"Accepted=True/Accepted ResolvedRefs=False/RefNotPermitted"}},
		{name: "backend of another namespace with a grant", refs: []gatewayv1.HTTPBackendRef{cross}, objs: []any{backendGrant("backends", "app")},
			want: []string{"Accepted=True/Accepted " + resolved}},
		{name: "backend with an unsupported appProtocol", refs: []gatewayv1.HTTPBackendRef{backend("h2c", 80)},
			want: []string{"Accepted=True/Accepted ResolvedRefs=False/UnsupportedProtocol"}},
		{name: "backend speaking WebSocket", refs: []gatewayv1.HTTPBackendRef{backend("ws", 80)},
			want: []string{"Accepted=True/Accepted " + resolved}},
		{name: "sectionName of no listener", parents: []gatewayv1.ParentReference{parent("edge", "nope", 0)},
			want: []string{"Accepted=False/NoMatchingParent " + resolved}},
		{name: "port of no listener", parents: []gatewayv1.ParentReference{parent("edge", "", 9999)},
			want: []string{"Accepted=False/NoMatchingParent " + resolved}},
		{name: "sectionName and port of different listeners", parents: []gatewayv1.ParentReference{parent("edge", "http", 8080)},
			want: []string{"Accepted=False/NoMatchingParent " + resolved}},
		{name: "listener allows only its own namespace", parents: []gatewayv1.ParentReference{parent("edge", "local", 0)},
			want: []string{"Accepted=False/NotAllowedByListeners " + resolved}},
		{name: "no hostname in common", hosts: []string{"a.example.org"}, parents: []gatewayv1.ParentReference{parent("edge", "http", 0)},
			want: []string{"Accepted=False/NoMatchingListenerHostname " + resolved}},
		{name: "Gateway of another class: no parent of ours", parents: []gatewayv1.ParentReference{parent("theirs", "", 0)}},
		{name: "two parents, one ours", parents: []gatewayv1.ParentReference{parent("theirs", "", 0), parent("edge", "http", 80)},
			want: []string{"Accepted=True/Accepted " + resolved}},
		{name: "a path type the API does not know", refs: []gatewayv1.HTTPBackendRef{backend("web", 80)}, unknown: true,
			want: []string{"Accepted=False/UnsupportedValue " + resolved}},
		{name: "a parent listed twice counts once", parents: []gatewayv1.ParentReference{parent("edge", "", 0), parent("edge", "", 0)},
			want: []string{"Accepted=True/Accepted " + resolved}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hosts := tc.hosts
			if hosts == nil {
				hosts = []string{"a.example.com"}
			}
			refs := tc.refs
			if refs == nil {
				refs = []gatewayv1.HTTPBackendRef{backend("web", 80)}
			}
			var matches []gatewayv1.HTTPRouteMatch
			if tc.unknown {
				matches = []gatewayv1.HTTPRouteMatch{pathMatch("Glob", "/*")}
			}
			r := httpRoute(hosts, rule(matches, refs...))
			r.Spec.Rules[0].Filters = tc.filters
			r.Generation = 4
			if tc.parents != nil {
				r.Spec.ParentRefs = tc.parents
			}
			w := world(append([]any{ours, edge, other, web, remote, h2c, ws, r}, tc.objs...)...)
			var got []string
			for _, p := range w.RouteParents(r) {
				if string(p.ControllerName) != testController {
					t.Errorf("controllerName %q", p.ControllerName)
				}
				for _, c := range p.Conditions {
					if c.ObservedGeneration != 4 {
						t.Errorf("%s: observedGeneration %d, want 4", c.Type, c.ObservedGeneration)
					}
				}
				got = append(got, conds(p.Conditions))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("parents\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMergeRouteParents(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(then.Add(time.Hour))
	ref := func(name string) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
	}
	c := func(typ string, ok bool, at metav1.Time) metav1.Condition {
		out := cond(typ, ok, "R", "", 1)
		out.LastTransitionTime = at
		return out
	}
	theirs := gatewayv1.RouteParentStatus{ParentRef: ref("theirs"), ControllerName: "other.io/gw", Conditions: []metav1.Condition{c("Accepted", true, then)}}
	existing := []gatewayv1.RouteParentStatus{
		{ParentRef: ref("edge"), ControllerName: testController, Conditions: []metav1.Condition{c("Accepted", true, then), c("ResolvedRefs", true, then)}},
		theirs,
		{ParentRef: ref("gone"), ControllerName: testController, Conditions: []metav1.Condition{c("Accepted", true, then)}},
	}
	desired := []gatewayv1.RouteParentStatus{
		{ParentRef: ref("edge"), ControllerName: testController, Conditions: []metav1.Condition{c("Accepted", true, metav1.Time{}), c("ResolvedRefs", false, metav1.Time{})}},
		{ParentRef: ref("new"), ControllerName: testController, Conditions: []metav1.Condition{c("Accepted", true, metav1.Time{})}},
	}
	got := MergeRouteParents(existing, desired, testController, now)
	var lines []string
	for _, p := range got {
		line := string(p.ParentRef.Name)
		for _, cd := range p.Conditions {
			line += fmt.Sprintf(" %s=%s@%s", cd.Type, cd.Status, cd.LastTransitionTime.UTC().Format("15:04"))
		}
		lines = append(lines, line)
	}
	want := []string{"edge Accepted=True@00:00 ResolvedRefs=False@01:00", "theirs Accepted=True@00:00", "new Accepted=True@01:00"}
	if !slices.Equal(lines, want) {
		t.Errorf("merged\n got %q\nwant %q", lines, want)
	}
}
