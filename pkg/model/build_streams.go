package model

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The streams of Gateway listeners (intent.Stream: TCPRoutes, UDPRoutes
// and TLSRoutes). Each nginx port has one protocol; a TCP or UDP port one
// route, the oldest; a TLS port one route per SNI hostname, the oldest.
// A port that nginx's own listeners, a TCP or UDP services ConfigMap or a
// Gateway's HTTP listeners use is not served, with a Problem on the
// route: a listener nginx cannot open would fail every reload.

// streamKey is what a Stream claims.
type streamKey struct {
	proto config.L4Protocol
	port  int
	host  string
}

// buildStreams builds Configuration.Streams from the served entries,
// oldest first.
func (b *builder) buildStreams() []config.Stream {
	var out []config.Stream
	claimed := map[streamKey]string{}
	portProto := map[int]config.L4Protocol{}
	for _, e := range b.entries {
		for i := range e.Streams {
			st := &e.Streams[i]
			if err := b.streamPort(st, portProto); err != nil {
				b.entryProblem(e, "%s listener port of the fleet %d: %v; not served", st.Protocol, st.Port, err)
				continue
			}
			k := streamKey{st.Protocol, st.Port, st.Hostname}
			if st.Protocol != config.L4TLS {
				k.host = ""
			}
			if owner, ok := claimed[k]; ok {
				b.entryProblem(e, "%s port %d%s is served by the older %s; not served", st.Protocol, st.Port, hostSuffix(k.host), owner)
				continue
			}
			claimed[k], portProto[st.Port] = e.String(), st.Protocol
			out = append(out, b.stream(e, st, k.host))
		}
	}
	slices.SortFunc(out, func(x, y config.Stream) int { return config.CompareStreams(&x, &y) })
	return out
}

func hostSuffix(h string) string {
	if h == "" {
		return ""
	}
	return " hostname " + h
}

// streamPort checks the nginx port of st: in range, of one protocol, not
// a port of nginx's own, of a services ConfigMap of the same transport or
// of a Gateway's HTTP listeners.
func (b *builder) streamPort(st *intent.Stream, portProto map[int]config.L4Protocol) error {
	udp := st.Protocol == config.L4UDP
	switch {
	case st.Port < 1 || st.Port > 65535:
		return fmt.Errorf("is not a port number from 1 to 65535")
	case !udp && slices.Contains(b.opts.ReservedPorts, st.Port):
		return fmt.Errorf("is reserved for the controller's own listeners")
	case !udp && b.listeners[st.Port]:
		return fmt.Errorf("is an HTTP or HTTPS listener's")
	case b.l4PortUsed(st.Port, udp):
		return fmt.Errorf("is an entry of the %s services ConfigMap", map[bool]string{true: "UDP", false: "TCP"}[udp])
	}
	if p, ok := portProto[st.Port]; ok && p != st.Protocol && (p == config.L4UDP) == udp {
		return fmt.Errorf("is already served as %s", p)
	}
	return nil
}

// l4PortUsed reports whether the services ConfigMap of the transport
// (UDP or TCP) has an entry for port.
func (b *builder) l4PortUsed(port int, udp bool) bool {
	proto := config.L4TCP
	if udp {
		proto = config.L4UDP
	}
	k, err := intent.ParseKey(l4ConfigMap(b.opts, proto))
	if err != nil || k.Name == "" {
		return false
	}
	cm := b.s.ConfigMap(k.Namespace, k.Name)
	if cm == nil {
		return false
	}
	_, ok := cm.Data[strconv.Itoa(port)]
	return ok
}

// stream resolves the backends of st.
func (b *builder) stream(e *intent.Entry, st *intent.Stream, host string) config.Stream {
	out := config.Stream{Protocol: st.Protocol, Port: st.Port, Hostname: host, Gateway: st.Gateway, Route: e.String()}
	for _, w := range st.Backends {
		be := config.StreamBackend{Weight: w.Weight}
		if !w.Invalid { // an invalid one names nothing: its share is closed
			be.Namespace, be.Service, be.Port = cmp.Or(w.Backend.Namespace, e.Key.Namespace), w.Backend.Service, w.Backend.PortNumber
			be.Endpoints = b.streamEndpoints(st.Protocol, be)
		}
		out.Backends = append(out.Backends, be)
	}
	return out
}

// streamEndpoints returns the ready endpoints of the Service port of be,
// none when the Service, or a port of that number and transport, does
// not exist.
func (b *builder) streamEndpoints(proto config.L4Protocol, be config.StreamBackend) []config.Endpoint {
	key := intent.Key{Namespace: be.Namespace, Name: be.Service}
	obj := b.s.services[key]
	if obj == nil || obj.typ == corev1.ServiceTypeExternalName {
		return nil
	}
	transport := corev1.ProtocolTCP
	if proto == config.L4UDP {
		transport = corev1.ProtocolUDP
	}
	sp := l4ServicePort(obj, strconv.Itoa(int(be.Port)), transport)
	if sp == nil {
		return nil
	}
	eps, _ := b.endpoints(key, sp.name)
	return eps
}
