package gateway

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// TLSRoutes, TCPRoutes and UDPRoutes (the stream routes) on the TLS
// (mode Passthrough), TCP and UDP listeners of our Gateways: each becomes
// an entry whose intent.Streams the build places on the listener's nginx
// port (config.Stream; nginx's stream block, lua/l4.js). Attachment,
// hostnames and references follow the rules of attach.go, with the
// route's kind. A TLS listener of mode Terminate is not served: nginx's
// stream module would have to hold its certificate in nginx.conf (a
// reload per certificate change), so the listener is not Accepted
// (UnsupportedValue) and takes no route.

// l4Route is a stream route as the translator and the status read it.
type l4Route struct {
	kind      events.Kind
	meta      *metav1.ObjectMeta
	parents   []gatewayv1.ParentReference
	hostnames []gatewayv1.Hostname // TLSRoute only
	backends  []gatewayv1.BackendRef
}

// l4RouteOf returns the stream route obj is, false for any other object
// (and a nil pointer).
func l4RouteOf(obj runtime.Object) (*l4Route, bool) {
	var refs []gatewayv1.BackendRef
	switch r := obj.(type) {
	case *gatewayv1.TLSRoute:
		if r == nil {
			return nil, false
		}
		for _, rule := range r.Spec.Rules {
			refs = append(refs, rule.BackendRefs...)
		}
		return &l4Route{events.KindTLSRoute, &r.ObjectMeta, r.Spec.ParentRefs, r.Spec.Hostnames, refs}, true
	case *gatewayv1.TCPRoute:
		if r == nil {
			return nil, false
		}
		for _, rule := range r.Spec.Rules {
			refs = append(refs, rule.BackendRefs...)
		}
		return &l4Route{events.KindTCPRoute, &r.ObjectMeta, r.Spec.ParentRefs, nil, refs}, true
	case *gatewayv1.UDPRoute:
		if r == nil {
			return nil, false
		}
		for _, rule := range r.Spec.Rules {
			refs = append(refs, rule.BackendRefs...)
		}
		return &l4Route{events.KindUDPRoute, &r.ObjectMeta, r.Spec.ParentRefs, nil, refs}, true
	}
	return nil, false
}

// isStreamKind reports whether k is a stream route's kind.
func isStreamKind(k events.Kind) bool {
	return k == events.KindTLSRoute || k == events.KindTCPRoute || k == events.KindUDPRoute
}

// streamProtocol is the listener protocol that takes routes of kind k,
// and the stream protocol of the data plane.
func streamProtocol(k events.Kind) (gatewayv1.ProtocolType, config.L4Protocol) {
	switch k {
	case events.KindTLSRoute:
		return gatewayv1.TLSProtocolType, config.L4TLS
	case events.KindUDPRoute:
		return gatewayv1.UDPProtocolType, config.L4UDP
	}
	return gatewayv1.TCPProtocolType, config.L4TCP
}

// listenerRouteKind is the route kind listener l takes: HTTPRoute on HTTP
// and HTTPS, TLSRoute on TLS of mode Passthrough, TCPRoute on TCP,
// UDPRoute on UDP; "" for another protocol. unsupported says why a TLS
// listener of mode Terminate is not served.
func listenerRouteKind(l *gatewayv1.Listener) (kind gatewayv1.Kind, unsupported string) {
	switch l.Protocol {
	case gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType:
		return "HTTPRoute", ""
	case gatewayv1.TLSProtocolType:
		if l.TLS == nil || l.TLS.Mode == nil || *l.TLS.Mode != gatewayv1.TLSModePassthrough {
			return "TLSRoute", "TLS mode Terminate is not supported: nginx's stream module would hold the certificate in nginx.conf (a reload per change); use Passthrough, or an HTTPS listener"
		}
		return "TLSRoute", ""
	case gatewayv1.TCPProtocolType:
		return "TCPRoute", ""
	case gatewayv1.UDPProtocolType:
		return "UDPRoute", ""
	}
	return "", ""
}

// l4Translation is one stream route while it is translated.
type l4Translation struct {
	src *Source
	r   *l4Route
	e   *intent.Entry
}

// translateL4 makes the entry of stream route r at key: a Stream per
// listener of our Gateways that takes it (per hostname on a TLS one).
func (src *Source) translateL4(key intent.Key, r *l4Route, obj runtime.Object) *intent.Entry {
	e := &intent.Entry{
		Origin:   intent.Origin{Kind: string(r.kind), Namespace: key.Namespace, Name: key.Name, Generation: r.meta.Generation},
		Key:      key,
		Name:     key.String(),
		Object:   obj,
		Settings: &intent.Settings{},
		Created:  r.meta.CreationTimestamp.Unix(), CreatedNanos: r.meta.CreationTimestamp.Nanosecond(),
		SettingPrefix: "field ",
	}
	t := &l4Translation{src: src, r: r, e: e}
	backends := t.backends()
	for i := range r.parents {
		t.attach(&r.parents[i], backends)
	}
	e.Services = intent.UniqueKeys(e.Services)
	return e
}

