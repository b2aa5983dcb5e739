package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

func streamListener(name string, port int32, p gatewayv1.ProtocolType, host string) gatewayv1.Listener {
	l := listener(name, port, host)
	l.Protocol = p
	if p == gatewayv1.TLSProtocolType {
		l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}
	}
	return l
}

func streamRef(ns, svc string, port, weight int32) gatewayv1.BackendRef {
	ref := gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To(gatewayv1.PortNumber(port))}}
	if ns != "" {
		ref.Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	if weight >= 0 {
		ref.Weight = ptr.To(weight)
	}
	return ref
}

func parentOf(name, section string) gatewayv1.ParentReference {
	p := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name), Namespace: ptr.To[gatewayv1.Namespace]("infra")}
	if section != "" {
		p.SectionName = ptr.To(gatewayv1.SectionName(section))
	}
	return p
}

func tlsRoute(hosts []string, parent gatewayv1.ParentReference, refs ...gatewayv1.BackendRef) *gatewayv1.TLSRoute {
	r := &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "r", Generation: 2}}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{parent}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	r.Spec.Rules = []gatewayv1.TLSRouteRule{{BackendRefs: refs}}
	return r
}

func tcpRoute(parent gatewayv1.ParentReference, refs ...gatewayv1.BackendRef) *gatewayv1.TCPRoute {
	r := &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "r", Generation: 2}}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{parent}
	r.Spec.Rules = []gatewayv1.TCPRouteRule{{BackendRefs: refs}}
	return r
}

func udpRoute(parent gatewayv1.ParentReference, refs ...gatewayv1.BackendRef) *gatewayv1.UDPRoute {
	r := &gatewayv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "r", Generation: 2}}
	r.Spec.ParentRefs = []gatewayv1.ParentReference{parent}
	r.Spec.Rules = []gatewayv1.UDPRouteRule{{BackendRefs: refs}}
	return r
}

// streamSummary is "PROTO port host = svc:port*weight ..." per stream of e.
func streamSummary(e *intent.Entry) []string {
	var out []string
	for _, s := range e.Streams {
		line := fmt.Sprintf("%s %d %s =", s.Protocol, s.Port, s.Hostname)
		for _, b := range s.Backends {
			if b.Invalid {
				line += fmt.Sprintf(" closed*%d", b.Weight)
				continue
			}
			line += fmt.Sprintf(" %s:%d*%d", strings.TrimPrefix(b.Backend.Namespace+"/"+b.Backend.Service, "/"), b.Backend.PortNumber, b.Weight)
		}
		out = append(out, line)
	}
	return out
}

func TestTranslateStreams(t *testing.T) {
	ours := class("ours", testController)
	edge := gw("infra", "edge", "ours",
		allNamespaces(streamListener("tls", 443, gatewayv1.TLSProtocolType, "*.example.com")),
		allNamespaces(streamListener("tls-any", 8443, gatewayv1.TLSProtocolType, "")),
		allNamespaces(streamListener("tcp", 5432, gatewayv1.TCPProtocolType, "")),
		allNamespaces(streamListener("udp", 53, gatewayv1.UDPProtocolType, "")))
	terminate := allNamespaces(streamListener("tls", 443, gatewayv1.TLSProtocolType, ""))
	terminate.TLS.Mode = ptr.To(gatewayv1.TLSModeTerminate)
	term := gw("infra", "term", "ours", terminate)
	grant := backendGrant("db", "app")
	grant.Spec.From[0].Kind = "TCPRoute"
	tests := []struct {
		name     string
		route    runtime.Object
		objs     []any
		want     []string
		problems []string
	}{
		{name: "TLS passthrough: the hostnames the listener's matches", route: tlsRoute([]string{"abc.example.com", "other.org"}, parentOf("edge", "tls"), streamRef("", "tls", 443, -1)),
			objs: []any{ours, edge}, want: []string{"TLS 10443 abc.example.com = tls:443*1"}},
		{name: "TLS passthrough: a route without hostnames gets the listener's", route: tlsRoute(nil, parentOf("edge", "tls"), streamRef("", "tls", 443, -1)),
			objs: []any{ours, edge}, want: []string{"TLS 10443 *.example.com = tls:443*1"}},
		{name: "TLS passthrough: no hostname anywhere is any name", route: tlsRoute(nil, parentOf("edge", "tls-any"), streamRef("", "tls", 443, -1)),
			objs: []any{ours, edge}, want: []string{"TLS 18443  = tls:443*1"}},
		{name: "TLS: no hostname in common", route: tlsRoute([]string{"x.org"}, parentOf("edge", "tls"), streamRef("", "tls", 443, -1)),
			objs: []any{ours, edge}, problems: []string{"no hostname of the route matches"}},
		{name: "TLS mode Terminate takes no route", route: tlsRoute(nil, parentOf("term", ""), streamRef("", "tls", 443, -1)),
			objs: []any{ours, term}},
		{name: "TCP: weighted backends, weight 0 left out", route: tcpRoute(parentOf("edge", ""), streamRef("", "a", 1, 3), streamRef("", "b", 2, -1), streamRef("", "c", 3, 0)),
			objs: []any{ours, edge}, want: []string{"TCP 15432  = a:1*3 b:2*1"}},
		{name: "TCP: a Service of another namespace without a grant is closed", route: tcpRoute(parentOf("edge", "tcp"), streamRef("db", "pg", 5432, -1)),
			objs: []any{ours, edge}, want: []string{"TCP 15432  = closed*1"}, problems: []string{"no ReferenceGrant"}},
		{name: "TCP: a Service of another namespace with a grant", route: tcpRoute(parentOf("edge", "tcp"), streamRef("db", "pg", 5432, -1)),
			objs: []any{ours, edge, grant}, want: []string{"TCP 15432  = db/pg:5432*1"}},
		{name: "UDP on the UDP listener only", route: udpRoute(parentOf("edge", ""), streamRef("", "dns", 53, -1)),
			objs: []any{ours, edge}, want: []string{"UDP 10053  = dns:53*1"}},
		{name: "a TCPRoute on a UDP listener is not attached", route: tcpRoute(parentOf("edge", "udp"), streamRef("", "a", 1, -1)),
			objs: []any{ours, edge}},
		{name: "no backendRef closes every connection", route: tcpRoute(parentOf("edge", "tcp")),
			objs: []any{ours, edge}, want: []string{"TCP 15432  = closed*1"}, problems: []string{"no backendRef"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := sourceOf(t, tc.objs...)
			r, _ := l4RouteOf(tc.route)
			e, err := src.Translate(r.kind, intent.Key{Namespace: "app", Name: "r"}, tc.route)
			if err != nil {
				t.Fatal(err)
			}
			if got := streamSummary(e); !slices.Equal(got, tc.want) {
				t.Errorf("streams\n got %q\nwant %q", got, tc.want)
			}
			if len(e.Problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %d like %q", e.Problems, len(tc.problems), tc.problems)
			}
			for i, p := range tc.problems {
				if !strings.Contains(e.Problems[i], p) {
					t.Errorf("problem %q does not say %q", e.Problems[i], p)
				}
			}
			if e.Origin.Kind != string(r.kind) {
				t.Errorf("origin kind %s, want %s", e.Origin.Kind, r.kind)
			}
		})
	}
}

