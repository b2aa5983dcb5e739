package model

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

// streamText is "PROTO port host route = ns/svc:port*w[endpoints]" per Stream.
func streamText(cfg *config.Configuration) []string {
	var out []string
	for _, s := range cfg.Streams {
		line := fmt.Sprintf("%s %d %s %s =", s.Protocol, s.Port, s.Hostname, s.Route)
		for _, b := range s.Backends {
			var eps []string
			for _, e := range b.Endpoints {
				eps = append(eps, fmt.Sprintf("%s:%d", e.Address, e.Port))
			}
			line += fmt.Sprintf(" %s/%s:%d*%d%v", b.Namespace, b.Service, b.Port, b.Weight, eps)
		}
		out = append(out, line)
	}
	return out
}

// TestBuildGatewayStreams: TLSRoutes, TCPRoutes and UDPRoutes become the
// Streams of their listeners' ports of the fleet, with their endpoints;
// the older route keeps a TCP port; a listener port that a TCP services
// ConfigMap entry has is not served (a Problem names both); an
// EndpointSlice change is patched by the Incremental as Build makes it.
func TestBuildGatewayStreams(t *testing.T) {
	class := eventstest.GatewayClass()
	edge := eventstest.Gateway()
	all := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}
	edge.Spec.Listeners = []gatewayv1.Listener{
		{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, Hostname: ptr(gatewayv1.Hostname("*.example.com")), AllowedRoutes: all,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr(gatewayv1.TLSModePassthrough)}},
		{Name: "tcp", Port: 5432, Protocol: gatewayv1.TCPProtocolType, AllowedRoutes: all},
		{Name: "udp", Port: 53, Protocol: gatewayv1.UDPProtocolType, AllowedRoutes: all},
		{Name: "taken", Port: 9000, Protocol: gatewayv1.TCPProtocolType, AllowedRoutes: all},
	}
	svc := gatewayService(edge, 10000)
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == 53 {
			svc.Spec.Ports[i].Protocol = corev1.ProtocolUDP
		}
		if svc.Spec.Ports[i].Port == 9000 {
			svc.Spec.Ports[i].TargetPort.IntVal = 9000 // the ConfigMap's port
		}
	}
	parent := func(section string) []gatewayv1.ParentReference {
		return []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace)),
			SectionName: ptr(gatewayv1.SectionName(section))}}
	}
	ref := func(name string, port int32) []gatewayv1.BackendRef {
		return []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr(gatewayv1.PortNumber(port))}}}
	}
	at := func(sec int) metav1.ObjectMeta {
		m := objMeta("app", fmt.Sprintf("r%d", sec))
		m.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(sec) * time.Second))
		return m
	}
	tlsR := &gatewayv1.TLSRoute{ObjectMeta: at(1), Spec: gatewayv1.TLSRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("tls")},
		Hostnames: []gatewayv1.Hostname{"abc.example.com"}, Rules: []gatewayv1.TLSRouteRule{{BackendRefs: ref("web", 443)}}}}
	older := &gatewayv1.TCPRoute{ObjectMeta: at(2), Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("tcp")},
		Rules: []gatewayv1.TCPRouteRule{{BackendRefs: ref("db", 5432)}}}}
	newer := older.DeepCopy()
	newer.ObjectMeta = at(3)
	udpR := &gatewayv1.UDPRoute{ObjectMeta: at(4), Spec: gatewayv1.UDPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("udp")},
		Rules: []gatewayv1.UDPRouteRule{{BackendRefs: ref("dns", 53)}}}}
	taken := &gatewayv1.TCPRoute{ObjectMeta: at(5), Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("taken")},
		Rules: []gatewayv1.TCPRouteRule{{BackendRefs: ref("db", 5432)}}}}
	opts := l4Options()
	s := newGatewayStore()
	in := NewIncremental(s, opts)
	for _, o := range []runtime.Object{class, edge, svc,
		service("app", "web", svcPort("https", 443)), slice("app", "web-1", "web", "https", 8443, ready("10.0.0.1")),
		service("app", "db", svcPort("pg", 5432)), slice("app", "db-1", "db", "pg", 5432, ready("10.0.0.2")),
		service("app", "dns", udpPort("dns", 53)), slice("app", "dns-1", "dns", "dns", 5353, ready("10.0.0.3")),
		configMapOf("ingress", "tcp", "9000", "app/db:5432"),
		tlsR, older, newer, udpR, taken} {
		if _, err := in.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := in.Build()
	want := []string{
		"TCP 15432  TCPRoute app/r2 = app/db:5432*1[10.0.0.2:5432]",
		"TLS 10443 abc.example.com TLSRoute app/r1 = app/web:443*1[10.0.0.1:8443]",
		"UDP 10053  UDPRoute app/r4 = app/dns:53*1[10.0.0.3:5353]",
	}
	if got := streamText(cfg); !reflect.DeepEqual(got, want) {
		t.Fatalf("streams\n got %q\nwant %q", got, want)
	}
	problems := strings.Join(problemStrings(cfg.Problems), "\n")
	for _, p := range []string{"TCPRoute app/r3: TCP port 15432 is served by the older TCPRoute app/r2",
		"TCPRoute app/r5: TCP listener port of the fleet 9000: is an entry of the TCP services ConfigMap"} {
		if !strings.Contains(problems, p) {
			t.Errorf("problems %q: want one saying %q", problems, p)
		}
	}
	if _, err := in.Apply(upsertEvent(slice("app", "db-1", "db", "pg", 5432, ready("10.0.0.9")))); err != nil {
		t.Fatal(err)
	}
	patched := in.Build()
	if got := streamText(patched)[0]; got != "TCP 15432  TCPRoute app/r2 = app/db:5432*1[10.0.0.9:5432]" {
		t.Fatalf("after the EndpointSlice change: %q", got)
	}
	if full := Build(s, opts); full.Checksum != patched.Checksum || !reflect.DeepEqual(full.Streams, patched.Streams) {
		t.Fatalf("patched streams %q differ from Build's %q", streamText(patched), streamText(full))
	}
}