func (t *l4Translation) problem(format string, args ...any) {
	t.e.Problems = append(t.e.Problems, fmt.Sprintf(format, args...))
}

// attach adds the streams that parent ref p gives the route.
func (t *l4Translation) attach(p *gatewayv1.ParentReference, backends []intent.WeightedRef) {
	ns, name, ok := ParentGateway(p, t.r.meta.Namespace)
	if !ok {
		return
	}
	gw := t.src.gateways[intent.Key{Namespace: ns, Name: name}]
	if !Ours(gw, func(name string) *gatewayv1.GatewayClass { return t.src.classes[name] }, t.src.controller) {
		return
	}
	for i := range gw.Spec.Listeners {
		if l := &gw.Spec.Listeners[i]; selects(p, l) {
			t.listener(gw, l, backends)
		}
	}
}

// listener adds the streams listener l of gw gives the route, unless it
// does not take it.
func (t *l4Translation) listener(gw *gatewayv1.Gateway, l *gatewayv1.Listener, backends []intent.WeightedRef) {
	where := fmt.Sprintf("Gateway %s/%s listener %s", gw.Namespace, gw.Name, l.Name)
	kind, unsupported := listenerRouteKind(l)
	if string(kind) != string(t.r.kind) || unsupported != "" ||
		!allowsKind(gw, l, kind, t.r.meta.Namespace, t.src.namespaces[t.r.meta.Namespace]) {
		return
	}
	_, proto := streamProtocol(t.r.kind)
	port, why := t.src.fleetPortOf(gw, l.Port, proto == config.L4UDP)
	if why != "" {
		t.problem("%s: %s; not served yet", where, why)
		return
	}
	hosts := []string{""}
	if proto == config.L4TLS {
		hosts = t.sniNames(where, l)
	}
	for _, h := range hosts {
		t.e.Streams = append(t.e.Streams, intent.Stream{Protocol: proto, Port: port, Hostname: h,
			Gateway: gw.Namespace + "/" + gw.Name, Backends: backends})
	}
}

// sniNames returns the SNI names a TLS listener gives the route: the
// intersection of the hostnames ("" for any name).
func (t *l4Translation) sniNames(where string, l *gatewayv1.Listener) []string {
	var out []string
	for _, h := range intersect(l.Hostname, t.r.hostnames) {
		if h == config.DefaultServerName {
			out = append(out, "")
			continue
		}
		if err := intent.ValidHost(h); err != nil {
			t.problem("%s: hostname %q %v; left out", where, h, err)
			continue
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		t.problem("%s: no hostname of the route matches the listener's; not attached to it", where)
	}
	return slices.Compact(out)
}

// backends returns the backendRefs of the route that take connections
// (weight above 0, 1 by default), those that cannot be served marked
// Invalid (their share is closed); none listed closes every connection.
func (t *l4Translation) backends() []intent.WeightedRef {
	var out []intent.WeightedRef
	for i := range t.r.backends {
		ref := &t.r.backends[i]
		w := 1
		if ref.Weight != nil {
			w = int(*ref.Weight)
		}
		if w <= 0 {
			continue
		}
		b, ok := t.backend(&ref.BackendObjectReference)
		out = append(out, intent.WeightedRef{Backend: b, Weight: w, Invalid: !ok})
	}
	if len(out) == 0 {
		t.problem("no backendRef with a weight above 0; every connection is closed")
		out = []intent.WeightedRef{{Weight: 1, Invalid: true}}
	}
	return out
}

// backend resolves one backendRef: a Service port of the route's
// namespace, or of another that grants it.
func (t *l4Translation) backend(ref *gatewayv1.BackendObjectReference) (intent.BackendRef, bool) {
	ns, err := kindBackendService(string(t.r.kind), t.r.meta.Namespace, ref, t.src.grantList())
	switch {
	case err != nil:
		t.problem("%v; its share of the connections is closed", err)
	case ref.Port == nil:
		t.problem("backendRef %s has no port; its share of the connections is closed", ref.Name)
	default:
		t.e.Services = append(t.e.Services, intent.Key{Namespace: ns, Name: string(ref.Name)})
		out := intent.BackendRef{Service: string(ref.Name), PortNumber: int32(*ref.Port)}
		if ns != t.r.meta.Namespace {
			out.Namespace = ns
		}
		return out, true
	}
	return intent.BackendRef{}, false
}

// StreamRouteRefs returns the parentRefs and backendRefs of a TLSRoute,
// TCPRoute or UDPRoute, false for another object (the watcher's indexes).
func StreamRouteRefs(obj runtime.Object) (parents []gatewayv1.ParentReference, backends []gatewayv1.BackendRef, ok bool) {
	r, ok := l4RouteOf(obj)
	if !ok {
		return nil, nil, false
	}
	return r.parents, r.backends, true
}