func TestStreamStatus(t *testing.T) {
	ours := class("ours", testController)
	terminate := allNamespaces(streamListener("term", 8443, gatewayv1.TLSProtocolType, ""))
	terminate.TLS.Mode = ptr.To(gatewayv1.TLSModeTerminate)
	edge := gw("infra", "edge", "ours",
		allNamespaces(streamListener("tls", 443, gatewayv1.TLSProtocolType, "*.example.com")),
		allNamespaces(streamListener("tcp", 5432, gatewayv1.TCPProtocolType, "")),
		terminate)
	tcpSvc := fixtures.Service("app", "a", 1)
	const listenerOK = "Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"
	tests := []struct {
		name   string
		route  runtime.Object
		objs   []any
		parent string   // the route's parent conditions
		gw     []string // the Gateway's summary
	}{
		{name: "a TLSRoute attached to the TLS listener", route: tlsRoute([]string{"abc.example.com"}, parentOf("edge", ""), streamRef("", "a", 1, -1)),
			objs: []any{tcpSvc}, parent: "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs",
			gw: []string{"Accepted=True/ListenersNotValid Programmed=True/Programmed", "tls kinds=[TLSRoute] attached=1 " + listenerOK,
				"tcp kinds=[TCPRoute] attached=0 " + listenerOK,
				"term kinds=[TLSRoute] attached=0 Accepted=False/UnsupportedValue Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"}},
		{name: "a TLSRoute whose hostname no listener has", route: tlsRoute([]string{"x.org"}, parentOf("edge", "tls"), streamRef("", "a", 1, -1)),
			objs: []any{tcpSvc}, parent: "Accepted=False/NoMatchingListenerHostname ResolvedRefs=True/ResolvedRefs"},
		{name: "a TCPRoute with a missing backend", route: tcpRoute(parentOf("edge", "tcp"), streamRef("", "gone", 1, -1)),
			parent: "Accepted=True/Accepted ResolvedRefs=False/BackendNotFound"},
		{name: "a TCPRoute on the TLS listener", route: tcpRoute(parentOf("edge", "tls"), streamRef("", "a", 1, -1)),
			objs: []any{tcpSvc}, parent: "Accepted=False/NotAllowedByListeners ResolvedRefs=True/ResolvedRefs"},
		{name: "a TLSRoute on the Terminate listener", route: tlsRoute(nil, parentOf("edge", "term"), streamRef("", "a", 1, -1)),
			objs: []any{tcpSvc}, parent: "Accepted=False/NotAllowedByListeners ResolvedRefs=True/ResolvedRefs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world(append([]any{ours, edge, tc.route}, tc.objs...)...)
			ps := w.StreamRouteParents(tc.route)
			if len(ps) != 1 || conds(ps[0].Conditions) != tc.parent {
				t.Errorf("parents %+v, want one with %s", ps, tc.parent)
			}
			if tc.gw != nil {
				if got := gatewaySummary(w.GatewayStatus(edge, Programming{Addresses: []gatewayv1.GatewayStatusAddress{{Value: "198.18.0.1"}}, Served: true})); !slices.Equal(got, tc.gw) {
					t.Errorf("gateway\n got %q\nwant %q", got, tc.gw)
				}
			}
		})
	}
}
